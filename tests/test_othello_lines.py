"""Othello's groups are the board's lines (`grid.line_slots`): every row, column and diagonal,
its members the points by what they hold. The geometry, the members of real positions, and a
network that pools over them in torch and through its ONNX file in the engine's Evaluator."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import trained_like_net

from saz.engine.evaluator import Evaluator
from saz.engine.games.base import BLACK, WHITE
from saz.engine.games.grid import LINE_DIRECTIONS, line_slots
from saz.engine.games.othello import Othello
from saz.engine.graph import encode, layout
from saz.tools.train.checkpoint import Checkpoint
from saz.tools.train.export import export_checkpoint
from saz.tools.train.learner import Learner, LearnerConfig
from saz.tools.train.model import PolicyValueNet, collate, net_config_for
from saz.tools.train.positions import PositionBatch

F = Othello.num_features()
R = len(Othello.group_roles)


@pytest.mark.parametrize(("width", "height"), [(8, 8), (4, 6), (10, 4)])
def test_each_slot_is_one_whole_line_of_the_board(width: int, height: int) -> None:
    table = line_slots(width, height)
    lines = height + width + 2 * (width + height - 1)
    assert table.shape == (width * height, 4) and table.dtype == np.int32
    assert sorted(set(table.reshape(-1).tolist())) == list(range(lines))
    assert (np.diff(table, axis=1) > 0).all()  # a point's slots ascend along its row
    for column, (dx, dy) in enumerate(LINE_DIRECTIONS):
        for slot in np.unique(table[:, column]):
            points = np.flatnonzero(table[:, column] == slot)
            x, y = points % width, points // width
            # The points of a slot are one step apart along the direction, start to end of
            # the board, so the line is whole: nothing before its first or after its last.
            assert (np.diff(x) == dx).all() and (np.diff(y) == dy).all()
            for (px, py), step in (((x[0], y[0]), -1), ((x[-1], y[-1]), 1)):
                nx, ny = px + step * dx, py + step * dy
                assert not (0 <= nx < width and 0 <= ny < height)
    assert not table.flags.writeable


def test_the_members_of_a_position_are_its_lines_by_what_each_point_holds() -> None:
    game = Othello(8)
    game.play(game.legal_moves()[0])  # White to move: "own" is White's
    members = layout(8, 8, Othello).group_members(encode([game]))[0]
    assert members.shape == (64, 4)
    board = game.board
    want_role = np.where(board == WHITE, 0, np.where(board == BLACK, 1, 2))
    np.testing.assert_array_equal(members % R, np.repeat(want_role[:, None], 4, axis=1))
    np.testing.assert_array_equal(members // R, line_slots(8, 8))
    assert (board != 0).sum() == 5 and (members[:, 0] % R == 1).sum() == 4  # Black's four discs


def _othello_positions(rng: np.random.Generator, count: int, size: int) -> np.ndarray:
    """Encoded positions of random games on a size x size board, some plies in."""
    games = []
    for _ in range(count):
        game = Othello(size)
        for _ in range(int(rng.integers(0, 3 * size))):
            moves = game.legal_moves()
            if game.is_over() or len(moves) == 0:
                break
            game.play(int(rng.choice(moves)))
        games.append(game)
    return encode(games)


def _lines_net(seed: int = 0) -> PolicyValueNet:
    """A trained-like Othello network with line groups whose maps are not small."""
    return trained_like_net(F, hidden=16, layers=3, heads=True, seed=seed, group_roles=R)


def test_the_onnx_file_pools_over_the_lines_as_the_torch_network(tmp_path: Path) -> None:
    """`saz export`'s own function (its parity check included), then the engine's Evaluator on
    real positions at the trained board and a larger one, against torch-geometric; the lines
    change what the network computes."""
    net = _lines_net()
    path = tmp_path / "othello-lines.onnx"
    card = export_checkpoint(Checkpoint.of(net, Othello, {}), path)
    assert card.inputs == ("x", "nbr", "hub", "group_members", "mask")
    evaluator = Evaluator(path, device="cpu")
    rng = np.random.default_rng(3)
    for size in (8, 12):
        lay = layout(size, size, Othello)
        x = _othello_positions(rng, 4, size)
        log_policy, value, _, _ = evaluator.run_aux(x, lay)
        with torch.inference_mode():
            want = net(*collate(list(x), [lay] * 4, groups=True))
            plain = PolicyValueNet(replace(net.config, group_roles=0))
            state = {k: v for k, v in net.state_dict().items() if not k.startswith("groups.")}
            plain.load_state_dict(state)
            without = plain.eval()(*collate(list(x), [layout(size, size)] * 4))
        np.testing.assert_allclose(log_policy.reshape(-1), want.log_policy.numpy(), atol=1e-4)
        np.testing.assert_allclose(value, want.value.numpy(), atol=1e-4)
        assert np.abs(want.value.numpy() - without.value.numpy()).max() > 1e-3


def test_a_learner_step_trains_the_line_maps() -> None:
    torch.manual_seed(0)
    net = PolicyValueNet(net_config_for(Othello, hidden=8, layers=2, groups=True))
    assert net.config.group_roles == R
    learner = Learner(net, LearnerConfig(batch_size=8, optimizer="adam"), Othello)
    rng = np.random.default_rng(7)
    batches = []
    for size in (6, 8):
        lay = layout(size, size, Othello)
        x = _othello_positions(rng, 4, size)
        policy = rng.random((4, lay.num_nodes)).astype(np.float32)
        batches.append(PositionBatch.pack(size, size, x, policy / policy.sum(1, keepdims=True),
                                          rng.choice([-1.0, 1.0], 4).astype(np.float32)))
    before = [lin.weight.detach().clone() for lin in net.groups]
    assert all(np.isfinite(learner.train_step(batches)))
    assert all(not torch.equal(b, lin.weight) for b, lin in zip(before, net.groups, strict=True))
