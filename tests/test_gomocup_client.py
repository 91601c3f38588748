"""The pbrain client against small scripted brains: answers past MESSAGE lines, deadlines, a
brain that dies or will not end, and the reading of each kind of answer."""
from __future__ import annotations

import sys
import textwrap

import pytest

from saz.protocol.client_errors import EngineExited, EngineTimeout
from saz.protocol.gomocup_client import PbrainClient, Reply, ReplyKind, UnexpectedReply

#: A brain that reports every line it gets as a MESSAGE, then answers from a table; on a line it
#: has no answer for it says nothing. `exit` lines make it exit with that status.
SCRIPTED = textwrap.dedent("""
    import sys, time
    answers = {answers!r}
    for line in sys.stdin:
        line = line.strip()
        print("MESSAGE got " + line, flush=True)
        print("DEBUG again " + line, flush=True)
        if line == "END" and {obeys_end!r}:
            sys.exit(0)
        answer = answers.get(line)
        if answer is None:
            continue
        if answer.startswith("exit"):
            print("dying", file=sys.stderr, flush=True)
            sys.exit(int(answer.split()[1]))
        print(answer, flush=True)
    time.sleep(30)
""")


def scripted(answers: dict[str, str], *, obeys_end: bool = True) -> PbrainClient:
    code = SCRIPTED.format(answers=answers, obeys_end=obeys_end)
    return PbrainClient([sys.executable, "-c", code], name="scripted")


@pytest.mark.parametrize(("text", "kind"), [
    ("OK", ReplyKind.OK), ("ERROR occupied", ReplyKind.ERROR), ("unknown FOO", ReplyKind.UNKNOWN),
    ("7,7", ReplyKind.MOVE), ("7, 7", ReplyKind.TEXT), ("7,7 8,8 9,9", ReplyKind.MOVE),
    ("SWAP", ReplyKind.SWAP), ("SUGGEST 3,4", ReplyKind.SUGGEST),
    ('name="saz", version="1"', ReplyKind.TEXT), ("-1,3", ReplyKind.TEXT)])
def test_reply_kinds(text: str, kind: ReplyKind) -> None:
    assert Reply(text).kind is kind


def test_reply_points() -> None:
    assert Reply("10,3").move == (10, 3)
    assert Reply("7,7 8,8 9,6").points == ((7, 7), (8, 8), (9, 6))
    with pytest.raises(UnexpectedReply, match="one move"):
        _ = Reply("7,7 8,8 9,6").move
    with pytest.raises(UnexpectedReply, match="ERROR nope"):
        _ = Reply("ERROR nope").move


def test_answers_are_read_past_messages_and_timed() -> None:
    with scripted({"BEGIN": "7,7", "ABOUT": 'name="fake", version="2"'}) as brain:
        reply = brain.begin(timeout=10)
        assert reply.move == (7, 7)
        assert reply.messages == ("MESSAGE got BEGIN", "DEBUG again BEGIN")
        assert 0 < reply.seconds < 10
        assert brain.about() == {"name": "fake", "version": "2"}


def test_board_sends_the_stones_in_order_and_times_from_done() -> None:
    with scripted({"DONE": "1,1"}) as brain:
        reply = brain.board([(7, 7, 1), (8, 8, 2)], timeout=10)
        assert reply.move == (1, 1)
        assert [m for m in reply.messages if m.startswith("MESSAGE")] == [
            "MESSAGE got BOARD", "MESSAGE got 7,7,1", "MESSAGE got 8,8,2", "MESSAGE got DONE"]


def test_an_error_where_ok_is_due_is_unexpected() -> None:
    with scripted({"START 15": "OK", "START 40": "ERROR unsupported size"}) as brain:
        brain.start_game(15)
        with pytest.raises(UnexpectedReply, match="unsupported size"):
            brain.start_game(40)


def test_no_answer_in_time_is_a_timeout_and_the_brain_lives_on() -> None:
    with scripted({"TURN 1,1": "2,2"}) as brain:
        with pytest.raises(EngineTimeout, match="DEBUG again BEGIN"):
            brain.begin(timeout=0.3)
        assert brain.returncode is None
        assert brain.turn(1, 1, timeout=10).move == (2, 2)


def test_a_brain_that_dies_is_reported_with_its_status_and_stderr() -> None:
    brain = scripted({"BEGIN": "exit 3"})
    with pytest.raises(EngineExited) as caught:
        brain.begin(timeout=10)
    assert caught.value.returncode == 3
    assert "dying" in caught.value.stderr
    with pytest.raises(EngineExited):
        brain.write("TURN 1,1")
    assert brain.close() == 3


def test_close_ends_a_brain_or_kills_one_that_ignores_end() -> None:
    assert scripted({}).close() == 0
    stubborn = scripted({}, obeys_end=False)
    assert stubborn.close(grace=0.3) < 0  # killed by a signal


def test_one_line_at_a_time() -> None:
    with scripted({}) as brain:
        with pytest.raises(ValueError):
            brain.write("START 15\nBEGIN")
