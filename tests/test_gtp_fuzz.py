"""Fuzzing `saz gtp` with random and malformed lines.

Every run checks the same three properties:
* the session never crashes nor hangs, and answers each command exactly once: the output is
  a sequence of whole replies (each starting with `=` or `?`), one per line that is not empty
  once cleaned, up to and including a `quit`;
* no command fails other than with a GTP error reply (an `internal error` is a bug);
* after a failed command the position, the rules and the time control are exactly as before.

The lines come from one generator (`random_line`) driven by a `random.Random`, which hypothesis
supplies (and shrinks) in the default run. The slow tests feed 100,000 lines without a network
and 10,000 with a tiny one; their figures are in docs/PROTOCOLS.md:

    .venv/bin/python -m pytest tests/test_gtp_fuzz.py -m slow -s
"""
from __future__ import annotations

import io
import os
import random
import string
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saz.engine.engine import Engine, EngineConfig
from saz.protocol.gtp import main, parse_command
from saz.protocol.gtp_commands import GtpEngine, GtpError, Streamed

TRANSCRIPTS = Path(__file__).parent / "transcripts"
MISSING_MODEL = "/nonexistent/model.onnx"

# -- the line generator ---------------------------------------------------------------------------
def _color(rng: random.Random) -> str:
    return rng.choice(("b", "w", "black", "white", "B", "W"))


def _vertex(rng: random.Random) -> str:
    """Mostly on a small board, sometimes anywhere a GTP name reaches, sometimes a pass."""
    if rng.random() < 0.05:
        return "pass"
    columns = "ABCDEFGHJ" if rng.random() < 0.8 else string.ascii_letters
    return f"{rng.choice(columns)}{rng.randint(1, 9 if columns[0] == 'A' else 26)}"


def _number(rng: random.Random) -> str:
    return rng.choice(("0", "1", "2", "3", "5", "7", "9", "6.5", "-3.5", "300", "1e9", "nan"))


def _size(rng: random.Random) -> str:
    return str(rng.choice((2, 4, 5, 5, 7, 7, 8, 9, 9, 13, 19, 25, 26)))


def _analysis(rng: random.Random) -> list[str]:
    words = [_color(rng)] if rng.random() < 0.3 else []
    if rng.random() < 0.5:
        words.append(str(rng.randint(0, 10)))
    for _ in range(rng.randint(0, 2)):
        key = rng.choice(("interval", "maxmoves", "allow", "avoid", "ownership", "minmoves"))
        if key in ("allow", "avoid"):
            vertices = ",".join(_vertex(rng) for _ in range(rng.randint(1, 4)))
            words += [key, _color(rng), vertices, str(rng.randint(0, 3))]
        else:
            words += [key, rng.choice(("1", "3", "true", "false"))]
    return words


#: Well-formed arguments of each command (they may still be illegal in the position).
GRAMMAR: dict[str, Callable[[random.Random], list[str]]] = {
    "play": lambda rng: [_color(rng), _vertex(rng)],
    "genmove": lambda rng: [_color(rng)],
    "reg_genmove": lambda rng: [_color(rng)],
    "kgs-genmove_cleanup": lambda rng: [_color(rng)],
    "undo": lambda rng: [],
    "boardsize": lambda rng: [_size(rng)],
    "rectangular_boardsize": lambda rng: [_size(rng), _size(rng)],
    "clear_board": lambda rng: [],
    "komi": lambda rng: [_number(rng)],
    "set_game": lambda rng: [rng.choice(("go", "Othello", "gomoku", "chess"))],
    "fixed_handicap": lambda rng: [str(rng.randint(0, 10))],
    "place_free_handicap": lambda rng: [str(rng.randint(0, 12))],
    "set_free_handicap": lambda rng: [_vertex(rng) for _ in range(rng.randint(0, 5))],
    "final_score": lambda rng: [],
    "final_status_list": lambda rng: [rng.choice(("alive", "dead", "seki", "unknown"))],
    "loadsgf": lambda rng: [rng.choice(SGF_FILES)] + ([str(rng.randint(0, 6))]
                                                      if rng.random() < 0.5 else []),
    "time_settings": lambda rng: [_number(rng) for _ in range(3)],
    "kgs-time_settings": lambda rng: [rng.choice(("none", "absolute", "byoyomi", "canadian"))]
    + [_number(rng) for _ in range(rng.randint(0, 3))],
    "time_left": lambda rng: [_color(rng), _number(rng), rng.choice(("0", "1", "5"))],
    "showboard": lambda rng: [],
    "lz-analyze": _analysis,
    "kata-analyze": _analysis,
    "lz-genmove_analyze": _analysis,
    "kata-genmove_analyze": _analysis,
    "stop": lambda rng: [],
    "known_command": lambda rng: [rng.choice(("play", "fly", "lz-analyze"))],
    **{name: (lambda rng: []) for name in (
        "protocol_version", "name", "version", "list_commands", "list_games",
        "gogui-analyze_commands", "gogui-interrupt", "gogui-rules_game_id",
        "gogui-rules_board_size", "gogui-rules_board", "gogui-rules_legal_moves",
        "gogui-rules_side_to_move", "gogui-rules_final_result", "quit")},
}
#: How often each command comes: moves and board changes often, so that positions get varied.
WEIGHTS = {"play": 30, "genmove": 4, "undo": 6, "boardsize": 3, "set_game": 2, "quit": 0.3}
SGF_FILES = (str(TRANSCRIPTS / "handicap.sgf"), str(TRANSCRIPTS / "othello_pass.sgf"),
             "/nonexistent.sgf", str(TRANSCRIPTS))
#: Words for arguments that do not fit: anything a confused or hostile controller might send.
JUNK = ("x", "pass", "resign", "A0", "I3", "Z99", "-1", "1.5", "inf", "99999999999999999999",
        "0x10", "", "#", "=", "?", "é", "٣")
#: Raw lines: printable text, the framing's special characters, control characters, non-ASCII.
GARBAGE = (string.printable.replace("\n", "") + "#\r\t\x00\x01\x1b\x7f" + "éü€ΩⅣ٣\u00a0\u2028"
           + "=?")
_NAMES = list(GRAMMAR) + ["PLAY", "frobnicate", "play_", "genmove_black"]
_WEIGHTS = [WEIGHTS.get(name, 1.0) for name in _NAMES]


def random_line(rng: random.Random) -> str:
    """One input line (without its LF): mostly a command with well-formed arguments, sometimes
    with junk ones, sometimes garbage; ids, comments, tabs, CRs and control characters
    sprinkled in."""
    if rng.random() < 0.08:
        return "".join(rng.choice(GARBAGE) for _ in range(rng.randint(0, 24)))
    words = []
    if rng.random() < 0.2:
        words.append(str(rng.randint(0, 10**6)))
    name = rng.choices(_NAMES, _WEIGHTS)[0]
    words.append(name)
    grammar = GRAMMAR.get(name)
    if grammar is not None and rng.random() < 0.85:
        words += grammar(rng)
    else:
        words += [rng.choice(JUNK) for _ in range(rng.randint(0, 4))]
    line = rng.choice((" ", " ", "  ", "\t", " \t ")).join(words)
    if rng.random() < 0.05:
        line += " # " + rng.choice(JUNK)
    if rng.random() < 0.05:
        position = rng.randint(0, len(line))
        line = line[:position] + rng.choice("\x00\x01\x1b\x7f\r") + line[position:]
    if rng.random() < 0.05:
        line += "\r"
    return line


# -- the checks -----------------------------------------------------------------------------------
def _state(commands: GtpEngine) -> tuple:
    """Everything a failed command must leave alone: the game, the position, the rules and the
    time control. Not what is left on our clock: a genmove that fails in its search (no network)
    has spent time on the controller's clock too, and our account of it charges that."""
    engine = commands.engine
    game = engine.game
    return (engine.game_name, game.width, game.height, tuple(game.moves), game.board.tobytes(),
            game.to_move, repr(engine.rules), repr(getattr(game, "rules", None)),
            engine.clock.control)


def check_commands(lines: list[str], config: EngineConfig) -> None:
    """Run the lines one by one on the command table: only GTP errors, and those change
    nothing."""
    commands = GtpEngine(Engine(config))
    try:
        for line in lines:
            command = parse_command(line)
            if command is None:
                continue
            before = _state(commands)
            try:
                reply = commands.execute(command)
                if isinstance(reply, Streamed):
                    reply.start(lambda text: None)
                    if reply.finish is not None:
                        reply.finish()
            except GtpError:
                assert _state(commands) == before, f"{line!r} failed and changed the state"
            if commands.quitting:
                break
    finally:
        commands.close()


def check_session(lines: list[str], args: list[str], timeout: float = 120.0) -> int:
    """Run the lines through a whole session at once; the number of replies."""
    text = "".join(line + "\n" for line in lines)
    out = io.StringIO()
    status: list[int] = []
    worker = threading.Thread(target=lambda: status.append(
        main(args, stdin=io.StringIO(text, newline="\n"), stdout=out)), daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), "the session hangs"
    assert status == [0]
    expected = 0
    for line in lines:
        command = parse_command(line)
        if command is not None:
            expected += 1
            if command.name == "quit":
                break
    output = out.getvalue()
    assert output.endswith("\n\n") or not output
    replies = output.split("\n\n")[:-1]
    assert all(reply[:1] in ("=", "?") for reply in replies), output
    assert not any("internal error" in reply for reply in replies), output
    assert len(replies) == expected
    return len(replies)


# -- the runs -------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=40))
def test_random_lines_without_a_network(rng: random.Random, count: int) -> None:
    lines = [random_line(rng) for _ in range(count)]
    check_commands(lines, EngineConfig(model=Path(MISSING_MODEL)))
    check_session(lines, ["--model", MISSING_MODEL])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=25))
def test_random_lines_with_a_network(tiny_model, rng: random.Random, count: int) -> None:
    """Searches, analyses started and stopped at once by the next line, and their failures."""
    model = str(tiny_model("go").path)
    lines = ["boardsize 7"] + [random_line(rng) for _ in range(count)]
    check_commands(lines, EngineConfig(model=Path(model), visits=4))
    check_session(lines, ["--model", model, "--visits", "4"])


def _lines_without_quit(rng: random.Random, count: int) -> list[str]:
    """`count` lines, none of them `quit` (which would end the session early)."""
    lines: list[str] = []
    while len(lines) < count:
        line = random_line(rng)
        command = parse_command(line)
        if command is None or command.name != "quit":
            lines.append(line)
    return lines


@pytest.mark.slow
def test_a_hundred_thousand_lines() -> None:
    count = int(os.environ.get("SAZ_GTP_FUZZ_LINES", "100000"))
    lines = _lines_without_quit(random.Random(20240607), count)
    start = time.perf_counter()
    check_commands(lines, EngineConfig(model=Path(MISSING_MODEL)))
    replies = check_session(lines, ["--model", MISSING_MODEL], timeout=3600)
    print(f"\nno network: {count} lines, {replies} replies, every failure state-checked, "
          f"{time.perf_counter() - start:.1f} s")


@pytest.mark.slow
def test_ten_thousand_lines_with_a_network(tiny_model) -> None:
    count = int(os.environ.get("SAZ_GTP_FUZZ_LINES_NETWORK", "10000"))
    model = str(tiny_model("go").path)
    lines = _lines_without_quit(random.Random(20240608), count)
    start = time.perf_counter()
    check_commands(lines, EngineConfig(model=Path(model), visits=4))
    replies = check_session(lines, ["--model", model, "--visits", "4"], timeout=3600)
    print(f"\ntiny network, 4 visits: {count} lines, {replies} replies, every failure "
          f"state-checked, {time.perf_counter() - start:.1f} s")
