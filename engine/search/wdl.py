"""Win, draw and loss probabilities of a searched position, for UCI's `info ... wdl`.

The tree backs up one value per node, the expected result W - L; the draw rate is not in it. A
network with a wdl head (chess's) says how drawish the root is, and the search says how good it
is: the root's draw probability is the network's, capped so that W - L can be the search's value,
and W and L split the rest around that value (`split`). A proven result is certain: 1 0 0, 0 1 0
or 0 0 1. The network's answer is cached by position, so a long analysis pays for the root once.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from saz.engine.games.base import Game
from saz.engine.graph import layout_of

if TYPE_CHECKING:  # onnxruntime loads with the network, not with the front-end
    from saz.engine.evaluator import Evaluator

#: Roots whose draw probability is kept (a float each).
CACHE_SIZE = 256

#: (win, draw, loss) for the side to move, summing to 1.
Wdl = tuple[float, float, float]


def split(value: float, draw: float, *, proven: bool = False) -> Wdl:
    """(win, draw, loss) with W - L = `value` (in [-1, 1]) and the draw probability `draw` as
    far as that value leaves room for it (at most 1 - |value|); a `proven` value is certain."""
    value = min(1.0, max(-1.0, float(value)))
    if proven:
        return (1.0, 0.0, 0.0) if value > 0 else (0.0, 0.0, 1.0) if value < 0 else (0.0, 1.0, 0.0)
    draw = min(max(0.0, float(draw)), 1.0 - abs(value))
    return (1.0 - draw + value) / 2, draw, (1.0 - draw - value) / 2


class WdlEstimator:
    """The network's draw probability of a root, and the WDL of a search's value there."""

    def __init__(self, evaluator: Evaluator, cache_size: int = CACHE_SIZE) -> None:
        if cache_size < 1:
            raise ValueError("cache_size must be >= 1")
        self.evaluator = evaluator
        self.cache_size = cache_size
        self._draws: OrderedDict[int, float] = OrderedDict()

    @property
    def available(self) -> bool:
        """Whether the network has a wdl head."""
        return bool(getattr(self.evaluator, "has_wdl", False))

    def draw(self, game: Game) -> float:
        """The network's draw probability of `game`'s position (ValueError without the head)."""
        found = self._draws.get(game.hash)
        if found is not None:
            self._draws.move_to_end(game.hash)
            return found
        x = np.empty((1, game.num_nodes, game.num_features()), np.float32)
        game.encode(x[0])
        wdl = self.evaluator.run_heads(x, layout_of(game)).wdl
        if wdl is None:
            raise ValueError("the network has no wdl head")
        draw = float(wdl[0, 1])
        self._draws[game.hash] = draw
        while len(self._draws) > self.cache_size:
            self._draws.popitem(last=False)
        return draw

    def wdl(self, game: Game, value: float, *, proven: bool = False) -> Wdl:
        """(win, draw, loss) of a search of `game` valued `value` for its side to move."""
        return split(value, 0.0 if proven else self.draw(game), proven=proven)
