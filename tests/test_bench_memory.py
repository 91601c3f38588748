"""`saz bench memory` (tools/bench/memory.py): a real engine process thinking, its resident memory
sampled once a second, against its budget."""
from __future__ import annotations

import re

import pytest

from saz.tools.bench.cli import main


def _figures(out: str) -> dict[str, str]:
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ")]
    return {what.strip(): value.strip() for what, value in rows[1:]}


def _mib(text: str) -> int:
    return int(text.removesuffix(" MiB").replace(",", ""))


def test_a_gomocup_turn_sampled_until_it_is_answered(
        tiny_model, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tiny_model("gomoku").path
    capsys.readouterr()
    csv = tmp_path / "rss.csv"
    assert main(["memory", "gomocup", "--size", "9", "--seconds", "1", "--model", str(model),
                 "--max-memory", "200000000", "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# ") and "gomocup at 9x9 for 1 s" in out.splitlines()[0]
    figures = _figures(out)
    samples = int(figures["samples (one a second)"])
    assert samples >= 1, out
    peak = _mib(figures["RSS peak of the samples"])
    assert 0 < peak <= _mib(figures["VmHWM (the process's own peak)"])
    assert figures["budget (process)"] == "191 MiB"  # 200,000,000 bytes
    move = re.fullmatch(r"(\d+),(\d+)", figures["answer"])
    assert move and all(0 <= int(v) < 9 for v in move.groups()), out
    lines = csv.read_text().splitlines()
    assert lines[0] == "seconds,rss_bytes" and len(lines) == samples + 1
    assert max(int(line.split(",")[1]) for line in lines[1:]) // 2**20 == pytest.approx(peak,
                                                                                        abs=1)


def test_a_gtp_analysis_sampled_for_its_seconds(tiny_model,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    model = tiny_model("go").path
    capsys.readouterr()
    assert main(["memory", "gtp", "--size", "5", "--seconds", "2", "--model", str(model)]) == 0
    out = capsys.readouterr().out
    figures = _figures(out)
    assert int(figures["samples (one a second)"]) >= 2, out
    first, last = (_mib(v) for v in figures["RSS first / last sample"].split(" / "))
    # The first sample is taken as the process starts (well under 1 MiB, printed as 0); the
    # last, during the analysis.
    assert 0 <= first <= last and last > 0, out
    assert _mib(figures["RSS peak of the samples"]) >= max(first, last)
    assert figures["budget (tree)"] == "1,024 MiB"  # the engine's default --max-memory
    assert "answer" not in figures
