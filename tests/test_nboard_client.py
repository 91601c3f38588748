"""The NBoard client (`protocol/nboard_client.py`) against a scripted fake engine (`tests/fakes/
fake_nboard.py`): the start, depth, game, go and its answer forms, ping, and every way an
engine can fail; and one short conversation with NTest when `SAZ_NTEST` names it."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from saz.protocol.client_errors import EngineExited, EngineTimeout
from saz.protocol.ggf import GgfMove, parse_ggf, to_game
from saz.protocol.nboard_client import (
    NBoardAnswer,
    NBoardClient,
    NBoardProtocolError,
    parse_answer,
)
from saz.protocol.vertex import TopLeftVertices

FAKE = Path(__file__).parent / "fakes" / "fake_nboard.py"
GAME = ("(;GM[Othello]PC[saz]PB[a]PW[b]RE[?]TI[1:00]TY[8]"
        "BO[8 ---------------------------O*------*O--------------------------- *]"
        "B[F5]W[F6]B[D3];)")


def fake(*answers: str, log: Path | None = None, options: tuple[str, ...] = ()) -> NBoardClient:
    return NBoardClient([sys.executable, str(FAKE), *(["--log", str(log)] if log else []),
                         *options, "--", *answers], name="fake")


@pytest.mark.parametrize("line, answer", [
    ("=== F5", NBoardAnswer("F5")),
    ("=== f5/-1.04/0.01", NBoardAnswer("f5", -1.04, 0.01)),
    ("=== C5//0.00", NBoardAnswer("C5", None, 0.0)),
    ("=== d6 -1.00 0.0", NBoardAnswer("d6", -1.0, 0.0)),  # Edax's form (Protocol.htm's example)
    ("=== PA", NBoardAnswer("PA")),
    ("=== J10/2", NBoardAnswer("J10", 2.0)),
    ("=== F5/x/y", NBoardAnswer("F5")),
])
def test_answers_parse(line: str, answer: NBoardAnswer) -> None:
    assert parse_answer(line) == answer


@pytest.mark.parametrize("line", ["===", "=== ", "=== 55", "=== F5F6", "== F5"])
def test_answers_without_a_move_are_errors(line: str) -> None:
    with pytest.raises(NBoardProtocolError, match="starts with a move"):
        parse_answer(line)


def test_a_conversation(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with fake(log=log) as engine:
        assert engine.start(timeout=10) >= 0
        engine.set_depth(4)
        engine.set_contempt(-2.5)
        engine.set_game(parse_ggf(GAME))
        assert engine.ping(timeout=10) >= 0  # the engine has caught up
        assert engine.engine_name == "Fake4"
        answer = engine.go(timeout=10)
        assert (answer.move, answer.eval, answer.reported_seconds) == ("C3", 0.5, 0.01)
        assert answer.thinking == ("search F5 +0.50 0 1",) and answer.seconds > 0
        assert engine.status == "thinking"
        engine.move(GgfMove("C3", 0.5, 0.2))
        engine.ping(timeout=10)
        assert engine.status == ""  # the `status` after the answer, read by the ping
        assert engine.close() == 0
    sent = log.read_text().splitlines()
    assert sent[:4] == ["nboard 2", "ping 1", "set depth 4", "set contempt -2.5"]
    assert sent[4].startswith("set game (;GM[Othello]") and sent[4].endswith("B[D3];)")
    assert sent[5:] == ["ping 2", "go", "move C3/0.5/0.2", "ping 3", "quit"]
    # What the fake played is legal where it was asked.
    game = to_game(parse_ggf(GAME))
    assert game.is_legal(TopLeftVertices(8, 8).parse("C3"))


def test_scripted_answers_and_empty_answer() -> None:
    with fake("F5/1/2", "!empty") as engine:
        engine.start(timeout=10)
        engine.set_depth(1)
        engine.set_game(GAME)
        assert engine.go(timeout=10).move == "F5"
        with pytest.raises(NBoardProtocolError):
            engine.go(timeout=10)


def test_a_hung_engine_times_out_and_still_runs() -> None:
    with fake("!hang") as engine:
        engine.start(timeout=10)
        engine.set_depth(1)
        engine.set_game(GAME)
        started = time.monotonic()
        with pytest.raises(EngineTimeout, match=r"no '=== move' within 0\.3 s"):
            engine.go(timeout=0.3)
        assert time.monotonic() - started < 3
        assert engine.returncode is None
        engine.ping(timeout=10)  # still talking
    assert engine.returncode is not None


def test_no_pong_times_out() -> None:
    with fake(options=("--no-pong",)) as engine, pytest.raises(EngineTimeout, match="pong 1"):
        engine.start(timeout=0.5)


def test_a_crash_is_reported_with_status_and_stderr() -> None:
    engine = fake("!crash")
    try:
        engine.start(timeout=10)
        engine.set_depth(1)
        engine.set_game(GAME)
        with pytest.raises(EngineExited) as caught:
            engine.go(timeout=10)
        assert caught.value.returncode == 3
        assert "fake nboard: crashing" in str(caught.value)
        with pytest.raises(EngineExited):
            engine.go(timeout=1)
    finally:
        engine.kill()


def test_a_program_that_does_not_exist_cannot_start(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        NBoardClient([str(tmp_path / "no-such-engine")])


def test_bad_arguments_are_refused_before_anything_is_sent() -> None:
    with fake() as engine:
        with pytest.raises(ValueError, match="at least 1"):
            engine.set_depth(0)
        with pytest.raises(ValueError, match="one line"):
            engine.set_game(GAME + "\nquit")
        engine.start(timeout=10)


NTEST = os.environ.get("SAZ_NTEST")


@pytest.mark.skipif(not NTEST, reason="SAZ_NTEST (a command that starts NTest in NBoard mode) "
                                      "is not set")
def test_ntest_plays_a_legal_move() -> None:
    assert NTEST is not None
    with NBoardClient(NTEST, name="ntest") as engine:
        engine.start(timeout=30)
        engine.set_depth(2)
        engine.set_game(GAME)
        engine.ping(timeout=30)
        assert engine.engine_name == "Ntest2"
        answer = engine.go(timeout=30)
        assert to_game(parse_ggf(GAME)).is_legal(TopLeftVertices(8, 8).parse(answer.move))
