"""The network's answers by position: KataGo's neural-net cache.

The search tree has no transpositions: a position reached by two move orders is two leaves, and
each used to cost a network call: about one leaf in seven over a 20x20 Gomoku game or a 9x9 Go
game, searches reusing their trees (docs/BENCHMARKS.md, "The evaluation cache"). The cache also
outlives the tree: going back over a game in an analysis GUI (undo, then the same moves again)
finds the positions it has seen. The engine's search keeps one (`MCTS.cache`; none under a
process memory limit, where the tree has every byte) and self-play one per worker and network,
shared by all of its games' trees (`Lockstep`).

An entry is keyed by a digest of the leaf's encoded row, `x [nodes, F]` as the game wrote it:
the network's output is a function of that row alone (the window it is shown is computed from
it), so two leaves with equal rows get equal answers whatever game, rules or history made them.
The digest is the core's (`_core.row_digests`: 128 bits of the row's bytes and shape, about
1.5 us for a 19x19 Go row where SHA-1 took 14). The cache is bounded in bytes and forgets the
least recently used entries first.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from saz.engine import _core

#: Bytes of bookkeeping an entry costs beside its policy row (digest, tuple, array header, dict
#: slot): measured with tracemalloc, about 300 for 20x20 rows.
_ENTRY_OVERHEAD = 320


class Evaluation(NamedTuple):
    """What the network said about one position: its log-policy (`[policy_size]`: over the
    board's nodes, or chess's moves) and its value for the side to move."""

    log_policy: np.ndarray
    value: float


class EvalCache:
    """A least-recently-used map from encoded positions to their `Evaluation`, at most
    `max_bytes` large. Not thread-safe: the search's own thread is its only user."""

    def __init__(self, max_bytes: int) -> None:
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[bytes, Evaluation] = OrderedDict()
        self._bytes = 0
        self.resize(max_bytes)

    @staticmethod
    def key(row: np.ndarray) -> bytes:
        """The digest of one encoded position `[nodes, F]` (float32), its shape included."""
        return keys(row[None])[0]

    def get(self, key: bytes) -> Evaluation | None:
        """The evaluation stored under `key`, now the most recently used; None: not cached."""
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return found

    def put(self, key: bytes, log_policy: np.ndarray, value: float) -> None:
        """Store an evaluation (a copy of the row), forgetting the oldest ones beyond the
        budget. A row larger than the whole budget is not stored."""
        cost = log_policy.nbytes + _ENTRY_OVERHEAD
        if cost > self.max_bytes or key in self._entries:
            return
        self._entries[key] = Evaluation(np.array(log_policy, np.float32), float(value))
        self._bytes += cost
        self._trim()

    def resize(self, max_bytes: int) -> None:
        """A new budget (a memory limit set later); the oldest entries beyond it go.
        ValueError when negative."""
        if max_bytes < 0:
            raise ValueError("max_bytes must be >= 0 (0: no cache)")
        self.max_bytes = max_bytes
        self._trim()

    def _trim(self) -> None:
        while self._bytes > self.max_bytes:
            _, old = self._entries.popitem(last=False)
            self._bytes -= old.log_policy.nbytes + _ENTRY_OVERHEAD

    def clear(self) -> None:
        """Forget every entry (a new network, `clear_cache`); the counters stay."""
        self._entries.clear()
        self._bytes = 0

    @property
    def bytes(self) -> int:
        """The bytes the entries are counted at now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)


@dataclass
class Lookup:
    """A batch of encoded positions as the cache found them: every row's key, what the cache
    knew, and which rows are left for the network. `merge` puts the two back together."""

    keys: list[bytes]
    known: list[Evaluation | None]
    #: Indices of the rows the network evaluates, in order.
    missing: np.ndarray

    @classmethod
    def of(cls, cache: EvalCache, x: np.ndarray) -> Lookup:
        """Look up every row of `x [rows, nodes, F]`."""
        found = keys(x)
        known = [cache.get(key) for key in found]
        missing = np.array([j for j, entry in enumerate(known) if entry is None], np.int64)
        return cls(found, known, missing)

    def merge(self, cache: EvalCache, log_policy: np.ndarray,
              values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every row's log-policy `[rows, policy_size]` and value, from the network's outputs for
        the `missing` rows (in order, over the whole board) and the cache's for the others;
        the network's are cached."""
        for j, i in enumerate(self.missing):
            cache.put(self.keys[i], log_policy[j], float(values[j]))
        if len(self.missing) == len(self.keys):
            return log_policy, values
        nodes = next(found.log_policy.shape[0] for found in self.known if found is not None)
        all_policy = np.empty((len(self.keys), nodes), np.float32)
        all_values = np.empty(len(self.keys), np.float32)
        all_policy[self.missing] = log_policy
        all_values[self.missing] = values
        for i, found in enumerate(self.known):
            if found is not None:
                all_policy[i], all_values[i] = found
        return all_policy, all_values


def keys(x: np.ndarray) -> list[bytes]:
    """The cache key of each row of `x [rows, nodes, F]`: its 16-byte digest."""
    raw = _core.row_digests(np.ascontiguousarray(x, dtype=np.float32)).tobytes()
    return [raw[16 * i:16 * i + 16] for i in range(len(x))]
