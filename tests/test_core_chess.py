"""Chess's rules in the compiled core (engine/core/chess.cpp): perft on the chessprogramming
wiki's test positions, FEN in and out, the move and policy encodings and the errors."""
from __future__ import annotations

import numpy as np
import pytest

from saz.engine import _core
from saz.engine.games import GameError, IllegalMoveError, new_game
from saz.engine.games.chess import Chess
from saz.engine.perft import main as perft_main
from saz.engine.perft import perft

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
POSITION_3 = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"
POSITION_4 = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1"
POSITION_4_MIRRORED = "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1"
POSITION_5 = "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8"
POSITION_6 = "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"

#: The chessprogramming wiki's perft results (https://www.chessprogramming.org/Perft_Results):
#: (FEN, counts from depth 1, how many of them the default suite runs).
PERFT = [
    (START, [20, 400, 8902, 197281, 4865609, 119060324], 5),
    (KIWIPETE, [48, 2039, 97862, 4085603, 193690690, 8031647685], 4),
    (POSITION_3, [14, 191, 2812, 43238, 674624, 11030083, 178633661, 3009794393], 6),
    (POSITION_4, [6, 264, 9467, 422333, 15833292, 706045033], 4),
    (POSITION_4_MIRRORED, [6, 264, 9467, 422333, 15833292, 706045033], 4),
    (POSITION_5, [44, 1486, 62379, 2103487, 89941194], 4),
    (POSITION_6, [46, 2079, 89890, 3894594, 164075551, 6923051137], 4),
]


@pytest.mark.parametrize(("fen", "counts", "fast"), PERFT, ids=lambda v: str(v)[:12])
def test_perft_of_the_published_positions(fen: str, counts: list[int], fast: int) -> None:
    game = Chess.from_fen(fen)
    for depth, count in enumerate(counts[:fast], start=1):
        assert perft(game, depth) == count, (fen, depth)
    assert game.fen() == fen


@pytest.mark.slow
@pytest.mark.parametrize(("fen", "counts", "fast"), PERFT, ids=lambda v: str(v)[:12])
def test_perft_of_the_published_positions_to_their_full_depth(
        fen: str, counts: list[int], fast: int) -> None:
    game = Chess.from_fen(fen)
    for depth in range(fast + 1, len(counts) + 1):
        assert perft(game, depth) == counts[depth - 1], (fen, depth)


def test_a_new_game_is_the_start_position() -> None:
    game = new_game("chess", 8)
    assert game.fen() == START
    assert game.to_move == -1  # White moves first and is WHITE = -1
    board = game.board.reshape(8, 8)
    assert list(board[7]) == [-4, -2, -3, -5, -6, -3, -2, -4]  # White's back rank at the bottom
    assert list(board[0]) == [4, 2, 3, 5, 6, 3, 2, 4]
    assert game.policy_size == 64 * 64 + 9 * 8


def test_moves_and_policy_indices_follow_the_plan() -> None:
    game = Chess()
    e2, e4 = 6 * 8 + 4, 4 * 8 + 4
    assert game.parse_uci("e2e4") == e2 * 64 + e4
    assert game.uci(e2 * 64 + e4) == "e2e4"
    assert list(game.policy_indices(np.array([e2 * 64 + e4]))) == [e2 * 64 + e4]
    game.play(e2 * 64 + e4)
    e7, e5 = 1 * 8 + 4, 3 * 8 + 4
    move = game.parse_uci("e7e5")
    assert move == e7 * 64 + e5
    # Black's move in its own frame is White's e2e4.
    assert list(game.policy_indices(np.array([move]))) == [e2 * 64 + e4]


def test_underpromotions_have_their_own_moves() -> None:
    game = Chess.from_fen("1r5k/P7/8/8/8/8/8/K7 w - - 0 1")
    p = 64
    a7, a8, b8 = 8, 0, 1
    moves = set(game.legal_moves().tolist())
    assert a7 * p + a8 in moves and a7 * p + b8 in moves  # the queen promotions
    # a7xb8: from_x 0, to_x 1 -> j = 0 * 3 + 2; knight, bishop, rook.
    assert {p * p + 2 * 3 + k for k in range(3)} <= moves
    assert game.uci(p * p + 2 * 3) == "a7b8n"
    assert game.parse_uci("a7a8r") == p * p + 1 * 3 + 2
    assert game.parse_uci("a7b8q") == a7 * p + b8
    assert len(moves) == 1 + 8  # king a1: a2 (the rook holds the b-file); 2 pawn moves x 4


@pytest.mark.parametrize("fen", [
    "", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w - - 0 1",
    "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1",
    "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1",
    "rnbqkknr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1",
    "4k3/8/8/8/8/8/8/4K2r w - - 0 1x",
    "4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
    "4k3/8/8/8/8/8/8/4K3 x - - 0 1", "4k3/8/8/8/8/8/8/4K3 w K - 0 1",
    "4k3/8/8/8/8/8/8/4K3 w - e3 0 1", "4k3/8/8/8/8/8/8/4K3 w - - -1 1",
    "4k2R/8/8/8/8/8/8/4K3 w - - 0 1",
])
def test_impossible_fens_are_rejected(fen: str) -> None:
    with pytest.raises(GameError):
        Chess.from_fen(fen, "chess")


def test_illegal_moves_leave_the_position_unchanged() -> None:
    game = Chess()
    before = game.fen(), game.hash
    for text in ("e2e5", "e7e5", "e1g1", "a2a3q", "z9z9", "e2", "0000"):
        with pytest.raises(GameError):
            game.parse_uci(text)
    with pytest.raises(IllegalMoveError):
        game.play(6 * 8 * 64 + 3 * 8)
    with pytest.raises(IllegalMoveError):
        game.play(10**6)
    assert (game.fen(), game.hash) == before
    assert not game.is_legal(game.policy_size)


def test_the_core_binding() -> None:
    p = _core.new_chess("gardner")
    assert p.fen() == "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"
    assert p.policy_size == 25 * 25 + 45
    assert p.perft(4) == (4775, 566)
    with pytest.raises(GameError):
        _core.new_chess("xiangqi")


# -- the search tree reads chess's policy at its move indices ----------------------------------
def _tree(game: Chess) -> _core.Tree:
    tree = _core.Tree(_core.TreeOptions())
    tree.reset(game._core)
    return tree


@pytest.mark.parametrize("black", [False, True])
def test_the_tree_reads_each_candidates_prior_at_its_policy_index(black: bool) -> None:
    game = Chess()
    if black:
        game.play(game.parse_uci("e2e4"))
    tree = _tree(game)
    x = np.zeros((1, game.num_nodes, game.num_features()), np.float32)
    assert tree.collect(1, 1, x)[0] == 1
    favourite = game.parse_uci("e7e5" if black else "g1f3")
    log_policy = np.full((1, game.policy_size), -10.0, np.float32)
    log_policy[0, game.policy_indices(np.array([favourite]))[0]] = 0.0
    tree.absorb(log_policy, np.zeros(1, np.float32))
    moves, priors = tree.root_edges()
    assert moves[int(np.argmax(priors))] == favourite
    assert max(priors) > 0.99
    if black:  # Black's e7e5 is White's e2e4 in the side to move's frame
        assert game.policy_indices(np.array([favourite]))[0] == (6 * 8 + 4) * 64 + 4 * 8 + 4


def test_absorb_checks_the_policy_width() -> None:
    game = Chess()
    tree = _tree(game)
    x = np.zeros((1, game.num_nodes, game.num_features()), np.float32)
    tree.collect(1, 1, x)
    with pytest.raises(ValueError, match="policy_size"):
        tree.absorb(np.zeros((1, game.num_nodes), np.float32), np.zeros(1, np.float32))


def test_a_mate_in_one_is_a_winning_move_and_the_tree_settles_it() -> None:
    game = Chess.from_fen("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")  # Ra8#
    assert [game.uci(m) for m in game.winning_moves()] == ["a1a8"]
    game.play(game.parse_uci("a1a8"))
    assert game.is_over() and game.winner() == -1  # White (WHITE = -1) mated
    assert game.outcome() is not None and game.outcome().termination.value == "checkmate"


# -- the node features --------------------------------------------------------------------------
def _planes(game: Chess) -> dict[str, np.ndarray]:
    x = np.full((game.num_nodes, game.num_features()), np.nan, np.float32)
    game.encode(x)
    assert not np.isnan(x).any()
    return {name: x[:, i] for i, name in enumerate(game.feature_names)}


def test_features_are_in_the_side_to_moves_frame() -> None:
    game = Chess()
    white = _planes(game)
    game.play(game.parse_uci("g1f3"))
    game.play(game.parse_uci("g8f6"))  # the mirror image, White to move again
    game.undo()
    black = _planes(game)  # Black to move after 1.Nf3
    p = 64
    # Black's pieces in its own frame stand where White's do in White's.
    for name in ("own_pawn", "own_rook", "own_king", "own_castle"):
        np.testing.assert_array_equal(black[name], white[name])
    # White's knight on f3 (row 5 from the top) is on row 2 in Black's frame.
    assert black["opp_knight"][5 * 8 + 5] == 0 and black["opp_knight"][2 * 8 + 5] == 1
    assert white["extra"][p] == 1 and white["extra"][:p].sum() == 0
    assert black["own_attacks"][:p].sum() == white["own_attacks"][:p].sum()
    assert white["en_passant"].sum() == 0 and white["checkers"].sum() == 0


def test_the_extra_node_holds_the_clock_and_the_repetitions() -> None:
    game = Chess()
    for text in ("g1f3", "g8f6", "f3g1", "f6g8"):
        game.play(game.parse_uci(text))
    planes = _planes(game)
    assert planes["repetition"][64] == 0.5 and planes["halfmove"][64] == pytest.approx(0.04)
    assert planes["repetition"][:64].sum() == 0
    for text in ("g1f3", "g8f6", "f3g1", "f6g8"):
        game.play(game.parse_uci(text))
    assert game.is_over() and game.termination() is not None
    assert game.termination().value == "threefold repetition"


def test_en_passant_is_a_feature_only_when_the_capture_is_legal() -> None:
    game = Chess.from_fen("4k3/8/8/8/5p2/8/4P3/4K3 w - - 0 1")
    game.play(game.parse_uci("e2e4"))
    assert game.fen() == "4k3/8/8/8/4Pp2/8/8/4K3 b - e3 0 1"
    planes = _planes(game)
    e3 = (8 - 3) * 8 + 4
    flipped = (7 - e3 // 8) * 8 + e3 % 8
    assert planes["en_passant"][flipped] == 1 and planes["en_passant"].sum() == 1
    # A pinned pawn cannot take: no en passant square, in FEN and hash alike.
    pinned = Chess.from_fen("8/8/8/8/k4p1R/8/4P3/4K3 w - - 0 1")
    pinned.play(pinned.parse_uci("e2e4"))
    assert pinned.fen().split()[3] == "-"
    assert _planes(pinned)["en_passant"].sum() == 0


# -- saz perft --game chess ---------------------------------------------------------------------
@pytest.mark.parametrize(("argv", "count"), [
    (["--depth", "4"], 197281),
    (["--variant", "gardner", "--depth", "4"], 4775),
    (["--size", "6", "--depth", "3"], 1212),
    (["--fen", KIWIPETE, "--depth", "3"], 97862),
    (["--variant", "chess", "--fen", POSITION_5, "--depth", "2"], 1486),
])
def test_the_perft_command(argv: list[str], count: int,
                           capsys: pytest.CaptureFixture[str]) -> None:
    assert perft_main(["--game", "chess", *argv]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(count)
    assert "leaves/s" in err


def test_the_perft_command_divides_by_uci_moves(capsys: pytest.CaptureFixture[str]) -> None:
    assert perft_main(["--game", "chess", "--depth", "2", "--divide"]) == 0
    lines = capsys.readouterr().out.split()
    assert "e2e4:" in lines and lines[-1] == "400"


@pytest.mark.parametrize("argv", [
    ["--fen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1"],
    ["--variant", "shogi"], ["--size", "7"], ["--variant", "gardner", "--size", "8"]])
def test_the_perft_command_rejects_bad_positions(argv: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert perft_main(["--game", "chess", *argv, "--depth", "1"]) == 2
    assert "saz perft:" in capsys.readouterr().err
