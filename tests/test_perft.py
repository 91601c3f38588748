"""`saz perft`: counts, the moves-played counter, the command line and its errors."""
from __future__ import annotations

import pytest

from saz.engine.games import new_game
from saz.engine.perft import PerftCounter, divide, main, perft


def test_counter_counts_the_moves_played_not_the_bulk_counted_leaves() -> None:
    counter = PerftCounter()
    assert perft(new_game("othello", 8), 4, counter) == 244
    assert counter.plays == 4 + 12 + 56


def test_divide_sums_to_perft_and_restores_the_game() -> None:
    game = new_game("go", 5)
    counts = divide(game, 2)
    assert sum(counts.values()) == perft(game, 2)
    assert len(counts) == 26 and game.moves == []


def test_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--game", "othello", "--size", "8", "--depth", "5"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "1396"
    assert "moves/s" in err


def test_rectangular_size_and_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--game", "gomoku", "--size", "7x5", "--rule", "exact-five", "--depth", "2"]) == 0
    assert capsys.readouterr().out.strip() == str(35 * 34)


def test_renju_counts_as_freestyle_until_a_shape_is_forbidden(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Four stones cannot make a forbidden shape, so renju's perft from the start matches."""
    assert main(["--game", "gomoku", "--size", "7", "--rule", "renju", "--depth", "3"]) == 0
    assert capsys.readouterr().out.strip() == str(49 * 48 * 47)


@pytest.mark.parametrize("argv,message", [
    (["--game", "othello", "--size", "7", "--depth", "1"], "even"),
    (["--game", "gomoku", "--size", "15", "--rule", "caro", "--depth", "1"], "caro"),
])
def test_bad_size_or_rule_is_a_clear_error(argv: list[str], message: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_malformed_size_is_rejected() -> None:
    with pytest.raises(SystemExit):
        main(["--game", "go", "--size", "9y9", "--depth", "1"])
