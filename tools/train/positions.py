"""Training positions in compact form.

A self-play position is the network's input `[N, F]` (N nodes: the points, then the extra node),
its policy target `[policy_size]` (the search's visit distribution at the moves' policy indices,
`Game.policy_indices`: one per node, pass included, in the lattice games; P*P + 9W in chess) and
its value target.
As float32 a 9x9 position takes 1.6 KB (Gomoku, four features) to 3.6 KB (Go, ten); packed, 0.22
and 0.31 KB:

* the point rows are 0/1 planes in every game, so they are stored as bits (`np.packbits`);
* the extra node's row is the only place a game may put a real number (Go's komi): float32;
* the policy is a distribution that needs no more than float16;
* the value is the game's outcome from the side to move's view: -1, 0 or +1 as int8;
* the auxiliary targets (KataGo's): the final owner of each point from the side to move's view
  as int8 and the final score margin from that side's view as float32, with a flag saying
  whether the game was counted at all (a resigned game, or Gomoku, has neither target).

`PositionBatch` is a set of such positions of one board size; the replay buffer keeps them and
self-play workers send them to the trainer in this form. `PositionPool` draws the learner's
batches from many of them (the replay window).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from saz.engine.games.grid import parse_size


class PackError(ValueError):
    """Features that the compact form cannot hold (a point feature other than 0 or 1)."""


@dataclass(frozen=True)
class PositionBatch:
    """Positions of one board size in packed form (all arrays have one row per position)."""

    width: int
    height: int
    num_features: int
    #: Point rows `[num_points, F]` as packed bits, `[T, ceil(num_points * F / 8)]` uint8.
    bits: np.ndarray
    #: The extra node's features `[T, F]` float32.
    extra: np.ndarray
    #: Policy targets `[T, policy_size]` float16 (the game's `policy_size`: N in the lattice
    #: games).
    policy: np.ndarray
    #: Outcome from the side to move's view `[T]` int8 (-1, 0, +1).
    value: np.ndarray
    #: Final owner of each point from the side to move's view `[T, num_points]` int8 (-1, 0, +1).
    ownership: np.ndarray
    #: Final score margin from the side to move's view `[T]` float32 (Go: area with komi).
    score: np.ndarray
    #: Whether the game was counted `[T]` bool: False where `ownership` and `score` mean nothing.
    counted: np.ndarray

    @property
    def size(self) -> tuple[int, int]:
        return self.width, self.height

    @property
    def num_nodes(self) -> int:
        return self.width * self.height + 1

    def __len__(self) -> int:
        return len(self.value)

    @classmethod
    def pack(cls, width: int, height: int, x: np.ndarray, policy: np.ndarray,
             value: np.ndarray, ownership: np.ndarray | None = None,
             score: np.ndarray | None = None) -> PositionBatch:
        """Pack `x [T, N, F]` float32, `policy [T, policy_size]`, `value [T]` and, for a counted
        game, `ownership [T, num_points]` and `score [T]`; PackError when a point feature is
        neither 0 nor 1."""
        t, n, f = x.shape
        if (n != width * height + 1 or policy.ndim != 2 or policy.shape[0] != t
                or value.shape != (t,)):
            raise ValueError(f"shapes {x.shape}, {policy.shape}, {value.shape} do not fit "
                             f"{width}x{height}")
        points = x[:, :-1]
        binary = points != 0
        if not np.array_equal(binary, points == 1):
            raise PackError("a point feature other than 0 or 1 cannot be packed as a bit")
        counted = ownership is not None and score is not None
        if ownership is None or score is None:
            ownership, score = np.zeros((t, n - 1), np.int8), np.zeros(t, np.float32)
        elif ownership.shape != (t, n - 1) or score.shape != (t,):
            raise ValueError(f"ownership {ownership.shape} and score {score.shape} do not fit "
                             f"{t} positions of {width}x{height}")
        # A game may record no position at all (every move a fast search): reshape by size.
        return cls(width, height, f, np.packbits(binary.reshape(t, (n - 1) * f), axis=1),
                   np.ascontiguousarray(x[:, -1], dtype=np.float32),
                   policy.astype(np.float16), value.astype(np.int8), ownership.astype(np.int8),
                   score.astype(np.float32), np.full(t, counted))

    def features(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """The input `[k, N, F]` float32 of the selected positions."""
        bits = self.bits[rows]
        k = bits.shape[0]
        n = self.width * self.height
        out = np.empty((k, n + 1, self.num_features), dtype=np.float32)
        out[:, :n] = np.unpackbits(bits, axis=1, count=n * self.num_features).reshape(
            k, n, self.num_features)
        out[:, n] = self.extra[rows]
        return out

    def select(self, rows: np.ndarray | slice) -> PositionBatch:
        """The selected positions as a new batch."""
        return PositionBatch(self.width, self.height, self.num_features,
                             *(getattr(self, name)[rows] for name in _ARRAYS))

    @classmethod
    def concatenate(cls, parts: list[PositionBatch]) -> PositionBatch:
        """One batch from batches of the same size and game (at least one)."""
        first = parts[0]
        if any(p.size != first.size or p.num_features != first.num_features for p in parts):
            raise ValueError("only positions of one board size and game can be concatenated")
        return cls(first.width, first.height, first.num_features,
                   *(np.concatenate([getattr(p, name) for p in parts])
                     for name in _ARRAYS))

    # -- persistence (as arrays inside an .npz, under a prefix naming the size) -------------------
    def to_arrays(self) -> dict[str, np.ndarray]:
        prefix = f"{self.width}x{self.height}/"
        return {prefix + name: getattr(self, name) for name in _ARRAYS}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray],
                    num_features: int) -> list[PositionBatch]:
        """Every batch stored by `to_arrays` in `arrays` (one per size). Files written before the
        auxiliary targets existed load as uncounted games."""
        sizes = sorted({key.split("/")[0] for key in arrays})
        out = []
        for size in sizes:
            width, height = parse_size(size)
            value = arrays[f"{size}/value"]
            t = len(value)
            packed = arrays[f"{size}/bits"].shape[1]
            if packed != -(-width * height * num_features // 8):
                raise ValueError(f"the {size} positions were packed with another number of "
                                 f"features than {num_features} ({packed} bytes a position)")
            missing: dict[str, np.ndarray] = {
                "ownership": np.zeros((t, width * height), np.int8),
                "score": np.zeros(t, np.float32), "counted": np.zeros(t, bool)}
            stored: list[np.ndarray] = [arrays[key] if (key := f"{size}/{name}") in arrays
                                        else missing[name] for name in _ARRAYS]
            out.append(cls(width, height, num_features, *stored))
        return out


class PositionPool:
    """Batches of positions (any board sizes) to draw training batches from uniformly."""

    def __init__(self, parts: Sequence[PositionBatch]) -> None:
        self.parts = list(parts)
        self._offsets = np.concatenate([[0], np.cumsum([len(p) for p in self.parts])]).astype(
            np.int64)

    def __len__(self) -> int:
        return int(self._offsets[-1])

    def sample(self, count: int, rng: np.random.Generator) -> list[PositionBatch]:
        """`count` positions drawn uniformly with replacement, grouped by board size."""
        if len(self) == 0:
            raise ValueError("no positions to sample from")
        picks = rng.integers(len(self), size=count)
        part_of = np.searchsorted(self._offsets, picks, side="right") - 1
        by_size: dict[tuple[int, int], list[PositionBatch]] = {}
        for index in np.unique(part_of):
            part = self.parts[index]
            rows = picks[part_of == index] - self._offsets[index]
            by_size.setdefault(part.size, []).append(part.select(rows))
        return [PositionBatch.concatenate(parts) for parts in by_size.values()]

    def sizes(self) -> dict[str, int]:
        """Positions per board size ("9x9": count)."""
        counts: dict[str, int] = {}
        for part in self.parts:
            key = f"{part.width}x{part.height}"
            counts[key] = counts.get(key, 0) + len(part)
        return counts


#: The per-position arrays of a `PositionBatch`, in field order.
_ARRAYS = ("bits", "extra", "policy", "value", "ownership", "score", "counted")
