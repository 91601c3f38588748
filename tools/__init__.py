"""Trainer, export, match runner and benchmarks (may import torch; the engine never imports
this)."""
