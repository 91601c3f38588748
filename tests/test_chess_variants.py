"""Gardner 5x5 and Los Alamos 6x6 against Fairy-Stockfish, which defines them: perft from the
start and from positions of random games equals Fairy-Stockfish's own `go perft`, stored in
tests/data/chess_variants_perft.json (the command that wrote it is in the file)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from saz.engine.games import GameError
from saz.engine.games.chess import Chess
from saz.engine.perft import perft

DATA = json.loads((Path(__file__).parent / "data" / "chess_variants_perft.json").read_text())
VARIANTS = DATA["variants"]
#: How deep the default suite takes the start position (the file holds one ply more).
FAST_DEPTH = 5


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_perft_from_the_start_matches_fairy_stockfish(variant: str) -> None:
    game = Chess(variant=variant)
    counts = VARIANTS[variant]["start"]
    assert [perft(game, d) for d in range(1, FAST_DEPTH + 1)] == counts[:FAST_DEPTH]


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_perft_from_the_start_to_the_files_depth(variant: str) -> None:
    counts = VARIANTS[variant]["start"]
    assert perft(Chess(variant=variant), len(counts)) == counts[-1]


@pytest.mark.parametrize(("variant", "case"), [
    (variant, case) for variant in sorted(VARIANTS) for case in VARIANTS[variant]["positions"]],
    ids=lambda v: v if isinstance(v, str) else v["fen"])
def test_perft_from_random_positions_matches_fairy_stockfish(variant: str,
                                                             case: dict[str, object]) -> None:
    game = Chess(variant=variant, fen=str(case["fen"]))
    assert game.fen() == case["fen"]
    assert perft(game, int(str(case["depth"]))) == case["nodes"]


def test_the_variants_follow_their_boards() -> None:
    assert Chess(5).variant == "gardner" and Chess(6).variant == "losalamos"
    assert Chess().variant == Chess(8).variant == "chess"
    assert Chess(variant="gardner").fen() == "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"
    assert Chess(variant="losalamos").fen() == "rnqknr/pppppp/6/6/PPPPPP/RNQKNR w - - 0 1"
    assert Chess.from_fen("rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1").variant == "gardner"


def test_small_boards_have_no_double_step_castling_or_bishops_where_fairy_stockfish_has_none(
        ) -> None:
    gardner = Chess(5)
    assert "a2a4" not in {gardner.uci(m) for m in gardner.legal_moves()}
    with pytest.raises(GameError):
        Chess(variant="losalamos", fen="rnbknr/pppppp/6/6/PPPPPP/RNQKNR w - - 0 1")
    with pytest.raises(GameError):
        Chess(variant="gardner", fen="rnbqk/ppppp/5/PPPPP/RNBQK w K - 0 1")
    # Los Alamos promotes to a queen, rook or knight only.
    game = Chess.from_fen("6/P4k/6/6/6/K5 w - - 0 1")
    assert sorted(game.uci(m) for m in game.legal_moves() if game.uci(m).startswith("a5")) == [
        "a5a6n", "a5a6q", "a5a6r"]
