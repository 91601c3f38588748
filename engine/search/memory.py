"""What the process's memory is: the measurement under the search's memory budget.

A Gomocup manager disqualifies a brain whose memory passes `INFO max_memory`. The search tree
holds most of it, so the tree gets the bytes the limit leaves over what the rest of the process
holds now (`MCTS.tree_budget`); the tree counts its own bytes exactly (engine/core/tree.hpp).
"""
from __future__ import annotations

import os
import resource
import sys


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
