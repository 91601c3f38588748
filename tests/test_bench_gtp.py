"""`saz bench gtp` (tools/bench/gtp.py): how long `saz gtp` takes from its start to the reply to
`name`, over fresh processes."""
from __future__ import annotations

import re
import sys

import pytest

from saz.tools.bench.cli import main


def test_every_run_and_their_median(capsys: pytest.CaptureFixture[str]) -> None:
    engine = [sys.executable, "-m", "saz.engine.cli", "gtp"]
    assert main(["gtp", "--runs", "2", "--", *engine]) == 0
    lines = capsys.readouterr().out.splitlines()
    runs = [float(m.group(1)) for line in lines
            if (m := re.fullmatch(r"run +\d+: +([\d.]+) ms", line))]
    assert len(runs) == 2 and all(ms > 0 for ms in runs)
    summary = re.fullmatch(r"(.*): median ([\d.]+) ms, min ([\d.]+) ms, max ([\d.]+) ms over 2 "
                           r"runs", lines[-1])
    assert summary and summary.group(1) == " ".join(engine)
    median, low, high = (float(summary.group(i)) for i in (2, 3, 4))
    assert (low, high) == (min(runs), max(runs)) and low <= median <= high
