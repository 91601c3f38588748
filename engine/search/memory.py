"""What the process's memory is, and what a piece of work allocates: the search's memory budget.

A Gomocup manager disqualifies a brain whose memory passes `INFO max_memory`. The search holds
most of it (every tree node owns a copy of its position), so it caps its tree in nodes: the
memory left under the budget divided by what one node costs (`mcts.node_bytes`). These are the
two measurements that needs, kept free of the search so that each can be tested alone.
"""
from __future__ import annotations

import os
import resource
import sys
import tracemalloc
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def resident_bytes() -> int:
    """The process's resident memory now (Linux: /proc/self/statm), in bytes.

    Where /proc is missing, the peak so far (getrusage) stands in: never less than now, so a
    budget computed from it errs on the safe side."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, else KiB


def allocated_by(make: Callable[[], T]) -> tuple[T, int]:
    """What `make()` returns, and the bytes it allocated and still holds when it returns.

    Counted by tracemalloc, which sees every allocation of Python's and of numpy's (started for
    the call unless it runs already). Memory freed during the call is not counted; memory that
    other threads allocate meanwhile is, so measure while the process is otherwise quiet."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = make()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        if not tracing:
            tracemalloc.stop()
    return result, after - before
