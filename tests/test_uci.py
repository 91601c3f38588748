"""`saz uci`: golden transcripts in the process and through `saz uci` itself, and a real client,
python-chess's `chess.engine`, playing, pondering and analysing.

Transcripts (tests/transcripts/uci*.uci): "> " lines are sent, ">\\ " lines after decoding
Python's backslash escapes; "< " lines are answers exactly, "<~ " one answer matching a regular
expression (the whole line), "<* " any number of answers matching one (the info lines a search
writes about once a second), in that order; named groups are {name} in later lines, and so is
{model} (the test network). "#| args: ..." is the command line, "#| wait S" waits S seconds
before the next line is sent; other "#" lines are comments. A step's answers are read until
they match; nothing may come after the last. Moves the (random) network chooses are matched by
pattern, moves the rules decide (a mate in one) exactly.
"""
from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from saz.protocol.uci import UciSession, session_from_args

TRANSCRIPTS = Path(__file__).parent / "transcripts"
#: The longest a step may take to be answered.
STEP_TIMEOUT = 30.0
#: How long the end of a session is watched for stray output.
QUIET = 0.3


@pytest.fixture(scope="session")
def chess_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small random chess network (its card beside it), exported once per test session."""
    from saz.engine.games.chess import Chess
    from saz.tools.train.export import export_random_network

    path = tmp_path_factory.mktemp("uci-model") / "chess.onnx"
    export_random_network(Chess, path, hidden=16, layers=2)
    return path


# -- transcripts -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One line to send (None: none, at the end) and the answers it expects: ("=", text),
    ("~", regex) or ("*", regex); `wait` seconds before it is sent."""

    sent: str | None
    expected: tuple[tuple[str, str], ...]
    line_number: int
    wait: float = 0.0


@dataclass(frozen=True)
class Transcript:
    path: Path
    args: tuple[str, ...]
    steps: tuple[Step, ...]


def read_transcript(path: Path) -> Transcript:
    args: tuple[str, ...] = ()
    steps: list[Step] = []
    wait = 0.0
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line.startswith("#| args:"):
            args = tuple(line.removeprefix("#| args:").split())
        elif line.startswith("#| wait "):
            wait = float(line.removeprefix("#| wait "))
        elif not line.strip() or line.startswith("#"):
            continue
        elif line.startswith(("> ", ">\\ ")):
            text = line.partition(" ")[2]
            if line.startswith(">\\"):
                text = text.encode("ascii").decode("unicode_escape")
            steps.append(Step(text, (), number, wait))
            wait = 0.0
        elif line.startswith(("< ", "<~ ", "<* ")):
            kind, _, text = line.partition(" ")
            if not steps:
                raise ValueError(f"{path.name}:{number}: an answer before any line sent")
            last = steps[-1]
            mark = {"<": "=", "<~": "~", "<*": "*"}[kind]
            steps[-1] = Step(last.sent, (*last.expected, (mark, text)), last.line_number,
                             last.wait)
        else:
            raise ValueError(f"{path.name}:{number}: not a transcript line: {line!r}")
    return Transcript(path, args, tuple(steps))


def step_pattern(step: Step, captures: dict[str, str]) -> re.Pattern[str]:
    """The step's answers as one pattern over its answer lines, each ended by a newline."""
    parts = []
    for kind, text in step.expected:
        text = text.format_map(captures)
        if kind == "=":
            parts.append(re.escape(text) + "\n")
        elif kind == "~":
            parts.append(f"(?:{text})\n")
        else:
            parts.append(f"(?:(?:{text})\n)*")
    return re.compile("".join(parts))


def transcript_names() -> list[str]:
    return sorted(p.stem for p in TRANSCRIPTS.glob("uci*.uci"))


class Peer:
    """A UCI engine under test: lines in, answer lines out (`answers`, a queue)."""

    answers: queue.Queue[str | None]

    def send(self, line: str) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """After the last line: the engine has ended (and said nothing more)."""


class InProcess(Peer):
    def __init__(self, args: list[str]) -> None:
        self.answers = queue.Queue()
        self.session: UciSession = session_from_args(args, self.answers.put)

    def send(self, line: str) -> None:
        self.session.handle(line)

    def finish(self) -> None:
        assert self.session.finished
        self.session.close()


class Process(Peer):
    def __init__(self, args: list[str]) -> None:
        self.answers = queue.Queue()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "saz.protocol.uci", *args], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.answers.put(line.rstrip("\n"))
        self.answers.put(None)

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def finish(self) -> None:
        assert self.process.wait(timeout=10) == 0
        assert self.process.stderr is not None
        assert self.process.stderr.read() == ""


def play_transcript(transcript: Transcript, peer: Peer, model: Path) -> None:
    captures = {"model": str(model)}
    for step in transcript.steps:
        where = f"{transcript.path.name}:{step.line_number} ({step.sent!r})"
        if step.wait:
            time.sleep(step.wait)
        if step.sent is not None:
            peer.send(step.sent.format_map(captures))
        if not step.expected:
            continue
        pattern = step_pattern(step, captures)
        lines: list[str] = []
        deadline = time.monotonic() + STEP_TIMEOUT
        while (match := pattern.fullmatch("".join(f"{line}\n" for line in lines))) is None:
            try:
                line = peer.answers.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"{where}: no match in time; answered {lines}")
            assert line is not None, f"{where}: the engine ended; answered {lines}"
            lines.append(line)
        captures.update({k: v for k, v in match.groupdict().items() if v is not None})
    peer.finish()
    time.sleep(QUIET)
    stray = []
    while not peer.answers.empty():
        stray.append(peer.answers.get())
    assert stray in ([], [None]), f"{transcript.path.name}: said after the end: {stray}"


def _args(transcript: Transcript, model: Path) -> list[str]:
    return [arg.format(model=model) for arg in transcript.args]


@pytest.mark.parametrize("name", transcript_names())
def test_transcript_in_the_process(name: str, chess_model: Path) -> None:
    transcript = read_transcript(TRANSCRIPTS / f"{name}.uci")
    play_transcript(transcript, InProcess(_args(transcript, chess_model)), chess_model)


@pytest.mark.parametrize("name", transcript_names())
def test_transcript_through_the_process(name: str, chess_model: Path) -> None:
    transcript = read_transcript(TRANSCRIPTS / f"{name}.uci")
    peer = Process(_args(transcript, chess_model))
    try:
        play_transcript(transcript, peer, chess_model)
    finally:
        peer.process.kill()


def test_transcripts_parse() -> None:
    names = transcript_names()
    assert {"uci_cutechess", "uci_python_chess", "uci_errors"} <= set(names)
    for name in names:
        transcript = read_transcript(TRANSCRIPTS / f"{name}.uci")
        assert transcript.steps and transcript.steps[-1].sent == "quit"
        for step in transcript.steps:
            step_pattern(step, {"model": "m"})  # every pattern compiles


# -- python-chess ----------------------------------------------------------------------------------
@pytest.fixture
def engine(chess_model: Path) -> Iterator[object]:
    chess_engine = pytest.importorskip("chess.engine")
    engine = chess_engine.SimpleEngine.popen_uci(
        [sys.executable, "-m", "saz.protocol.uci", "--model", str(chess_model)])
    try:
        yield engine
    finally:
        engine.quit()


def test_python_chess_plays_ponders_and_analyses(engine: object) -> None:
    import chess
    import chess.engine

    assert isinstance(engine, chess.engine.SimpleEngine)
    assert engine.id["name"].startswith("saz ")
    assert {"Hash", "Threads", "MultiPV", "Ponder", "Move Overhead", "UCI_Variant"} <= set(
        engine.options)
    board = chess.Board()
    clock = chess.engine.Limit(white_clock=5.0, black_clock=5.0, white_inc=0.1, black_inc=0.1)
    for ply in range(6):
        result = engine.play(board, clock, ponder=ply < 4, info=chess.engine.INFO_ALL)
        assert result.move in board.legal_moves
        assert isinstance(result.info.get("score"), chess.engine.PovScore)
        board.push(result.move)
    infos = engine.analyse(board, chess.engine.Limit(nodes=300), multipv=2)
    assert [info["multipv"] for info in infos] == [1, 2]
    assert infos[0]["pv"][0] != infos[1]["pv"][0]
    for info in infos:
        assert info["pv"][0] in board.legal_moves
        assert isinstance(info["wdl"], chess.engine.PovWdl)
    with engine.analysis(board) as analysis:
        started = time.monotonic()
        for _ in analysis:
            if time.monotonic() - started > 1.5:
                break
        analysis.stop()
        best = analysis.wait()
    assert best.move in board.legal_moves
    assert time.monotonic() - started < 5.0


def test_python_chess_mate_in_one_is_played_at_once(engine: object) -> None:
    import chess
    import chess.engine

    assert isinstance(engine, chess.engine.SimpleEngine)
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    started = time.monotonic()
    result = engine.play(board, chess.engine.Limit(time=5.0), info=chess.engine.INFO_ALL)
    assert result.move == chess.Move.from_uci("a1a8")
    assert result.info["score"].relative == chess.engine.Mate(1)
    assert time.monotonic() - started < 2.0


# -- the session in the process --------------------------------------------------------------------
def collect(session_args: list[str]) -> tuple[UciSession, Callable[[float], list[str]]]:
    """A session and a reader of what it said within a time (seconds)."""
    answers: queue.Queue[str] = queue.Queue()
    session = session_from_args(session_args, answers.put)

    def said(seconds: float) -> list[str]:
        deadline = time.monotonic() + seconds
        lines = []
        while (left := deadline - time.monotonic()) > 0:
            try:
                lines.append(answers.get(timeout=left))
            except queue.Empty:
                break
        return lines

    return session, said


def test_go_infinite_waits_for_stop_even_when_proven() -> None:
    session, said = collect(["--player", "random"])
    session.handle("position fen 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    session.handle("go infinite")
    session.handle("isready")
    assert [line for line in said(0.5) if not line.startswith("info")] == ["readyok"]
    session.handle("stop")
    assert said(0.2)[-1].startswith("bestmove ")
    session.handle("quit")


def test_ponder_waits_for_ponderhit_then_plays_on_the_clock(chess_model: Path) -> None:
    session, said = collect(["--model", str(chess_model)])
    session.handle("isready")
    assert said(10.0) == ["readyok"]
    session.handle("position startpos moves e2e4 e7e5")
    session.handle("go ponder wtime 2000 btime 2000")
    assert not any(line.startswith("bestmove") for line in said(1.2))
    session.handle("ponderhit")
    lines = said(2.5)
    assert lines and lines[-1].startswith("bestmove ")
    session.handle("quit")


def test_a_rejected_position_keeps_the_last_good_one() -> None:
    session, said = collect(["--player", "random"])
    session.handle("position startpos moves e2e4")
    fen = session.engine.game.fen()  # type: ignore[attr-defined]  # chess
    for line in ("position startpos moves e2e4 e7e5 e1e3", "position fen 8/8/8 w - - 0 1",
                 "position banana", "position startpos moves e9e5"):
        session.handle(line)
        assert said(0.05)[0].startswith("info string position: ")
        assert session.engine.game.fen() == fen  # type: ignore[attr-defined]  # chess
    session.handle("quit")


def test_play_on_after_a_claimable_draw() -> None:
    """python-chess plays on after a threefold repetition unless told to claim it."""
    session, said = collect(["--player", "random"])
    shuffle = "g1f3 g8f6 f3g1 f6g8 " * 2
    session.handle(f"position startpos moves {shuffle}e2e4")
    assert said(0.05) == []
    session.handle(f"position startpos moves {shuffle}")
    session.handle("go nodes 1")
    lines = said(1.0)
    assert lines[-1].startswith("bestmove ") and lines[-1] != "bestmove (none)"
    fifty = "7k/8/6K1/8/8/8/8/R7 b - - 100 80"  # the fifty-move rule, claimable
    session.handle(f"position fen {fifty} moves h8g8")
    assert said(0.05) == []
    session.handle(f"position fen {fifty}")
    session.handle("go nodes 1")
    assert said(1.0)[-1] in ("bestmove h8g8", "bestmove h8h7")
    session.handle("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")  # stalemate: final
    session.handle("go nodes 1")
    assert said(1.0)[-1] == "bestmove (none)"
    session.handle("quit")


def test_options_reach_the_engine() -> None:
    session, said = collect(["--player", "random"])
    for line in ("setoption name Hash value 16", "setoption name multipv value 3",
                 "setoption name Move Overhead value 250",
                 "setoption name UCI_Variant value gardner",
                 "setoption name UCI_ShowWDL value false", "setoption name Ponder value true"):
        session.handle(line)
    assert said(0.05) == []
    assert session.engine.config.search.max_tree_bytes == 16 << 20
    assert session.multipv == 3 and session.ponder and not session.show_wdl
    assert session.engine.clock.policy.margin.latency == 0.25
    assert (session.engine.game.width, session.engine.game.height) == (5, 5)
    session.handle("uci")
    options = said(0.05)
    assert "option name Hash type spin default 16 min 1 max 1048576" in options
    assert ("option name UCI_Variant type combo default gardner var chess var gardner "
            "var losalamos") in options
    session.handle("quit")


def test_hash_defaults_to_256_mb_and_keeps_its_range() -> None:
    """A tournament manager runs several engines on one machine: UCI's Hash is 256 MB unless
    --max-memory or the option says otherwise."""
    for args, default in (([], 256), (["--max-memory", "2G"], 2048)):
        session, said = collect(["--player", "random", *args])
        assert session.engine.config.search.max_tree_bytes == default << 20
        session.handle("uci")
        assert f"option name Hash type spin default {default} min 1 max 1048576" in said(0.05)
        session.handle("setoption name Hash value 1048576")
        session.handle("setoption name Hash value 1048577")
        assert said(0.05) == ["info string setoption: Hash must be between 1 and 1048576, got "
                              "1048577"]
        assert session.engine.config.search.max_tree_bytes == 1 << 40
        session.handle("quit")


def read_until(answers: queue.Queue[str | None], last: str, seconds: float) -> list[str]:
    """The answers up to the first that starts with `last` (included), or all that came within
    `seconds` if none did."""
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = answers.get(timeout=left)
        except queue.Empty:
            break
        assert line is not None, f"the engine ended; answered {lines}"
        lines.append(line)
        if line.startswith(last):
            break
    return lines


def test_no_model_is_said_at_uci_and_isready_waits_for_one(
        chess_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a model (no --model, no shipped models/chess.onnx) a GUI hears it before a game:
    an info string before uciok, and isready unanswered (a tournament manager stops at its
    ping rather than forfeit every game with bestmove (none)) until the Model option mends it."""
    from saz.engine import evaluator

    monkeypatch.setattr(evaluator, "MODELS_DIR", tmp_path)  # no shipped chess model there
    answers: queue.Queue[str | None] = queue.Queue()
    session = session_from_args(["--visits", "5"], answers.put)
    session.handle("uci")
    lines = read_until(answers, "uciok", 5.0)
    assert lines[-1] == "uciok"
    assert lines[-2].startswith("info string no chess network: no shipped chess model: "
                                f"{tmp_path / 'chess.onnx'} does not exist")
    assert "setoption name Model value PATH" in lines[-2]
    session.handle("isready")
    lines = read_until(answers, "readyok", 1.0)
    assert len(lines) == 1, lines
    assert lines[0].startswith("info string isready: no readyok without a chess network: ")
    session.handle("position startpos")
    session.handle("go nodes 5")  # a GUI that goes on regardless: nothing to search with
    assert read_until(answers, "bestmove", 5.0)[-1] == "bestmove (none)"
    session.handle(f"setoption name Model value {chess_model}")
    session.handle("isready")
    assert read_until(answers, "readyok", 10.0) == ["readyok"]
    session.handle("go nodes 5")
    lines = read_until(answers, "bestmove", 10.0)
    assert lines[-1].startswith("bestmove ") and lines[-1] != "bestmove (none)"
    session.handle("quit")


@pytest.mark.parametrize("spoilt", ["onnx", "card"])
def test_a_corrupt_model_is_told_and_the_process_lives(chess_model: Path, tmp_path: Path,
                                                       spoilt: str) -> None:
    """A model file that is there but cannot load (its bytes or its card spoilt): uci says
    nothing of it (nothing is loaded yet), isready tells why instead of readyok, and the
    process answers on; the Model option mends it."""
    import shutil

    from saz.engine.model_card import card_path

    corrupt = tmp_path / "corrupt.onnx"
    shutil.copy(chess_model, corrupt)
    shutil.copy(card_path(chess_model), card_path(corrupt))
    if spoilt == "onnx":
        corrupt.write_bytes(b"\x08\x07 not a network" * 50)
    else:
        card_path(corrupt).write_text("{ not json")
    peer = Process(["--model", str(corrupt)])
    try:
        peer.send("uci")
        lines = read_until(peer.answers, "uciok", 10.0)
        assert lines[-1] == "uciok" and not any(line.startswith("info") for line in lines)
        peer.send("isready")
        lines = read_until(peer.answers, "readyok", 3.0)
        assert len(lines) == 1, lines
        assert lines[0].startswith("info string isready: no readyok without a chess network: "
                                   f"{corrupt}: ")
        peer.send("position startpos")
        peer.send("go nodes 5")
        lines = read_until(peer.answers, "bestmove", 5.0)
        assert lines[0].startswith(f"info string go: {corrupt}: ")
        assert lines[-1] == "bestmove (none)"
        peer.send(f"setoption name Model value {chess_model}")
        peer.send("isready")
        assert read_until(peer.answers, "readyok", 10.0) == ["readyok"]
        peer.send("quit")
        assert peer.process.wait(timeout=10) == 0
        assert peer.process.stderr is not None
        log = peer.process.stderr.read()
        assert log.count("no chess network") == 1 and str(corrupt) in log
    finally:
        peer.process.kill()


def test_starting_imports_neither_torch_nor_onnxruntime() -> None:
    code = ("import sys; from saz.protocol.uci import session_from_args; "
            "session_from_args(['--player', 'random'], print); "
            "print(sorted(m for m in ('torch', 'onnxruntime') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
