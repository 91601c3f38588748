"""The benchmarks' timing loop: the median time of one call, after warm-up, over enough calls.

`saz bench evaluator` (`cli.measure`, which also retakes a measurement that the rest of the
shared machine disturbed) and `saz bench variants` time their cells with it, so that both
tables report the same statistic: the median, which the calls another process's burst slowed
move least.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable

#: Untimed calls first: a session's first calls allocate its buffers and fill the caches.
WARM_UP_CALLS = 3


def warm_up(fn: Callable[[], object]) -> None:
    """Call `fn` `WARM_UP_CALLS` times, untimed."""
    for _ in range(WARM_UP_CALLS):
        fn()


def call_times(fn: Callable[[], object], *, min_seconds: float, min_runs: int = 5,
               clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """The `clock` time of each call of `fn()`, called until there are at least `min_runs`
    calls and `min_seconds` have passed (on `clock`): enough calls for a stable median both
    for a call of microseconds and for one of a good part of a second."""
    times: list[float] = []
    start = clock()
    while len(times) < min_runs or clock() - start < min_seconds:
        t = clock()
        fn()
        times.append(clock() - t)
    return times


def median_call(fn: Callable[[], object], seconds: float, min_runs: int = 5) -> float:
    """The median wall time of `fn()` over at least `min_runs` calls and `seconds`, after the
    warm-up."""
    warm_up(fn)
    return statistics.median(call_times(fn, min_seconds=seconds, min_runs=min_runs))
