"""Go read by hand for the 19x19 position sets (tests/data/go-ladders-19x19.txt and
go-big-groups-19x19.txt): a plain reader over a board of point colours (1 black, -1 white, 0
empty) that checks each set's own claims, and the engine under test playing a position at 2 s a
move.

The reader is the textbook one: the chaser ataris (either liberty of a two-liberty chain), the
chain answers by extending or by capturing a chaser's chain in atari beside it, and three
liberties is out. It is small enough to trust. The engine is `saz gtp --game go` as it ships
(models/go.onnx), or on the model that the environment's `SAZ_GO_MODEL` names (a candidate
generation: `SAZ_GO_MODEL=/tmp/gen_N.onnx pytest -m slow -s`).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from saz.engine.games import BLACK
from saz.engine.games.go import Go
from saz.protocol.gtp_client import GtpClient
from saz.protocol.sgf_writer import format_sgf
from saz.protocol.vertex import vertices_for

SIZE = 19
VERTICES = vertices_for("go", SIZE, SIZE)
#: The chain being chased is out with this many liberties.
OUT = 3
#: Plies of a ladder before the reader gives up (a 19x19 ladder is under 60).
MAX_PLIES = 200
#: The engine under test, as it ships unless SAZ_GO_MODEL names another model.
SAZ_GTP = [sys.executable, "-m", "saz.engine.cli", "gtp", "--game", "go",
           *(["--model", os.environ["SAZ_GO_MODEL"]] if os.environ.get("SAZ_GO_MODEL") else [])]
#: Seconds any one reply may take: a 2 s move, or loading the network at the first command, with
#: room for a loaded machine; past it the test fails saying so rather than hanging.
REPLY_TIMEOUT = 60.0


# -- the plain reader -------------------------------------------------------------------------
#: Point colours, row after row from the top: 1 black, -1 white, 0 empty.
Board = tuple[int, ...]


def _neighbours(p: int) -> Iterator[int]:
    x, y = p % SIZE, p // SIZE
    if x > 0:
        yield p - 1
    if x < SIZE - 1:
        yield p + 1
    if y > 0:
        yield p - SIZE
    if y < SIZE - 1:
        yield p + SIZE


def chain(board: Board, p: int) -> set[int]:
    """The stones of the chain on `p`."""
    stones, todo = {p}, [p]
    while todo:
        for q in _neighbours(todo.pop()):
            if board[q] == board[p] and q not in stones:
                stones.add(q)
                todo.append(q)
    return stones


def liberties(board: Board, p: int) -> set[int]:
    """The empty points beside the chain on `p`."""
    return {q for s in chain(board, p) for q in _neighbours(s) if board[q] == 0}


def play(board: Board, p: int, color: int) -> Board | None:
    """The board after `color` plays `p`, its captures taken off; None where it is illegal
    (occupied, or suicide). The set has no ko to care about."""
    if board[p] != 0:
        return None
    after = list(board)
    after[p] = color
    for q in _neighbours(p):
        if after[q] == -color and not liberties(tuple(after), q):
            for s in chain(tuple(after), q):
                after[s] = 0
    result = tuple(after)
    return result if liberties(result, p) else None


def chaser_captures(board: Board, target: int, plies: int = 0) -> bool:
    """The chaser (the target's opponent) to move: whether its ataris alone capture the chain."""
    if board[target] == 0:
        return True
    libs = liberties(board, target)
    if len(libs) == 1:
        return True
    if len(libs) >= OUT or plies > MAX_PLIES:
        return False
    for move in libs:
        after = play(board, move, -board[target])
        if after is None:
            continue
        if after[target] == 0 or (len(liberties(after, target)) == 1
                                  and not chain_escapes(after, target, plies + 1)):
            return True
    return False


def chain_escapes(board: Board, target: int, plies: int = 0) -> bool:
    """The chain's side to move, the chain in atari: whether extending, or capturing a chaser's
    chain in atari beside it, gets it out of the ladder."""
    color = board[target]
    moves = set(liberties(board, target))
    for stone in chain(board, target):
        for q in _neighbours(stone):
            if board[q] == -color and len(liberties(board, q)) == 1:
                moves |= liberties(board, q)
    for move in moves:
        after = play(board, move, color)
        if after is None or after[target] == 0:
            continue
        libs = len(liberties(after, target))
        if libs >= OUT or (libs == 2 and not chaser_captures(after, target, plies + 1)):
            return True
    return False


def ladder_line(board: Board, target: int) -> list[int]:
    """The ladder's main line as far as it runs: the chaser's atari that leaves the chain one way
    out, the extension, and so on, until the chain is out or captured (breakers decide where)."""
    color = board[target]
    line: list[int] = []
    while len(line) < MAX_PLIES and board[target] != 0 and len(liberties(board, target)) == 2:
        for atari in sorted(liberties(board, target)):
            after = play(board, atari, -color)
            if after is None or after[target] == 0 or len(liberties(after, target)) != 1:
                continue
            (extension,) = liberties(after, target)
            extended = play(after, extension, color)
            if extended is not None and len(liberties(extended, target)) == 2:
                break
        else:
            break
        line += [atari, extension]
        board = extended
    return line


def board_of(game: Go) -> Board:
    return tuple(int(c) for c in game.board)


def genmoves_at_2s(games: Sequence[Go], tmp_path: Path) -> list[int]:
    """The engine's move in each position (loaded as an SGF of its stones, the side to move
    given), at 2 s a move (a one-stone Canadian period), one engine for them all. A `?` reply
    fails the test (`GtpClient.command`); leaving the block sends `quit`, or kills the engine
    on an error."""
    moves = []
    with GtpClient(SAZ_GTP) as saz:
        for number, game in enumerate(games, 1):
            record = tmp_path / f"{number}.sgf"
            record.write_text(format_sgf(game))
            saz.command(f"loadsgf {record}", timeout=REPLY_TIMEOUT)
            saz.command("time_settings 0 2 1", timeout=REPLY_TIMEOUT)
            color = "b" if game.to_move == BLACK else "w"
            moves.append(VERTICES.parse(saz.command(f"genmove {color}", timeout=REPLY_TIMEOUT)))
    return moves
