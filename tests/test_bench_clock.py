"""`saz bench clock` (tools/bench/clock.py): the period it reads, the moves it times and its
report."""
from __future__ import annotations

import re
import sys

import pytest

from saz.tools.bench.cli import main
from saz.tools.bench.clock import move_seconds, parse_period


@pytest.mark.parametrize("command, period", [
    ("kgs-time_settings byoyomi 0 1 1", 1.0),
    ("kgs-time_settings byoyomi 60 5 3", 5.0),
    ("kgs-time_settings canadian 0 30 10", 3.0),
    ("time_settings 0 1 1", 1.0),
    ("time_settings 600 20 5", 4.0),
])
def test_the_period_of_a_byoyomi_setting(command: str, period: float) -> None:
    assert parse_period(command) == period


@pytest.mark.parametrize("command", ["kgs-time_settings absolute 60", "time_settings 0 1",
                                     "komi 6.5"])
def test_a_setting_without_byoyomi_is_refused(command: str) -> None:
    with pytest.raises(ValueError, match="byo-yomi"):
        parse_period(command)


def test_every_genmove_is_timed_from_the_controllers_side() -> None:
    """30 genmoves on 2x2 by the random player (its games pass often; a finished one starts
    again), each timed, each within the period."""
    engine = [sys.executable, "-m", "saz.engine.cli", "gtp", "--player", "random", "--seed", "1"]
    times = move_seconds(engine, 2, 30, "time_settings 0 1 1")
    assert len(times) == 30 and all(0 < t < 1 for t in times)


def test_the_report_of_a_kept_clock(capsys: pytest.CaptureFixture[str]) -> None:
    """`saz bench clock` end to end: the genmoves it timed, their spread against the period,
    the slowest three; exit status 0 when none was over the period."""
    engine = [sys.executable, "-m", "saz.engine.cli", "gtp", "--player", "random", "--seed", "1"]
    assert main(["clock", "--size", "2", "--moves", "6", "--time", "time_settings 0 1 1", "--",
                 *engine]) == 0
    first, spread, slowest = capsys.readouterr().out.splitlines()
    assert first.endswith(": time_settings 0 1 1, 2x2, 6 genmoves, 0 busy process(es)")
    figures = re.fullmatch(r"median ([\d.]+) s, p99 ([\d.]+) s, max ([\d.]+) s; "
                           r"over the 1 s period: 0", spread)
    assert figures
    median, p99, most = (float(v) for v in figures.groups())
    assert 0 <= median <= p99 <= most < 1  # printed to the millisecond
    assert re.fullmatch(r"slowest genmoves \(1-based\): (#[1-6] [\d.]+ s, ){2}#[1-6] [\d.]+ s",
                        slowest)
