"""Python-int bitboards: a set of points as one integer whose bit `p` stands for point `p`.

Python ints have arbitrary precision, so one representation serves every board size, and the
bitwise operators on them (and shifts, which move every member one step at once) run in C.
"""
from __future__ import annotations

from collections.abc import Iterable


def points_of(mask: int) -> list[int]:
    """The points of `mask`, ascending: one step per member, not one per point of the board."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(points: Iterable[int]) -> int:
    """The mask of a collection of points."""
    mask = 0
    for p in points:
        mask |= 1 << p
    return mask
