"""Fuzzing the Gomocup front-end: random and malformed lines, mixed with plausible commands on
small boards, never crash it or hang it; every command that needs an answer gets exactly one;
an answer of ERROR or UNKNOWN leaves the game as it was; every move answered is the move played;
no answer is longer than a line should be or carries a control character.

Malformed means, besides random text: numbers of thousands of digits (Python's int() refuses
more than 4,300), digits of other scripts that int() reads all the same (`７`, `٣`), control
characters, all of them in commands, in INFO values and inside BOARD and SWAP2BOARD blocks.

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

MOVE = re.compile(r"(\d+),(\d+)")
NEVER_ANSWERED = {"INFO", "STOP", "YXSTOP", "END"}
#: The commands the brain knows: inside a block, a line that starts with one ends the block.
COMMANDS = {"START", "RECTSTART", "RESTART", "BEGIN", "TURN", "BOARD", "DONE", "TAKEBACK", "PLAY",
            "SWAP2BOARD", "INFO", "ABOUT", "STOP", "YXSTOP", "END"}
WORDS = [*sorted(COMMANDS), "SUGGEST", "YXBOARD", "FOO"]
#: The longest answer line we accept: echoes of the input are cut (40 characters, twice in an
#: INFO note).
LONGEST_ANSWER = 300
INFO_KEYS = ["timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule",
             "max_node", "max_depth", "thread_num", "folder", "evaluate", "unknown_key", ""]

#: Digits that int() and \d read besides 0-9: fullwidth, Arabic-Indic, Devanagari, Thai.
FOREIGN_DIGITS = "０１２３４５６７８９٠١٢٣٤٥٦٧٨٩०१२३४५६७८९๐๑๒๓๔๕๖๗๘๙"
#: Control characters other than the line ends (which end the line before the brain sees it).
CONTROLS = "".join(chr(c) for c in (*range(0x20), 0x7F, 0x85) if chr(c) not in "\r\n")


def foreign(text: str, script: int) -> str:
    """`text` with its digits written in the `script`-th script of FOREIGN_DIGITS."""
    digits = FOREIGN_DIGITS[10 * script:10 * script + 10]
    return "".join(digits[int(c)] if c in "0123456789" else c for c in text)


# Coordinates mostly on small boards, so that moves are often legal and games often end; now and
# then a number too long to read (4,301 digits: more than int() converts; 10: one too many).
huge = st.sampled_from(["9" * 4301, "-" + "1" * 4400, "1234567890", "0" * 12 + "7"])
coordinate = st.integers(-2, 8) | st.integers(-10, 40) | huge
junk = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
               max_size=20)
control = st.sampled_from(CONTROLS)


@st.composite
def spoilt(draw: st.DrawFn, text: str) -> str:
    """`text` (a number line, say) made malformed as a careless manager or a broken pipe might:
    its digits in another script, or a control character slipped in."""
    if draw(st.booleans()):
        return foreign(text, draw(st.integers(0, len(FOREIGN_DIGITS) // 10 - 1)))
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(control) + text[at:]


point = st.builds(lambda x, y, sep: f"{x}{sep}{y}", coordinate, coordinate,
                  st.sampled_from([",", " , ", ",,", " "]))
number_line = st.lists(coordinate, min_size=1, max_size=4).map(
    lambda values: ",".join(map(str, values)))
bad_number_line = number_line.flatmap(spoilt)
size = st.sampled_from(["5", "6", "7", "9", "15"]) | st.integers(-3, 40).map(str) | huge
argument = st.one_of(st.just(""), point, number_line, size, junk, point.flatmap(spoilt))
info_value = st.one_of(st.integers(-5, 5000).map(str), st.sampled_from(
    ["0", "1", "2", "4", "8", "18446744073709551615", "2147483647", "C:\\Temp", "7,7"]), junk,
    huge, st.integers(0, 5000).map(str).flatmap(spoilt))


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
def spoilt_block(draw: st.DrawFn) -> list[str]:
    """A BOARD or SWAP2BOARD block with a malformed line among good ones (a huge number, other
    digits, a control character, junk), or a command that ends it early."""
    command = draw(st.sampled_from(["BOARD", "SWAP2BOARD"]))
    good = st.builds(lambda s, f: f"{s},{f}", stone, st.sampled_from([1, 2])) \
        if command == "BOARD" else stone
    lines = draw(st.lists(good, max_size=6))
    bad = draw(st.one_of(bad_number_line, number_line, junk, command_line()))
    lines.insert(draw(st.integers(0, len(lines))), bad)
    return [command, *lines, "DONE"]


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
step = st.one_of(plausible, plausible, threat(), command_line(), number_line, junk, point,
                 spoilt_block(), bad_number_line)


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
            if text.split(None, 1)[0].upper() not in COMMANDS:
                return 0  # a line of the block, good or bad: DONE answers for them all
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
    engine.set_memory_limit(None)
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
        assert not due or not produced[-1].startswith("MESSAGE "), produced  # none after
        searched = [i for i, a in enumerate(produced) if kind(a) in ("move", "swap2 stones", "SWAP")
                    and text.split()[0].upper() != "PLAY"]
        # Each answer a search chose comes just after the one MESSAGE about that search.
        assert all(i > 0 and produced[i - 1].startswith("MESSAGE visits ") for i in searched)
        assert sum(a.startswith("MESSAGE visits ") for a in produced) == len(searched)
        assert not any("internal error" in a for a in produced), produced
        assert all(len(a) <= LONGEST_ANSWER and a.isprintable() for a in produced), produced
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
