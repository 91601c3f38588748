"""Writes chess_variants_perft.json: Fairy-Stockfish's perft of Gardner 5x5 and Los Alamos 6x6,
from the start position and from positions of random games, for tests/test_chess_variants.py
(which reads the file and never needs Fairy-Stockfish).

    .venv/bin/python tests/data/chess_variants_perft.py /usr/games/fairy-stockfish

Each count is Fairy-Stockfish's answer to `setoption name UCI_Variant value V`, `position
startpos` or `position fen F`, `go perft D`.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from saz.engine.games.chess import Chess

OUT = Path(__file__).with_suffix(".json")
#: (variant, start depths, random positions, their depth)
PLAN = [("gardner", 6, 40, 4), ("losalamos", 6, 40, 4)]


def fairy_perft(engine: str, variant: str, fen: str | None, depth: int) -> int:
    position = "position startpos" if fen is None else f"position fen {fen}"
    script = (f"uci\nsetoption name UCI_Variant value {variant}\n{position}\n"
              f"go perft {depth}\nquit\n")
    out = subprocess.run([engine], input=script, capture_output=True, text=True, check=True,
                         timeout=600).stdout
    for line in out.splitlines():
        if line.startswith("Nodes searched:"):
            return int(line.split(":")[1])
    raise RuntimeError(f"no perft answer for {variant} {fen}: {out[-500:]}")


def random_fens(variant: str, count: int, seed: int) -> list[str]:
    """Positions of random games (by saz's rules) at random plies; a game's last position
    (mate, stalemate or a draw the rules call) now and then."""
    rng = np.random.default_rng(seed)
    fens: list[str] = []
    while len(fens) < count:
        game = Chess(variant=variant)
        for _ in range(int(rng.integers(4, 80))):
            legal = game.legal_moves()
            if len(legal) == 0:
                break
            game.play(int(rng.choice(legal)))
        if not game.is_over() or rng.random() < 0.15:
            fens.append(game.fen())
    return fens


def main(engine: str) -> None:
    command = f".venv/bin/python tests/data/chess_variants_perft.py {engine}"
    data: dict[str, object] = {"command": command, "engine": "Fairy-Stockfish (Debian)",
                               "variants": {}}
    variants: dict[str, object] = {}
    for seed, (variant, start_depth, count, depth) in enumerate(PLAN):
        start = [fairy_perft(engine, variant, None, d) for d in range(1, start_depth + 1)]
        positions = [
            {"fen": fen, "depth": depth, "nodes": fairy_perft(engine, variant, fen, depth)}
            for fen in random_fens(variant, count, seed)]
        variants[variant] = {"start": start, "positions": positions}
    data["variants"] = variants
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "fairy-stockfish")
