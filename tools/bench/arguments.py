"""Argument types shared by the `saz bench` commands."""
from __future__ import annotations

import argparse


def parse_ints(text: str) -> list[int]:
    """A comma-separated list of positive integers ("1,8,32"), as argparse's `type`: batch
    sizes, board sizes, thread counts."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}") from None
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values
