"""`saz seeds`: the mean score and its standard error over an experiment's repeats."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from saz.tools.match.seeds import main


def _record(path: Path, wins: int, losses: int, draws: int = 0) -> Path:
    """A match record as `saz match --out PATH` leaves it (only what a row reads of PATH.json)."""
    summary = {
        "command": "saz match --game gomoku ...",
        "engines": {"small": "pbrain-saz --model small.onnx", "direct": "pbrain-saz"},
        "settings": {"game": "gomoku", "width": 15, "height": 15, "time_control": "move=5",
                     "openings": "random 2 plies, seed 4"},
        "elo": {"engine": "small", "opponent": "direct", "text": "+0 [-100, +100]"},
        "totals": {"small": {"wins": wins, "losses": losses, "draws": draws},
                   "direct": {"wins": losses, "losses": wins, "draws": draws}},
    }
    path.with_name(path.name + ".json").write_text(json.dumps(summary))
    return path


def test_mean_and_standard_error_over_seeds(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # Scores 0.75, 0.5 and 0.625 (a draw is half): mean 0.625, sample deviation 0.125,
    # standard error 0.125 / sqrt(3) = 0.0722.
    records = [_record(tmp_path / "s1", 30, 10), _record(tmp_path / "s2", 20, 20),
               _record(tmp_path / "s3", 24, 14, 2)]
    assert main([str(r) for r in records]) == 0
    out = capsys.readouterr().out
    assert "mean score 62.5% ± 7.2% (standard error over 3 seeds)" in out
    assert "pooled 74-44-2 (W-L-D)" in out
    assert "| 30-10-0 | 75.0% |" in out


def test_one_repeat_or_a_path_without_a_match_is_refused(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    one = _record(tmp_path / "s1", 3, 1)
    assert main([str(one)]) == 2
    assert "at least two repeats" in capsys.readouterr().err
    assert main([str(one), str(tmp_path / "missing")]) == 2
    assert "cannot read the match summary" in capsys.readouterr().err
