"""`saz bench` (tools/bench/cli.py): the benchmarks it lists, and `saz bench evaluator`, the
network's evaluations per second in onnxruntime against torch eager."""
from __future__ import annotations

import re

import pytest

from saz.tools.bench import cli
from saz.tools.bench.cli import main

#: The product's benchmarks, and nothing else, in the order `saz bench --help` lists them.
BENCHMARKS = ["evaluator", "search", "gomocup", "gtp", "clock", "memory", "solve", "threats",
              "selfplay", "pool", "cache", "variants", "judgement"]


def test_the_help_lists_the_products_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    listed = re.findall(r"^    (\w+)", capsys.readouterr().out, re.MULTILINE)
    assert listed == BENCHMARKS


def _table(out: str) -> list[list[str]]:
    """The rows of the Markdown table in `out` (header and rule left out), cell by cell."""
    rows = [[cell.strip() for cell in line.split("|")[1:-1]]
            for line in out.splitlines() if line.startswith("| ")]
    return rows[1:]


@pytest.fixture
def quiet_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take every measurement as it comes: other tests and processes share the machine, and a
    retried measurement (one a second, up to eight) would only make the test slow."""
    monkeypatch.setattr(cli, "MAX_OTHER_LOAD", float("inf"))


@pytest.mark.usefixtures("quiet_machine")
def test_a_row_per_size_and_batch_with_both_engines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluator", "--game", "gomoku", "--sizes", "5,4x6", "--batch", "1,3",
                 "--hidden", "8", "--layers", "1", "--seconds", "0.01", "--repeat", "1",
                 "--cpu-time"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# evaluator: gomoku, hidden 8 x 1 layers")
    startup = re.search(r"start-up \(card checks \+ session\): ([\d.]+) ms", out)
    assert startup and float(startup.group(1)) > 0
    rows = _table(out)
    assert [row[:2] for row in rows] == [["5x5", "1"], ["5x5", "3"], ["4x6", "1"], ["4x6", "3"]]
    for _, batch, ort_rate, ort_ms, torch_rate, torch_ms, speed_up in rows:
        for rate, ms in ((ort_rate, ort_ms), (torch_rate, torch_ms)):
            # evaluations a second are the batch over the time of one call, as far as the
            # call's time printed to the microsecond tells
            seconds = float(ms) / 1e3
            assert seconds > 0
            low, high = int(batch) / (seconds + 5e-7), int(batch) / max(seconds - 5e-7, 1e-9)
            assert low - 1 <= float(rate.replace(",", "")) <= high + 1
        assert speed_up.endswith("x") and float(speed_up[:-1]) > 0


@pytest.mark.usefixtures("quiet_machine")
def test_an_exported_model_is_timed_in_onnxruntime_alone(
        tiny_model, capsys: pytest.CaptureFixture[str]) -> None:
    model = tiny_model("othello").path
    capsys.readouterr()  # the export's own report
    assert main(["evaluator", "--game", "othello", "--model", str(model), "--sizes", "6",
                 "--batch", "2", "--seconds", "0.01", "--repeat", "1", "--cpu-time"]) == 0
    out = capsys.readouterr().out
    assert "hidden 24 x 3 layers" in out  # the model's own shape, from its card
    [row] = _table(out)
    assert row[:2] == ["6x6", "2"] and float(row[2].replace(",", "")) > 0
    assert row[4:] == ["-", "-", "-"]


def test_a_model_of_another_game_is_an_error(tiny_model,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    model = tiny_model("othello").path
    capsys.readouterr()
    assert main(["evaluator", "--game", "go", "--model", str(model), "--sizes", "5"]) == 1
    assert "saz bench:" in capsys.readouterr().err
