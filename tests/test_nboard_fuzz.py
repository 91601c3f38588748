"""Fuzzing `saz nboard`: random and malformed lines, mixed with plausible NBoard commands, never
end the session or hang it; a line refused with a `status` leaves the position and the settings
as they were; every `ping N` is answered `pong N`, and one sent at the end still is; nothing but
NBoard's responses reaches stdout, and none carries a control character.

Malformed means, besides random text: numbers of thousands of digits, digits of other scripts,
control characters, squares off the board or against the rules, GGF records with a character
spoilt, moves with bad evals and times. `quit` is never sent (it would end the session,
rightly). The sessions play with the greedy reference player, which answers at once.

The default run tries a few hundred sessions; the long one (`-m slow`) thousands:

    .venv/bin/python -m pytest tests/test_nboard_fuzz.py -m slow -q
"""
from __future__ import annotations

import queue
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saz.engine.engine import Engine, EngineConfig
from saz.engine.games.othello import Othello
from saz.engine.search.options import SearchOptions
from saz.protocol.ggf import format_ggf, from_game, move_text
from saz.protocol.nboard import NBoardSession
from tests.test_nboard import EXAMPLE_GAME, RESPONSES

COMMANDS = ["nboard", "set", "move", "hint", "go", "ping", "learn", "analyze"]
UNKNOWN = ["NBOARD", "Go", "foo", "pong", "status", "===", "search", "setgame", "F5", "hint3"]
SET_WORDS = ["game", "depth", "contempt", "myname", "Depth", ""]
#: Status lines that report work, not a refusal.
WORK = {"status", "status saz is thinking", "status saz is analysing",
        "status saz is analysing the game"}
FOREIGN_DIGITS = "０１２３４５６７８９٠١٢٣٤٥٦٧٨٩"
CONTROLS = "".join(chr(c) for c in (*range(0x20), 0x7F, 0x85) if chr(c) not in "\r\n")

number = st.one_of(
    st.integers(-5, 70).map(str), st.sampled_from(["9" * 4301, "-" + "1" * 30, "1e3", "0x10",
                                                   "1.5", "", "+7", "2147483648"]),
    st.text(st.sampled_from(FOREIGN_DIGITS), min_size=1, max_size=3))
square = st.builds(lambda c, r: c + r, st.sampled_from("ABCDEFGHIJZabcdh"),
                   st.sampled_from(["1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "10", ""]))
decimal = st.one_of(st.just(""), st.floats(-70, 70).map(lambda v: f"{v:.2f}"),
                    st.sampled_from(["nan", "inf", "-1e999", "abc", "٣", "1_0", " "]))
move_arg = st.one_of(
    square, st.sampled_from(["PA", "pa", "pass", "P"]),
    st.builds(lambda m, e: f"{m}/{e}", square, decimal),
    st.builds(lambda m, e, t: f"{m}/{e}/{t}", square, decimal, decimal))
junk = st.text(st.characters(codec="utf-8", blacklist_characters="\r\n"), max_size=15)


@st.composite
def spoilt(draw: st.DrawFn, text: str) -> str:
    """`text` with a character replaced, removed, or a control character slipped in."""
    if not text:
        return text
    at = draw(st.integers(0, len(text) - 1))
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return text[:at] + draw(st.sampled_from(CONTROLS)) + text[at:]
    if kind == 1:
        return text[:at] + text[at + 1:]
    return text[:at] + draw(st.sampled_from("x9/ -[];*O")) + text[at + 1:]


@st.composite
def played_game(draw: st.DrawFn) -> str:
    """A GGF record of random legal play on 8x8 (some on 6x6 or 10x10), as NBoard sends it."""
    size = draw(st.sampled_from([8, 8, 8, 6, 10]))
    game = Othello(size)
    game.play_random(draw(st.integers(0, size * size - 4)),
                     np.random.default_rng(draw(st.integers(0, 2 ** 16))))
    tags = {"PC": "NBoard", "PB": "saz", "PW": "chris", "RE": "?",
            "TI": draw(st.sampled_from(["15:00", "0", "1:00//0:10", "5:00/2"]))}
    return format_ggf(from_game(game, tags))


ggf = st.one_of(st.just(EXAMPLE_GAME), played_game(), played_game().flatmap(spoilt),
                st.just(EXAMPLE_GAME).flatmap(spoilt), junk)


@st.composite
def command_line(draw: st.DrawFn) -> str:
    word = draw(st.sampled_from(COMMANDS + UNKNOWN))
    if word == "set":
        variable = draw(st.sampled_from(SET_WORDS))
        value = draw(ggf) if variable == "game" else draw(st.one_of(number, junk))
        line = f"set {variable} {value}"
    elif word == "move":
        line = f"move {draw(move_arg)}"
    elif word in ("hint", "ping", "nboard"):
        line = f"{word} {draw(number)}"
    else:
        line = word + draw(st.sampled_from(["", " ", f" {draw(junk)}"]))
    return draw(st.one_of(st.just(line), st.just(line), spoilt(line)))


#: A legal move of the position the session has then (`run_session` picks the n-th one), with
#: an eval and a time as NBoard sends them.
LEGAL = "<legal {}>"
legal = st.integers(0, 30).map(LEGAL.format)
#: One line of a session: mostly commands NBoard might send, some junk.
step = st.one_of(command_line(), command_line(), command_line(), junk, legal, legal, legal,
                 st.integers(-3, 99).map("ping {}".format), st.just("go"),
                 st.just("hint 2"), square.map("move {}".format),
                 played_game().map("set game {}".format),
                 st.integers(1, 8).map("set depth {}".format))


def make_session() -> tuple[NBoardSession, list[str]]:
    out: list[str] = []
    engine = Engine(EngineConfig(game="othello", player="greedy", search=SearchOptions(seed=1)))
    return NBoardSession(engine, out.append), out


def snapshot(session: NBoardSession) -> tuple[object, ...]:
    game = session.engine.game
    return (tuple(game.moves), game.board.tobytes(), game.to_move, game.width, session.depth,
            session.contempt, session.record)


def legal_move(session: NBoardSession, index: int) -> str:
    """The `index`-th legal move of the session's position (modulo their number) as NBoard
    sends it, or a pass when the game is over (which is refused)."""
    game = session.engine.game
    moves = game.legal_moves()
    move = int(moves[index % len(moves)]) if len(moves) else game.pass_move
    return f"move {move_text(game.width, move)}/{index - 15:.2f}/{index / 10:.1f}"


def check_line(answer: str) -> None:
    assert RESPONSES.fullmatch(answer), f"{answer!r} is no NBoard response"
    assert all(c.isprintable() for c in answer), f"{answer!r} carries a control character"


def run_session(lines: list[str]) -> None:
    session, out = make_session()
    for line in lines:
        if line.startswith("<legal "):
            line = legal_move(session, int(line[7:-1]))
        before = snapshot(session)
        start = len(out)
        session.handle(line)
        answers = out[start:]
        for answer in answers:
            check_line(answer)
        words = line.split()
        if len(words) == 2 and words[0] == "ping" and words[1].lstrip("-").isdigit() and \
                words[1].isascii() and len(words[1].lstrip("-")) <= 10:
            assert answers == [f"pong {int(words[1])}"], (line, answers)
        refusals = [a for a in answers if a.startswith("status") and a not in WORK]
        if refusals:
            assert snapshot(session) == before, (line, answers)
    before = snapshot(session)
    session.handle("ping 424242")
    assert out[-1] == "pong 424242"
    assert snapshot(session) == before


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=40))
def test_fuzzed_sessions_keep_their_position(lines: list[str]) -> None:
    run_session(lines)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=80))
def test_fuzzed_sessions_keep_their_position_long(lines: list[str]) -> None:
    run_session(lines)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, min_size=20, max_size=60))
def test_the_process_survives_fuzzed_input(lines: list[str]) -> None:
    """Through `python -m saz.protocol.nboard`: the lines as bytes on its stdin, then a ping,
    which is answered; every line of stdout is an NBoard response."""
    process = subprocess.Popen(
        [sys.executable, "-m", "saz.protocol.nboard", "--player", "greedy", "--seed", "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    answers: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            answers.put(raw.decode("utf-8").rstrip("\n"))
        answers.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        payload = "".join(line.replace("\r", "") + "\n" for line in lines) + "ping 31337\n"
        process.stdin.write(payload.encode("utf-8", "surrogatepass"))
        process.stdin.flush()
        seen: list[str] = []
        while not seen or seen[-1] != "pong 31337":
            answer = answers.get(timeout=60)
            assert answer is not None, f"the process ended: {seen[-5:]}"
            check_line(answer)
            seen.append(answer)
        assert process.poll() is None  # alive
        process.stdin.write(b"quit\n")
        process.stdin.flush()
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()
        process.communicate()
