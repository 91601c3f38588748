"""`saz bench search` (tools/bench/search.py): the search's playouts a second against the network's
own speed and the recursive baseline, and with a null network its cost per leaf outside the
network."""
from __future__ import annotations

import pytest

from saz.tools.bench.cli import main


def _figures(out: str) -> dict[str, str]:
    """The `| what | value |` table's rows, by what."""
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ")]
    return {what.strip(): value.strip() for what, value in rows[1:]}


def _number(text: str) -> float:
    return float(text.replace(",", "").rstrip("x%").split()[0])


def test_the_search_against_the_network_and_the_baseline(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--game", "gomoku", "--size", "7", "--visits", "32", "--positions",
                 "2", "--random-plies", "2", "--batch", "4", "--baseline-visits", "8",
                 "--hidden", "8", "--layers", "1", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# search: gomoku 7x7, 32 visits x 2 positions (2 random plies), "
                          "batch 4")
    figures = _figures(out)
    playouts = _number(figures["playouts/s (all descents)"])
    leaves = _number(figures["of which new leaves sent to the network, per s"])
    assert 0 < leaves <= playouts
    assert 1 <= _number(figures["mean batch achieved"]) <= 4
    assert 0 < _number(figures["time inside the network call"]) <= 100
    assert _number(figures["network alone at batch 4, evals/s"]) > 0
    baseline = _number(figures["baseline (recursive, single leaf) playouts/s"])
    assert baseline > 0
    assert _number(figures["search / baseline"]) == pytest.approx(playouts / baseline, rel=0.01,
                                                                  abs=0.01)
    assert _number(figures["network alone at batch 1, evals/s"]) > 0


def test_a_null_network_times_the_tree_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--null-network", "--game", "go", "--size", "5", "--visits", "50",
                 "--positions", "2"]) == 0
    figures = _figures(capsys.readouterr().out)
    # Every one of the 100 visits is a descent; those that end in a position the rules decide
    # send no leaf.
    assert _number(figures["playouts (all descents)"]) == 100
    assert 0 < _number(figures["leaves sent to the network"]) <= 100
    per_leaf = _number(figures["wall time per leaf"])
    assert 0 < _number(figures["of which outside the network call"]) <= per_leaf
    assert _number(figures["leaves/s"]) > 0


def test_the_null_network_reads_a_prefix_of_the_planes(capsys: pytest.CaptureFixture[str]) -> None:
    """`--planes K` times the leaves of a network of an older feature version; a K the game
    has not is refused with the range."""
    assert main(["search", "--null-network", "--game", "go", "--size", "5", "--visits", "50",
                 "--positions", "2", "--planes", "14"]) == 0
    assert "reading 14 planes" in capsys.readouterr().out
    assert main(["search", "--null-network", "--game", "go", "--size", "5", "--planes", "18"]) == 1
    assert "--planes must be 1 to 17 for go" in capsys.readouterr().err


def test_a_model_of_another_game_is_an_error(tiny_model,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    model = tiny_model("othello").path
    capsys.readouterr()
    assert main(["search", "--game", "go", "--size", "5", "--model", str(model)]) == 1
    assert "saz bench:" in capsys.readouterr().err
