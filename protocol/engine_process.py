"""An engine in a subprocess, spoken to one line at a time: what every line protocol's client
needs before its protocol begins.

    engine = EngineProcess(["ntest", "n"], name="ntest")
    sent_at = engine.write("ping 1")
    line, arrived = engine.read_line(deadline=sent_at + 5.0)
    engine.close("quit")

Separate threads read the engine's stdout (into a queue of lines with their arrival times,
stripped of surrounding white space or, with `strip=False`, of the line end only) and its
stderr (the last `STDERR_TAIL` lines kept, drained all along so that a chatty engine never
blocks on a full pipe). A wait past its deadline is `EngineTimeout` (the engine
still runs); an engine that exits or closes its output is `EngineExited` with its exit status
and the end of its stderr. `close` sends the protocol's goodbye and kills the process if it has
not gone within a grace period. The process itself is for one thread.

The NBoard, UCI and Gomocup clients are built on it; the GTP client holds one, since its
commands carry ids and its replies span lines.
"""
from __future__ import annotations

import os
import queue
import shlex
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Self

from saz.protocol.client_errors import EngineExited, EngineTimeout

#: How long the goodbye may take before the engine is killed.
QUIT_GRACE = 2.0
#: stderr lines kept for the diagnosis of an engine that died.
STDERR_TAIL = 50


class EngineProcess:
    """A started engine process with piped stdin, stdout and stderr."""

    def __init__(self, command: Sequence[str | os.PathLike[str]] | str, *,
                 cwd: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None, name: str | None = None,
                 strip: bool = True) -> None:
        """Start the engine (OSError when it cannot be). `command` is an argument list, or a
        command line split as a shell would (without running one). `strip=False` keeps a line's
        leading and trailing spaces (a GTP reply's text is the engine's to indent)."""
        argv = shlex.split(command) if isinstance(command, str) else [os.fspath(a)
                                                                       for a in command]
        self.argv = argv
        self.name = name or os.path.basename(argv[0])
        self._strip = strip
        #: `time.monotonic()` just before the process was created.
        self.spawned_at = time.monotonic()
        self._process = subprocess.Popen(argv, cwd=cwd,
                                         env=dict(env) if env is not None else None,
                                         stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         bufsize=0)
        #: stdout lines with their arrival time; None once the output has closed.
        self._lines: queue.SimpleQueue[tuple[str, float] | None] = queue.SimpleQueue()
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL)
        self._output_closed = False
        threading.Thread(target=self._pump_stdout, name=f"{self.name}-stdout",
                         daemon=True).start()
        self._stderr_pump = threading.Thread(target=self._pump_stderr,
                                             name=f"{self.name}-stderr", daemon=True)
        self._stderr_pump.start()

    # -- the pipes ------------------------------------------------------------------------------
    def _pump_stdout(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        try:
            for raw in iter(stream.readline, b""):
                text = raw.decode("utf-8", "replace")
                self._lines.put((text.strip() if self._strip else text.rstrip("\r\n"),
                                 time.monotonic()))
        finally:
            self._lines.put(None)

    def _pump_stderr(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        for raw in iter(stream.readline, b""):
            self._stderr.append(raw.decode("utf-8", "replace").rstrip("\r\n"))

    @property
    def stderr_tail(self) -> tuple[str, ...]:
        """The last lines the engine wrote to stderr."""
        return tuple(self._stderr)

    @property
    def returncode(self) -> int | None:
        return self._process.poll()

    @property
    def pid(self) -> int:
        return self._process.pid

    def wait(self, timeout: float | None = None) -> int:
        """The exit status once the engine has exited by itself, waiting `timeout` seconds at
        most (subprocess.TimeoutExpired after that)."""
        return self._process.wait(timeout=timeout)

    def exited(self, what: str) -> EngineExited:
        """The error for an engine that `what` ("has closed its output"): its exit status (None
        if it still runs a second later) and the end of its stderr."""
        try:
            code = self._process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        else:  # its last words may still be in the pipe (not waiting on a child holding it)
            self._stderr_pump.join(timeout=1.0)
        return EngineExited(f"{self.name} {what}", code, self.stderr_tail)

    # -- lines ----------------------------------------------------------------------------------
    def write(self, line: str) -> float:
        """Send one command line; the monotonic time just before it was written. ValueError for
        text of more than one line; EngineExited when the engine no longer reads."""
        if "\n" in line or "\r" in line:
            raise ValueError(f"a command is one line: {line!r}")
        stdin = self._process.stdin
        assert stdin is not None
        sent_at = time.monotonic()
        try:
            stdin.write(line.encode("utf-8") + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self.exited(f"no longer reads its input ({line!r} not sent)") from None
        return sent_at

    def read_line(self, deadline: float | None = None) -> tuple[str, float]:
        """The next output line and its arrival time, waiting until the monotonic
        `deadline` at most (EngineTimeout)."""
        if self._output_closed:
            raise self.exited("has closed its output")
        try:
            if deadline is None:
                item = self._lines.get()
            else:
                item = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise EngineTimeout(f"{self.name} did not answer in time") from None
        if item is None:
            self._output_closed = True
            raise self.exited("has closed its output")
        return item

    # -- the end --------------------------------------------------------------------------------
    def close(self, goodbye: str | None = "quit", grace: float = QUIT_GRACE) -> int | None:
        """Send `goodbye` (None: nothing), wait up to `grace` seconds for the engine to exit,
        kill it otherwise; the exit status (negative: killed by that signal)."""
        if self._process.poll() is None:
            if goodbye is not None:
                try:
                    self.write(goodbye)
                except EngineExited:
                    pass
            self._close_stdin()  # end of input: an engine reading to EOF goes too
            try:
                self._process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close_stdin()
        return self._process.returncode

    def kill(self) -> None:
        """End the engine now, and reap it."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self._close_stdin()

    def _close_stdin(self) -> None:
        stdin = self._process.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.close()
            except OSError:
                pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if kind is None:
            self.close()
        else:
            self.kill()

    def __repr__(self) -> str:
        state = "running" if self.returncode is None else f"exited {self.returncode}"
        return f"<{type(self).__name__} {self.name} pid={self.pid} {state}>"


__all__ = ["QUIT_GRACE", "STDERR_TAIL", "EngineProcess"]
