"""How fast `saz gtp` is ready: from starting the process to the reply to `name`.

GUIs start engines often (Sabaki per game, GoGui on every attach, tournament managers per game),
so this is what a user waits for. The network is not loaded then (it loads on the first search);
this measures the interpreter, the imports and the session's start.

    saz bench gtp [--runs 20] [-- ENGINE ARGS...]

prints every run and the median, in milliseconds. The engine command defaults to the installed
`saz gtp` console script.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from collections.abc import Sequence

from saz.protocol.gtp_client import GtpClient


def startup_seconds(command: Sequence[str]) -> float:
    """Seconds from launching `command` to the reply to `name`."""
    start = time.perf_counter()
    client = GtpClient(command)
    try:
        client.command("name", timeout=60)
        return time.perf_counter() - start
    finally:
        client.close()


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("gtp", help="saz gtp start-up: process start to the reply to name",
                              description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("engine", nargs="*", help="the engine's command line (default: saz gtp)")
    p.set_defaults(handler=bench_gtp)


def saz_gtp_command(engine: Sequence[str]) -> list[str]:
    """The engine command line a benchmark drives: `engine` when given, else the installed
    `saz gtp` console script (or its module, where the script is not on PATH)."""
    if engine:
        return list(engine)
    saz = shutil.which("saz")
    return [saz, "gtp"] if saz else [sys.executable, "-m", "saz.engine.cli", "gtp"]


def bench_gtp(args: argparse.Namespace) -> int:
    command = saz_gtp_command(args.engine)
    startup_seconds(command)  # warm the file cache; not counted
    runs = [startup_seconds(command) for _ in range(args.runs)]
    for i, seconds in enumerate(runs, 1):
        print(f"run {i:2d}: {seconds * 1000:6.1f} ms")
    print(f"{' '.join(command)}: median {statistics.median(runs) * 1000:.1f} ms, "
          f"min {min(runs) * 1000:.1f} ms, max {max(runs) * 1000:.1f} ms over {args.runs} runs")
    return 0
