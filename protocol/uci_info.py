"""What `saz uci` says about a search: `info` lines and the score of a line.

One `info` line per principal variation shown (MultiPV), in Stockfish's order of fields:

    info depth D seldepth S multipv K score cp X|mate N [wdl W D L] nodes N nps N hashfull H
         time MS pv MOVE...

- **depth**: the moves of the best line's principal variation (MCTS has no iteration depth);
  **seldepth**: the longest principal variation among the root's moves. Each PV follows the
  most visited child (the tree gives at most 32 moves of it).
- **nodes**: the root's visits, those kept from the previous search included (1 for a move the
  rules decide without a search); **nps**: this
  search's new visits per second; **time**: milliseconds since the search began.
- **score cp**: the line's value v in [-1, 1] (the side to move's) as centipawns by Lc0's
  legacy formula `cp = 90 tan(1.5637541897 v)`, monotone: 0 at v = 0, 89 at v = 0.5,
  12,780 at v = 1. **score mate**: only where the search proved the root won or lost (the
  rules' mate in one, or the tree's MCTS-solver proof), for the best line: N moves (not
  plies) from the length of the proven line, negative when we are mated. A proven draw is cp 0.
- **wdl**: win, draw and loss in per mille for the side to move: the network's draw rate at
  the root with W - L the line's value (`Engine.wdl`) where the network has a win/draw/loss
  head; else from the value alone, with no draws (w = 1000 (1 + v) / 2); a proof gives
  1000 0 0, 0 1000 0 or 0 0 1000.
- **hashfull**: the tree's bytes per mille of its budget (Hash).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from saz.engine.games.chess import Chess
from saz.engine.search.mcts import MoveInfo, SearchResult

#: Lc0's legacy centipawn scale: cp = A tan(B v).
CP_SCALE = 90.0
CP_ANGLE = 1.5637541897


def centipawns(value: float) -> int:
    """The value `value` (in [-1, 1], clipped) as centipawns (Lc0's monotone legacy map)."""
    v = min(1.0, max(-1.0, float(value)))
    return round(CP_SCALE * math.tan(CP_ANGLE * v))


def mate_moves(pv_length: int, won: bool) -> int:
    """UCI's `mate N` for a proven line of `pv_length` plies: our moves to mate, negative when
    the opponent mates (a line that ends in our mate has an odd length)."""
    moves = max(1, (pv_length + 1) // 2)
    return moves if won else -moves


def score_text(value: float, pv_length: int, proven: bool) -> str:
    """`cp X` or, for a proven win or loss, `mate N`."""
    if proven and abs(value) >= 1.0:
        return f"mate {mate_moves(pv_length, value > 0)}"
    if proven:
        return "cp 0"
    return f"cp {centipawns(value)}"


def wdl_text(value: float, proven: bool, wdl: Sequence[float] | None = None) -> str:
    """`W D L` in per mille, summing to 1000 (see the module docstring)."""
    if proven:
        return "1000 0 0" if value >= 1.0 else "0 0 1000" if value <= -1.0 else "0 1000 0"
    if wdl is not None and len(wdl) == 3:
        win, draw, _ = (max(0.0, float(p)) for p in wdl)
    else:
        v = min(1.0, max(-1.0, float(value)))
        win, draw = (1.0 + v) / 2.0, 0.0
    w = min(1000, round(1000 * win))
    d = min(1000 - w, round(1000 * draw))
    return f"{w} {d} {1000 - w - d}"


def pv_text(root: Chess, moves: Sequence[int]) -> list[str]:
    """A line of moves from `root` in UCI's notation (played out on a copy: a move's text
    depends on its position); it stops at a move the position does not allow."""
    game = root.copy()
    words: list[str] = []
    for move in moves:
        if not game.is_legal(move):
            break
        words.append(game.uci(move))
        game.play(move)
    return words


#: (value, proven) -> (win, draw, loss) for the root's side to move, or None without a head.
WdlOf = Callable[[float, bool], Sequence[float] | None]


def info_lines(result: SearchResult, root: Chess, *, multipv: int = 1,
               wdl: WdlOf | None = None, hashfull: int | None = None) -> list[str]:
    """The `info` lines about `result`, a search of `root`: one per line of play, best first,
    at most `multipv` of them (only moves the search visited, or the one it chose). `wdl`
    gives the win/draw/loss of a value (None: no `wdl` field)."""
    infos: list[MoveInfo] = [m for m in result.moves if m.visits > 0][:max(1, multipv)]
    if not infos or infos[0].move != result.best_move:
        best = [m for m in result.moves if m.move == result.best_move]
        infos = (best or [MoveInfo(result.best_move, 0, result.value, 1.0, result.value,
                                   (result.best_move,))]) + [
            m for m in infos if m.move != result.best_move]
        infos = infos[:max(1, multipv)]
    stats = result.stats
    depth = len(infos[0].pv) or 1
    seldepth = max([depth, *(len(m.pv) for m in result.moves)])
    nps = round(stats.playouts / stats.seconds) if stats.seconds > 0 else 0
    millis = round(stats.seconds * 1000)
    lines = []
    for k, info in enumerate(infos, 1):
        proven = result.proven and k == 1
        value = result.value if proven else info.value
        pv = info.pv or (info.move,)
        words = [f"info depth {depth} seldepth {seldepth} multipv {k}",
                 f"score {score_text(value, len(pv), proven)}"]
        if wdl is not None:
            words.append(f"wdl {wdl_text(value, proven, wdl(value, proven))}")
        words.append(f"nodes {max(1, result.root_visits)} nps {nps}")
        if hashfull is not None:
            words.append(f"hashfull {hashfull}")
        words.append(f"time {millis} pv {' '.join(pv_text(root, pv))}")
        lines.append(" ".join(words))
    return lines


__all__ = ["centipawns", "info_lines", "mate_moves", "pv_text", "score_text", "wdl_text"]
