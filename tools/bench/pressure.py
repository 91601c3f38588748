"""Gomoku: how were the lost games lost? The player's turns under threat, in match records.

    saz bench pressure --records DIR [DIR ...] --player NAME [--games N ...]
                       [--judge 1000000] [--screen 100000]

Not a speed measurement: a reading of finished games, the defender's side of `saz bench decided`.
For every game the player lost, it walks back from the player's last turn: at each turn where
the opponent, were it to move, would win by a series of threats (a VCT within `--judge`
positions), it counts the player's safe moves, those after which the opponent has no such win,
and asks whether the move played was one of them. The walk stops at the first turn with no
threat standing: the last quiet turn, after which the player only ever answered threats.

A loss where the player always played a safe move while one stood, and the threatened turns ran
out of safe moves, was decided at or before that last quiet turn: by judgement, not by a threat
the root's guard (`MCTS._guard_root`) failed to see. Safe moves are sought among the moves within
two points of a stone (every move that makes or blocks a four or a three lies there): each is
screened at `--screen` positions and the survivors confirmed at `--judge`. The judge is saz's own
threat search, sound but bounded: a move it calls safe may still lose to a longer VCT.
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from saz.engine.games import BLACK
from saz.engine.games.gomoku import Gomoku
from saz.engine.search.mcts import opponent_threatens, threat_refutes
from saz.tools.match.match import read_records
from saz.tools.match.replay import Replay

#: How far from a stone a move may lie and still make or block a four or a three: a five-point
#: window holding three stones and the move has a stone within two points of it.
_REACH = 2


@dataclass(frozen=True)
class ThreatenedTurn:
    """One of the player's turns under threat: the opponent, to move, would win by threats."""

    ply: int
    #: The safe moves: after each, the opponent has no win by threats the judge finds.
    safe: tuple[int, ...]
    #: How many moves were looked at (the empty points within `_REACH` of a stone).
    candidates: int
    played: int

    @property
    def played_safe(self) -> bool:
        return self.played in self.safe

    @property
    def missed(self) -> bool:
        """An unsafe move played while a safe one stood: a loss a deeper guard could have saved."""
        return bool(self.safe) and not self.played_safe


@dataclass(frozen=True)
class Defence:
    """A lost game read from the player's side, its threatened turns last first."""

    record: Path
    color: int
    plies: int
    #: The player's last turn with no threat standing (None: threatened since the opening).
    last_quiet: int | None
    turns: tuple[ThreatenedTurn, ...]

    @property
    def unsafe_with_safe_standing(self) -> tuple[int, ...]:
        """Plies where the player played a move the opponent's threats beat while a safe one
        stood (`ThreatenedTurn.missed`)."""
        return tuple(t.ply for t in self.turns if t.missed)


def candidates(game: Gomoku) -> list[int]:
    """The empty points within `_REACH` points (in both coordinates) of a stone."""
    board = np.asarray(game.board).reshape(game.height, game.width) != 0
    near = np.zeros_like(board)
    for dy in range(-_REACH, _REACH + 1):
        for dx in range(-_REACH, _REACH + 1):
            shifted = np.roll(np.roll(board, dy, axis=0), dx, axis=1)
            # np.roll wraps round: clear the rows and columns that came from the far side.
            if dy > 0:
                shifted[:dy] = False
            elif dy < 0:
                shifted[dy:] = False
            if dx > 0:
                shifted[:, :dx] = False
            elif dx < 0:
                shifted[:, dx:] = False
            near |= shifted
    return [int(m) for m in game.legal_moves() if near.flat[int(m)]]


def safe_moves(game: Gomoku, judge: int, screen: int) -> tuple[tuple[int, ...], int]:
    """The candidate moves after which the opponent has no win by threats: screened at
    `screen` positions, the survivors confirmed at `judge`. Returns them and the candidates'
    count."""
    moves = candidates(game)
    survivors = [m for m in moves if not threat_refutes(game, m, min(screen, judge))]
    if screen < judge:
        survivors = [m for m in survivors if not threat_refutes(game, m, judge)]
    return tuple(survivors), len(moves)


def read_defence(path: Path, positions: Sequence[tuple[Gomoku, int]], color: int, plies: int,
                 judge: int, screen: int) -> Defence:
    """Walk back over the player's turns of a lost game of `plies` moves, from its last, while
    the opponent's threats stand. `positions` are the turns the player chose, in the order
    played: each position before its move, and the move."""
    turns: list[ThreatenedTurn] = []
    last_quiet = None
    for game, played in reversed(positions):
        ply = len(game.moves)
        if not opponent_threatens(game, judge):
            last_quiet = ply
            break
        safe, count = safe_moves(game, judge, screen)
        turns.append(ThreatenedTurn(ply, safe, count, played))
    return Defence(path, color, plies, last_quiet, tuple(turns))


def read_defences(records: list[Path], player: str, judge: int, screen: int,
                  games: Sequence[int] = ()) -> list[Defence]:
    """Every game of `records` that `player` lost (by its name in PB or PW), or only those
    numbered `games` (the record's file name, 0001.sgf being 1). The random opening's plies,
    which neither side chose, are never judged."""
    found = []
    for path, sgf in read_records(records):
        color = sgf.color_of(player)
        if color is None or (games and int(path.stem) not in games):
            continue
        if sgf.winner is None or sgf.winner == color:
            continue
        replay = Replay(sgf)
        mine = [(turn.game.copy(), turn.move) for turn in replay
                if turn.chosen and turn.color == color]
        found.append(read_defence(path, mine, color, len(replay.game.moves), judge, screen))
    return found


def _turns(d: Defence) -> str:
    """`ply:safe/candidates`, last turn first, a `!` where an unsafe move was played while a
    safe one stood."""
    return " ".join(f"{t.ply}:{len(t.safe)}/{t.candidates}{'!' if t.missed else ''}"
                    for t in d.turns) or "-"


def run(args: argparse.Namespace) -> int:
    lost = read_defences(args.records, args.player, args.judge, args.screen, args.games)
    if not lost:
        print(f"no game lost by {args.player} in", *args.records)
        return 1
    print(f"| record | {args.player} | plies | last quiet turn | threatened turns "
          f"(ply:safe/looked at, last first; ! unsafe played, safe standing) |")
    print("|---|---|---:|---:|---|")
    for d in lost:
        where = f"{d.record.parent.parent.name}/{d.record.name}"
        quiet = "-" if d.last_quiet is None else str(d.last_quiet)
        print(f"| {where} | {'Black' if d.color == BLACK else 'White'} | {d.plies} | {quiet} "
              f"| {_turns(d)} |")
    turns = [t for d in lost for t in d.turns]
    standing = [t for t in turns if t.safe]
    missed = sum(t.missed for t in turns)
    print()
    print(f"{len(lost)} game{'s' * (len(lost) != 1)} lost by {args.player}, judged at "
          f"{args.judge} positions: {len(turns)} turns under threat, a safe move standing at "
          f"{len(standing)}, played at {sum(t.played_safe for t in standing)}; an unsafe move "
          f"played while a safe one stood: {missed}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "pressure", help="Gomoku: the player's turns under threat in the games it lost",
        description="How each lost game was lost: walking back from the player's last turn, "
                    "the turns where the opponent threatened a win by threats, the player's "
                    "safe moves there and whether it played one.")
    p.add_argument("--records", type=Path, nargs="+", required=True,
                   help="directories of saz match records")
    p.add_argument("--player", required=True, help="the player's name in the records (PB/PW)")
    p.add_argument("--games", type=int, nargs="+", default=(),
                   help="only these games (their record's number: 0022.sgf is 22)")
    p.add_argument("--judge", type=int, default=1_000_000,
                   help="positions each threat search may visit to call a threat or a move "
                        "safe (default 1000000)")
    p.add_argument("--screen", type=int, default=100_000,
                   help="positions of the first, cheaper look at each move (default 100000)")
    p.set_defaults(handler=run)
