"""`saz nboard` (protocol/nboard.py): golden transcripts in NBoard's own lines, in the process
and through a real `python -m saz.protocol.nboard`; evals and depths of solved moves; the GGF
clock bounding `go`; `ping` stopping a search; `saz gtp` handing over on `nboard 2`.

Transcripts (tests/transcripts/*.nboard) hold what NBoard sends, as its engine pane and the
example session of NTest's Protocol.htm show it: "> " lines are sent, "< " lines are the answers
exactly, ">\\ " lines are sent after decoding Python's backslash escapes (control characters),
"<~ " answers match a regular expression (the whole line: the seconds a search took
vary), "#" lines are comments. They run with the greedy reference player (`--player greedy
--seed 1`), whose moves are fixed, so that a transcript runs in a fraction of a second.
"""
from __future__ import annotations

import io
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from saz.engine.engine import Engine, EngineConfig
from saz.engine.games import BLACK
from saz.engine.games.othello import Othello
from saz.engine.search.mcts import MoveInfo, SearchResult, SearchStats
from saz.engine.search.options import SearchOptions
from saz.protocol import gtp
from saz.protocol.ggf import format_ggf, from_game, parse_ggf, to_game
from saz.protocol.nboard import (
    NBoardSession,
    batch_depth,
    depth_visits,
    interrupts,
    move_hints,
    serve,
    value_discs,
)

TRANSCRIPTS = Path(__file__).parent / "transcripts"
#: What NBoard's engine may answer (`ResponseParser`'s commands); nothing else may reach stdout.
RESPONSES = re.compile(r"(set myname \S+|pong -?\d+|status( .*)?|nodestats \d+ \d+\.\d+|"
                       r"=== (PA|[A-Z]\d+)/(-?\d+\.\d\d)?/\d+\.\d\d|"
                       r"search \S+ -?\d+\.\d\d 0 \d+%?W? .*|learned|analysis \d+ -?\d+\.\d\d)")
#: NTest's Protocol.htm example game, as NBoard sends it.
EXAMPLE_GAME = ("(;GM[Othello]PC[NBoard]DT[2014-02-21 20:52:27 GMT]PB[./mEdax]PW[chris]RE[?]"
                "TI[15:00]TY[8]BO[8 ---------------------------O*------*O------------------"
                "--------- *]B[F5]W[F6]B[D3]W[C5]B[E6]W[F7]B[E7]W[F4];)")


# -- transcripts ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One line sent and the answers expected to it: ("=", text) or ("~", regex)."""

    sent: str
    expected: tuple[tuple[str, str], ...]
    line_number: int


def read_transcript(path: Path) -> list[Step]:
    steps: list[Step] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("> "):
            steps.append(Step(line[2:], (), number))
        elif line.startswith(">\\ "):
            steps.append(Step(line[3:].encode("ascii").decode("unicode_escape"), (), number))
        elif line.startswith(("< ", "<~ ")) or line == "<":
            kind, _, text = line.partition(" ")
            if not steps:
                raise ValueError(f"{path.name}:{number}: an answer before any command")
            last = steps[-1]
            steps[-1] = Step(last.sent, (*last.expected, ("~" if kind == "<~" else "=", text)),
                             last.line_number)
        else:
            raise ValueError(f"{path.name}:{number}: not a transcript line: {line!r}")
    return steps


def check_answers(path: Path, step: Step, answers: list[str]) -> None:
    where = f"{path.name}:{step.line_number} ({step.sent[:60]!r})"
    assert len(answers) == len(step.expected), f"{where}: answered {answers}"
    for answer, (kind, text) in zip(answers, step.expected, strict=True):
        if kind == "=":
            assert answer == text, where
        else:
            assert re.fullmatch(text, answer), f"{where}: {answer!r} does not match {text!r}"
        assert RESPONSES.fullmatch(answer), f"{where}: {answer!r} is no NBoard response"


def transcript_names() -> list[str]:
    return sorted(p.stem for p in TRANSCRIPTS.glob("*.nboard"))


@dataclass
class Session:
    """A session in this process, answering into a list."""

    session: NBoardSession
    out: list[str]

    @property
    def engine(self) -> Engine:
        return self.session.engine

    def send(self, line: str) -> list[str]:
        before = len(self.out)
        self.session.handle(line)
        return self.out[before:]


def make_session(**config: object) -> Session:
    out: list[str] = []
    settings = {"player": "greedy", **config}
    engine = Engine(EngineConfig(game="othello", search=SearchOptions(seed=1),
                                 **settings))  # type: ignore[arg-type]  # the test's own keys
    return Session(NBoardSession(engine, out.append), out)


@pytest.mark.parametrize("name", transcript_names())
def test_transcript_in_the_process(name: str) -> None:
    path = TRANSCRIPTS / f"{name}.nboard"
    session = make_session()
    for step in read_transcript(path):
        check_answers(path, step, session.send(step.sent))


def _reader(process: subprocess.Popen[str]) -> queue.Queue[str | None]:
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


@pytest.mark.parametrize("name", transcript_names())
def test_transcript_through_the_process(name: str) -> None:
    path = TRANSCRIPTS / f"{name}.nboard"
    process = subprocess.Popen(
        [sys.executable, "-m", "saz.protocol.nboard", "--player", "greedy", "--seed", "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdin is not None
    lines = _reader(process)
    try:
        for step in read_transcript(path):
            process.stdin.write(step.sent + "\n")
            process.stdin.flush()
            answers = [lines.get(timeout=30) for _ in step.expected]
            check_answers(path, step, [a for a in answers if a is not None])
        process.stdin.write("quit\n")
        process.stdin.flush()
        assert process.wait(timeout=10) == 0
        assert lines.get(timeout=5) is None  # nothing more after quit
    finally:
        process.kill()
        _, err = process.communicate()
    assert err == ""


def test_transcripts_parse() -> None:
    steps = read_transcript(TRANSCRIPTS / "session.nboard")
    assert steps[0] == Step("nboard 2", (("=", "set myname saz"), ("=", "status")),
                            steps[0].line_number)
    assert len(transcript_names()) >= 2


# -- evals and depths -------------------------------------------------------------------------
def _info(move: int, value: float, *, proven: bool = False,
          exact: float | None = None, pv: tuple[int, ...] = ()) -> MoveInfo:
    return MoveInfo(move, 10, value, 0.1, value, pv or (move,), proven=proven,
                    exact_score=exact)


def test_solved_moves_are_exact_or_proven_and_a_batch_shares_one_depth() -> None:
    result = SearchResult(0, 1.0, 30, (), SearchStats())
    exact = move_hints(result, [_info(1, 1.0, proven=True, exact=6.0),
                                 _info(2, -1.0, proven=True, exact=-4.0)], {}, 64)
    assert [line.eval for line in exact] == [6.0, -4.0]
    assert batch_depth(exact) == "100%"
    # A proven win keeps its sign whatever the score head says, and at least one disc.
    proven = move_hints(result, [_info(1, 1.0, proven=True), _info(2, 1.0, proven=True),
                                  _info(3, 0.0, proven=True), _info(4, -1.0, proven=True)],
                         {1: 9.5, 2: -3.0, 3: 2.0, 4: 0.5}, 64)
    assert [line.eval for line in proven] == [9.5, 1.0, 0.0, -1.0]
    assert batch_depth(proven) == "100%W"
    assert batch_depth([*exact, *proven]) == "100%W"
    # One unsolved move: the batch has the best move's PV length as its depth.
    mixed = move_hints(result, [_info(1, 0.5, pv=(1, 2, 3)), _info(2, 1.0, proven=True,
                                                                    exact=2.0)], {1: 3.25}, 64)
    assert [line.eval for line in mixed] == [3.25, 2.0]
    assert batch_depth(mixed) == "3"
    # Without the score head the value maps to discs.
    plain = move_hints(result, [_info(1, 0.5)], {}, 64)
    assert plain[0].eval == pytest.approx(value_discs(0.5, 64)) == pytest.approx(4.394, 1e-3)
    assert value_discs(1.0, 64) <= 64 and value_discs(-1.0, 64) >= -64


def test_depth_mapping() -> None:
    assert [depth_visits(d) for d in (1, 2, 4, 8, 12, 16, 20)] == [
        141, 200, 400, 1600, 6400, 25600, 102400]
    assert depth_visits(0) == depth_visits(1) and depth_visits(99) == depth_visits(40)


def test_interrupting_lines_are_the_commands() -> None:
    assert interrupts("ping 3") and interrupts("set game (;...;)") and interrupts("quit")
    assert not interrupts("") and not interrupts("hello") and not interrupts("F5")


# -- the network: exact endgames, the clock -----------------------------------------------------
@pytest.fixture(scope="module")
def model(tiny_model) -> Path:
    return tiny_model("othello", heads=True).path


def _endgame(empties: int, seed: int) -> Othello:
    import numpy as np

    game = Othello(8)
    game.play_random(60 - empties, np.random.default_rng(seed))
    assert not game.is_over()
    return game


def test_hint_in_a_solved_endgame_gives_exact_margins(model: Path) -> None:
    """With 8 empties the endgame solver settles the root: every hint line is `100%` and its
    eval the exact margin, which a solve of the position after the move confirms."""
    game = _endgame(8, 3)
    session = make_session(player=None, model=model, visits=50)
    assert session.send(f"set game {format_ggf(from_game(game))}") == []
    answers = session.send("hint 3")
    hints = [a for a in answers if a.startswith("search ")]
    assert answers[0] == "status saz is analysing" and answers[-2] == "status"
    assert answers[-1].startswith("nodestats ")
    last = hints[-min(3, len(game.legal_moves())):]
    for line in last:
        _, pv, evaluation, games, depth, *_ = line.split()
        assert (games, depth) == ("0", "100%"), line
        after = game.copy()
        after.play(after.point("ABCDEFGH".index(pv[0]), int(pv[1]) - 1))
        if after.is_over():
            margin = after.score() * game.to_move
        else:
            solution = after.solve()
            assert solution is not None
            margin = solution.margin * (1 if after.to_move == game.to_move else -1)
        assert float(evaluation) == pytest.approx(margin), line


def test_go_answers_within_the_ggf_clock(model: Path) -> None:
    """Depth 40 would take hours; with a second left on Black's clock, go answers in about
    one, and its move is legal."""
    record = parse_ggf(EXAMPLE_GAME)
    tags = {**record.tags, "TI": "0:01"}
    game = to_game(record)
    session = make_session(player=None, model=model)
    assert session.send(f"set game {format_ggf(from_game(game, tags))}") == []
    assert session.send("set depth 40") == []
    started = time.monotonic()
    answers = session.send("go")
    assert time.monotonic() - started < 3.0
    move = answers[-1]
    assert re.fullmatch(r"=== [A-H][1-8]/-?\d+\.\d\d/\d+\.\d\d", move), answers
    point = game.point("ABCDEFGH".index(move[4]), int(move[5]) - 1)
    assert game.is_legal(point)
    assert session.engine.game.moves == game.moves  # go does not play the move


def _lines_from(feed: queue.Queue[str | None]) -> Iterator[str]:
    while (line := feed.get()) is not None:
        yield line


def test_ping_stops_a_hint_and_answers_after_it(model: Path) -> None:
    """A hint at depth 40 runs until something stops it: ping does, within a second, and its
    pong comes after the hint's last lines."""
    out: queue.Queue[str] = queue.Queue()
    engine = Engine(EngineConfig(game="othello", model=model))
    session = NBoardSession(engine, out.put)
    feed: queue.Queue[str | None] = queue.Queue()
    thread = threading.Thread(target=serve, args=(session, _lines_from(feed)), daemon=True)
    thread.start()
    for line in ("nboard 2", f"set game {EXAMPLE_GAME}", "set depth 40", "ping 1", "hint 2"):
        feed.put(line)
    seen = [out.get(timeout=30) for _ in range(4)]
    assert seen == ["set myname saz", "status", "pong 1", "status saz is analysing"]
    time.sleep(0.5)
    feed.put("ping 2")
    sent = time.monotonic()
    rest: list[str] = []
    while not rest or rest[-1] != "pong 2":
        rest.append(out.get(timeout=10))
    assert time.monotonic() - sent < 2.0
    assert rest[-3] == "status" and rest[-2].startswith("nodestats ")
    assert any(line.startswith("search ") for line in rest)
    feed.put("quit")
    thread.join(timeout=10)
    assert not thread.is_alive()


# -- saz gtp hands over -------------------------------------------------------------------------
def test_gtp_hands_an_nboard_session_over() -> None:
    out = io.StringIO()
    lines = ["nboard 2\n", f"set game {EXAMPLE_GAME}\n", "ping 7\n", "go\n", "quit\n"]
    assert gtp.main(["--game", "go", "--player", "greedy", "--seed", "1"], stdin=lines,
                    stdout=out) == 0
    answers = out.getvalue().splitlines()
    assert answers[:3] == ["set myname saz", "status", "pong 7"]
    assert re.fullmatch(r"=== [A-H][1-8]/0\.00/\d+\.\d\d", answers[-1]), answers
    assert all(RESPONSES.fullmatch(a) for a in answers)


def test_gtp_without_nboard_is_gtp() -> None:
    out = io.StringIO()
    assert gtp.main(["--player", "greedy"], stdin=["name\n", "quit\n"], stdout=out) == 0
    assert out.getvalue().startswith("= saz\n\n")


def test_black_is_the_side_to_move_of_the_example_game() -> None:
    assert to_game(parse_ggf(EXAMPLE_GAME)).to_move == BLACK
