"""`pbrain-saz` as a Gomocup manager times it: start-up, network loading, and a turn's overhead.

    python -m saz.tools.bench.gomocup [--runs 20] [--turns 40] [--model PATH] [-- COMMAND ...]

* start-up: from process creation to the answer to ABOUT (a GUI waits for it when it lists its
  engines; c-gomoku-cli asks ABOUT first), the median over `--runs` fresh processes;
* START: from process creation to the OK of START, which loads the network (the manager does
  not time START as part of a turn, but it does charge it to the match clock);
* turn overhead: under `INFO timeout_turn 0` a search gets its least budget
  (`TimePolicy.min_budget`); the wall time of a TURN, from the manager writing it to the move
  arriving, less that budget, is what a move costs beyond its thinking (reading and parsing the
  command, playing it, the search's set-up and its last batch, the answer, both pipes). The
  clock's Gomocup safety margin must cover it.

COMMAND (default: this Python running `-m saz.protocol.gomocup`) gets `--model` appended.
Without `--model` a randomly initialised network of the default shape is exported to a temporary
folder: timings do not depend on the weights.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from saz.engine.games.gomoku import Gomoku
from saz.engine.search.clock import TimePolicy
from saz.protocol.gomocup_client import PbrainClient


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "gomocup", help="pbrain-saz start-up, network loading and turn overhead",
        description="Time pbrain-saz as a Gomocup manager does: start-up to ABOUT, to START's "
                    "OK, and the overhead of a turn beyond its thinking.")
    _arguments(p)
    p.set_defaults(handler=bench_gomocup)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=int, default=20, help="fresh processes started (default 20)")
    p.add_argument("--turns", type=int, default=40, help="turns timed (default 40)")
    p.add_argument("--size", type=int, default=15, help="board size of the timed turns")
    p.add_argument("--model", type=Path, help="an exported Gomoku model (default: a random one)")
    p.add_argument("command", nargs="*", help="the brain to run (after --)")


def bench_gomocup(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="saz-bench-") as tmp:
        model = args.model or _random_model(Path(tmp) / "gomoku.onnx")
        command = [*(args.command or [sys.executable, "-m", "saz.protocol.gomocup"]),
                   "--model", str(model)]
        print(f"brain: {' '.join(command)}")
        about, start = _start_up(command, args.runs)
        print(f"| start-up to ABOUT, median of {args.runs} (min, max) | "
              f"{_ms(statistics.median(about))} ({_ms(min(about))}, {_ms(max(about))}) |")
        print(f"| start-up to START's OK, network loaded, median (max) | "
              f"{_ms(statistics.median(start))} ({_ms(max(start))}) |")
        turns = _turns(command, args.size, args.turns)
        least = TimePolicy().min_budget
        print(f"| turn overhead beyond a {_ms(least)} search, median of {len(turns)} (max) | "
              f"{_ms(statistics.median(turns) - least)} ({_ms(max(turns) - least)}) |")
        margin = TimePolicy().gomocup_margin
        print(f"| the clock's Gomocup margin: latency, overrun | {_ms(margin.latency)}, "
              f"{margin.overrun:.0%} |")
    return 0


def _start_up(command: list[str], runs: int) -> tuple[list[float], list[float]]:
    about, start = [], []
    for _ in range(runs):
        with PbrainClient(command) as brain:
            brain.write("ABOUT")
            about.append(brain.read_reply(30, sent_at=brain.spawned_at).seconds)
            brain.write("START 15")
            reply = brain.read_reply(30, sent_at=brain.spawned_at)
            if reply.text != "OK":
                raise SystemExit(f"the brain answered START with {reply.text!r}")
            start.append(reply.seconds)
    return about, start


def _turns(command: list[str], size: int, count: int) -> list[float]:
    """Wall times of `count` TURNs under timeout_turn 0; the opponent takes the free point
    nearest the top-left corner, and a finished game starts afresh."""
    times: list[float] = []
    with PbrainClient(command) as brain:
        brain.info("timeout_turn", 0)
        brain.start_game(size)
        game = Gomoku(size)
        while len(times) < count:
            if game.is_over():
                brain.restart()
                game = Gomoku(size)
                continue
            move = int(game.legal_moves()[0])
            game.play(move)
            if game.is_over():  # the opponent has won: nothing for the brain to answer
                continue
            reply = brain.turn(move % size, move // size, timeout=10)
            times.append(reply.seconds)
            game.play(game.point(*reply.move))
    return times


def _random_model(path: Path) -> Path:
    from saz.tools.train.export import export_random_network  # torch: only without --model

    export_random_network(Gomoku, path)
    return path


def _ms(seconds: float) -> str:
    return f"{1000 * seconds:.0f} ms"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m saz.tools.bench.gomocup",
                                     description=__doc__.splitlines()[0])
    _arguments(parser)
    return bench_gomocup(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
