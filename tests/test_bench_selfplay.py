"""`saz bench selfplay` (tools/bench/selfplay.py): one worker's self-play throughput, the whole
board against the search's windows, on a training config's recipe."""
from __future__ import annotations

from pathlib import Path

import pytest

from saz.tools.bench.cli import main

CONFIG = """
[selfplay]
sizes = ["9x9"]
visits = 8
games_in_flight = 2
resign_threshold = -1.0
"""


def test_one_row_per_window_side(tiny_model, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    model = tiny_model("gomoku").path
    capsys.readouterr()  # the export's own report
    assert main(["selfplay", "--config", str(config), "--model", str(model), "--size", "16",
                 "--focus-side", "0,8", "--eval-cache", "0,4", "--seconds", "0.5",
                 "--warmup", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("gomoku 16x16")
    rows = [line.split("|")[1:-1] for line in out if line[:3] in ("| 0", "| 8")]
    assert [(r[0].strip(), r[1].strip()) for r in rows] == [("0", "0"), ("0", "4"), ("8", "0"),
                                                           ("8", "4")]
    assert all(float(r[3]) > 0 for r in rows)  # positions were searched in each


def test_chunk_sizes_are_rows_and_rounds_repeat_the_table(tiny_model, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    model = tiny_model("go").path
    capsys.readouterr()
    assert main(["selfplay", "--config", str(config), "--model", str(model), "--size", "9",
                 "--focus-side", "0", "--chunk-nodes", "0,200", "--rounds", "2",
                 "--seconds", "0.3", "--warmup", "0"]) == 0
    rows = [line.split("|")[1:-1] for line in capsys.readouterr().out.splitlines()
            if line.startswith("| 0 |")]
    assert [r[2].strip() for r in rows] == ["0", "200", "0", "200"]
    assert all(float(r[3]) > 0 for r in rows)
