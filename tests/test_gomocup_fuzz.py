"""Fuzzing the Gomocup front-end: random and malformed lines, mixed with plausible commands on
small boards, never crash it or hang it; every command that needs an answer gets exactly one;
an answer of ERROR or UNKNOWN leaves the game as it was; every move answered is the move played.

The default run tries a few thousand lines. The long run (`-m slow`) sends 100,000:

    .venv/bin/python -m pytest tests/test_gomocup_fuzz.py -m slow -q
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saz.engine.engine import Engine, EngineConfig
from saz.engine.search.clock import Gomocup, TimeManager
from saz.engine.search.options import SearchOptions
from saz.protocol.gomocup import GomocupBrain

#: The protocol's multi-line blocks consist of lines of comma-separated integers.
NUMBER_LINE = re.compile(r"-?\d+(?:\s*,\s*-?\d+)*")
MOVE = re.compile(r"(\d+),(\d+)")
NEVER_ANSWERED = {"INFO", "STOP", "YXSTOP", "END"}

WORDS = ["START", "RECTSTART", "RESTART", "BEGIN", "TURN", "BOARD", "DONE", "TAKEBACK", "PLAY",
         "SWAP2BOARD", "INFO", "ABOUT", "STOP", "YXSTOP", "END", "SUGGEST", "YXBOARD", "FOO"]
INFO_KEYS = ["timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule",
             "max_node", "max_depth", "thread_num", "folder", "evaluate", "unknown_key", ""]

# Coordinates mostly on small boards, so that moves are often legal and games often end.
coordinate = st.integers(-2, 8) | st.integers(-10, 40)
junk = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
               max_size=20)
point = st.builds(lambda x, y, sep: f"{x}{sep}{y}", coordinate, coordinate,
                  st.sampled_from([",", " , ", ",,", " "]))
number_line = st.lists(coordinate, min_size=1, max_size=4).map(
    lambda values: ",".join(map(str, values)))
size = st.sampled_from(["5", "6", "7", "9", "15"]) | st.integers(-3, 40).map(str)
argument = st.one_of(st.just(""), point, number_line, size, junk)
info_value = st.one_of(st.integers(-5, 5000).map(str), st.sampled_from(
    ["0", "1", "2", "4", "8", "18446744073709551615", "2147483647", "C:\\Temp", "7,7"]), junk)


@st.composite
def command_line(draw: st.DrawFn) -> str:
    word = draw(st.sampled_from(WORDS))
    word = draw(st.sampled_from([word, word.lower(), word.title()]))
    if word.upper() == "INFO":
        args = f"{draw(st.sampled_from(INFO_KEYS))} {draw(info_value)}"
    elif word.upper() == "START":
        args = draw(size)
    else:
        args = draw(argument)
    space = draw(st.sampled_from([" ", "  ", "\t"]))
    return draw(st.sampled_from(["", " "])) + word + (space + args if args else "")


on_board = st.integers(0, 6)  # the sessions play on 7x7 (until a START changes it)
stone = st.builds(lambda x, y: f"{x},{y}", on_board, on_board)
plausible = st.one_of(
    stone.map("TURN {}".format), stone.map("TURN {}".format), stone.map("PLAY {}".format),
    stone.map("TAKEBACK {}".format),
    st.sampled_from(["BEGIN", "RESTART", "START 7", "DONE", "BOARD", "SWAP2BOARD"]),
    st.builds(lambda stones: ["BOARD", *stones, "DONE"], st.lists(st.builds(
        lambda s, f: f"{s},{f}", stone, st.sampled_from([1, 2, 1, 2, 3])), max_size=10)),
    st.builds(lambda stones: ["SWAP2BOARD", *stones, "DONE"],
              st.lists(stone, max_size=6)))


@st.composite
def threat(draw: st.DrawFn) -> list[str]:
    """The opponent gets four in a row and we are to move; then it plays at one end of its four,
    which often makes five and ends the game (a TURN with nothing left to answer)."""
    x, y = draw(st.integers(0, 3)), draw(on_board)
    theirs = [f"{x + i},{y},2" for i in range(4)]
    own = [f"{a},{b},1" for a, b in draw(st.lists(st.tuples(on_board, on_board), min_size=3,
                                                  max_size=3))]
    stones = [s for pair in zip(theirs, own, strict=False) for s in pair] + theirs[3:]
    return ["BOARD", *stones, "DONE", f"TURN {draw(st.sampled_from([x - 1, x + 4]))},{y}"]


#: One step of a session: a line, or a whole block (BOARD, its stones, DONE).
step = st.one_of(plausible, plausible, threat(), command_line(), number_line, junk, point)


def sessions(steps: int, lines: int | None = None) -> st.SearchStrategy[list[str]]:
    """Sessions of up to `steps` steps (exactly that many if `lines` is given, cut to exactly
    `lines` lines), each opening with START 7."""
    def flatten(chosen: list[str | list[str]]) -> list[str]:
        flat = ["START 7", *(ln for s in chosen for ln in ([s] if isinstance(s, str) else s))]
        return flat[:lines] if lines else flat

    return st.lists(step, min_size=steps if lines else 0, max_size=steps).map(flatten)


@dataclass
class ProtocolModel:
    """What the brain owes: how many answers each line needs, by the protocol alone."""

    started: bool = False
    in_block: bool = False
    finished: bool = False

    def answers_due(self, text: str) -> int:
        text = text.strip()
        if self.finished or not text:
            return 0
        if self.in_block:
            if text.upper() == "DONE":
                self.in_block = False
                return 1
            if NUMBER_LINE.fullmatch(text):
                return 0
            self.in_block = False  # refused with an ERROR, then the line is a command
            return 1 + self.answers_due(text)
        word, *rest = text.split(None, 1)
        command = word.upper()
        if command == "END":
            self.finished = True
        if command in NEVER_ANSWERED:
            return 0
        if command in ("BOARD", "SWAP2BOARD") and self.started and not rest:
            self.in_block = True
            return 0
        return 1


@dataclass
class Tally:
    lines: int = 0
    answers: Counter[str] = field(default_factory=Counter)


TALLY = Tally()


@pytest.fixture(scope="module")
def engine(tiny_model) -> Engine:
    engine = Engine(EngineConfig(game="gomoku", model=tiny_model("gomoku").path, visits=2,
                                 search=SearchOptions(batch_size=2)),
                    clock=TimeManager(Gomocup()))
    engine.load_network()
    return engine


def kind(answer: str) -> str:
    parts = answer.split()
    if all(MOVE.fullmatch(part) for part in parts):
        return "move" if len(parts) == 1 else "swap2 stones"
    return "ABOUT" if answer.startswith("name=") else parts[0]


def snapshot(engine: Engine) -> tuple[object, ...]:
    game = engine.game
    return game.width, game.height, game.rules.name, tuple(game.moves)  # type: ignore[attr-defined]


def run_session(engine: Engine, lines: list[str]) -> None:
    # One engine serves every session (loading a network each time would dominate); a session
    # starts from a fresh brain and the engine's defaults.
    engine.config = replace(engine.config, visits=2)
    engine.set_game("gomoku", 15)
    engine.set_time_control(Gomocup())
    out: list[str] = []
    brain = GomocupBrain(engine, out.append)
    model = ProtocolModel()
    for text in lines:
        before, position = len(out), snapshot(engine)
        due = model.answers_due(text)
        brain.handle(text)
        produced = out[before:]
        answers = [a for a in produced if not a.startswith("MESSAGE ")]
        assert len(answers) == due, (text, produced)
        assert all(not a.startswith("MESSAGE ") for a in produced[len(produced) - due:])
        assert not any("internal error" in a for a in produced), produced
        TALLY.lines += 1
        if not answers:
            # Nothing answered, nothing changed; but INFO rule may change the rule.
            changed = [a != b for a, b in zip(snapshot(engine), position, strict=True)]
            assert not any(changed) or (changed == [False, False, True, False]
                                        and text.split()[0].upper() == "INFO"), text
            continue
        last = answers[-1]
        TALLY.answers[kind(last)] += 1
        if last.startswith(("ERROR", "UNKNOWN")):
            assert snapshot(engine) == position, (text, last)
        elif MOVE.fullmatch(last) and text.split()[0].upper() != "TAKEBACK":
            x, y = map(int, last.split(","))
            assert engine.game.moves[-1] == engine.game.point(x, y), (text, last)
        if text.split()[0].upper() in ("START", "RECTSTART") and last == "OK":
            model.started = True
    assert brain.finished == model.finished


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(lines=sessions(30))
def test_random_lines_are_answered_exactly_once(engine: Engine, lines: list[str]) -> None:
    run_session(engine, lines)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stones=st.lists(st.tuples(coordinate, coordinate, st.integers(0, 3)), max_size=12))
def test_random_boards_are_set_up_or_refused(engine: Engine,
                                             stones: list[tuple[int, int, int]]) -> None:
    lines = ["START 7", "BOARD", *(f"{x},{y},{f}" for x, y, f in stones), "DONE"]
    run_session(engine, lines)


@pytest.mark.slow
def test_a_hundred_thousand_lines(engine: Engine) -> None:
    """The recorded run: 1,000 sessions of 100 lines, derandomised so it can be repeated."""
    TALLY.lines = 0
    TALLY.answers.clear()
    run = settings(max_examples=1000, deadline=None, derandomize=True, database=None,
                   suppress_health_check=list(HealthCheck))(
        given(lines=sessions(99, lines=100))(run_session))
    run(engine)
    print(f"\n{TALLY.lines} lines; last answers by kind: {dict(TALLY.answers.most_common())}")
    assert TALLY.lines >= 100_000
