"""`saz evaluate` (a run's generations against fixed anchors) and `saz train --seed`."""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from saz.tools.match.records import MatchRecord, read_games
from saz.tools.train.evaluate import Anchor, EvaluateError, best, chosen, main
from tests.test_train import TINY_CONFIG

#: A Gomocup anchor every installation has: the greedy reference player.
GREEDY = f"greedy={sys.executable} -m saz.protocol.gomocup --player greedy"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-generation Gomoku run of the tiny config, started with `--seed 11`."""
    from saz.tools.train.run import main as train

    root = tmp_path_factory.mktemp("evaluate")
    config = root / "tiny.toml"
    config.write_text(TINY_CONFIG.replace("[evaluation]\nevery = 2", "[evaluation]\nevery = 0"))
    run = root / "run"
    assert train(["--game", "gomoku", "--config", str(config), "--out", str(run),
                  "--generations", "1", "--seed", "11"]) == 0
    return run


def test_seed_is_written_into_the_runs_config(tiny_run: Path) -> None:
    from saz.tools.train.checkpoint import load_checkpoint
    from saz.tools.train.config import TrainConfig
    from saz.tools.train.run import main as train

    assert TrainConfig.load(tiny_run / "config.toml").seed == 11
    assert "seed = 3" not in (tiny_run / "config.toml").read_text()
    assert "--seed 11" in load_checkpoint(tiny_run / "checkpoint.pt").training["command"]
    assert train(["--out", str(tiny_run), "--resume", "--seed", "12"]) == 1


def test_anchors_are_played_once_and_tabulated(tiny_run: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(tiny_run), "--anchor", GREEDY, "--size", "7", "--games", "2", "--visits", "4",
            "--tc", "move=10", "--best", "7"]
    assert main(args) == 0
    out = capsys.readouterr().out
    record = MatchRecord.of(tiny_run / "evaluation" / "gen_00001-vs-greedy-7x7")
    assert len(list(read_games([record.games]))) == 2
    with open(tiny_run / "evaluation.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["generation"], r["anchor"], r["board"], r["played"]) for r in rows] == [
        ("1", "greedy", "7x7", "2")]
    assert int(rows[0]["wins"]) + int(rows[0]["losses"]) + int(rows[0]["draws"]) == 2
    assert float(rows[0]["positions"]) > 0  # joined with the run's metrics
    assert "best at 7x7 against greedy: generation 1" in out

    stamp = record.summary.stat().st_mtime_ns
    assert main(args) == 0  # a finished match is not played again
    assert record.summary.stat().st_mtime_ns == stamp


def test_bad_options_are_refused(tiny_run: Path) -> None:
    with pytest.raises(SystemExit):
        main([str(tiny_run), "--size", "7"])  # no anchor
    with pytest.raises(SystemExit):
        main([str(tiny_run.parent), "--anchor", GREEDY, "--size", "7"])  # not a run
    with pytest.raises(EvaluateError, match="name"):
        Anchor.parse(f"gen2={sys.executable}")
    with pytest.raises(EvaluateError, match="not installed"):
        Anchor.parse("x=no-such-program-here")


def test_generations_chosen_and_the_best_one() -> None:
    assert chosen([1, 2, 3, 4, 5, 6, 7], 3, None) == [3, 6, 7]
    assert chosen([1, 2, 3], None, [2, 9]) == [2]
    assert chosen([], 4, None) == []

    def row(g: int, anchor: str, wins: int, played: int = 4) -> dict[str, object]:
        return {"generation": g, "anchor": anchor, "board": "15x15", "wins": wins,
                "draws": 0, "losses": played - wins, "played": played, "scheduled": 4}

    rows = [row(4, "a", 3), row(4, "b", 1), row(8, "a", 2), row(8, "b", 2), row(12, "a", 4),
            row(12, "b", 4, played=2)]  # generation 12's second match is unfinished
    assert best(rows, "15x15", ["a", "b"]) == 8  # 4 points each: the later one
    assert best(rows, "9x9", ["a", "b"]) is None
