"""The 19x19 ladder set (tests/data/go-ladders-19x19.txt, issue 65): its blocks parse, each one's
stated ladder is what a plain ladder reader finds, and (slow) the default engine reads every
ladder right at 2 s a move.

The plain reader and the engine under test are `reference.go_reader`'s (the engine as it ships,
or on the model that `SAZ_GO_MODEL` names).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from reference.go_reader import (
    SIZE,
    VERTICES,
    board_of,
    chain,
    chain_escapes,
    chaser_captures,
    genmoves_at_2s,
    ladder_line,
    liberties,
    play,
)
from test_go import Reference

from saz.engine.games import BLACK, WHITE
from saz.engine.games.go import Go

LADDERS = Path(__file__).parent / "data" / "go-ladders-19x19.txt"
KINDS = ("capture", "nochase", "escape", "noescape")
DIRECTIONS = ("NE", "NW", "SE", "SW")
#: The keys of a block, in order, before its diagram; `answer` or `forbidden` is the eighth.
KEYS = ("position", "kind", "direction", "to_move", "komi", "target", "ladder")


@dataclass(frozen=True)
class Ladder:
    """One block of the set: the position and its right (or wrong) moves."""

    number: int
    kind: str
    direction: str
    game: Go
    target: int
    works: bool
    #: The engine must play one of `answer` (when not empty) and none of `forbidden`.
    answer: frozenset[int]
    forbidden: frozenset[int]
    note: str
    verified: str


def parse_ladders(text: str) -> list[Ladder]:
    """The blocks of the set's format (the file's header says it): ValueError on a malformed one."""
    blocks = [block for block in text.split("\n\n") if block.strip()]
    ladders = []
    for block in blocks:
        lines = [line for line in block.splitlines() if not line.startswith("#")]
        if lines:
            ladders.append(_parse_block(lines))
    return ladders


def _parse_block(lines: list[str]) -> Ladder:
    """One block: the keyed lines, then the 19 rows of the board."""
    if len(lines) != len(KEYS) + 3 + SIZE:
        raise ValueError(f"a block has {len(KEYS) + 3} keyed lines and {SIZE} rows: {lines[:1]}")
    fields = dict(line.split(" ", 1) for line in lines[:-SIZE])
    where = f"position {fields.get('position', '?')}"
    keys = list(fields)
    if keys[:len(KEYS)] != list(KEYS) or keys[len(KEYS):] not in (
            ["answer", "note", "verified"], ["forbidden", "note", "verified"]):
        raise ValueError(f"{where}: keys {keys}, expected {list(KEYS)} then answer or forbidden, "
                         "note, verified")
    if fields["kind"] not in KINDS or fields["direction"] not in DIRECTIONS:
        raise ValueError(f"{where}: kind {fields['kind']!r}, direction {fields['direction']!r}")
    if fields["to_move"] not in ("B", "W") or fields["ladder"] not in ("works", "broken"):
        raise ValueError(f"{where}: to_move {fields['to_move']!r}, ladder {fields['ladder']!r}")
    game = Go.from_diagram("\n".join(lines[-SIZE:]),
                           to_move=BLACK if fields["to_move"] == "B" else WHITE,
                           komi=float(fields["komi"]))
    if game.width != SIZE or game.height != SIZE:
        raise ValueError(f"{where}: a {game.width}x{game.height} board")
    named = fields.get("answer", fields.get("forbidden", ""))
    moves = frozenset(VERTICES.parse(vertex) for vertex in named.split())
    if not moves:
        raise ValueError(f"{where}: no moves")
    return Ladder(int(fields["position"]), fields["kind"], fields["direction"], game,
                  VERTICES.parse(fields["target"]), fields["ladder"] == "works",
                  moves if "answer" in fields else frozenset(),
                  moves if "forbidden" in fields else frozenset(), fields["note"],
                  fields["verified"])


def ladder_set() -> list[Ladder]:
    return parse_ladders(LADDERS.read_text())


def reads_as(ladder: Ladder) -> bool:
    """Whether the chaser captures the chain, the side to move moving first."""
    board = board_of(ladder.game)
    if board[ladder.target] == ladder.game.to_move:
        return not chain_escapes(board, ladder.target)
    return chaser_captures(board, ladder.target)


# -- the set -----------------------------------------------------------------------------------
def test_the_ladder_set_is_what_the_issue_asks() -> None:
    """At least 12 positions, numbered in order; every kind; ladders in all four directions; a
    breaker 10 lines or more from where its ladder starts; each block's moves legal."""
    ladders = ladder_set()
    assert len(ladders) >= 12
    assert [ladder.number for ladder in ladders] == list(range(1, len(ladders) + 1))
    assert {ladder.kind for ladder in ladders} == set(KINDS)
    assert {ladder.direction for ladder in ladders} == set(DIRECTIONS)
    for ladder in ladders:
        legal = set(ladder.game.legal_moves().tolist())
        assert ladder.answer | ladder.forbidden <= legal, ladder.number
        assert ladder.game.komi == 7.5
    assert any(_far_breaker(ladder) >= 10 for ladder in ladders if not ladder.works)


def _far_breaker(ladder: Ladder) -> int:
    """How many lines a broken ladder runs before it breaks: from its first atari (or extension,
    where the atari is on the board) to the end of its line, beside which the breaker stands."""
    board = board_of(ladder.game)
    if board[ladder.target] == ladder.game.to_move:  # in atari: run from its extension
        (start,) = liberties(board, ladder.target)
        line = ladder_line(play(board, start, board[ladder.target]) or board, ladder.target)
    else:
        line = ladder_line(board, ladder.target)
        start = line[0]
    end = line[-1]
    return max(abs(end % SIZE - start % SIZE), abs(end // SIZE - start // SIZE))


@pytest.mark.parametrize("ladder", ladder_set(), ids=lambda ladder: f"position{ladder.number}")
def test_each_position_reads_as_its_block_says(ladder: Ladder) -> None:
    """The kind, the side to move, the liberties, the ladder's outcome and its direction agree
    with the block, and the moves are the atari that starts it or the extension that runs."""
    board = board_of(ladder.game)
    color, to_move = board[ladder.target], ladder.game.to_move
    assert color != 0
    libs = liberties(board, ladder.target)
    assert reads_as(ladder) == ladder.works
    assert ladder.works == (ladder.kind in ("capture", "noescape"))
    moves = ladder.answer or ladder.forbidden
    assert bool(ladder.answer) == (ladder.kind in ("capture", "escape"))
    if ladder.kind in ("capture", "nochase"):  # the chaser to move, the chain on two liberties
        assert to_move == -color and len(libs) == 2 and moves < libs
        line = ladder_line(board, ladder.target)
        assert line[:1] == sorted(moves)
    else:  # the chain's side to move, in atari: the move named is its extension
        assert to_move == color and moves == libs
        line = ladder_line(play(board, min(libs), color) or board, ladder.target)
    assert len(line) >= 4
    x0, y0, x1, y1 = line[1] % SIZE, line[1] // SIZE, line[-1] % SIZE, line[-1] // SIZE
    # Point rows count from the top: north is a smaller row.
    assert ("N" if y1 < y0 else "S") + ("E" if x1 > x0 else "W") == ladder.direction


def test_a_malformed_block_is_an_error() -> None:
    text = LADDERS.read_text()
    first = next(block for block in text.split("\n\n") if block.startswith("position 1\n"))
    assert len(parse_ladders(first)) == 1
    for broken in (first.replace("kind capture", "kind chase"),
                   first.replace("answer ", "answers "),
                   first.replace("direction NE", "direction N"),
                   "\n".join(first.splitlines()[:-1])):
        with pytest.raises(ValueError):
            parse_ladders(broken)


def test_the_reader_on_hand_made_ladders() -> None:
    """A lone stone in the corner's ladder is caught; a breaker on its path lets it out."""
    rows = ["." * SIZE] * (SIZE - 3) + ["..XO" + "." * 15, "...XX" + "." * 14, "." * SIZE]
    diagram = "\n".join(rows)
    game = Go.from_diagram(diagram, to_move=BLACK)
    board, target = board_of(game), VERTICES.parse("D3")
    assert liberties(board, target) == {VERTICES.parse("D4"), VERTICES.parse("E3")}
    assert chaser_captures(board, target)
    assert ladder_line(board, target)[:2] == [VERTICES.parse("D4"), VERTICES.parse("E3")]
    broken = list(board)
    broken[VERTICES.parse("P14")] = WHITE
    assert not chaser_captures(tuple(broken), target)


# -- the core's reader (go.cpp): Go.ladder_captured, the ladder planes, search_moves ----------
def planes_of(game: Go) -> dict[str, set[int]]:
    """The ladder planes of `game`'s encoding, as point sets."""
    out = np.zeros((game.num_points + 1, Go.num_features()), np.float32)
    game.encode(out)
    return {name: set(np.flatnonzero(out[:game.num_points, Go.feature_names.index(name)]).tolist())
            for name in ("own_ladder", "opponent_ladder", "ladder_capture")}


@pytest.mark.parametrize("ladder", ladder_set(), ids=lambda ladder: f"position{ladder.number}")
def test_the_core_reader_reads_each_position_as_its_block_says(ladder: Ladder) -> None:
    """The core's reader finds each block's `ladder`; the planes mark the chain where the ladder
    works (the chaser's working atari too), and the search leaves out the ladder's unsound moves
    only: running from a working ladder (noescape) and starting one that a breaker stops
    (nochase); the escape's extension is searched, and so are the working atari and the atari
    from the other side, which lets the chain out at once (no ladder run)."""
    game = ladder.game
    board = board_of(game)
    chain_stones = chain(board, ladder.target)
    libs = liberties(board, ladder.target)
    assert game.ladder_captured(ladder.target) == ladder.works
    planes = planes_of(game)
    searched = set(game.search_moves().tolist())
    own = board[ladder.target] == game.to_move
    marked = planes["own_ladder" if own else "opponent_ladder"]
    assert (chain_stones <= marked) == ladder.works and (chain_stones & marked) == (
        chain_stones if ladder.works else set())
    if ladder.kind in ("capture", "nochase"):
        assert libs - ladder.forbidden <= searched and not ladder.forbidden & searched
        assert planes["ladder_capture"] & libs == set(ladder.answer)
    elif ladder.kind == "escape":
        assert ladder.answer <= searched
    else:
        assert not ladder.forbidden & searched


def hand_made(**stones: int) -> Go:
    """The corner ladder of `test_the_reader_on_hand_made_ladders` (White's D3 on two liberties,
    Black to move; the ladder runs to the upper right), with more stones (vertex=colour)."""
    rows = [["."] * SIZE for _ in range(SIZE - 3)] + [
        list("..XO" + "." * 15), list("...XX" + "." * 14), ["."] * SIZE]
    for vertex, color in stones.items():
        p = VERTICES.parse(vertex)
        rows[p // SIZE][p % SIZE] = "X" if color == BLACK else "O"
    return Go.from_diagram("\n".join("".join(row) for row in rows), to_move=BLACK)


@pytest.mark.parametrize(("stones", "works"), [
    ({}, True),  # to the top edge: taken
    ({"P14": WHITE}, False),  # a breaker on the path: the chain connects and is out
    ({"P14": BLACK}, True),  # a stone of the chaser's own on the path: it only helps
    ({"K11": BLACK}, True),  # the same colour beside the path: no help to the chain
    # Beside the path, not on it: Black's atari at K10 then has one liberty, and White captures
    # it (a capture of a chaser's stone in atari is the chain's other way out).
    ({"K11": WHITE}, False),
    ({"B18": WHITE}, True),  # a white stone far off the path breaks nothing
])
def test_the_core_reader_on_hand_made_ladders(stones: dict[str, int], works: bool) -> None:
    """The core's reader and this file's plain reader agree on the corner ladder with breakers,
    a breaker's colour changed and a stone that only makes a chaser's atari capturable."""
    game = hand_made(**stones)
    target = VERTICES.parse("D3")
    assert chaser_captures(board_of(game), target) == works
    assert game.ladder_captured(target) == works
    assert (VERTICES.parse("D4") in planes_of(game)["ladder_capture"]) == works
    # Black's atari D4 is searched where the ladder works; where a breaker stops it, it is left
    # out (the ladder runs far first); the atari from the other side, E3, is always searched.
    atari, other = VERTICES.parse("D4"), VERTICES.parse("E3")
    assert (atari in game.search_moves()) == works and other in game.search_moves()
    # White to move, in atari after Black's D4: its extension E3 is searched only where it runs.
    game.play(VERTICES.parse("D4"))
    extension = VERTICES.parse("E3")
    assert game.ladder_captured(target) == works == (not chain_escapes(board_of(game), target))
    assert (extension in game.search_moves()) == (not works)


@pytest.mark.parametrize(("stones", "searched"), [
    ({"E4": WHITE}, True),  # E3 joins E4 at once: the chain is out at the first step
    ({"F4": WHITE}, True),  # out after one step (the deepest read: 3 moves past the atari)
    ({"H7": WHITE}, True),  # a short ladder that breaks (13 moves): the network's to judge
    ({"H8": WHITE}, False),  # 15 moves down the ladder, then out: left out
    ({"P14": WHITE}, False),  # 41 moves, to the breaker 12 lines away
])
def test_the_search_leaves_out_only_the_start_of_a_ladder_that_runs_and_breaks(
        stones: dict[str, int], searched: bool) -> None:
    """The corner ladder's atari D4 is left out of the search only where the chain runs 15
    moves or more down the ladder before a breaker lets it out (the reference reader in
    tests/test_go.py checks the atari that does more than start the ladder)."""
    game = hand_made(**stones)
    assert (VERTICES.parse("D4") in game.search_moves()) == searched
    assert game.is_legal(VERTICES.parse("D4"))


def test_the_search_moves_agree_with_the_reference_on_every_ladder() -> None:
    """The core's search moves are tests/test_go.py's reference's (each rule read from scratch)
    on every position of the set and on the corner ladder with and without its breaker."""
    games = [ladder.game for ladder in ladder_set()]
    games += [hand_made(), hand_made(P14=WHITE), hand_made(H7=WHITE), hand_made(H8=WHITE)]
    for game in games:
        ref = Reference(SIZE, SIZE, game.rules.komi, game.board.tolist(), game.to_move)
        assert game.search_moves().tolist() == ref.search_moves()


def test_the_core_reader_on_the_first_line() -> None:
    """White's K1 on two liberties under Black's K2: pushed along the first line it dies in the
    corner, whichever way Black ataris first; a white stone on the first line ahead breaks it on
    that side only, so Black must atari from the other."""
    rows = ["." * SIZE] * (SIZE - 2) + ["." * 9 + "X" + "." * 9, "." * 9 + "O" + "." * 9]
    game = Go.from_diagram("\n".join(rows), to_move=BLACK)
    target = VERTICES.parse("K1")
    assert game.ladder_captured(target)
    assert planes_of(game)["ladder_capture"] == {VERTICES.parse("J1"), VERTICES.parse("L1")}
    broken = Go.from_diagram("\n".join([*rows[:-1], rows[-1][:16] + "O.."]), to_move=BLACK)
    assert broken.ladder_captured(target) and chaser_captures(board_of(broken), target)
    # Black's L1 drives White left, away from R1: that works; J1 drives it into R1: it fails.
    assert planes_of(broken)["ladder_capture"] == {VERTICES.parse("L1")}

# -- the engine --------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_default_engine_reads_every_ladder_right_at_2s_a_move(tmp_path: Path) -> None:
    """The engine under test (`reference.go_reader`), at 2 s a move, plays an answer, or no
    forbidden move, in every position. The printed lines say what the engine played in each."""
    ladders = ladder_set()
    moves = genmoves_at_2s([ladder.game for ladder in ladders], tmp_path)
    played: list[str] = []
    wrong: list[tuple[int, str, str]] = []
    for ladder, move in zip(ladders, moves, strict=True):
        right = move in ladder.answer if ladder.answer else move not in ladder.forbidden
        played.append(f"{ladder.number} {ladder.kind} {ladder.direction} "
                      f"{VERTICES.format(move)} {'right' if right else 'WRONG'}")
        if not right:
            wrong.append((ladder.number, ladder.kind, VERTICES.format(move)))
    print("\n".join(played))
    print(f"right in {len(ladders) - len(wrong)} of {len(ladders)}; wrong: {wrong}")
    assert not wrong
