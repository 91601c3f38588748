"""The replay buffer: the most recent self-play positions, windowed and sized in positions.

Positions arrive one generation at a time and are kept on disk as one compressed file per
generation (`replay/gen_00012.npz`, packed as in `positions.py`, all board sizes inside), written
beside and renamed so that a killed run leaves either the whole generation or none of it. In memory
the buffer keeps the newest `window` positions: the oldest generation is trimmed position by
position, and its file is deleted once none of it is left. Reloading a run directory therefore
rebuilds exactly the same window.

`sample` draws positions uniformly from the window, whatever their board size, and returns them
grouped by size (the learner collates the groups into one mixed-size graph batch).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from saz.tools.train.positions import PositionBatch, PositionPool

_FILE = re.compile(r"gen_(\d{5})\.npz")
#: The key of a generation file's JSON summary.
_META = "meta"


@dataclass
class _Generation:
    """The positions one generation added (one batch per board size, in arrival order; the
    window may have trimmed the oldest) and the summary of its games the trainer stored."""

    generation: int
    parts: list[PositionBatch]
    meta: dict[str, Any]

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)


class ReplayBuffer:
    """Self-play positions of the last `window` positions' worth of generations."""

    def __init__(self, folder: str | Path, window: int, num_features: int) -> None:
        if window < 1:
            raise ValueError(f"the replay window must hold at least one position, got {window}")
        self.folder = Path(folder)
        self.window = window
        self.num_features = num_features
        self._generations: list[_Generation] = []
        self._pool = PositionPool([])

    def __len__(self) -> int:
        return len(self._pool)

    @property
    def generations(self) -> list[int]:
        """The generations with positions in the window, oldest first."""
        return [g.generation for g in self._generations]

    def path_of(self, generation: int) -> Path:
        return self.folder / f"gen_{generation:05d}.npz"

    # -- adding and loading ------------------------------------------------------------------------
    def add(self, generation: int, parts: list[PositionBatch], meta: dict[str, Any]) -> None:
        """Store one generation's positions (one batch per board size) with a JSON-ready summary
        of its games, and slide the window."""
        if self._generations and generation <= self._generations[-1].generation:
            raise ValueError(f"generation {generation} is not newer than "
                             f"{self._generations[-1].generation}")
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.path_of(generation)
        tmp = path.with_name(path.stem + ".tmp.npz")
        # Any: numpy's stub would match a dict of arrays against savez's allow_pickle flag.
        arrays: dict[str, Any] = {_META: np.array(json.dumps(meta))}
        for part in parts:
            arrays.update(part.to_arrays())
        np.savez_compressed(tmp, **arrays)
        tmp.replace(path)
        self._append(_Generation(generation, [p for p in parts if len(p)], meta))

    def meta(self, generation: int) -> dict[str, Any]:
        """The summary stored with `generation` (KeyError when it is not in the window)."""
        for entry in self._generations:
            if entry.generation == generation:
                return entry.meta
        raise KeyError(generation)

    def load(self) -> None:
        """Read the generations on disk, keeping the newest `window` positions (and deleting the
        files of older ones)."""
        self._generations, self._pool = [], PositionPool([])
        if not self.folder.is_dir():
            return
        found = sorted((int(m.group(1)), path) for path in self.folder.iterdir()
                       if (m := _FILE.fullmatch(path.name)))
        kept: list[_Generation] = []
        total = 0
        for generation, path in reversed(found):
            if total >= self.window:
                path.unlink()
                continue
            with np.load(path) as arrays:
                meta = json.loads(str(arrays[_META]))
                try:
                    parts = PositionBatch.from_arrays(
                        {k: arrays[k] for k in arrays.files if k != _META}, self.num_features)
                except ValueError as exc:
                    raise ValueError(f"{path}: {exc}") from None
            kept.append(_Generation(generation, parts, meta))
            total += len(kept[-1])
        for entry in reversed(kept):
            self._append(entry)

    @staticmethod
    def packed_for(folder: Path, num_features: int) -> bool:
        """Whether every generation file in `folder` holds positions of `num_features` planes
        (True for a folder without one)."""
        for path in folder.iterdir():
            if not _FILE.fullmatch(path.name):
                continue
            with np.load(path) as arrays:
                try:
                    PositionBatch.from_arrays({k: arrays[k] for k in arrays.files if k != _META},
                                              num_features)
                except ValueError:
                    return False
        return True

    def _append(self, entry: _Generation) -> None:
        self._generations.append(entry)
        excess = sum(len(g) for g in self._generations) - self.window
        while excess > 0:
            oldest = self._generations[0]
            if len(oldest) <= excess:
                excess -= len(oldest)
                self._generations.pop(0)
                self.path_of(oldest.generation).unlink(missing_ok=True)
                continue
            oldest.parts = _drop_oldest(oldest.parts, excess)
            excess = 0
        self._pool = PositionPool([p for g in self._generations for p in g.parts])

    # -- sampling ----------------------------------------------------------------------------------
    def sample(self, count: int, rng: np.random.Generator) -> list[PositionBatch]:
        """`count` positions drawn uniformly (with replacement) from the window, grouped by
        board size."""
        if len(self) == 0:
            raise ValueError("the replay buffer is empty")
        return self._pool.sample(count, rng)

    def sizes(self) -> dict[str, int]:
        """Positions in the window per board size ("9x9": count)."""
        return self._pool.sizes()


def _drop_oldest(parts: list[PositionBatch], count: int) -> list[PositionBatch]:
    """`parts` without `count` of their positions, taken from each size in proportion (rounded so
    the total is exact); the oldest positions of each size go first."""
    total = sum(len(p) for p in parts)
    drops = [count * len(p) // total for p in parts]
    for i in range(count - sum(drops)):  # the rounding remainder, one each from the first parts
        j = i % len(parts)
        while drops[j] >= len(parts[j]):
            j = (j + 1) % len(parts)
        drops[j] += 1
    return [p.select(slice(d, None)) for p, d in zip(parts, drops) if d < len(p)]
