"""PGN (`tools/match/pgn.py`): SAN written from saz's own chess rules, checked move by move
against python-chess on random games and on the positions where SAN is hardest (castling, en
passant, underpromotion, mate, disambiguation); whole games round-trip through python-chess's
PGN reader (`chess.pgn.read_game`), set-up FEN starts included; and the openings read from PGN
and EPD files."""
from __future__ import annotations

import io

import chess
import chess.pgn
import numpy as np
import pytest

from saz.engine.games import WHITE, GameError
from saz.engine.games.base import Termination
from saz.engine.games.chess import Chess
from saz.tools.match.pgn import (
    PgnOpening,
    epd_fen,
    format_pgn,
    parse_san,
    read_epd_openings,
    read_pgn_openings,
    san,
    san_tokens,
    sans,
    split_pgn,
)

TAGS = {"Event": "test", "Date": "2025.01.02", "Round": "1", "White": "w", "Black": "b"}


def played(ucis: list[str], fen: str | None = None, width: int = 8) -> Chess:
    game = Chess(width, fen=fen)
    for text in ucis:
        game.play(game.parse_uci(text))
    return game


def read_back(text: str) -> chess.pgn.Game:
    """The game python-chess reads from `text`, which must be read without an error."""
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert not game.errors, game.errors
    return game


def assert_same_game(ours: Chess, theirs: chess.pgn.Game) -> None:
    replay = Chess(ours.width, fen=ours.start_fen)
    ucis = []
    for move in ours.moves:
        ucis.append(replay.uci(move))
        replay.play(move)
    assert [move.uci() for move in theirs.mainline_moves()] == ucis
    assert theirs.end().board().fen() == ours.fen()


def test_san_agrees_with_python_chess_on_every_move_of_random_games() -> None:
    """Every legal move of every position of 8 random games: 10,000-odd SANs, with their
    disambiguations, captures, promotions, checks and mates; and each SAN reads back."""
    rng = np.random.default_rng(63)
    checked = 0
    for _ in range(8):
        game, board = Chess(), chess.Board()
        while not game.is_over() and len(game.moves) < 160:
            for move in game.legal_moves().tolist():
                text = san(game, move)
                assert text == board.san(chess.Move.from_uci(game.uci(move))), board.fen()
                checked += 1
            move = int(rng.choice(game.legal_moves()))
            board.push_uci(game.uci(move))
            game.play(move)
        assert game.fen() == board.fen()
    assert checked > 5000


@pytest.mark.parametrize(("fen", "ucis", "expected"), [
    # castling on both wings, both colours
    ("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1", ["e1g1", "e8c8"], ["O-O", "O-O-O"]),
    # en passant: a capture though the square is empty
    (None, ["e2e4", "a7a6", "e4e5", "d7d5", "e5d6"], ["e4", "a6", "e5", "d5", "exd6"]),
    # promotion and underpromotion, with and without capture, with check
    ("1r5k/P7/8/8/8/8/8/K7 w - - 0 1", ["a7a8q"], ["a8=Q"]),
    ("1r5k/P7/8/8/8/8/8/K7 w - - 0 1", ["a7b8n"], ["axb8=N"]),
    ("1r2k3/P7/8/8/8/8/8/K7 w - - 0 1", ["a7b8r"], ["axb8=R+"]),
    ("8/8/8/8/8/7k/p7/1N5K b - - 0 1", ["a2b1b"], ["axb1=B"]),
    # mate: Fool's and a back-rank mate
    (None, ["f2f3", "e7e5", "g2g4", "d8h4"], ["f3", "e5", "g4", "Qh4#"]),
    ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", ["a1a8"], ["Ra8#"]),
    # disambiguation by file, by rank, and by both
    ("7k/8/8/8/8/8/8/RN2KN2 w - - 0 1", ["b1d2"], ["Nbd2"]),
    ("7k/8/8/R7/8/8/8/R3K3 w - - 0 1", ["a1a3"], ["R1a3"]),
    ("1k6/8/8/8/4Q2Q/8/8/K6Q w - - 0 1", ["h4e1"], ["Qh4e1"]),
])
def test_hard_san_cases(fen: str | None, ucis: list[str], expected: list[str]) -> None:
    game = played(ucis, fen)
    assert sans(game) == expected
    board = chess.Board(fen or chess.STARTING_FEN)
    assert [board.san_and_push(chess.Move.from_uci(text)) for text in ucis] == expected
    replay = Chess(fen=fen)
    for text, move in zip(expected, game.moves):
        assert parse_san(replay, text) == move
        replay.play(move)


def test_a_game_round_trips_through_python_chess() -> None:
    """Castling on both wings and en passant, then seeded random moves, a mate in one as soon
    as there is one (`winning_moves`), to the game's end."""
    ucis = ["e2e4", "d7d5", "e4e5", "f7f5", "e5f6", "g8f6", "g1f3", "c8g4", "f1e2", "b8c6",
            "e1g1", "d8d6", "d2d4", "e8c8"]
    game = played(ucis)
    rng = np.random.default_rng(2)
    while not game.is_over():
        mates = game.winning_moves()
        game.play(mates[0] if mates else int(rng.choice(game.legal_moves())))
    assert game.termination() is Termination.CHECKMATE
    text = format_pgn(game, TAGS, comments={3: "an opening note"}, comment="it ended")
    theirs = read_back(text)
    assert_same_game(game, theirs)
    headers = theirs.headers
    assert list(headers)[:7] == ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
    assert headers["Result"] == ("1-0" if game.winner() == WHITE else "0-1")
    assert (headers["Site"], headers["White"]) == ("?", "w")
    assert "FEN" not in headers and "SetUp" not in headers
    words = text.split()
    assert {"exf6", "O-O", "O-O-O"} <= set(words) and words[-4].endswith("#")
    assert theirs.next().next().next().next().comment == "an opening note"  # after ply 3
    assert theirs.end().comment == "it ended"
    assert all(len(line) < 80 for line in text.splitlines())


def test_an_underpromotion_game_round_trips() -> None:
    game = played(["a7a8n", "h8g7", "a8c7", "b2b1r", "e1e2"], "7k/P7/8/8/8/8/1p6/4K3 w - - 0 1")
    assert sans(game) == ["a8=N", "Kg7", "Nc7", "b1=R+", "Ke2"]
    theirs = read_back(format_pgn(game, TAGS))
    assert_same_game(game, theirs)
    assert theirs.headers["Result"] == "*"


def test_a_set_up_start_with_black_to_move_has_its_fen_and_numbers() -> None:
    fen = "r3k2r/pppq1ppp/2n2n2/3pp3/3PP3/2N2N2/PPPQ1PPP/R3K2R b KQkq - 4 9"
    game = played(["e8c8", "e1g1", "e5d4"], fen)
    text = format_pgn(game, TAGS)
    assert '[SetUp "1"]' in text and f'[FEN "{fen}"]' in text
    assert "9... O-O-O 10. O-O exd4" in text
    theirs = read_back(text)
    assert theirs.headers["FEN"] == fen
    assert_same_game(game, theirs)


def test_a_drawn_game_and_tag_values_with_quotes() -> None:
    game = played(["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"])
    assert game.is_over() and game.winner() == 0
    text = format_pgn(game, {**TAGS, "White": 'the "engine"', "Termination": "normal"},
                      comment="Draw by threefold repetition")
    assert '[White "the \\"engine\\""]' in text  # the standard's escape
    [(tags, _)] = split_pgn(text)
    assert tags["White"] == 'the "engine"'
    theirs = read_back(text)  # python-chess keeps the backslashes
    assert theirs.headers["Result"] == "1/2-1/2"
    assert theirs.headers["Termination"] == "normal"
    assert_same_game(game, theirs)


def test_gardner_games_name_their_variant_and_read_back_on_our_board() -> None:
    """python-chess has no Gardner board; our own reader replays the record."""
    game = Chess(5)
    rng = np.random.default_rng(5)
    game.play_random(12, rng)
    text = format_pgn(game, TAGS, variant="gardner")
    assert '[Variant "gardner"]' in text and "FEN" not in text
    [opening] = read_pgn_openings(text, lambda fen: Chess(5, fen=fen))
    assert opening == PgnOpening(None, tuple(game.moves))


def test_the_main_line_is_read_past_comments_variations_and_nags() -> None:
    movetext = """1. e4 {best by test} e5 (1... c5 2. Nf3 (2. c3) d6) 2.Nf3 $1 Nc6 ; a comment
    3. Bb5!? a6 1-0"""
    assert san_tokens(movetext) == ["e4", "e5", "Nf3", "Nc6", "Bb5!?", "a6"]
    text = f'[Event "x"]\n[White "a"]\n\n{movetext}\n\n[Event "y"]\n[SetUp "1"]\n' \
           '[FEN "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]\n\n1. e4 Kd7 2. 0-0 *\n'
    with pytest.raises(GameError, match="game 2: 0-0"):
        read_pgn_openings(text, lambda fen: Chess(fen=fen))
    openings = read_pgn_openings(text.replace("2. 0-0 ", ""), lambda fen: Chess(fen=fen))
    assert openings[0] == PgnOpening(None, tuple(played(
        ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]).moves))
    assert openings[1].fen == "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1" and len(openings[1].moves) == 2


def test_epd_lines_become_fens() -> None:
    assert epd_fen("4k3/8/8/8/8/8/4P3/4K3 w - - hmvc 3; fmvn 20; id \"x\";") == \
        "4k3/8/8/8/8/8/4P3/4K3 w - - 3 20"
    assert epd_fen("4k3/8/8/8/8/8/4P3/4K3 b - -") == "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"
    assert epd_fen("4k3/8/8/8/8/8/4P3/4K3 b - - 7 30") == "4k3/8/8/8/8/8/4P3/4K3 b - - 7 30"
    lines = ["# a book", "", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5;"]
    [opening] = read_epd_openings(lines, lambda fen: Chess(fen=fen))
    assert opening == PgnOpening("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", ())
    with pytest.raises(GameError, match="line 1"):
        read_epd_openings(["8/8/8/8 w - -"], lambda fen: Chess(fen=fen))
    with pytest.raises(GameError, match="line 1: the position is over"):
        read_epd_openings(["7k/5QQ1/8/8/8/8/8/K7 b - -"], lambda fen: Chess(fen=fen))
