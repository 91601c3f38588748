"""The network's groups (Go's chains): the torch-geometric pooling and the export twin's (on the
group members, `member_incidences`) compute one function, zero maps the lattice network's, the
ONNX file in the engine's Evaluator the torch network's, and a run grows a trained lattice
network its groups unchanged."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import trained_like_net

from saz.engine.evaluator import Evaluator
from saz.engine.games.go import Go
from saz.engine.graph import GraphLayout, layout
from saz.tools.train.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from saz.tools.train.config import ConfigError, TrainConfig
from saz.tools.train.export import export_checkpoint
from saz.tools.train.learner import Learner, LearnerConfig
from saz.tools.train.model import (
    FIRST_GROUPS_WEIGHT,
    NetConfig,
    PolicyValueGroupsExport,
    PolicyValueNet,
    PolicyValueNetExport,
    add_groups,
    collate,
    deepen,
    member_incidences,
    net_config_for,
    widen_inputs,
)
from saz.tools.train.positions import PositionBatch

F = Go.num_features()
R = len(Go.group_roles)


def go_positions(rng: np.random.Generator, batch: int, lay: GraphLayout) -> np.ndarray:
    """Random `[batch, N, F]` Go features whose planes 0 and 1 are a board (empty 40%, each
    colour 30%: chains of every length), the other planes random bits."""
    x = rng.integers(0, 2, (batch, lay.num_nodes, F)).astype(np.float32)
    stones = rng.choice(3, size=(batch, lay.num_nodes), p=[0.4, 0.3, 0.3])
    x[:, :, 0], x[:, :, 1] = stones == 1, stones == 2
    x[:, -1, :2] = 0.0
    return x


def grouped_net(*, hidden: int = 16, layers: int = 3, heads: bool = True,
                seed: int = 0) -> PolicyValueNet:
    """A trained-like Go network with groups whose maps are not small (so that a wrong pooling
    shows), in eval mode."""
    return trained_like_net(F, hidden=hidden, layers=layers, heads=heads, seed=seed,
                            group_roles=R)


def pyg(net: PolicyValueNet, xs: list[np.ndarray], lays: list[GraphLayout],
        masks: list[np.ndarray] | None = None) -> tuple[torch.Tensor, ...]:
    with torch.inference_mode():
        out = net(*collate(xs, lays, masks, groups=bool(net.config.group_roles)))
    return tuple(t for t in out if t is not None)


def twin(net: PolicyValueNet, x: np.ndarray, lay: GraphLayout,
         masks: np.ndarray | None = None) -> tuple[torch.Tensor, ...]:
    export = PolicyValueNetExport.from_net(net)
    kept = np.ones(x.shape[:2], np.float32) if masks is None else masks.astype(np.float32)
    tables = (torch.tensor(lay.nbr), torch.tensor(lay.hub))
    groups = (torch.from_numpy(lay.group_members(x)),) if net.config.group_roles else ()
    with torch.inference_mode():
        return export(torch.from_numpy(x), *tables, *groups, torch.from_numpy(kept))


# -- the config ------------------------------------------------------------------------------------
def test_groups_come_from_the_game_and_round_trip() -> None:
    config = net_config_for(Go, hidden=8, layers=2, groups=True)
    assert config.group_roles == R == 2
    assert NetConfig.from_dict(config.to_dict()) == config
    assert net_config_for(Go, hidden=8).group_roles == 0
    legacy = {k: v for k, v in config.to_dict().items() if k != "group_roles"}
    assert NetConfig.from_dict(legacy).group_roles == 0  # checkpoints before groups
    from saz.engine.games import game_class

    assert net_config_for(game_class("gomoku"), groups=True).group_roles == 4
    with pytest.raises(ValueError, match="no groups"):
        net_config_for(game_class("chess"), groups=True)
    with pytest.raises(ValueError, match="group roles from the game"):
        net_config_for(Go, group_roles=2)
    for bad in (-1, True, 1.5):
        with pytest.raises(ValueError, match="group_roles"):
            NetConfig(num_features=4, group_roles=bad)
    with pytest.raises(ValueError, match="no groups"):
        NetConfig(num_features=4, kind="moves", group_roles=2)


def test_the_config_file_and_a_session_ask_for_groups() -> None:
    config = TrainConfig.from_toml("[network]\nhidden = 8\ngroups = true\n")
    assert config.network["groups"] is True
    with pytest.raises(ConfigError, match="groups must be true or false"):
        TrainConfig.from_toml("[network]\ngroups = 2\n")
    with pytest.raises(ConfigError, match="group_roles comes from the game"):
        TrainConfig.from_toml("[network]\ngroup_roles = 2\n")
    grown = TrainConfig.from_toml("[network]\nhidden = 8\n").with_overrides(
        ["network.groups=true"])
    assert grown.network == {"hidden": 8, "groups": True}
    with pytest.raises(ConfigError, match=r"network\.groups"):
        TrainConfig().with_overrides(["network.hidden=16"])  # the other keys are the recipe


def test_parameters_exist_only_with_groups() -> None:
    lattice = PolicyValueNet(net_config_for(Go, hidden=64, layers=6))
    grouped = PolicyValueNet(net_config_for(Go, hidden=64, layers=6, groups=True))
    extra = grouped.num_parameters() - lattice.num_parameters()
    assert extra == R * F * F + 5 * R * 64 * 64
    assert not any(name.startswith("groups.") for name in lattice.state_dict())
    assert grouped.groups[0].weight.shape == (F, R * F) and grouped.groups[0].bias is None


# -- the two forms ---------------------------------------------------------------------------------
def test_incidences_follow_the_group_members() -> None:
    """collate's incidences are each point's group_members entries, with groups numbered
    position after position, for positions of two sizes interleaved."""
    rng = np.random.default_rng(0)
    lays = [layout(5, 5, Go), layout(4, 3, Go), layout(5, 5, Go)]
    xs = [go_positions(rng, 1, lay)[0] for lay in lays]
    batch = collate(xs, lays, groups=True)
    assert batch.groups is not None
    node, group, role = batch.groups.numpy()
    start_node = start_group = 0
    for x, lay in zip(xs, lays, strict=True):
        members = lay.group_members(x[None])[0]
        want = sorted((start_node + p, start_group + e // R, e % R)
                      for p, row in enumerate(members) for e in row if e >= 0)
        mine = (node >= start_node) & (node < start_node + lay.num_nodes)
        assert sorted(zip(node[mine], group[mine], role[mine])) == want
        start_node += lay.num_nodes
        start_group += int(members.max()) // R + 1
    assert batch.num_groups == start_group
    with pytest.raises(ValueError, match="layouts of one game with groups"):
        collate(xs, [layout(5, 5), layout(4, 3), layout(5, 5)], groups=True)


@pytest.mark.parametrize("size", [(9, 9), (7, 5)])
def test_the_twin_computes_the_training_network(size: tuple[int, int]) -> None:
    """Every output of the export twin equals the torch-geometric network's, on a batch of
    one size, with every node kept and with random masks."""
    net = grouped_net()
    lay = layout(*size, Go)
    rng = np.random.default_rng(1)
    x = go_positions(rng, 4, lay)
    for masks in (None, rng.random((4, lay.num_nodes)) < 0.7):
        want = pyg(net, list(x), [lay] * 4, None if masks is None else list(masks))
        got = twin(net, x, lay, masks)
        policy = want[0].numpy().reshape(4, -1)
        np.testing.assert_allclose(got[0].numpy(), policy, atol=1e-4, rtol=1e-5)
        np.testing.assert_allclose(got[1].numpy(), want[1].numpy(), atol=1e-5)
        owner = torch.tanh(want[2]).numpy().reshape(4, -1)
        if masks is not None:
            owner = owner * np.concatenate([masks[:, :-1], np.ones((4, 1), bool)], axis=1)
        np.testing.assert_allclose(got[2].numpy(), owner, atol=1e-5)
        np.testing.assert_allclose(got[3].numpy(), want[3].numpy(), atol=1e-4, rtol=1e-5)


def test_the_twin_reads_the_members_as_collate_reads_them() -> None:
    """`member_incidences` of a batch's members are collate's incidences, up to the numbering
    of the groups (b*G + slot: G the batch's most), and a batch without a group (empty boards)
    has none."""
    lay = layout(7, 5, Go)
    x = go_positions(np.random.default_rng(6), 3, lay)
    members = lay.group_members(x)
    ours, num_groups = member_incidences(torch.from_numpy(members), R)
    batch = collate(list(x), [lay] * 3, groups=True)
    assert batch.groups is not None
    slots = int(members.max()) // R + 1
    assert num_groups == 3 * slots
    node, group, role = batch.groups.numpy()
    counts = [int(row.max()) // R + 1 for row in members]
    renumber = np.concatenate([b * slots + np.arange(c) for b, c in enumerate(counts)])
    want = sorted(zip(node, renumber[group], role))
    assert sorted(map(tuple, ours.numpy().T)) == want
    empty = np.zeros_like(x)
    none, zero = member_incidences(torch.from_numpy(lay.group_members(empty)), R)
    assert none.shape == (3, 0) and zero == 0
    net = grouped_net(heads=False)
    got = twin(net, empty, lay)
    want_empty = pyg(net, list(empty), [lay] * 3)
    np.testing.assert_allclose(got[0].numpy(), want_empty[0].numpy().reshape(3, -1), atol=1e-4,
                               rtol=1e-5)


def test_a_mixed_size_batch_gives_each_position_its_own_groups() -> None:
    net = grouped_net(heads=False)
    rng = np.random.default_rng(2)
    lays = [layout(9, 9, Go), layout(5, 5, Go), layout(13, 13, Go)]
    xs = [go_positions(rng, 1, lay)[0] for lay in lays]
    masks = [np.ones(lays[0].num_nodes, bool), rng.random(lays[1].num_nodes) < 0.6,
             rng.random(lays[2].num_nodes) < 0.6]
    log_policy, value = pyg(net, xs, lays, masks)
    start = 0
    for i, lay in enumerate(lays):
        got = twin(net, xs[i][None], lay, masks[i][None])
        np.testing.assert_allclose(log_policy[start:start + lay.num_nodes].numpy(),
                                   got[0][0].numpy(), atol=1e-4, rtol=1e-5)
        np.testing.assert_allclose(value[i].item(), got[1][0].item(), atol=1e-5)
        start += lay.num_nodes


def test_groups_change_what_the_network_computes() -> None:
    """Not a no-op: the same weights without the groups maps give other outputs."""
    net = grouped_net(heads=False)
    lattice = PolicyValueNet(replace(net.config, group_roles=0))
    lattice.load_state_dict({k: v for k, v in net.state_dict().items()
                             if not k.startswith("groups.")})
    lattice.eval()
    lay = layout(9, 9, Go)
    x = go_positions(np.random.default_rng(3), 2, lay)
    assert not torch.allclose(pyg(net, list(x), [lay] * 2)[0], pyg(lattice, list(x), [lay] * 2)[0],
                              atol=1e-3)


def test_the_networks_refuse_a_batch_of_the_other_kind() -> None:
    net = grouped_net()
    lay = layout(5, 5, Go)
    x = go_positions(np.random.default_rng(4), 1, lay)
    with pytest.raises(ValueError, match="collate its batch with groups=True"):
        net(*collate(list(x), [lay]))
    lattice = trained_like_net(F)
    with pytest.raises(ValueError, match="has no groups"):
        lattice(*collate(list(x), [lay], groups=True))
    assert isinstance(PolicyValueNetExport.from_net(net), PolicyValueGroupsExport)
    assert type(PolicyValueNetExport.from_net(lattice)) is PolicyValueNetExport


# -- growth ----------------------------------------------------------------------------------------
def test_zero_groups_maps_compute_the_lattice_network_and_learn() -> None:
    """`add_groups`: every output equals the lattice network's, masked or not, in both forms;
    the zero maps get a gradient."""
    lattice = trained_like_net(F, hidden=16, heads=True)
    state, config = add_groups(lattice.state_dict(), lattice.config, R)
    assert config == replace(lattice.config, group_roles=R)
    grown = PolicyValueNet(config)
    grown.load_state_dict(state)
    grown.eval()
    rng = np.random.default_rng(5)
    lays = [layout(9, 9, Go), layout(6, 6, Go)]
    xs = [go_positions(rng, 1, lay)[0] for lay in lays]
    for masks in (None, [rng.random(lay.num_nodes) < 0.6 for lay in lays]):
        want = pyg(lattice, xs, lays, masks)
        got = pyg(grown, xs, lays, masks)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-6)
    lay = lays[0]
    x = go_positions(rng, 3, lay)
    for w, g in zip(twin(lattice, x, lay), twin(grown, x, lay), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-6)
    grown.train()
    out = grown(*collate(xs, lays, groups=True))
    (out.value.sum() + out.log_policy.max()).backward()
    assert all(lin.weight.grad.abs().sum() > 0 for lin in grown.groups)
    with pytest.raises(ValueError, match="already"):
        add_groups(state, config, R)


def test_a_grouped_network_deepens_and_widens_unchanged() -> None:
    net = grouped_net(hidden=8, layers=2)
    torch.manual_seed(3)
    deeper = PolicyValueNet(replace(net.config, layers=4))
    deeper.load_state_dict(deepen(net.state_dict(), net.config, deeper.state_dict(),
                                  deeper.config))
    old = F - 4
    narrow = PolicyValueNet(replace(net.config, num_features=old))
    torch.manual_seed(4)
    for p in narrow.parameters():
        torch.nn.init.normal_(p, std=0.3)
    narrow.eval()
    state, config = widen_inputs(narrow.state_dict(), narrow.config, F)
    assert state[FIRST_GROUPS_WEIGHT].shape == (F, R * F)
    wide = PolicyValueNet(config)
    wide.load_state_dict(state)
    rng = np.random.default_rng(6)
    lay = layout(7, 7, Go)
    x = go_positions(rng, 2, lay)
    for w, g in zip(pyg(net, list(x), [lay] * 2), pyg(deeper.eval(), list(x), [lay] * 2),
                    strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-6)
    for w, g in zip(pyg(narrow, list(x[:, :, :old]), [lay] * 2),
                    pyg(wide.eval(), list(x), [lay] * 2), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-5)


# -- export and training ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[PolicyValueNet, Path]:
    """A Go network with groups through `saz export`'s own function (its parity check
    included) into a file the engine opens."""
    net = grouped_net(hidden=16, layers=3)
    out = tmp_path_factory.mktemp("groups") / "go-groups.onnx"
    card = export_checkpoint(Checkpoint.of(net, Go, {}), out)
    assert card.inputs == ("x", "nbr", "hub", "group_members", "mask")
    assert card.network["group_roles"] == R
    return net, out


@pytest.mark.parametrize("size", [9, 13, 19])
def test_the_onnx_file_with_groups_runs_the_torch_network(exported, size: int) -> None:
    """Through the engine's Evaluator, masked and not, with an empty board (no groups) in the
    batch: onnxruntime's scatter-adds compute the torch-geometric network."""
    net, path = exported
    evaluator = Evaluator(path, device="cpu")
    lay = layout(size, size, Go)
    rng = np.random.default_rng(size)
    x = go_positions(rng, 5, lay)
    x[2, :, :2] = 0.0  # an empty board among them
    for masks in (None, rng.random((5, lay.num_nodes)) < 0.7):
        log_policy, value, _, score = evaluator.run_aux(x, lay, masks)
        want = pyg(net, list(x), [lay] * 5, None if masks is None else list(masks))
        np.testing.assert_allclose(log_policy, want[0].numpy().reshape(5, -1), atol=1e-4,
                                   rtol=1e-5)
        np.testing.assert_allclose(value, want[1].numpy(), atol=1e-4)
        np.testing.assert_allclose(score, want[3].numpy(), atol=1e-4, rtol=1e-5)
    # A plain lattice layout (a window cut to a smaller board) gets the game's groups.
    plain = layout(size, size)
    np.testing.assert_allclose(evaluator.run(x, plain)[0], evaluator.run(x, lay)[0], atol=1e-6)


def test_the_torch_runtime_feeds_groups(exported) -> None:
    from saz.tools.train.torch_evaluator import TorchEvaluator, weights_path

    net, path = exported
    save_checkpoint(Checkpoint.of(net, Go, {}), weights_path(path))
    runtime = TorchEvaluator(path, device="cpu")
    evaluator = Evaluator(path, device="cpu")
    lay = layout(9, 9, Go)
    x = go_positions(np.random.default_rng(9), 3, lay)
    for ours, theirs in zip(runtime.run(x, lay), evaluator.run(x, lay), strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-4, rtol=1e-5)


def test_a_learner_step_trains_the_groups_on_mixed_sizes() -> None:
    torch.manual_seed(0)
    net = PolicyValueNet(net_config_for(Go, hidden=8, layers=2, groups=True))
    learner = Learner(net, LearnerConfig(batch_size=8, optimizer="adam"), Go)
    rng = np.random.default_rng(7)
    batches = []
    for size in (5, 7):
        lay = layout(size, size, Go)
        x = go_positions(rng, 4, lay)
        policy = rng.random((4, lay.num_nodes)).astype(np.float32)
        batches.append(PositionBatch.pack(size, size, x, policy / policy.sum(1, keepdims=True),
                                          rng.choice([-1.0, 1.0], 4).astype(np.float32)))
    before = [lin.weight.detach().clone() for lin in net.groups]
    losses = learner.train_step(batches)
    assert all(np.isfinite(losses))
    assert all(not torch.equal(b, lin.weight) for b, lin in zip(before, net.groups, strict=True))
    with pytest.raises(ValueError, match="pass the game"):
        Learner(PolicyValueNet(net.config), LearnerConfig())


RUN_CONFIG = """
seed = 3
[network]
hidden = 8
layers = 2
[selfplay]
sizes = ["5x5"]
games_per_generation = 2
visits = 8
games_in_flight = 2
workers = 1
[learner]
batch_size = 16
samples_per_position = 1.0
threads = 1
[evaluation]
every = 0
"""


def test_a_lattice_run_resumed_with_groups_computes_what_it_did(tmp_path: Path) -> None:
    """`--set network.groups=true` on resuming: the committed generation is exported again with
    its groups, computing what it did (zero maps); the record says so, training moves the maps,
    and later sessions keep the groups without being asked."""
    from saz.tools.train.run import main

    config = tmp_path / "go.toml"
    config.write_text(RUN_CONFIG)
    run = tmp_path / "run"
    assert main(["--game", "go", "--config", str(config), "--out", str(run),
                 "--generations", "1"]) == 0
    model = run / "models" / "gen_00001.onnx"
    before = Evaluator(model, device="cpu")
    lay = layout(9, 9, Go)
    x = go_positions(np.random.default_rng(8), 4, lay)
    want = before.run(x, lay)
    assert "group_members" not in before.card.inputs

    assert main(["--out", str(run), "--resume", "--generations", "1",
                 "--set", "network.groups=true"]) == 0
    after = Evaluator(model, device="cpu")
    assert after.card.inputs == ("x", "nbr", "hub", "group_members", "mask")
    for ours, theirs in zip(after.run(x, lay), want, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-5)
    grown = load_checkpoint(run / "checkpoint.pt")
    assert grown.config.group_roles == R
    assert grown.training["sessions"][-1]["grew_groups"] == [0, R]
    assert all(not grown.state_dict[f"groups.{k}.weight"].any() for k in range(2))

    assert main(["--out", str(run), "--resume", "--generations", "2"]) == 0
    trained = load_checkpoint(run / "checkpoint.pt")
    assert trained.config.group_roles == R and trained.training["generations"] == 2
    assert "grew_groups" not in trained.training["sessions"][-1]
    assert any(trained.state_dict[f"groups.{k}.weight"].any() for k in range(2))
    assert main(["--out", str(run), "--resume", "--generations", "3",
                 "--set", "network.groups=false"]) == 1  # a network keeps its groups
