"""Gomoku's groups are line segments: along each row, column and diagonal, for each side, a
maximal run of points the other side has no stone on; members that side's stones and the empty
points. Checked against a plain walk over every line, and through an exported network."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import trained_like_net

from saz.engine.evaluator import Evaluator
from saz.engine.games.gomoku import Gomoku
from saz.engine.games.grid import LINE_DIRECTIONS, line_walks
from saz.engine.graph import encode, layout
from saz.tools.train.checkpoint import Checkpoint
from saz.tools.train.export import export_checkpoint
from saz.tools.train.model import collate

R = len(Gomoku.group_roles)
Group = frozenset[tuple[int, int]]  # (point, role)


def _reference(stones: np.ndarray, width: int, height: int) -> set[Group]:
    """The segments of one board `stones [points]` (1 own, 2 opponent, 0 empty), walking each
    line from its first point: every side's runs between the other side's stones."""
    groups: set[Group] = set()
    for dx, dy in LINE_DIRECTIONS:
        starts = [(x, y) for y in range(height) for x in range(width)
                  if not (0 <= x - dx < width and 0 <= y - dy < height)]
        for x0, y0 in starts:
            line = []
            x, y = x0, y0
            while 0 <= x < width and 0 <= y < height:
                line.append(y * width + x)
                x, y = x + dx, y + dy
            for side, (mine, theirs) in enumerate(((1, 2), (2, 1))):
                run: list[tuple[int, int]] = []
                for p in [*line, None]:
                    if p is None or stones[p] == theirs:
                        if run:
                            groups.add(frozenset(run))
                        run = []
                    else:
                        run.append((p, 2 * side + (0 if stones[p] == mine else 1)))
    return groups


def _groups_of(members: np.ndarray) -> set[Group]:
    """The groups of one position's `group_members [points, K]`, by their members."""
    by_slot: dict[int, set[tuple[int, int]]] = {}
    for p, k in zip(*np.nonzero(members >= 0), strict=True):
        slot, role = divmod(int(members[p, k]), R)
        by_slot.setdefault(slot, set()).add((int(p), role))
    return {frozenset(g) for g in by_slot.values()}


def test_the_walks_follow_each_direction_line_by_line() -> None:
    for (order, begins), (dx, dy) in zip(line_walks(7, 5), LINE_DIRECTIONS, strict=True):
        assert sorted(order.tolist()) == list(range(35))
        for a, b, new in zip(order[:-1], order[1:], begins[1:], strict=True):
            if not new:
                assert (b % 7 - a % 7, b // 7 - a // 7) == (dx, dy)


def test_a_hand_made_row() -> None:
    """Row 0 of a 7x5 board: X X . O . X . (Black, X, to move). Black's segments along it are
    0..2 and 4..6; White's 2..4 (between the X stones) and 6 alone.
    A stone is in its side's four segments, an empty point in eight."""
    game = Gomoku(7, 5)
    for move in (0, 3, 1, 10, 5, 17):
        game.play(move)
    members = layout(7, 5, Gomoku).group_members(encode([game]))[0]
    rows = _groups_of(members)
    assert frozenset({(0, 0), (1, 0), (2, 1)}) in rows
    assert frozenset({(4, 1), (5, 0), (6, 1)}) in rows
    assert frozenset({(2, 3), (3, 2), (4, 3)}) in rows
    assert frozenset({(6, 3)}) in rows
    assert (members[0] >= 0).sum() == 4 and (members[2] >= 0).sum() == 8


@pytest.mark.parametrize(("width", "height"), [(9, 9), (6, 11)])
def test_random_boards_against_the_plain_walk(width: int, height: int) -> None:
    rng = np.random.default_rng(width)
    x = np.zeros((6, width * height + 1, Gomoku.num_features()), np.float32)
    boards = rng.choice(3, size=(6, width * height), p=[0.5, 0.25, 0.25])
    boards[0] = 0  # the empty board
    x[:, :-1, 0], x[:, :-1, 1] = boards == 1, boards == 2
    members = Gomoku.group_members(x, width, height)
    assert members.dtype == np.int32 and members.shape == (6, width * height, 8)
    for b in range(6):
        assert _groups_of(members[b]) == _reference(boards[b], width, height)
        entries = [row[row >= 0] for row in members[b]]
        assert all((np.diff(e) > 0).all() for e in entries)  # ascending, padding last
        assert (members[b][:, :4] >= 0).all()
        slots = np.unique(np.concatenate(entries) // R)
        np.testing.assert_array_equal(slots, np.arange(len(slots)))  # numbered from zero


def test_the_onnx_file_pools_over_the_segments_as_the_torch_network(tmp_path: Path) -> None:
    net = trained_like_net(Gomoku.num_features(), hidden=16, layers=2, seed=4, group_roles=R)
    path = tmp_path / "gomoku-segments.onnx"
    export_checkpoint(Checkpoint.of(net, Gomoku, {}), path)
    evaluator = Evaluator(path, device="cpu")
    rng = np.random.default_rng(0)
    games = []
    for _ in range(3):
        game = Gomoku(15)
        for move in rng.choice(225, size=int(rng.integers(0, 30)), replace=False):
            if game.is_over():
                break
            game.play(int(move))
        games.append(game)
    x = encode(games)
    lay = layout(15, 15, Gomoku)
    log_policy, value = evaluator.run(x, lay)
    with torch.inference_mode():
        want = net(*collate(list(x), [lay] * 3, groups=True))
    np.testing.assert_allclose(log_policy.reshape(-1), want.log_policy.numpy(), atol=1e-4)
    np.testing.assert_allclose(value, want.value.numpy(), atol=1e-4)
