"""What a process the trainer spawns needs to serve it: its next request, and whether the trainer
still lives.

A trainer killed outright (SIGKILL, the out-of-memory killer, a lost machine) cannot tell its
children to stop, and a child blocked on its queue would wait forever, holding its memory and,
on a GPU, its device. So a child never blocks on the queue for long: it checks between short
waits that its parent is alive, and stops when it is not (`receive`). Stopping is not yet
leaving: a process waits at exit until what it put on its queues is written to their pipes,
and a dead parent reads nothing, so a child that had sent more than a pipe holds would never
exit (`let_go`). The self-play workers (`selfplay._worker_main`) and the background export
(`export._export_process`) both use it.
"""
from __future__ import annotations

import multiprocessing as mp
import queue
from typing import Any

#: How long a child waits on its queue before it checks its parent again (seconds).
POLL_SECONDS = 1.0


def parent_alive() -> bool:
    """Whether the process that spawned this one still runs (True in a process not spawned by
    multiprocessing)."""
    parent = mp.parent_process()
    return parent is None or parent.is_alive()


def receive(requests: mp.Queue, orphaned: Any) -> Any:
    """The next item of `requests`; `orphaned` once the parent has died without sending one."""
    while True:
        try:
            return requests.get(timeout=POLL_SECONDS)
        except queue.Empty:
            if not parent_alive():
                return orphaned


def let_go(*outboxes: mp.Queue) -> None:
    """Call as a child's main function returns: when the parent is dead, what is still queued
    in `outboxes` will never be read, so the process exits without waiting to write it."""
    if not parent_alive():
        for outbox in outboxes:
            outbox.cancel_join_thread()
