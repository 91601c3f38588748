"""Exhaustive minimax for short Gomoku wins: the oracle the threat-space search is tested against.

`wins_within(game, k)` answers whether the side to move can force a win within `k` moves of its
own, whatever the opponent does, by trying every legal move on both sides. The only knowledge it
uses is the rules' own one-ply facts, which are exact: a side with a winning move wins
(`winning_moves`), and a side facing a five it cannot make first must stop it
(`forced_moves`: any other move loses at once). It knows nothing of fours, threes or threats,
so it can check the threat search without sharing its ideas.
"""
from __future__ import annotations

from saz.engine.games.gomoku import Gomoku


def wins_within(game: Gomoku, k: int) -> bool:
    """Whether the side to move forces a five within `k` of its own moves (restores `game`)."""
    return _attack(game, k, {})


def winning_first_moves(game: Gomoku, k: int) -> list[int]:
    """Every move of the side to move after which it forces a five within `k` moves in all."""
    table: dict[tuple[int, int, bool], bool] = {}
    found = []
    for move in _candidates(game):
        game.play(move)
        if game.is_over() or _defend(game, k - 1, table):
            found.append(int(move))
        game.undo()
    return found


def _candidates(game: Gomoku) -> list[int]:
    forced = game.forced_moves()
    return [int(m) for m in (forced if forced is not None else game.legal_moves())]


def _attack(game: Gomoku, k: int, table: dict[tuple[int, int, bool], bool]) -> bool:
    if game.is_over() or k <= 0:
        return False
    if game.winning_moves():
        return True
    if k == 1:  # no five now: one move cannot win
        return False
    key = (game.hash, k, True)
    if key in table:
        return table[key]
    result = False
    for move in _candidates(game):
        game.play(move)
        result = _defend(game, k - 1, table)
        game.undo()
        if result:
            break
    table[key] = result
    return result


def _defend(game: Gomoku, k: int, table: dict[tuple[int, int, bool], bool]) -> bool:
    """The defender to move: whether the attacker wins within `k` more moves whatever it does."""
    if game.is_over():
        return game.winner() == -game.to_move
    if game.winning_moves():
        return False  # the defender makes five first
    forced = game.forced_moves()
    if forced is None:  # the attacker has no five to make next move
        if k <= 1:
            return False
        replies = [int(m) for m in game.legal_moves()]
    else:
        replies = [int(m) for m in forced]
        if k <= 0:
            return False
        if not replies:
            return True  # no move stops the five
    key = (game.hash, k, False)
    if key in table:
        return table[key]
    result = True
    for move in replies:
        game.play(move)
        result = _attack(game, k, table)
        game.undo()
        if not result:
            break
    table[key] = result
    return result
