"""A `saz match` record replayed move by move: the loop every record reader shares.

The benchmarks read finished games (`tools/match/records.py`) to look at the positions in them
(the threat search's cost, the evaluation cache's savings). Each needs the same walk: a fresh
game of the record's kind and size, the moves played in order, who played each, whether it was
one of the random opening's plies (which neither engine chose), and a stop where a record runs
past the end of the game under the rules given. `Replay` is that walk; what to do
at each move stays with the reader.

    replay = Replay(sgf)
    for turn in replay:
        if turn.chosen and turn.player == "gnugo":
            keep(turn.game.copy(), turn.move)
    replay.game.is_over(), replay.past_end
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from saz.engine.games import BLACK, WHITE, game_class, new_game
from saz.engine.games.base import Game
from saz.protocol.sgf import SgfGame
from saz.tools.match.records import opening_plies


@dataclass(frozen=True)
class Turn:
    """One recorded move and the position it was played in.

    `game` is the replay's own game, before the move: the replay plays the move on it when the
    reader asks for the next turn, so a reader that keeps the position keeps `game.copy()`."""

    game: Game
    move: int
    #: The colour the record gives the move (BLACK or WHITE).
    color: int
    #: The name the record gives the player of the move (PB or PW), None when it names none.
    player: str | None
    #: False for the random opening's plies, which neither engine chose.
    chosen: bool

    @property
    def ply(self) -> int:
        """Moves played before this one."""
        return len(self.game.moves)


class Replay:
    """The moves of `sgf` played on a new game of its kind and size, one `Turn` before each,
    under the rules the record names (`Game.rules_from_record`: Go's komi, Gomoku's rule) with
    `rules` (the game's own keyword parameters) in their place where given.

    Iterating plays the record through once. It stops early, with `past_end` set, at a move
    after the game has ended: a record of other rules, or of another game's end. `game` is the
    position reached, the final one once the iteration is done."""

    def __init__(self, sgf: SgfGame, **rules: Any) -> None:
        self.sgf = sgf
        recorded = game_class(sgf.game).rules_from_record(sgf.komi, sgf.rules)
        self.game = new_game(sgf.game, sgf.width, sgf.height, **{**recorded, **rules})
        #: The first plies, the random opening, that neither engine chose.
        self.opening = opening_plies(sgf.game_comment)
        self.past_end = False

    def __iter__(self) -> Iterator[Turn]:
        names = {BLACK: self.sgf.player_black, WHITE: self.sgf.player_white}
        for node in self.sgf.nodes:
            if node.move is None:
                continue
            if self.game.is_over():
                self.past_end = True
                return
            color, ply = node.move.color, len(self.game.moves)
            yield Turn(self.game, node.move.move, color, names[color], ply >= self.opening)
            self.game.play(node.move.move)
