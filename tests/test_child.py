"""A process the trainer spawns stops waiting when the trainer dies (tools/train/child.py)."""
from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import time

from saz.tools.train.child import parent_alive, receive

# Fork: the stand-ins below live in this test module, which a spawned process could not import.
_CTX = mp.get_context("fork")


def _serve(requests: mp.Queue, outcome: mp.Queue) -> None:
    """A child of a child: reports what its wait on a queue nobody writes to comes to."""
    outcome.put(receive(requests, orphaned="orphaned"))


def _trainer(outcome: mp.Queue) -> None:
    """The trainer's stand-in: starts a child that waits on it, then waits to be killed."""
    requests: mp.Queue = _CTX.Queue()
    child = _CTX.Process(target=_serve, args=(requests, outcome))
    child.start()
    outcome.put(("started", child.pid))
    time.sleep(60)


def test_a_child_whose_parent_was_killed_stops_waiting() -> None:
    outcome: mp.Queue = _CTX.Queue()
    trainer = _CTX.Process(target=_trainer, args=(outcome,))
    trainer.start()
    child_pid = None
    try:
        started, child_pid = outcome.get(timeout=30)
        assert started == "started"
        time.sleep(1.5)  # the child has polled its parent at least once, and waits on
        assert outcome.empty()
        os.kill(trainer.pid, signal.SIGKILL)  # no goodbye: as the out-of-memory killer does
        assert outcome.get(timeout=10) == "orphaned"
    finally:
        trainer.kill()
        trainer.join()
        if child_pid is not None:  # a child that waits on (the failure) must not outlive us
            with contextlib.suppress(ProcessLookupError):
                os.kill(child_pid, signal.SIGKILL)


def test_receive_returns_what_was_sent_and_the_test_process_has_no_parent_to_lose() -> None:
    requests: mp.Queue = _CTX.Queue()
    requests.put(("play", "gen_00007.onnx"))
    assert receive(requests, orphaned=("stop",)) == ("play", "gen_00007.onnx")
    assert parent_alive()
