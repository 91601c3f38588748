"""Gomoku: does the search walk into the opponent's win by threats? Positions from lost games.

    saz bench guard --model models/gomoku.onnx --records DIR [DIR ...] --opponent aiwine
                    [--judge 500000] [--visits 100]

Not a speed measurement: a probe of the root's defence against threats, on the positions where
it failed in real games. In every game of the records the `--opponent` won, it takes the position
before the loser's move that first let the opponent win by a series of threats (the first ply at
which the opponent, to move, has a VCT that the threat search finds within `--judge` positions).
On each, the search plays a move at `--visits` visits (deterministic: every budget is counted in
positions, none in seconds), once without the second look after the search
(`threat_confirm_moves=0`) and once with the default, and the judge asks whether the opponent
still has such a win after it. Many of these positions are lost already (no move stops the win);
the probe counts how often each search found a move that the judge does not refute.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path

from saz.engine.evaluator import Evaluator
from saz.engine.games import BLACK
from saz.engine.games.gomoku import Gomoku
from saz.engine.search.mcts import MCTS, SearchLimits, threat_refutes
from saz.engine.search.options import SearchOptions
from saz.protocol.vertex import vertices_for
from saz.tools.match.match import read_records
from saz.tools.match.replay import Replay


@dataclass(frozen=True)
class Blunder:
    """A position from a lost game: the loser to move, the opponent's win by threats one move
    away. `record` and `ply` say where it came from (`ply` moves were played)."""

    record: Path
    ply: int
    game: Gomoku


def blunders(records: list[Path], opponent: str, judge: int) -> list[Blunder]:
    """One position per game of `records` that `opponent` won and the judge can place."""
    found = []
    for path, sgf in read_records(records):
        opponent_color = sgf.winner
        if opponent_color is None:
            continue
        winner = sgf.player_black if opponent_color == BLACK else sgf.player_white
        if winner != opponent:
            continue
        replay = Replay(sgf)
        for turn in replay:
            # The loser's move before this one was its own choice, not the opening's.
            if (turn.color == opponent_color and turn.ply > replay.opening
                    and turn.game.threat_win(judge, threes=True) is not None):
                before = turn.game.copy()
                before.undo()
                found.append(Blunder(path, len(before.moves), before))
                break
    return found


def run(args: argparse.Namespace) -> int:
    positions = blunders(args.records, args.opponent, args.judge)
    if not positions:
        print("no position found: did", args.opponent, "win any game of", *args.records)
        return 1
    evaluator = Evaluator(args.model, device="cpu", threads=1)
    base = SearchOptions(seed=1)
    searches = {"without the second look": replace(base, threat_confirm_moves=0),
                "with it (default)": base}
    safe = dict.fromkeys(searches, 0)
    print(f"| record | ply | {' | '.join(searches)} |")
    print("|---|---:|---|---|")
    for blunder in positions:
        vertices = vertices_for("gomoku", blunder.game.width, blunder.game.height)
        cells = []
        for name, options in searches.items():
            move = MCTS(evaluator, options).search(
                blunder.game, SearchLimits(visits=args.visits)).best_move
            ok = not threat_refutes(blunder.game, move, args.judge)
            safe[name] += ok
            cells.append(f"{vertices.format(move)} {'holds' if ok else 'refuted'}")
        where = f"{blunder.record.parent.parent.name}/{blunder.record.name}"
        print(f"| {where} | {blunder.ply} | {' | '.join(cells)} |")
    print()
    print(f"{len(positions)} positions, {args.visits} visits, judged at {args.judge} positions:",
          ", ".join(f"{name}: {n} held" for name, n in safe.items()))
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "guard", help="Gomoku: the root's defence against threats, on lost games' positions",
        description="How often the search's move leaves the opponent a win by threats, with and "
                    "without the second look, on the positions where real games were lost.")
    p.add_argument("--model", required=True, help="an exported Gomoku model")
    p.add_argument("--records", type=Path, nargs="+", required=True,
                   help="directories of saz match records")
    p.add_argument("--opponent", required=True, help="the winner's name in the records (PB/PW)")
    p.add_argument("--judge", type=int, default=500_000,
                   help="positions the judging threat search may visit (default 500000)")
    p.add_argument("--visits", type=int, default=100, help="the search's visits (default 100)")
    p.set_defaults(handler=run)
