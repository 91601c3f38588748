"""The Gomocup front-end (`pbrain-saz`): golden transcripts in the process and through a real
`python -m saz.protocol.gomocup`, a complete game, INFO settings, swap2, interrupts, start-up.

Transcripts (tests/transcripts/*.gomocup): "> " lines are sent, ">\\ " lines are sent after
decoding Python's backslash escapes (for control characters), "< " lines are the answers exactly
(MESSAGE lines included), "<~ " answers match a regular expression (the whole line) whose named
groups can be used as {name} in later lines, as {huge} can (a number of 4,301 digits, one more
than Python's int() reads); "#" lines are comments. Moves the network chooses are matched by
pattern (the test network is random), moves the rules decide exactly.
"""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from saz.engine.engine import Engine, EngineConfig
from saz.engine.games import BLACK, WHITE
from saz.engine.games.gomoku import Gomoku
from saz.engine.search.clock import Gomocup, TimeManager
from saz.engine.search.memory import resident_bytes
from saz.engine.search.mcts import (
    MEMORY_HEADROOM,
    MoveInfo,
    SearchResult,
    SearchStats,
)
from saz.engine.search.options import SearchOptions
from saz.protocol.gomocup import (
    About,
    GomocupBrain,
    search_message,
    serve,
)
from saz.protocol.client_errors import EngineExited
from saz.protocol.gomocup_client import PbrainClient, ReplyKind
from saz.protocol.input_lines import MAX_LINE, fd_lines

TRANSCRIPTS = Path(__file__).parent / "transcripts"
VISITS = 16
MOVE = re.compile(r"(\d+),(\d+)")
#: What a transcript may use before it has captured anything.
PRESET = {"huge": "9" * 4301}


# -- transcripts -----------------------------------------------------------------------------------
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
        elif line.startswith(("< ", "<~ ")):
            kind, _, text = line.partition(" ")
            if not steps:
                raise ValueError(f"{path.name}:{number}: an answer before any command")
            last = steps[-1]
            steps[-1] = Step(last.sent, (*last.expected, ("~" if kind == "<~" else "=", text)),
                             last.line_number)
        else:
            raise ValueError(f"{path.name}:{number}: not a transcript line: {line!r}")
    return steps


def check_answers(path: Path, step: Step, answers: list[str], captures: dict[str, str]) -> None:
    where = f"{path.name}:{step.line_number} ({step.sent!r})"
    assert len(answers) == len(step.expected), f"{where}: answered {answers}"
    for answer, (kind, text) in zip(answers, step.expected, strict=True):
        if kind == "=":
            assert answer == text.format_map(captures), where
        else:
            match = re.fullmatch(text, answer)
            assert match, f"{where}: {answer!r} does not match {text!r}"
            captures.update(match.groupdict())


def transcript_names() -> list[str]:
    return sorted(p.stem for p in TRANSCRIPTS.glob("*.gomocup"))


@dataclass
class Session:
    """A brain in this process, answering into a list."""

    brain: GomocupBrain
    out: list[str]

    @property
    def engine(self) -> Engine:
        return self.brain.engine

    def send(self, line: str) -> list[str]:
        before = len(self.out)
        self.brain.handle(line)
        return self.out[before:]


def make_session(model: Path, **config: object) -> Session:
    out: list[str] = []
    settings = {"visits": VISITS, "search": SearchOptions(batch_size=4), **config}
    engine = Engine(EngineConfig(game="gomoku", model=model, **settings),  # type: ignore[arg-type]
                    clock=TimeManager(Gomocup()))
    return Session(GomocupBrain(engine, out.append), out)


@pytest.fixture(scope="module")
def model(tiny_model) -> Path:
    return tiny_model("gomoku").path


@pytest.fixture
def session(model: Path) -> Session:
    return make_session(model)


def brain_command(model: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "saz.protocol.gomocup", "--model", str(model), *extra]


@pytest.mark.parametrize("name", transcript_names())
def test_transcript_in_the_process(name: str, session: Session) -> None:
    path = TRANSCRIPTS / f"{name}.gomocup"
    captures = dict(PRESET)
    for step in read_transcript(path):
        answers = session.send(step.sent.format_map(captures))
        check_answers(path, step, answers, captures)
        for answer in answers:  # every move answered is the move the engine played
            if MOVE.fullmatch(answer) and step.sent.split()[0].upper() != "TAKEBACK":
                x, y = map(int, answer.split(","))
                assert session.engine.game.moves[-1] == session.engine.game.point(x, y)


@pytest.mark.parametrize("name", transcript_names())
def test_transcript_through_the_process(name: str, model: Path) -> None:
    path = TRANSCRIPTS / f"{name}.gomocup"
    captures = dict(PRESET)
    client = PbrainClient(brain_command(model, "--visits", str(VISITS)))
    try:
        for step in read_transcript(path):
            sent = step.sent.format_map(captures)
            if client.returncode is None:
                client.write(sent)
            if sent == "END":
                assert client.wait(timeout=5) == 0
            answers = [client.read_line(time.monotonic() + 30)[0] for _ in step.expected]
            check_answers(path, step, answers, captures)
        assert client.close() == 0
        with pytest.raises(EngineExited):  # nothing was written after END
            client.read_line(time.monotonic() + 5)
    finally:
        client.kill()
    assert client.stderr_tail == ()


def test_transcripts_parse() -> None:
    steps = read_transcript(TRANSCRIPTS / "errors.gomocup")
    assert steps[0] == Step("BEGIN", (("=", "ERROR BEGIN before START: there is no board yet"),),
                            steps[0].line_number)
    assert len(transcript_names()) >= 3


# -- a whole game ----------------------------------------------------------------------------------
def test_a_complete_game_against_a_scripted_opponent(session: Session) -> None:
    """The brain plays Black on 9x9 against an opponent that takes the free point nearest the
    centre; a referee checks every move and scores the end by the rules."""
    referee = Gomoku(9)
    assert session.send("INFO timeout_turn 100") == []
    assert session.send("START 9") == ["OK"]
    command = "BEGIN"
    while True:
        answer = session.send(command)
        assert len(answer) == 2 and answer[0].startswith("MESSAGE visits "), answer
        assert MOVE.fullmatch(answer[1]), answer
        x, y = map(int, answer[1].split(","))
        referee.play(referee.point(x, y))  # raises if the brain's move were illegal
        if referee.is_over():
            break
        reply = min(referee.legal_moves(), key=lambda p: (abs(p % 9 - 4) + abs(p // 9 - 4), p))
        referee.play(int(reply))
        if referee.is_over():
            # The game is over after the opponent's move: nothing to answer, nothing changed.
            before = list(session.engine.game.moves)
            assert session.send(f"TURN {reply % 9},{reply // 9}") == [
                f"ERROR the game is over ({'black' if referee.winner() == BLACK else 'white'} "
                "has won): there is no move to make"
                if referee.winner() in (BLACK, WHITE) else
                "ERROR the game is over (a draw): there is no move to make"]
            assert session.engine.game.moves == before
            session.engine.play(int(reply))
            break
        command = f"TURN {reply % 9},{reply // 9}"
    assert session.engine.game.moves == referee.moves
    assert session.engine.game.winner() == referee.winner() is not None


def test_board_rebuilds_the_position_with_us_to_move(session: Session) -> None:
    session.send("START 15")
    answer = session.send("BOARD") + session.send("7,7,2") + session.send("8,8,1") + \
        session.send("7,8,2") + session.send("DONE")
    game = session.engine.game
    assert len(answer) == 2 and answer[0].startswith("MESSAGE visits ")
    x, y = map(int, answer[1].split(","))
    # The opponent has one stone more: it is Black, its stones went first, and we played White.
    assert game.moves[:3] == [game.point(7, 7), game.point(8, 8), game.point(7, 8)]
    assert game.moves[3] == game.point(x, y) and game.to_move == BLACK


def test_begin_opens_in_the_centre_and_the_network_plays_on(session: Session) -> None:
    """The empty board is the game's book (`Gomoku.book_moves`): the centre, whatever the
    network's priors say; from the first stone on, the search chooses."""
    session.send("START 20")
    assert session.send("BEGIN")[-1] == "10,10"
    session.send("START 15")
    assert session.send("BEGIN")[-1] == "7,7"
    reply = session.send("TURN 7,8")
    assert reply[0].startswith("MESSAGE visits ") and not reply[0].startswith("MESSAGE visits 1 ")


def test_a_missing_model_is_an_error_at_start_and_the_brain_goes_on(tmp_path: Path) -> None:
    session = make_session(tmp_path / "missing.onnx")
    assert session.send("START 15") == [f"ERROR {tmp_path / 'missing.onnx'}: model file not found"]
    assert session.send("BEGIN") == ["ERROR BEGIN before START: there is no board yet"]
    assert session.send("ABOUT")[0].startswith('name="saz"')
    assert session.send("START 15") == [f"ERROR {tmp_path / 'missing.onnx'}: model file not found"]


def test_the_shipped_model_plays_without_any_option() -> None:
    """`pbrain-saz` as a manager starts it, no arguments: the model in `models/` answers."""
    client = PbrainClient([sys.executable, "-m", "saz.protocol.gomocup"])
    try:
        assert client.ask("START 20").kind is ReplyKind.OK
        client.info("timeout_turn", 500)
        first = client.begin(timeout=30).move
        assert Gomoku(20).is_legal(first[1] * 20 + first[0])
        assert client.close() == 0
    finally:
        client.kill()


def test_a_brain_with_subgraph_sampling_plays(model: Path) -> None:
    client = PbrainClient(brain_command(model, "--visits", "40", "--subgraphs", "2"))
    try:
        assert client.ask("START 15").kind is ReplyKind.OK
        x, y = client.begin(timeout=30).move
        assert 0 <= x < 15 and 0 <= y < 15
        assert client.close() == 0
    finally:
        client.kill()
    assert client.stderr_tail == ()


# -- INFO ------------------------------------------------------------------------------------------
def test_info_time_settings_reach_the_clock(session: Session) -> None:
    for line in ("INFO timeout_turn 1000", "INFO timeout_match 60000", "INFO time_left 59000"):
        assert session.send(line) == []
    clock = session.engine.clock
    assert clock.control == Gomocup(turn_limit=1.0, match_limit=60.0, time_left=59.0)
    assert clock.state.main_left == 59.0
    session.send("INFO time_left -")  # malformed: reported later, the clock keeps its account
    assert clock.control.time_left == 59.0  # type: ignore[attr-defined]
    assert session.send("START 15") == [
        "MESSAGE INFO time_left -: time_left must be a whole number, got '-'", "OK"]


def test_info_rule_switches_between_freestyle_exact_five_and_renju(session: Session) -> None:
    session.send("START 15")
    session.send("TURN 7,7")
    moves = list(session.engine.game.moves)
    session.send("INFO rule 1")
    assert session.engine.game.rules.name == "exact-five"  # type: ignore[attr-defined]
    assert session.engine.game.moves == moves  # the game goes on under the new rule
    session.send("INFO rule 4")
    assert session.engine.game.rules.name == "renju"  # type: ignore[attr-defined]
    session.send("INFO rule 1")
    session.send("INFO rule 5")  # renju with the exact-five bit, as some managers send it
    assert session.engine.game.rules.name == "renju"  # type: ignore[attr-defined]
    session.send("INFO rule 2")  # continuous game: refused, the rule stays
    assert session.engine.game.rules.name == "renju"  # type: ignore[attr-defined]
    session.send("INFO RULE 0")
    assert session.engine.game.rules.name == "freestyle"  # type: ignore[attr-defined]
    assert session.engine.game.moves == moves
    assert session.send("RESTART") == [
        "MESSAGE INFO rule 2: continuous game not supported; the rule stays renju", "OK"]


def test_a_renju_session_refuses_black_a_forbidden_point_and_goes_on(session: Session) -> None:
    """Under `INFO rule 4` we play White against two double threes of Black's (4,4 and
    10,10): Black's move on one that is still forbidden is an ERROR, the game is as it was,
    and the session goes on."""
    assert session.send("INFO rule 4") == []
    assert session.send("START 15") == ["OK"]
    black = [(2, 4), (3, 4), (4, 2), (4, 3), (8, 10), (9, 10), (10, 8), (10, 9)]
    white = [(0, 0), (14, 0), (0, 14), (14, 14), (7, 0), (0, 7), (14, 7)]
    session.send("BOARD")
    for bx, by in black:  # the order within BOARD does not matter to the position
        session.send(f"{bx},{by},2")
    for wx, wy in white:
        session.send(f"{wx},{wy},1")
    reply = session.send("DONE")
    assert len(reply) >= 1 and reply[-1].count(",") == 1  # our move as White
    game = session.engine.game
    assert game.rules.name == "renju"  # type: ignore[attr-defined]
    assert game.to_move == BLACK
    target = next(p for p in (game.point(4, 4), game.point(10, 10))
                  if game.board[p] == 0 and game.forbidden(p))  # type: ignore[attr-defined]
    moves = list(game.moves)
    x, y = target % 15, target // 15
    [error] = session.send(f"TURN {x},{y}")
    assert error.startswith("ERROR") and "double three" in error
    assert list(session.engine.game.moves) == moves
    reply = session.send("TURN 12,3")  # a legal move: the game goes on
    assert reply[-1].count(",") == 1
    assert len(session.engine.game.moves) == len(moves) + 2


def test_info_max_node_caps_the_visits(session: Session) -> None:
    session.send("INFO max_node 7")
    assert session.engine.config.visits == 7
    session.send("START 9")
    assert session.engine.think().root_visits < 7 + 4  # the cap, give or take one batch
    session.send("INFO max_node 18446744073709551615")  # Yixin's "no limit"
    assert session.engine.config.visits == VISITS
    session.send("INFO max_node 50")
    session.send("INFO max_node 0")
    assert session.engine.config.visits == VISITS


def evaluator_threads(session: Session) -> int:
    return session.engine._searches["gomoku"].evaluator.threads  # type: ignore[union-attr]


def test_info_thread_num_applies_to_the_network_loaded_at_start(model: Path,
                                                                monkeypatch) -> None:
    """Before START it sets the threads the network loads with; after START (c-gomoku-cli's
    and Piskvork's order) the loaded network reopens with them, keeping the search tree; more
    threads than the cores are capped at the cores."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    session = make_session(model)
    session.send("INFO thread_num 1")
    session.send("START 15")
    assert evaluator_threads(session) == 1
    session.send("TURN 7,7")
    tree = session.engine._searches["gomoku"]._tree  # type: ignore[union-attr]
    session.send("INFO thread_num 2")
    assert evaluator_threads(session) == 2 and session.engine.config.threads == 2
    session.send("INFO thread_num 100000")
    assert evaluator_threads(session) == 2
    session.send("INFO thread_num 1")
    assert evaluator_threads(session) == 1
    assert session.engine._searches["gomoku"]._tree is tree  # type: ignore[union-attr]
    assert session.send("ABOUT")[0].startswith("name=")  # no MESSAGE: nothing was refused
    assert MOVE.fullmatch(session.send("TURN 6,6")[-1])


def limit_leaving(spare: int) -> int:
    """A memory limit that leaves the search `spare` bytes over what the process uses now."""
    return int((resident_bytes() + spare) / MEMORY_HEADROOM)


def test_info_max_memory_bounds_the_search_tree(session: Session) -> None:
    """The limit reaches the engine and the search, whose tree budget follows the memory left
    under it; 0 lifts it."""
    session.send("START 15")
    session.send("TURN 7,7")
    search = session.engine._searches["gomoku"]
    assert search.tree_budget == SearchOptions().max_tree_bytes  # type: ignore[union-attr]
    spare = 64 * 2**20
    limit = limit_leaving(spare)
    assert session.send(f"INFO max_memory {limit}") == []
    assert session.engine.memory_limit == limit
    assert search.options.memory_limit == limit  # type: ignore[union-attr]
    held = search.tree_bytes  # type: ignore[union-attr]
    session.send("TURN 6,6")
    # The spare bytes plus the tree already held, give or take what the process allocated
    # since (a few MiB).
    expected = held + spare
    assert 0.8 * expected < search.tree_budget < 1.05 * expected  # type: ignore[union-attr]
    session.send("INFO max_memory 0")
    assert session.engine.memory_limit is None
    session.send("TURN 5,5")
    assert search.tree_budget == SearchOptions().max_tree_bytes  # type: ignore[union-attr]


def test_a_search_under_a_memory_limit_stops_at_its_budget(model: Path) -> None:
    """However long the turn, the tree stops growing at its budget, and the move is answered."""
    session = make_session(model, visits=None)
    session.send("START 15")
    session.send(f"INFO max_memory {limit_leaving(8 * 2**20)}")
    session.send("INFO timeout_turn 60000")
    started = time.monotonic()
    # Not BEGIN: on the empty board the book's centre is answered without a search.
    answer = session.send("TURN 8,8")
    search = session.engine._searches["gomoku"]
    assert MOVE.fullmatch(answer[-1])
    budget = search.tree_budget  # type: ignore[union-attr]
    assert 2**20 < budget < 9 * 2**20
    # It filled its budget and stopped there, long before its time.
    assert budget - 2 * 2**20 < search.tree_bytes <= budget  # type: ignore[union-attr]
    assert time.monotonic() - started < 30


@pytest.mark.slow
@pytest.mark.timeout(700)  # four turns of up to 120 s each: 208 to over 300 s measured
def test_the_brain_stays_under_info_max_memory_at_20x20(model: Path) -> None:
    """A real `pbrain-saz` with the shipped network thinks long turns at 20x20 under a 350 MiB
    limit: its peak resident memory (VmHWM) stays below it. Without the limit it passed 2 GB
    in the first move (docs/PROTOCOLS.md)."""
    limit = 367001600
    client = PbrainClient([sys.executable, "-m", "saz.protocol.gomocup"])
    try:
        client.start_game(20)
        for key, value in (("timeout_turn", 120000), ("timeout_match", 0),
                           ("max_memory", limit)):
            client.info(key, value)
        reply = client.turn(10, 10, timeout=150)  # not BEGIN, which the book answers at once
        for x, y in ((3, 3), (16, 3), (3, 16)):
            assert len(reply.messages) == 1 and reply.messages[0].startswith("MESSAGE visits")
            reply = client.turn(x, y, timeout=150)
        peak = peak_resident_bytes(client.pid)
        assert client.close() == 0
    finally:
        client.kill()
    print(f"\npeak resident memory {peak / 2**20:.0f} MiB under a limit of {limit / 2**20:.0f} MiB")
    assert 100 * 2**20 < peak < limit


def peak_resident_bytes(pid: int) -> int:
    """A process's peak resident memory so far (Linux: VmHWM in /proc/PID/status)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc")


# -- the MESSAGE about each search ----------------------------------------------------------------
def test_search_message_says_visits_winrate_speed_time_and_the_pv() -> None:
    infos = (MoveInfo(112, 300, 0.2, 0.5, 0.1, tuple(range(112, 112 + 14))),
             MoveInfo(113, 100, 0.1, 0.3, 0.0, (113,)))
    result = SearchResult(112, 0.2, 401, infos, SearchStats(playouts=390, seconds=1.5))
    point = (lambda move: f"{move % 15},{move // 15}")
    pv = " ".join(point(m) for m in range(112, 122))
    assert search_message(result, point) == (
        f"visits 401 | depth 14 | winrate 60.0% | speed 260 visits/s | time 1.50s | pv {pv} ...")
    assert "winrate 40.0%" in search_message(result, point, flip=True)
    decided = SearchResult(7, 1.0, 0, (MoveInfo(7, 0, 1.0, 1.0, 1.0, (7,)),), SearchStats(),
                           decided_by_rules=True)
    assert search_message(decided, point) == (
        "visits 0 | depth 1 | winrate 100.0% | speed 0 visits/s | time 0.00s | pv 7,0")


def test_every_searched_answer_comes_after_one_message_and_play_after_none(
        session: Session) -> None:
    session.send("START 9")
    for command in ("BEGIN", "TURN 0,0", "TURN 8,8"):
        answer = session.send(command)
        assert len(answer) == 2 and answer[0].startswith("MESSAGE visits ")
        assert MOVE.fullmatch(answer[1])
        assert f"| pv {answer[1]}" in answer[0]  # the PV starts with the move played
    free = next(p for p in range(81) if session.engine.game.is_legal(p))
    assert session.send(f"PLAY {free % 9},{free // 9}") == [f"{free % 9},{free // 9}"]


# -- swap2 -----------------------------------------------------------------------------------------
def fake_result(best: int, value: float, moves: tuple[MoveInfo, ...] = ()) -> SearchResult:
    return SearchResult(best, value, sum(m.visits for m in moves), moves, SearchStats())


def test_swap2_opening_places_a_balanced_third_stone(session: Session, monkeypatch) -> None:
    session.send("START 15")
    game = session.engine.game
    p = game.point
    infos = (MoveInfo(p(6, 6), 40, 0.6, 0.2, 0.5, ()),   # good for Black: unbalanced
             MoveInfo(p(9, 7), 30, -0.05, 0.1, -0.1, ()),  # the most balanced well-visited move
             MoveInfo(p(5, 5), 2, 0.0, 0.1, -0.5, ()))     # balanced, but barely looked at
    monkeypatch.setattr(session.engine, "think",
                        lambda **kwargs: fake_result(p(6, 6), 0.5, infos))
    assert session.send("SWAP2BOARD") == []
    assert session.send("DONE") == [
        "MESSAGE visits 72 | depth 1 | winrate 75.0% | speed 0 visits/s | time 0.00s | pv 6,6",
        "7,7 8,8 9,7"]
    assert session.engine.game.moves == [p(7, 7), p(8, 8), p(9, 7)]


@pytest.mark.parametrize(("value", "answer"), [(-0.2, "SWAP"), (0.1, "6,8")])
def test_swap2_takes_black_when_white_stands_worse(session: Session, monkeypatch,
                                                   value: float, answer: str) -> None:
    session.send("START 15")
    p = session.engine.game.point
    monkeypatch.setattr(session.engine, "think", lambda **kwargs: fake_result(p(6, 8), value))
    for line in ("SWAP2BOARD", "7,7", "8,7", "9,9"):
        assert session.send(line) == []
    # The winrate is ours: after SWAP we play Black, the side that did not move.
    winrate = f"{50 * (1 + abs(value)):.1f}%" if answer == "SWAP" else f"{50 * (1 + value):.1f}%"
    assert session.send("DONE") == [
        f"MESSAGE visits 0 | depth 1 | winrate {winrate} | speed 0 visits/s | time 0.00s | "
        "pv 6,8", answer]
    stones = [p(7, 7), p(8, 7), p(9, 9)] + ([p(6, 8)] if answer != "SWAP" else [])
    assert session.engine.game.moves == stones


def test_swap2_with_the_real_search(session: Session) -> None:
    session.send("START 15")
    session.send("SWAP2BOARD")
    opening = session.send("DONE")[-1].split()
    assert opening[:2] == ["7,7", "8,8"] and len(opening) == 3
    x, y = map(int, opening[2].split(","))
    assert max(abs(x - 7), abs(y - 7)) <= 2
    for line in ("SWAP2BOARD", "7,7", "8,7", "9,9", "8,8", "8,6"):
        session.send(line)
    choice = session.send("DONE")[-1:]
    assert choice == ["SWAP"] or (len(session.engine.game.moves) == 6
                                  and MOVE.fullmatch(choice[0]))


# -- threads: pondering, END and STOP --------------------------------------------------------------
def test_a_new_command_ends_pondering(model: Path) -> None:
    session = make_session(model, ponder=True)
    session.send("START 9")
    session.send("BEGIN")
    assert session.engine.searching_in_background
    session.send("INFO time_left 10000")
    assert not session.engine.searching_in_background


def test_serve_answers_every_line_and_stops_at_end(session: Session) -> None:
    # The input thread sees END long before the search of the TURN is done: that search stops
    # after its first batch, and its answer still goes out. (Not BEGIN: the empty board's
    # centre is the game's book, answered without a search.)
    script = "ABOUT\r\nSTART 9\r\nTURN 4,4\r\nEND\r\nABOUT\r\n"
    session.brain.engine.config = replace(session.brain.engine.config, visits=1_000_000)
    assert serve(session.brain, io.StringIO(script)) == 0
    assert len(session.out) == 4 and session.out[1] == "OK" and MOVE.fullmatch(session.out[3])
    assert session.out[2].startswith("MESSAGE visits ")


def test_end_during_a_search_ends_the_process_at_once(model: Path) -> None:
    # Without a clock, a million visits would take many minutes.
    client = PbrainClient(brain_command(model, "--visits", "1000000"))
    try:
        client.start_game(15)
        sent = client.write("TURN 8,8")  # not BEGIN, which the book answers without a search
        time.sleep(0.5)
        client.write("END")
        assert client.wait(timeout=5) == 0
        # The search stopped: its answer went out, and nothing after it.
        assert client.read_reply(timeout=1, sent_at=sent).kind is ReplyKind.MOVE
        with pytest.raises(EngineExited):
            client.read_line(time.monotonic() + 1)
    finally:
        client.close()


@pytest.mark.parametrize("command", ["STOP", "YXSTOP"])
def test_stop_answers_the_best_move_so_far(model: Path, command: str) -> None:
    client = PbrainClient(brain_command(model, "--visits", "1000000"))
    try:
        client.start_game(15)
        client.write("TURN 8,8")  # not BEGIN, which the book answers without a search
        time.sleep(0.5)
        reply = client.ask(command, timeout=5)
        assert reply.kind is ReplyKind.MOVE
        # The brain goes on normally; a STOP with no search running changes nothing.
        client.write(command)
        assert client.ask("TAKEBACK {},{}".format(*reply.move), timeout=5).text == "OK"
    finally:
        client.close()


# -- the process -----------------------------------------------------------------------------------
def test_start_up_imports_neither_torch_nor_onnxruntime() -> None:
    script = (
        "import sys\n"
        "from saz.engine.engine import Engine, EngineConfig\n"
        "from saz.protocol.gomocup import GomocupBrain\n"
        "out = []\n"
        "brain = GomocupBrain(Engine(EngineConfig(game='gomoku')), out.append)\n"
        "brain.handle('ABOUT')\n"
        "heavy = {'torch', 'torch_geometric', 'onnxruntime', 'onnx'}\n"
        "print(out[0].startswith('name='), sorted(m for m in sys.modules if m in heavy))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "True []"


def test_process_start_time_is_when_the_interpreter_started() -> None:
    script = ("import time\nfrom saz.protocol.gomocup import process_start_time\n"
              "print(time.monotonic() - process_start_time())")
    age = float(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                               check=True).stdout)
    if sys.platform.startswith("linux"):
        assert 0.0 < age < 30.0  # the interpreter's start and the imports, not zero
    else:
        assert age == pytest.approx(0.0, abs=0.1)


def test_fd_lines_splits_any_line_ending_and_survives_bad_input(tmp_path: Path) -> None:
    data = (b"START 15\r\nBEGIN\nTURN 1,1\rABOUT\r\n\xff\xfeINFO\r\n" + b"X" * (3 * MAX_LINE)
            + b"\nEND")
    (tmp_path / "input").write_bytes(data)
    fd = os.open(tmp_path / "input", os.O_RDONLY)
    try:
        lines = list(fd_lines(fd))
    finally:
        os.close(fd)
    assert lines[:5] == ["START 15", "BEGIN", "TURN 1,1", "ABOUT", "\ufffd\ufffdINFO"]
    assert lines[5] == "X" * MAX_LINE
    assert lines[6:] == ["END"]


def test_about_line_is_keyword_value_pairs() -> None:
    about = About(name="saz", version="1.2", author='Ann "the tester" Lee')
    assert about.line() == 'name="saz", version="1.2", author="Ann \'the tester\' Lee"'
    assert About.of_package().version not in ("", "unknown")
