"""The shipped models: `<game>.onnx` with its card `<game>.json` (see `engine/model_card.py`).

Installed as package data so that `saz gtp` finds its default model wherever pip put it.
"""
