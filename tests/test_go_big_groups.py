"""The 19x19 big-group set (tests/data/go-big-groups-19x19.txt, issue 65): its blocks parse, each
one's claim is what a plain reader finds (`reference.go_reader`), and (slow) the engine takes,
saves or gives up each group as its block says at 2 s a move.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from reference.go_reader import (
    SIZE,
    VERTICES,
    board_of,
    chain,
    chain_escapes,
    chaser_captures,
    genmoves_at_2s,
    liberties,
    play,
)

from saz.engine.games import BLACK, WHITE
from saz.engine.games.go import Go

GROUPS = Path(__file__).parent / "data" / "go-big-groups-19x19.txt"
KINDS = ("capture", "save", "giveup")
#: The keys of a block, in order, before its diagram.
KEYS = ("position", "kind", "to_move", "komi", "target")
#: The least stones of a group in the set: big enough that losing it decides a game.
BIG = 7


@dataclass(frozen=True)
class BigGroup:
    """One block of the set: the position and its right (or wrong) moves."""

    number: int
    kind: str
    game: Go
    target: int
    #: The engine must play one of `answer` (when not empty) and none of `forbidden`.
    answer: frozenset[int]
    forbidden: frozenset[int]
    note: str
    verified: str


def parse_groups(text: str) -> list[BigGroup]:
    """The blocks of the set's format (the file's header says it): ValueError on a malformed one."""
    groups = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line and not line.startswith("#")]
        if lines:
            groups.append(_parse_block(lines))
    return groups


def _parse_block(lines: list[str]) -> BigGroup:
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
    if fields["kind"] not in KINDS or fields["to_move"] not in ("B", "W"):
        raise ValueError(f"{where}: kind {fields['kind']!r}, to_move {fields['to_move']!r}")
    if ("forbidden" in fields) != (fields["kind"] == "giveup"):
        raise ValueError(f"{where}: a giveup names its forbidden moves, the others their answers")
    game = Go.from_diagram("\n".join(lines[-SIZE:]),
                           to_move=BLACK if fields["to_move"] == "B" else WHITE,
                           komi=float(fields["komi"]))
    moves = frozenset(VERTICES.parse(v) for v in fields.get("answer", fields.get("forbidden", ""))
                      .split())
    if not moves:
        raise ValueError(f"{where}: no moves")
    return BigGroup(int(fields["position"]), fields["kind"], game,
                    VERTICES.parse(fields["target"]),
                    moves if "answer" in fields else frozenset(),
                    moves if "forbidden" in fields else frozenset(), fields["note"],
                    fields["verified"])


def group_set() -> list[BigGroup]:
    return parse_groups(GROUPS.read_text())


# -- the set -----------------------------------------------------------------------------------
def test_the_set_holds_every_kind_in_every_corner() -> None:
    """At least 12 positions, numbered in order; every kind, for either colour to move; groups in
    all four quarters of the board; each block's moves legal."""
    groups = group_set()
    assert len(groups) >= 12
    assert [group.number for group in groups] == list(range(1, len(groups) + 1))
    assert {(group.kind, group.game.to_move) for group in groups} == {
        (kind, color) for kind in KINDS for color in (BLACK, WHITE)}
    quarters = {(group.target % SIZE > SIZE // 2, group.target // SIZE > SIZE // 2)
                for group in groups}
    assert len(quarters) == 4
    for group in groups:
        assert group.answer | group.forbidden <= set(group.game.legal_moves().tolist())
        assert group.game.komi == 7.5


@pytest.mark.parametrize("group", group_set(), ids=lambda group: f"position{group.number}")
def test_each_position_reads_as_its_block_says(group: BigGroup) -> None:
    """A big group on one or two liberties, the side to move's for save and giveup, the
    opponent's for capture; a capture's answers take it at once or leave it in atari with no
    way out; every save gets it out (three liberties, or two that no ladder takes); a giveup's
    extension leaves it on liberties that the opponent's ataris take."""
    board = board_of(group.game)
    color, to_move = board[group.target], group.game.to_move
    assert len(chain(board, group.target)) >= BIG
    assert len(liberties(board, group.target)) in (1, 2)
    assert (color == to_move) == (group.kind != "capture")
    after = {move: play(board, move, to_move) for move in group.answer | group.forbidden}
    assert all(position is not None for position in after.values())
    if group.kind == "capture":
        assert any(position[group.target] == 0 or (
            len(liberties(position, group.target)) == 1
            and not chain_escapes(position, group.target))
            for position in after.values() if position is not None)
    elif group.kind == "save":
        for position in after.values():
            assert position is not None and position[group.target] == color
            libs = len(liberties(position, group.target))
            assert libs >= 3 or (libs == 2 and not chaser_captures(position, group.target))
    else:
        assert group.forbidden <= liberties(board, group.target)
        for position in after.values():
            assert position is not None
            assert len(liberties(position, group.target)) <= 2
            assert chaser_captures(position, group.target)


def test_a_malformed_block_is_an_error() -> None:
    text = GROUPS.read_text()
    first = next(block for block in text.split("\n\n") if block.startswith("position 1\n"))
    assert len(parse_groups(first)) == 1
    for broken in (first.replace("kind capture", "kind take"),
                   first.replace("answer ", "forbidden "),
                   first.replace("to_move B", "to_move X"),
                   "\n".join(first.splitlines()[:-1])):
        with pytest.raises(ValueError):
            parse_groups(broken)


# -- the engine --------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_default_engine_takes_saves_and_gives_up_at_2s_a_move(tmp_path: Path) -> None:
    """The engine under test (`reference.go_reader`), at 2 s a move, plays an answer, or no
    forbidden move, in every position; the printed lines say what it played."""
    groups = group_set()
    moves = genmoves_at_2s([group.game for group in groups], tmp_path)
    played: list[str] = []
    wrong: list[tuple[int, str, str]] = []
    for group, move in zip(groups, moves, strict=True):
        right = move in group.answer if group.answer else move not in group.forbidden
        played.append(f"{group.number} {group.kind} {VERTICES.format(move)} "
                      f"{'right' if right else 'WRONG'}")
        if not right:
            wrong.append((group.number, group.kind, VERTICES.format(move)))
    print("\n".join(played))
    print(f"right in {len(groups) - len(wrong)} of {len(groups)}; wrong: {wrong}")
    assert not wrong
