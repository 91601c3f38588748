"""Zobrist keys: fixed pseudo-random 64-bit numbers per (point, stone colour) and for the side to
move.

Keys are Python ints (XOR on ints is the fastest hashing Python has) drawn from a fixed seed, so a
position hashes the same in every process: transposition tables, superko histories and test
expectations can rely on it.
"""
from __future__ import annotations

from functools import cache

import numpy as np

_SEED = 0x5A2_600D


@cache
def zobrist_keys(num_points: int) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(keys for a black stone per point, keys for a white stone per point, key for white to
    move)."""
    rng = np.random.default_rng([_SEED, num_points])
    raw = rng.integers(1, 2**63 - 1, size=2 * num_points + 1, dtype=np.int64)
    keys = [int(v) for v in raw]
    return tuple(keys[:num_points]), tuple(keys[num_points:2 * num_points]), keys[-1]
