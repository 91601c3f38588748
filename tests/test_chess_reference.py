"""Chess's rules against python-chess (PyPI `chess`), the reference the scripts and GUIs that
talk to saz use: over random games, every position's legal moves, FEN, check, repetition key
and outcome agree, and undo walks back to the start exactly."""
from __future__ import annotations

import numpy as np
import pytest

from saz.engine.games.base import Termination
from saz.engine.games.chess import Chess

chess = pytest.importorskip("chess")

#: python-chess's terminations as the game's (`outcome(claim_draw=True)` with threefold
#: repetition and the fifty-move rule read as automatic draws, as saz's rules have them).
_REFERENCE = {
    "CHECKMATE": Termination.CHECKMATE,
    "STALEMATE": Termination.STALEMATE,
    "INSUFFICIENT_MATERIAL": Termination.INSUFFICIENT_MATERIAL,
}


def reference_termination(board: chess.Board) -> Termination | None:
    """How saz's rules should end the game in `board`: python-chess's checkmate, insufficient
    material and stalemate, then a hundred plies without capture or pawn move, then the third
    occurrence of the position."""
    outcome = board.outcome(claim_draw=False)
    if outcome is not None and outcome.termination.name in _REFERENCE:
        return _REFERENCE[outcome.termination.name]
    if board.halfmove_clock >= 100:
        return Termination.FIFTY_MOVES
    if board.is_repetition(3):
        return Termination.REPETITION
    return None


def _key(board: chess.Board) -> str:
    """The position for repetition: placement, side, castling and a legal en passant square."""
    return " ".join(board.fen(en_passant="legal").split()[:4])


def _choose(rng: np.random.Generator, legal: list[chess.Move], last: chess.Move | None,
            back_rate: float) -> chess.Move:
    """A random move; at `back_rate`, the reverse of the side's previous one where legal (so
    that positions repeat)."""
    if last is not None and rng.random() < back_rate:
        back = chess.Move(last.to_square, last.from_square)
        if back in legal:
            return back
    return legal[int(rng.integers(len(legal)))]


@pytest.mark.parametrize("seed", range(16))
def test_random_games_agree_with_python_chess(seed: int) -> None:
    rng = np.random.default_rng(seed)
    back_rate = 0.3 if seed % 4 == 3 else 0.0
    board = chess.Board()
    game = Chess()
    hashes: dict[str, int] = {}
    history: list[chess.Move] = []
    while True:
        assert game.fen() == board.fen(en_passant="legal")
        assert game.in_check() == board.is_check()
        assert hashes.setdefault(_key(board), game.hash) == game.hash, game.fen()
        expected = reference_termination(board)
        assert game.termination() == expected, game.fen()
        if expected is not None:
            assert game.is_over() and len(game.legal_moves()) == 0
            winner = game.outcome()
            assert winner is not None
            assert winner.winner == (0 if expected != Termination.CHECKMATE else
                                     (-1 if board.turn == chess.BLACK else 1))
            break
        legal = sorted(board.legal_moves, key=lambda m: m.uci())
        ours = sorted(game.uci(m) for m in game.legal_moves())
        assert ours == [m.uci() for m in legal], game.fen()
        move = _choose(rng, legal, history[-2] if len(history) >= 2 else None, back_rate)
        game.play(game.parse_uci(move.uci()))
        board.push(move)
        history.append(move)
    for _ in history:
        game.undo()
    assert game.fen() == chess.STARTING_FEN


def test_random_games_reach_every_ending() -> None:
    """Random play ends games in every way the rules know, each as python-chess says."""
    seen = set()
    for seed in range(40):
        rng = np.random.default_rng(seed)
        board = chess.Board()
        game = Chess()
        while not game.is_over():
            legal = sorted(board.legal_moves, key=lambda m: m.uci())
            move = legal[int(rng.integers(len(legal)))]
            game.play(game.parse_uci(move.uci()))
            board.push(move)
        assert game.termination() == reference_termination(board)
        seen.add(game.termination())
    assert seen == set(_REFERENCE.values()) | {Termination.FIFTY_MOVES, Termination.REPETITION}


def _random_fens(count: int, seed: int) -> list[str]:
    """Positions of random games at random plies, for the FEN round trip."""
    rng = np.random.default_rng(seed)
    fens = []
    while len(fens) < count:
        board = chess.Board()
        for _ in range(int(rng.integers(1, 200))):
            legal = list(board.legal_moves)
            if not legal:
                break
            board.push(legal[int(rng.integers(len(legal)))])
        fens.append(board.fen(en_passant="legal"))
    return fens


@pytest.mark.parametrize("fen", _random_fens(40, 1))
def test_fen_round_trips_and_moves_agree_from_a_set_up_position(fen: str) -> None:
    game = Chess.from_fen(fen)
    board = chess.Board(fen)
    assert game.fen() == fen
    assert sorted(game.uci(m) for m in game.legal_moves()) == sorted(
        m.uci() for m in board.legal_moves) or game.is_over()
    # Each move's child agrees too, and the position comes back after undo.
    for move in list(board.legal_moves)[:8]:
        if game.is_over():
            break
        game.play(game.parse_uci(move.uci()))
        board.push(move)
        assert game.fen() == board.fen(en_passant="legal")
        assert game.in_check() == board.is_check()
        game.undo()
        board.pop()
    assert game.fen() == fen


@pytest.mark.parametrize("fen", _random_fens(30, 2))
def test_the_attack_check_and_piece_planes_agree_with_python_chess(fen: str) -> None:
    game = Chess.from_fen(fen)
    board = chess.Board(fen)
    x = np.zeros((game.num_nodes, game.num_features()), np.float32)
    game.encode(x)
    planes = {name: x[:64, i] for i, name in enumerate(game.feature_names)}
    us, them = board.turn, not board.turn

    def row(square: int) -> int:  # python-chess's square in the side to move's frame
        rank, file = chess.square_rank(square), chess.square_file(square)
        return (rank if us == chess.BLACK else 7 - rank) * 8 + file

    def plane(squares: object) -> np.ndarray:
        out = np.zeros(64, np.float32)
        for sq in chess.SquareSet(squares):  # type: ignore[arg-type]  # a mask or squares
            out[row(sq)] = 1
        return out

    for t, name in enumerate(chess.PIECE_NAMES[1:], start=1):
        np.testing.assert_array_equal(planes[f"own_{name}"], plane(board.pieces_mask(t, us)))
        np.testing.assert_array_equal(planes[f"opp_{name}"], plane(board.pieces_mask(t, them)))
    for side, name in ((us, "own_attacks"), (them, "opp_attacks")):
        attacked = [sq for sq in chess.SQUARES if board.is_attacked_by(side, sq)]
        np.testing.assert_array_equal(planes[name], plane(attacked), err_msg=name)
    np.testing.assert_array_equal(planes["checkers"], plane(board.checkers()))
    ep = board.ep_square if board.has_legal_en_passant() else None
    np.testing.assert_array_equal(planes["en_passant"], plane([] if ep is None else [ep]))
    np.testing.assert_array_equal(
        planes["own_castle"] + planes["opp_castle"], plane(board.castling_rights))
    assert x[64, game.feature_names.index("halfmove")] == pytest.approx(board.halfmove_clock / 100)
