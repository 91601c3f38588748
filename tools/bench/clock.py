"""Whether `saz gtp` keeps a byo-yomi clock, measured from the controller's side.

A tournament controller (gogui-twogtp, KGS, a match runner) sends `time_left` before each
`genmove` and times the move from writing the command to reading the reply: process wake-up,
the search, the last batch and the reply all count. This benchmark does exactly that for
`--moves` moves on one board, the engine playing both colours (a game that ends starts again),
and prints the distribution of those times against the period.

    saz bench clock --size 19 --moves 200 --time "kgs-time_settings byoyomi 0 1 1"
    saz bench clock --size 19 --moves 200 --time "time_settings 0 1 1" --busy 1
    saz bench clock ... -- ENGINE ARGS...       (default: the installed `saz gtp`)

`--busy N` keeps N other processes spinning on the CPU throughout (a machine with its other
core busy). The period is the time settings' byo-yomi time; `time_left` reports a fresh period
before every move (one period left, Japanese; or one stone, Canadian), as controllers do.
"""
from __future__ import annotations

import argparse
import multiprocessing
import shlex
import statistics
import time
from collections.abc import Sequence

from saz.protocol.gtp_client import GtpClient
from saz.tools.bench.gtp import saz_gtp_command

#: How long a single move may take before the benchmark gives up on the engine.
MOVE_TIMEOUT = 60.0


def _spin() -> None:
    while True:
        pass


def parse_period(time_command: str) -> float:
    """The byo-yomi period (seconds) of a `time_settings M B S` or `kgs-time_settings byoyomi M
    B P` command: the limit one move must keep to once main time is gone."""
    words = time_command.split()
    if words[:2] == ["kgs-time_settings", "byoyomi"] and len(words) == 5:
        return float(words[3])
    if words[:1] == ["kgs-time_settings"] and words[1:2] == ["canadian"] and len(words) == 5:
        return float(words[3]) / int(words[4])
    if words[:1] == ["time_settings"] and len(words) == 4:
        return float(words[2]) / int(words[3])
    raise ValueError(f"not a byo-yomi time setting: {time_command!r}")


def move_seconds(command: Sequence[str], size: int, moves: int, time_command: str) -> list[float]:
    """The controller-side seconds of each of `moves` genmoves under `time_command`."""
    words = time_command.split()
    canadian = words[0] == "time_settings" or words[1] == "canadian"
    period = parse_period(time_command)
    times: list[float] = []
    with GtpClient(command) as engine:
        engine.command(f"boardsize {size}", timeout=MOVE_TIMEOUT)
        engine.command("clear_board", timeout=MOVE_TIMEOUT)
        engine.command(time_command, timeout=MOVE_TIMEOUT)
        color, passes = "b", 0
        while len(times) < moves:
            # A fresh period before every move: its time, and one stone (Canadian) or one
            # period (Japanese) left.
            stones = int(words[-1]) if canadian else 1
            engine.command(f"time_left {color} {period * (stones if canadian else 1):g} "
                           f"{stones}", timeout=MOVE_TIMEOUT)
            sent = time.perf_counter()
            reply = engine.command(f"genmove {color}", timeout=MOVE_TIMEOUT)
            times.append(time.perf_counter() - sent)
            passes = passes + 1 if reply.lower() == "pass" else 0
            if reply.lower() == "resign" or passes >= 2:
                engine.command("clear_board", timeout=MOVE_TIMEOUT)
                engine.command(time_command, timeout=MOVE_TIMEOUT)
                color, passes = "b", 0
            else:
                color = "w" if color == "b" else "b"
    return times


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("clock", help="byo-yomi kept from the controller's side",
                              description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=19)
    p.add_argument("--moves", type=int, default=200)
    p.add_argument("--time", default="kgs-time_settings byoyomi 0 1 1",
                   help="the time settings command (byo-yomi only)")
    p.add_argument("--busy", type=int, default=0, help="processes kept spinning meanwhile")
    p.add_argument("engine", nargs="*", help="the engine's command line (default: saz gtp)")
    p.set_defaults(handler=bench_clock)


def bench_clock(args: argparse.Namespace) -> int:
    command = saz_gtp_command(args.engine)
    period = parse_period(args.time)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for spinner in spinners:
        spinner.start()
    try:
        times = move_seconds(command, args.size, args.moves, args.time)
    finally:
        for spinner in spinners:
            spinner.terminate()
    ordered = sorted(times)
    over = sum(t > period for t in times)
    print(f"{shlex.join(command)}: {args.time}, {args.size}x{args.size}, {len(times)} genmoves, "
          f"{args.busy} busy process(es)")
    print(f"median {statistics.median(times):.3f} s, p99 "
          f"{ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]:.3f} s, "
          f"max {ordered[-1]:.3f} s; over the {period:g} s period: {over}")
    slowest = sorted(range(len(times)), key=times.__getitem__, reverse=True)[:3]
    print("slowest genmoves (1-based): " + ", ".join(f"#{i + 1} {times[i]:.3f} s"
                                                      for i in slowest))
    return 0 if over == 0 else 1
