"""GNU Go's regression format through the real protocol path, as gogui-regress runs it.

A `.tst` file (GNU Go's `regression/*.tst`) is a GTP session: setup commands (`loadsgf FILE
MOVE`, `komi`) and numbered test commands, each followed by its expected answer on a `#? [...]`
line. GNU Go's suites are GPL, so `tests/regress/` holds our own in the same format, made on
records written for saz. What they check is the protocol path: `loadsgf` of handicap, setup and
out-of-turn records, in any order, and `reg_genmove` after each, all answered without an error.
The engine plays as the random reference player: the answers' quality is not the point.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from saz.protocol.gtp_client import GtpClient

REGRESS = Path(__file__).parent / "regress"
#: Seeded: the random player passes now and then, and the expectations say it does not here.
SAZ_GTP = [sys.executable, "-m", "saz.engine.cli", "gtp", "--player", "random", "--seed", "7"]
_NUMBERED = re.compile(r"(\d+)\s+(.*)")
_EXPECTED = re.compile(r"#\?\s*\[(.*)\](\*?)")


@dataclass(frozen=True)
class Step:
    """One command of a `.tst` file and, for a numbered one, the pattern its answer must match
    (GNU Go's: a regular expression, `!` in front negates it)."""

    command: str
    expected: str | None = None


def read_tst(path: Path) -> list[Step]:
    steps: list[Step] = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        match = _EXPECTED.fullmatch(line)
        if match:
            if not steps or steps[-1].expected is not None:
                raise ValueError(f"{path.name}:{number}: an expectation without its command")
            steps[-1] = Step(steps[-1].command, match.group(1))
        elif line and not line.startswith("#"):
            numbered = _NUMBERED.fullmatch(line)
            steps.append(Step(numbered.group(2) if numbered else line))
    return steps


def answers(expected: str, answer: str) -> bool:
    """Whether `answer` matches a `#? [...]` pattern the way GNU Go's regress scripts read it."""
    negate = expected.startswith("!")
    pattern = expected[1:] if negate else expected
    matched = re.fullmatch(pattern, answer, flags=re.IGNORECASE) is not None
    return matched != negate


def tst_files() -> list[str]:
    return sorted(p.name for p in REGRESS.glob("*.tst"))


def test_the_format_reader() -> None:
    steps = read_tst(REGRESS / "saz.tst")
    assert steps[0] == Step("loadsgf games/handicap3.sgf 55")
    assert steps[1] == Step("reg_genmove white", "!pass")
    assert answers("E5|E6", "e6") and not answers("E5|E6", "E7")
    assert answers("!pass", "C3") and not answers("!pass", "PASS")


@pytest.mark.parametrize("name", tst_files())
def test_regression_file_through_the_protocol(name: str) -> None:
    steps = read_tst(REGRESS / name)
    assert sum(step.expected is not None for step in steps) >= 10
    with GtpClient(SAZ_GTP, cwd=REGRESS) as engine:
        for step in steps:
            reply = engine.send(step.command, timeout=60)
            assert reply.ok, f"{step.command}: ? {reply.text}"
            if step.expected is not None:
                assert answers(step.expected, reply.text), (step.command, reply.text)
