"""The engine's command line, defined once for the front-ends (`saz gtp`, `pbrain-saz`).

Which brain answers (a network `--model` or a reference `--player`), where the network runs and
on how many threads, how many visits a move may take and whether the engine ponders: each front-end
adds these with `add_engine_arguments`, the search's own options with
`engine.search.options.add_search_arguments`, and builds its `EngineConfig` from the parsed
arguments with `engine_config`. A front-end may word an option's help for its protocol (Gomocup's
`INFO thread_num` overrides `--threads`); the option itself, its type, default and checks are
the same in both.
"""
from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from saz.engine.engine import EngineConfig
from saz.engine.players import PLAYERS
from saz.engine.search.options import search_options

#: Where the network may run: `engine.evaluator.Device`, spelled out so that parsing a command
#: line loads no onnxruntime (the evaluator's module does).
DEVICES = ("auto", "cpu", "cuda")

#: Each engine option's help, by its destination; a front-end may replace any of them.
HELP: Mapping[str, str] = {
    "model": "the network (.onnx with its .json card); default: the shipped model of the game",
    "player": "answer genmove with a reference player instead of the network (random; greedy: "
              "one ply of a per-game heuristic); no model needed",
    "device": "where the network runs (auto: CUDA when available)",
    "visits": "visits per move (a cap under a clock too)",
    "time_per_move": "seconds per move when the controller sets no clock",
    "threads": "CPU threads of the network (default: the cores)",
    "chunk_nodes": "evaluate a batch of more nodes than N in calls of at most N nodes, the same "
                   "answers (one thread: 1024 was 1.2-1.6x faster on big batches; default: one "
                   "call)",
    "ponder": "keep searching on the opponent's time",
}


def add_engine_arguments(parser: argparse.ArgumentParser, *, time_per_move: bool = False,
                         help: Mapping[str, str] | None = None) -> None:
    """Add --model | --player, --device, --visits, --threads, --chunk-nodes and --ponder to
    `parser`.

    `time_per_move` also offers --time-per-move (exclusive with --visits), for a protocol whose
    controller may set no clock (GTP); without it the parsed value is None. `help` rewords the
    options' help by destination (`HELP`'s keys)."""
    words = {**HELP, **(help or {})}
    if unknown := set(words) - set(HELP):
        raise ValueError(f"no engine option {', '.join(sorted(unknown))}")
    brain = parser.add_mutually_exclusive_group()
    brain.add_argument("--model", type=Path, metavar="PATH", help=words["model"])
    brain.add_argument("--player", choices=sorted(PLAYERS), help=words["player"])
    parser.add_argument("--device", choices=DEVICES, default="auto", help=words["device"])
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument("--visits", type=int, metavar="N", help=words["visits"])
    if time_per_move:
        limit.add_argument("--time-per-move", type=float, metavar="S",
                           help=words["time_per_move"])
    else:
        parser.set_defaults(time_per_move=None)
    parser.add_argument("--threads", type=int, metavar="N", help=words["threads"])
    parser.add_argument("--chunk-nodes", type=int, metavar="N", help=words["chunk_nodes"])
    parser.add_argument("--ponder", action="store_true", help=words["ponder"])


def engine_config(parser: argparse.ArgumentParser, args: argparse.Namespace, *, game: str,
                  rules: Mapping[str, Any] | None = None,
                  seed: int | None = None) -> EngineConfig:
    """The `EngineConfig` of arguments parsed with `add_engine_arguments` and
    `add_search_arguments`, for `game` with its `rules`; `seed` seeds the search. A bad value is
    the parser's error (exit status 2, the reason on stderr)."""
    for name, value in (("--visits", args.visits), ("--threads", args.threads),
                        ("--chunk-nodes", args.chunk_nodes)):
        if value is not None and value < 1:
            parser.error(f"{name} must be at least 1")
    if args.time_per_move is not None and not args.time_per_move > 0:
        parser.error("--time-per-move must be positive")
    return EngineConfig(game=game, model=args.model, device=args.device, rules=dict(rules or {}),
                        threads=args.threads, chunk_nodes=args.chunk_nodes,
                        visits=args.visits,
                        time_per_move=args.time_per_move, ponder=args.ponder,
                        player=args.player,
                        search=replace(search_options(parser, args), seed=seed))
