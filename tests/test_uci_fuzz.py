"""Fuzzing `saz uci`: random and malformed lines, mixed with plausible commands, never end the
session or hang it; a rejected `position` keeps the last good position; every `go` gets
exactly one `bestmove`, a legal move of the position searched (`(none)` only when the game is
over); no answer is anything but UCI, or carries a control character; `isready` is still
answered at the end.

Malformed means, besides random text: numbers of thousands of digits, digits of other scripts,
control characters, moves off the board or against the rules, FENs with a field spoilt, option
names and values that do not exist. `quit` is never sent (it would end the session, rightly).

The default run tries a few hundred sessions; the long one (`-m slow`) thousands:

    .venv/bin/python -m pytest tests/test_uci_fuzz.py -m slow -q
"""
from __future__ import annotations

import queue

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saz.engine.games.chess import VARIANTS, Chess
from saz.protocol.uci import UciSession, session_from_args

COMMANDS = ["uci", "isready", "setoption", "ucinewgame", "position", "go", "stop", "ponderhit",
            "debug", "register"]
UNKNOWN = ["UCI", "Go", "foo", "ucinewgam", "positionstartpos", "joho", "info", "bestmove"]
GO_WORDS = ["wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate",
            "infinite", "ponder", "searchmoves", "perft"]
OPTIONS = ["Hash", "Threads", "MultiPV", "Ponder", "Move Overhead", "UCI_Variant",
           "UCI_ShowWDL", "Clear Hash", "Model", "hash", "Skill Level", ""]
#: What an answer line may start with.
ANSWERS = ("id ", "option ", "uciok", "readyok", "bestmove ", "info ")
FOREIGN_DIGITS = "０１２３４５６７８９٠١٢٣٤٥٦٧٨٩"
CONTROLS = "".join(chr(c) for c in (*range(0x20), 0x7F, 0x85) if chr(c) not in "\r\n")

number = st.one_of(
    st.integers(-5, 5000).map(str), st.sampled_from(["9" * 4301, "-" + "1" * 30, "1e3", "0x10",
                                                     "1.5", "", "+7"]),
    st.text(st.sampled_from(FOREIGN_DIGITS), min_size=1, max_size=3))
square = st.builds(lambda f, r: f + r, st.sampled_from("abcdefghij"), st.sampled_from("0123456789"))
move_text = st.builds(lambda a, b, p: a + b + p, square, square, st.sampled_from(["", "q", "n", "k",
                                                                                  "x"]))
junk = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
               max_size=15)
word = st.one_of(st.sampled_from(COMMANDS + UNKNOWN + GO_WORDS + ["moves", "fen", "startpos",
                                                                  "name", "value", "on"]),
                 number, move_text, junk)


@st.composite
def legal_line(draw: st.DrawFn) -> list[str]:
    """Moves of a real game of some variant, from its start: mostly legal."""
    variant = draw(st.sampled_from(sorted(VARIANTS)))
    game = Chess(variant=variant)
    moves = []
    for _ in range(draw(st.integers(0, 30))):
        legal = game.legal_moves()
        if game.is_over() or not len(legal):
            break
        move = int(legal[draw(st.integers(0, len(legal) - 1))])
        moves.append(game.uci(move))
        game.play(move)
    return moves


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
    return text[:at] + draw(st.sampled_from("x9/ -Kk8")) + text[at + 1:]


fen = st.sampled_from([fen for _, fen in VARIANTS.values()]
                      + ["6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", "8/8/8/8/8/8/8/8 w - - 0 1",
                         "k7/8/8/8/8/8/8/7K w - - 0 1", "4k/5/5/5/4K w - - 0 1"])


@st.composite
def position_line(draw: st.DrawFn) -> str:
    start = draw(st.one_of(st.just("startpos"), fen.map(lambda f: "fen " + f),
                           fen.flatmap(spoilt).map(lambda f: "fen " + f)))
    moves = draw(legal_line())
    if moves and draw(st.booleans()):
        i = draw(st.integers(0, len(moves) - 1))
        moves[i] = draw(st.one_of(move_text, st.just(moves[i]).flatmap(spoilt)))
    tail = " moves " + " ".join(moves) if moves or draw(st.booleans()) else ""
    return f"position {start}{tail}"


@st.composite
def go_line(draw: st.DrawFn) -> str:
    words = ["go"]
    for _ in range(draw(st.integers(0, 6))):
        key = draw(st.sampled_from(GO_WORDS))
        words.append(key)
        if key not in ("infinite", "ponder") and draw(st.integers(0, 4)):
            words.append(draw(number) if key != "searchmoves" else draw(move_text))
    return " ".join(words)


@st.composite
def setoption_line(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(OPTIONS))
    value = draw(st.one_of(number, st.sampled_from(["true", "false", "chess", "gardner",
                                                    "losalamos", "crazyhouse", "<empty>"]), junk))
    form = draw(st.integers(0, 3))
    return ("setoption name " + name + (f" value {value}" if form else "")
            if form < 3 else f"setoption {value}")


line = st.one_of(
    position_line(), go_line(), setoption_line(),
    st.lists(word, min_size=1, max_size=6).map(" ".join),
    st.sampled_from(COMMANDS + UNKNOWN), junk,
    st.builds(lambda a, c, b: a + c + b, junk, st.sampled_from(CONTROLS), junk),
).filter(lambda text: "quit" not in text.split())


class Harness:
    """A session with the random player, answering into a queue."""

    def __init__(self) -> None:
        self.answers: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.session: UciSession = session_from_args(["--player", "random", "--seed", "1"],
                                                     self.answers.put)

    def drain(self) -> list[str]:
        out = []
        while not self.answers.empty():
            out.append(self.answers.get())
        return out

    def fen(self) -> str:
        game = self.session.engine.game
        assert isinstance(game, Chess)
        return game.fen()


def check_answers(answers: list[str]) -> None:
    for answer in answers:
        assert answer.startswith(ANSWERS), answer
        assert answer.isprintable(), answer
        assert "internal error" not in answer, answer


def run_session(lines: list[str]) -> None:
    h = Harness()
    try:
        for text in lines:
            before = h.fen()
            searched = h.session.engine.game.copy()
            h.session.handle(text)
            command = next((w for w in text.split() if w in COMMANDS), None)
            if command == "go":
                h.session.handle("stop")  # its bestmove now, whether it waits for stop or not
            answers = h.drain()
            check_answers(answers)
            strings = [a for a in answers if a.startswith("info string")]
            if command == "position" and any(s.startswith("info string position:")
                                             for s in strings):
                assert h.fen() == before, text
            bestmoves = [a.split()[1] for a in answers if a.startswith("bestmove ")]
            if command == "go":
                assert len(bestmoves) == 1, (text, answers)
            for move in bestmoves:
                root = searched
                assert isinstance(root, Chess)
                if move == "(none)":
                    assert root.is_over(), (text, root.fen())
                elif not root.is_over():
                    root.parse_uci(move)  # GameError if the move is not legal there
        h.session.handle("isready")
        answers = h.drain()
        check_answers(answers)
        assert answers[-1] == "readyok"
        assert not h.session.finished
    finally:
        h.session.close()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(line, min_size=1, max_size=12))
def test_malformed_lines_never_end_the_session(lines: list[str]) -> None:
    run_session(lines)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(line, min_size=1, max_size=30))
def test_malformed_lines_never_end_the_session_long(lines: list[str]) -> None:
    run_session(lines)


def test_a_known_bad_session() -> None:
    run_session(["position startpos moves e2e4 e7e5", "go wtime \uff19 btime -1 nodes",
                 "position fen 8/8/8/8/8/8/8/8 w - - 0 1 moves e2e4", "setoption name",
                 "setoption name Hash value " + "9" * 4301, "\x00\x07", "go infinite",
                 "ponderhit", "position startpos moves e2e4 e7e5 g1f3 banana"])
