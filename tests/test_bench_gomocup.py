"""`saz bench gomocup` (tools/bench/gomocup.py): `pbrain-saz` timed as a Gomocup manager times it:
start-up to ABOUT, to START's OK (the network loaded), and a turn's overhead beyond its search."""
from __future__ import annotations

import re

import pytest

from saz.tools.bench.cli import main


def test_start_up_network_loading_and_turn_overhead(
        tiny_model, capsys: pytest.CaptureFixture[str]) -> None:
    model = tiny_model("gomoku").path
    capsys.readouterr()  # the export's own report
    assert main(["gomocup", "--runs", "2", "--turns", "3", "--size", "9",
                 "--model", str(model)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("brain: ") and out.splitlines()[0].endswith(f"--model {model}")
    about = re.search(r"\| start-up to ABOUT, median of 2 \(min, max\) \| (\d+) ms \((\d+) ms, "
                      r"(\d+) ms\) \|", out)
    start = re.search(r"\| start-up to START's OK, network loaded, median \(max\) \| (\d+) ms "
                      r"\((\d+) ms\) \|", out)
    turn = re.search(r"\| turn overhead beyond a \d+ ms search, median of 3 \(max\) \| (-?\d+) ms "
                     r"\((-?\d+) ms\) \|", out)
    assert about and start and turn
    median, low, high = (int(about.group(i)) for i in (1, 2, 3))
    assert 0 < low <= median <= high
    # START comes after ABOUT in the same processes, both timed from the process's creation.
    assert int(start.group(1)) >= median and int(start.group(2)) >= high
    assert int(turn.group(1)) <= int(turn.group(2))
    assert "| the clock's Gomocup margin: latency, overrun |" in out
