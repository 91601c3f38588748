"""The input of a protocol server: the lines of stdin, each taken as it comes and handled in
order.

    for line, arrived in arrivals(lines, name="saz-uci-input", finished=lambda: s.finished):
        session.handle(line, arrived)

A daemon thread reads `lines` (the process's stdin) and queues each line with the monotonic
time it arrived, calling `notice(line)` first: how a command that must act at once (`stop`,
END, a ping) reaches a search the calling thread is running. The calling thread takes the lines
in order until the server is `finished` or the input ends; a line is timed from its arrival, as
the GUI or manager times the answer. An input that fails under the reader (closed, not text) is
logged and ends the lines, like their end. `fd_lines` reads the lines off a file descriptor.
"""
from __future__ import annotations

import codecs
import io
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator

log = logging.getLogger("saz.input")

#: Longer input lines are cut here (the rest of the line is dropped), so that a runaway GUI or
#: manager cannot exhaust memory.
MAX_LINE = 1 << 16


def fd_lines(fd: int) -> Iterator[str]:
    """The lines arriving on file descriptor `fd`, as UTF-8 (bad bytes replaced), ending in CR LF,
    LF or CR, each cut at MAX_LINE characters (the rest of a longer line is dropped).

    It reads with `os.read`: a thread blocked there holds no lock of Python's, whereas a daemon
    thread blocked in `sys.stdin.readline` makes the interpreter abort at exit."""
    decoder = io.IncrementalNewlineDecoder(codecs.getincrementaldecoder("utf-8")("replace"),
                                           translate=True)
    pending = ""
    while True:
        chunk = os.read(fd, 1 << 16)
        *complete, pending = (pending + decoder.decode(chunk, final=not chunk)).split("\n")
        for line in complete:
            yield line[:MAX_LINE]
        if not chunk:
            if pending:
                yield pending[:MAX_LINE]
            return
        pending = pending[:MAX_LINE + 1]  # whatever follows is dropped when the line ends


def arrivals(lines: Iterable[str], *, name: str, finished: Callable[[], bool],
             notice: Callable[[str], None] | None = None) -> Iterator[tuple[str, float]]:
    """(line, arrival time) of each line of `lines`, read by a thread named `name`, until
    `finished()` or their end."""
    queued: queue.SimpleQueue[tuple[str, float] | None] = queue.SimpleQueue()

    def read() -> None:
        try:
            for line in lines:
                arrived = time.monotonic()
                if notice is not None:
                    notice(line)
                queued.put((line, arrived))
                if finished():  # noticed as the end (Gomocup's END): read no further
                    break
        except (OSError, ValueError) as exc:  # the input closed under us
            log.warning("input: %s", exc)
        finally:
            queued.put(None)

    threading.Thread(target=read, name=name, daemon=True).start()
    while not finished() and (item := queued.get()) is not None:
        yield item


__all__ = ["MAX_LINE", "arrivals", "fd_lines"]
