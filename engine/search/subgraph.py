"""Random sub-boards for the paper's subgraph-sampled priors.

A sub-board is an axis-aligned window of the board: its points and the extra node stay in the
graph, everything else is masked out, so the network judges the window as if it were a smaller
board (which is what a model trained on small boards knows best).
"""
from __future__ import annotations

import numpy as np

from saz.engine.search.options import SubgraphSampling


def window_masks(width: int, height: int, count: int, spec: SubgraphSampling,
                 rng: np.random.Generator) -> np.ndarray:
    """`count` node masks `[count, width*height + 1]` (bool, True = keep) of random windows."""
    masks = np.zeros((count, width * height + 1), dtype=bool)
    masks[:, -1] = True  # the extra node is always part of the graph
    view = masks[:, :-1].reshape(count, height, width)
    fractions = rng.uniform(spec.min_fraction, spec.max_fraction, size=count)
    for i, f in enumerate(fractions):
        w = _side(width, f, spec.min_side)
        h = _side(height, f, spec.min_side)
        x0 = int(rng.integers(0, width - w + 1))
        y0 = int(rng.integers(0, height - h + 1))
        view[i, y0:y0 + h, x0:x0 + w] = True
    return masks


def _side(full: int, fraction: float, min_side: int) -> int:
    return max(min(min_side, full), min(full, round(fraction * full)))
