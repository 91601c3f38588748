"""Gomoku: where was each game decided? The first win by threats of each side, in match records.

    saz bench decided --records DIR [DIR ...] --player NAME [--judge 2000000]

Not a speed measurement: a reading of finished games. At every ply after the random opening, the
threat search (fours and threes, `--judge` positions) asks whether the side to move has a
forced win by a series of threats (a VCT). Per game it prints the first such ply for `--player`
and for its opponent, and the plies at which a side that had such a win let it go (at its next
turn it had none, and the game was not over). A game where the winner was first to a win by
threats, and nobody let one go, was decided before the threats began: by the judgement of the
moves that led there, which is the network's and the search's, not the threat search's. The
judge is saz's own threat search, sound but bounded: a win it does not find may still be there.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from saz.engine.games import BLACK, WHITE
from saz.engine.games.gomoku import Gomoku
from saz.protocol.sgf import SgfGame
from saz.tools.match.match import read_records
from saz.tools.match.replay import Replay


@dataclass(frozen=True)
class GameThreats:
    """One game read for wins by threats. Plies count the moves played before the position."""

    record: Path
    #: The player's colour (BLACK or WHITE), and the game's winner (None: a draw or no result).
    color: int
    winner: int | None
    plies: int
    #: The first ply at which the player, to move, had a win by threats (None: never).
    first_own: int | None
    #: The same for the opponent.
    first_other: int | None
    #: Plies where the player had a win by threats and had none at its next turn.
    let_go_own: tuple[int, ...]
    let_go_other: tuple[int, ...]

    @property
    def winner_was_first(self) -> bool:
        """Whether the winner had a win by threats before the loser had any."""
        if self.winner is None:
            return False
        mine, theirs = ((self.first_own, self.first_other) if self.winner == self.color
                        else (self.first_other, self.first_own))
        return mine is not None and (theirs is None or mine < theirs)


def read_game(path: Path, sgf: SgfGame, color: int, judge: int) -> GameThreats:
    """Replay the record `sgf`, judging every position after the random opening (whose plies
    neither side chose). `color` is the player's colour."""
    had: dict[int, int | None] = {BLACK: None, WHITE: None}  # last ply each side had a win
    first: dict[int, int | None] = {BLACK: None, WHITE: None}
    let_go: dict[int, list[int]] = {BLACK: [], WHITE: []}
    replay = Replay(sgf)
    assert isinstance(replay.game, Gomoku), "decided reads Gomoku records"
    for turn in replay:
        if not turn.chosen:
            continue
        ply, side = turn.ply, turn.color
        wins = turn.game.threat_win(judge, threes=True) is not None
        if wins and first[side] is None:
            first[side] = ply
        if not wins and had[side] is not None:
            let_go[side].append(had[side])  # type: ignore[arg-type]
        had[side] = ply if wins else None
    return GameThreats(path, color, sgf.winner, len(replay.game.moves), first[color],
                       first[-color], tuple(let_go[color]), tuple(let_go[-color]))


def read_games(records: list[Path], player: str, judge: int) -> list[GameThreats]:
    """Every game of `records` that `player` played (by its name in PB or PW)."""
    return [read_game(path, sgf, color, judge) for path, sgf in read_records(records)
            if (color := sgf.color_of(player)) is not None]


def _ply(ply: int | None) -> str:
    return "-" if ply is None else str(ply)


def run(args: argparse.Namespace) -> int:
    games = read_games(args.records, args.player, args.judge)
    if not games:
        print(f"no game of {args.player} in", *args.records)
        return 1
    print(f"| record | {args.player} | result | plies | {args.player}'s first win by threats "
          f"| the opponent's | let go by {args.player} | by the opponent |")
    print("|---|---|---|---:|---:|---:|---|---|")
    first_to_win = let_go = wins = 0
    for g in games:
        result = "draw" if g.winner is None else ("won" if g.winner == g.color else "lost")
        wins += g.winner == g.color
        first_to_win += g.winner_was_first
        let_go += bool(g.let_go_own or g.let_go_other)
        where = f"{g.record.parent.parent.name}/{g.record.name}"
        print(f"| {where} | {'Black' if g.color == BLACK else 'White'} | {result} | {g.plies} "
              f"| {_ply(g.first_own)} | {_ply(g.first_other)} "
              f"| {' '.join(map(str, g.let_go_own)) or '-'} "
              f"| {' '.join(map(str, g.let_go_other)) or '-'} |")
    print()
    print(f"{len(games)} games, {wins} won by {args.player}, judged at {args.judge} positions: "
          f"the winner was first to a win by threats in {first_to_win}; "
          f"a win by threats was let go in {let_go}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "decided", help="Gomoku: the first win by threats of each side in match records",
        description="Where each game was decided: the first ply at which each side, to move, had "
                    "a win by threats, and the wins by threats a side let go.")
    p.add_argument("--records", type=Path, nargs="+", required=True,
                   help="directories of saz match records")
    p.add_argument("--player", required=True, help="the player's name in the records (PB/PW)")
    p.add_argument("--judge", type=int, default=2_000_000,
                   help="positions each threat search may visit (default 2000000)")
    p.set_defaults(handler=run)
