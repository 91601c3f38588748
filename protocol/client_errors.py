"""What goes wrong when a controller talks to an engine it started: the errors that the GTP client
(`gtp_client.GtpClient`) and the Gomocup client (`gomocup_client.PbrainClient`) share. Each
client adds its protocol's own under `ClientError` (a malformed GTP reply, an unexpected Gomocup
answer), so that a caller catches everything a conversation can raise with one class.
"""
from __future__ import annotations

from collections.abc import Sequence


class ClientError(Exception):
    """Something went wrong talking to an engine."""


class EngineTimeout(ClientError):
    """No reply within the deadline; the engine is still running."""


class EngineExited(ClientError):
    """The engine exited or closed its output while a reply was awaited; the message ends with
    its exit status and the last lines of its stderr."""

    def __init__(self, message: str, returncode: int | None, stderr: Sequence[str]) -> None:
        tail = "".join(f"\n  {line}" for line in stderr[-10:])
        super().__init__(f"{message} (exit status {returncode}){tail}")
        self.returncode = returncode
        self.stderr = tuple(stderr)
