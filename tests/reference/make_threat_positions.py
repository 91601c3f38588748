"""Find the Gomoku positions of `tests/data/gomoku_threats.txt` (run once; the file is committed).

    cd tests/reference
    ../../.venv/bin/python make_threat_positions.py 1 freestyle > ../data/gomoku_threats.txt
    ../../.venv/bin/python make_threat_positions.py 2 renju >> ../data/gomoku_threats.txt
    ../../.venv/bin/python make_threat_positions.py 3 exact-five >> ../data/gomoku_threats.txt

Random positions of 8-22 stones around the centre of a 9x9 or 11x11 board are classified by the
brute force of `gomoku_bruteforce.py` alone:

* `vcf`: the side to move forces five within 3 moves of its own, every move of the win a four;
* `vct`: it forces five within 3 moves, but not with fours alone;
* `four-reply`: it has a move that threatens an open or double four, which every quiet reply
  loses to, yet it has no forced win within 4 moves: some reply that makes a four saves the game.

Each line: `category size rule mover | black stones | white stones`, points as x,y from the top
left; the mover is the side to move, the attacker.
"""
from __future__ import annotations

import random
import sys

from gomoku_bruteforce import winning_first_moves, wins_within

from saz.engine.games import BLACK, WHITE
from saz.engine.games.gomoku import Gomoku

#: Positions wanted per category, by rule.
WANTED = {"freestyle": {"vcf": 24, "vct": 24, "four-reply": 12},
          "exact-five": {"vcf": 6, "vct": 6, "four-reply": 0},
          "renju": {"vcf": 8, "vct": 8, "four-reply": 0}}


def random_position(rng: random.Random, rule: str) -> Gomoku:
    size = rng.choice((9, 11))
    game = Gomoku(size, rule=rule)
    centre, reach = size // 2, 3
    for _ in range(rng.randrange(8, 23)):
        near = [m for m in game.legal_moves()
                if abs(m % size - centre) <= reach and abs(m // size - centre) <= reach]
        game.play(rng.choice(near or list(game.legal_moves())))
        if game.is_over():
            game.undo()
            break
    return game


def fours_only(game: Gomoku, k: int) -> bool:
    """Whether the side to move wins within `k` moves playing only fours (a brute-force VCF:
    every attacking move must leave a five to stop; the defender's reply is then forced)."""
    if game.winning_moves():
        return True
    if k <= 1 or game.forced_moves() is not None:
        return False
    for move in game.legal_moves():
        game.play(int(move))
        forced = game.forced_moves()
        ok = False
        if forced is not None and not game.winning_moves():
            ok = all(_reply_then(game, int(r), k - 1) for r in forced) if forced else True
        game.undo()
        if ok:
            return True
    return False


def _reply_then(game: Gomoku, reply: int, k: int) -> bool:
    game.play(reply)
    ok = not game.is_over() and fours_only(game, k)
    game.undo()
    return ok


def makes_five_threats(game: Gomoku, color: int) -> int:
    """Points of five `color` would have now, were it to move."""
    turned = game.copy()
    turned.set_to_move(color)
    return len(turned.winning_moves())


def four_reply(game: Gomoku) -> bool:
    if game.winning_moves() or game.forced_moves() is not None or wins_within(game, 3):
        return False
    if not any(_saved_only_by_fours(game, int(threat)) for threat in game.legal_moves()):
        return False
    return not wins_within(game, 4)  # a longer win would make the four a delay, not a defence


def _saved_only_by_fours(game: Gomoku, threat: int) -> bool:
    """Whether `threat` (not a four) threatens an open or double four that every quiet reply
    loses to within 2 more moves, while some reply that makes a four does not lose."""
    me = game.to_move
    game.play(threat)
    try:
        if game.is_over() or game.forced_moves() is not None:
            return False  # a four, not a threat of one
        turned = game.copy()
        turned.set_to_move(me)
        if not any(_two_fives(turned, int(q), me) for q in turned.legal_moves()):
            return False
        saved_by_four = False
        for reply in game.legal_moves():
            game.play(int(reply))
            four = makes_five_threats(game, -me) > 0
            lost = wins_within(game, 2)
            game.undo()
            if not four and not lost:
                return False
            saved_by_four |= four and not lost
        return saved_by_four
    finally:
        game.undo()


def _two_fives(game: Gomoku, q: int, me: int) -> bool:
    game.play(q)
    n = makes_five_threats(game, me)
    game.undo()
    return n >= 2


def line(category: str, game: Gomoku) -> str:
    size = game.width
    stones = {BLACK: [], WHITE: []}
    for p, v in enumerate(game.board):
        if v:
            stones[int(v)].append(f"{p % size},{p // size}")
    mover = "black" if game.to_move == BLACK else "white"
    return (f"{category} {size} {game.rules.name} {mover} | {' '.join(stones[BLACK])} | "
            f"{' '.join(stones[WHITE])}")


def main() -> None:
    rng = random.Random(int(sys.argv[1]))
    rule = sys.argv[2]
    wanted = WANTED[rule]
    found = {c: 0 for c in wanted}
    while any(found[c] < wanted[c] for c in wanted):
        game = random_position(rng, rule)
        if game.winning_moves() or game.forced_moves() is not None:
            continue
        if wins_within(game, 3) and not wins_within(game, 1):
            category = "vcf" if fours_only(game, 3) else "vct"
        elif found["four-reply"] < wanted["four-reply"] and four_reply(game):
            category = "four-reply"
        else:
            continue
        if found[category] >= wanted[category]:
            continue
        found[category] += 1
        print(line(category, game), flush=True)
        print(found, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
