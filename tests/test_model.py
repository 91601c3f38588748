"""The network (torch-geometric form and export twin), checkpoints, and `saz export`."""
from __future__ import annotations

import copy
from dataclasses import replace
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch

from conftest import TinyModel, trained_like_net
from saz.engine.evaluator import Evaluator, ModelError
from saz.engine.games import game_class
from saz.engine.graph import GraphLayout, layout
from saz.engine.model_card import (
    INPUT_NAMES,
    MASKED_LOG_PROB,
    OPSET,
    OUTPUT_NAMES,
    ModelCard,
    card_path,
)
from saz.tools.train import export as export_module
from saz.tools.train.checkpoint import (
    Checkpoint,
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from saz.tools.train.export import ExportError, check_parity, export_checkpoint
from saz.tools.train.model import (
    NetConfig,
    PolicyValueNet,
    PolicyValueNetExport,
    collate,
    deepen,
    widen_inputs,
)

F = game_class("othello").num_features()  # input width of the torch-only tests (Othello's)


def random_x(rng: np.random.Generator, batch: int, lay: GraphLayout, width: int = F) -> np.ndarray:
    return rng.integers(0, 2, (batch, lay.num_nodes, width)).astype(np.float32)


def random_masks(rng: np.random.Generator, batch: int, lay: GraphLayout) -> np.ndarray:
    return rng.random((batch, lay.num_nodes)) < 0.6


def twin_outputs(net: PolicyValueNet, x: np.ndarray, lay: GraphLayout,
                 masks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    twin = PolicyValueNetExport.from_net(net)
    kept = np.ones(x.shape[:2], np.float32) if masks is None else masks.astype(np.float32)
    with torch.inference_mode():
        log_policy, value = twin(torch.from_numpy(x), torch.tensor(lay.nbr),
                                 torch.tensor(lay.hub), torch.from_numpy(kept))
    return log_policy.numpy(), value.numpy()


def pyg_outputs(net: PolicyValueNet, x: np.ndarray, lay: GraphLayout,
                masks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    with torch.inference_mode():
        log_policy, value, _, _ = net(*collate(list(x), [lay] * len(x),
                                         None if masks is None else list(masks)))
    return log_policy.numpy().reshape(len(x), lay.num_nodes), value.numpy()


# -- NetConfig -------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [{"hidden": 0}, {"layers": -1}, {"num_features": True},
                                 {"dropout": 1.0}, {"hidden": 2.5}])
def test_net_config_rejects_bad_values(bad: dict) -> None:
    name = next(iter(bad))
    with pytest.raises(ValueError, match=f"NetConfig.{name}"):
        NetConfig(**{"num_features": 4, **bad})


def test_net_config_round_trips_and_rejects_unknown_keys() -> None:
    config = NetConfig(num_features=10, hidden=32, layers=4, dropout=0.2)
    assert NetConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="unknown NetConfig key.*width"):
        NetConfig.from_dict({**config.to_dict(), "width": 3})


# -- the two forms ---------------------------------------------------------------------------------
def test_twin_has_the_same_parameters_under_the_same_names() -> None:
    net = trained_like_net(F)
    twin = PolicyValueNetExport.from_net(net)
    assert twin.state_dict().keys() == net.state_dict().keys()
    assert all(torch.equal(a, b) for a, b in zip(twin.state_dict().values(),
                                                  net.state_dict().values(), strict=True))


def test_twin_refuses_a_trained_gin_epsilon() -> None:
    net = trained_like_net(F)
    net.convs[1].eps.fill_(0.25)
    with pytest.raises(ValueError, match="eps"):
        PolicyValueNetExport.from_net(net)


@pytest.mark.parametrize("num_features,hidden", [(F, 16), (16, 16)])  # (16, 16): residual layer 0
def test_mixed_size_batch_matches_the_twin_per_size(num_features: int, hidden: int) -> None:
    """One torch-geometric batch mixing three board sizes (one graph unmasked, two masked) gives
    each graph exactly what the export twin gives for that size alone."""
    net = trained_like_net(num_features, hidden=hidden)
    rng = np.random.default_rng(1)
    lays = [layout(5, 5), layout(9, 9), layout(7, 4)]
    xs = [random_x(rng, 1, lay, num_features)[0] for lay in lays]
    masks = [np.ones(lays[0].num_nodes, bool), random_masks(rng, 1, lays[1])[0],
             random_masks(rng, 1, lays[2])[0]]
    with torch.inference_mode():
        log_policy, value, _, _ = net(*collate(xs, lays, masks))
    start = 0
    for i, lay in enumerate(lays):
        want_policy, want_value = twin_outputs(net, xs[i][None], lay, masks[i][None])
        got = log_policy[start:start + lay.num_nodes].numpy()
        np.testing.assert_allclose(got, want_policy[0], atol=1e-5)
        np.testing.assert_allclose(value[i].item(), want_value[0], atol=1e-6)
        start += lay.num_nodes


def test_a_deepened_network_computes_what_it_grew_from() -> None:
    """Every head of the grown network, masked or not, equals the trained one's; the new layers
    are live (a gradient reaches the columns of fc1 that read them)."""
    trained = trained_like_net(F, layers=2, heads=True)
    torch.manual_seed(7)
    grown = PolicyValueNet(replace(trained.config, layers=5))
    grown.load_state_dict(deepen(trained.state_dict(), trained.config, grown.state_dict(),
                                 grown.config))
    grown.eval()
    rng = np.random.default_rng(4)
    lays = [layout(5, 5), layout(9, 9)]
    xs = [random_x(rng, 1, lay)[0] for lay in lays]
    for masks in (None, [random_masks(rng, 1, lay)[0] for lay in lays]):
        with torch.inference_mode():
            want = trained(*collate(xs, lays, masks))
            got = grown(*collate(xs, lays, masks))
        for w, g in zip(want, got):
            np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-6)
    assert grown.convs[4].nn[0].weight.abs().sum() > 0  # fresh weights, not zeros
    grown.train()
    log_policy, value, _, _ = grown(*collate(xs, lays, None))
    (value.sum() + log_policy.max()).backward()
    assert grown.fc1.weight.grad[:, 2 * trained.config.hidden:].abs().sum() > 0


def test_deepen_refuses_any_other_change() -> None:
    trained = trained_like_net(F, layers=2)
    for config in (replace(trained.config, layers=3, hidden=trained.config.hidden * 2),
                   replace(trained.config, layers=1), trained.config):
        fresh = PolicyValueNet(config).state_dict()
        with pytest.raises(ValueError, match="layers"):
            deepen(trained.state_dict(), trained.config, fresh, config)


def test_a_widened_network_computes_what_it_was_on_the_old_planes() -> None:
    """The game appended planes: the widened network, fed the old planes and anything in the new
    ones, equals the trained one on the old planes; the new columns are live."""
    trained = trained_like_net(F, heads=True)
    state, config = widen_inputs(trained.state_dict(), trained.config, F + 3)
    assert config == replace(trained.config, num_features=F + 3)
    widened = PolicyValueNet(config)
    widened.load_state_dict(state)
    widened.eval()
    rng = np.random.default_rng(5)
    lays = [layout(5, 5), layout(9, 9)]
    xs = [random_x(rng, 1, lay)[0] for lay in lays]
    wide = [np.concatenate([x, rng.integers(0, 2, (x.shape[0], 3)).astype(np.float32)], axis=1)
            for x in xs]
    with torch.inference_mode():
        want = trained(*collate(xs, lays))
        got = widened(*collate(wide, lays))
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-6)
    widened.train()
    log_policy, value, _, _ = widened(*collate(wide, lays))
    (value.sum() + log_policy.max()).backward()
    assert widened.convs[0].nn[0].weight.grad[:, F:].abs().sum() > 0


def test_widen_inputs_refuses_to_narrow_or_to_widen_a_residual_first_layer() -> None:
    trained = trained_like_net(F)
    for width in (F, F - 1):
        with pytest.raises(ValueError, match="only widens"):
            widen_inputs(trained.state_dict(), trained.config, width)
    residual = trained_like_net(16, hidden=16)  # the input is added to the first layer's output
    with pytest.raises(ValueError, match="residual"):
        widen_inputs(residual.state_dict(), residual.config, 20)


def test_policy_is_a_distribution_over_each_graph_and_value_in_range() -> None:
    net = trained_like_net(F)
    rng = np.random.default_rng(2)
    lay = layout(6, 6)
    log_policy, value = pyg_outputs(net, random_x(rng, 4, lay), lay, random_masks(rng, 4, lay))
    np.testing.assert_allclose(np.exp(log_policy).sum(axis=1), 1.0, atol=1e-5)
    assert np.all(np.abs(value) < 1.0)


# -- masks -----------------------------------------------------------------------------------------
def induced_subgraph(x: np.ndarray, lay: GraphLayout, keep: np.ndarray):
    """The graph of the kept nodes only (edges between kept nodes), as a one-graph batch."""
    index = np.full(lay.num_nodes, -1)
    index[keep] = np.arange(keep.sum())
    src, dst = lay.edge_index
    both = keep[src] & keep[dst]
    edges = np.stack([index[src[both]], index[dst[both]]])
    return (torch.from_numpy(x[keep]), torch.from_numpy(edges),
            torch.zeros(int(keep.sum()), dtype=torch.int64), None, 1)


@pytest.mark.parametrize("training", [False, True])
def test_mask_is_the_induced_subgraph(training: bool) -> None:
    """A masked position evaluates exactly as the graph of its kept nodes: dropped nodes send
    nothing, and in training even batch normalisation's statistics never see them."""
    net = trained_like_net(F, dropout=0.0)
    rng = np.random.default_rng(3)
    lay = layout(7, 7)
    x = random_x(rng, 1, lay)[0]
    keep = random_masks(rng, 1, lay)[0]
    keep[-1] = True
    masked_net, sub_net = copy.deepcopy(net), copy.deepcopy(net)
    masked_net.train(training)
    sub_net.train(training)
    with torch.no_grad():
        log_policy, value, _, _ = masked_net(*collate([x], [lay], [keep]))
        sub_policy, sub_value, _, _ = sub_net(*induced_subgraph(x, lay, keep))
    np.testing.assert_allclose(log_policy.numpy()[keep], sub_policy.numpy(), atol=1e-5)
    assert np.all(log_policy.numpy()[~keep] == np.float32(MASKED_LOG_PROB))
    np.testing.assert_allclose(value.numpy(), sub_value.numpy(), atol=1e-6)


@pytest.mark.parametrize("form", ["pyg", "twin"])
def test_masked_nodes_have_no_influence(form: str) -> None:
    net = trained_like_net(F)
    run = pyg_outputs if form == "pyg" else twin_outputs
    rng = np.random.default_rng(4)
    lay = layout(9, 9)
    x = random_x(rng, 3, lay)
    masks = random_masks(rng, 3, lay)
    masks[:, -1] = True
    before = run(net, x, lay, masks)
    x2 = x.copy()
    x2[~masks] = rng.normal(size=(int((~masks).sum()), F)) * 10
    after = run(net, x2, lay, masks)
    np.testing.assert_array_equal(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])
    # ... while the same change without the mask does change the outputs
    assert not np.allclose(run(net, x, lay)[1], run(net, x2, lay)[1])


@pytest.mark.parametrize("form", ["pyg", "twin"])
def test_the_extra_node_is_always_kept(form: str) -> None:
    net = trained_like_net(F)
    run = pyg_outputs if form == "pyg" else twin_outputs
    rng = np.random.default_rng(5)
    lay = layout(5, 5)
    x = random_x(rng, 2, lay)
    masks = random_masks(rng, 2, lay)
    masks[:, -1] = False
    kept = masks.copy()
    kept[:, -1] = True
    dropped_policy, dropped_value = run(net, x, lay, masks)
    kept_policy, kept_value = run(net, x, lay, kept)
    np.testing.assert_array_equal(dropped_policy, kept_policy)
    np.testing.assert_array_equal(dropped_value, kept_value)
    assert np.all(dropped_policy[:, -1] > MASKED_LOG_PROB)


def test_masked_training_loss_has_finite_gradients() -> None:
    """The masked log-probability is finite, so a cross-entropy whose target is 0 on dropped
    nodes stays finite (with -inf it would be NaN)."""
    net = trained_like_net(F)
    net.train()
    rng = np.random.default_rng(6)
    lay = layout(6, 5)
    x = random_x(rng, 4, lay)
    masks = random_masks(rng, 4, lay)
    masks[:, -1] = True
    target = rng.random((4, lay.num_nodes)) * masks
    target /= target.sum(axis=1, keepdims=True)
    log_policy, value, _, _ = net(*collate(list(x), [lay] * 4, list(masks)))
    loss = -(torch.from_numpy(target.reshape(-1)).float() * log_policy).sum() / 4
    loss = loss + (value ** 2).mean()
    loss.backward()
    assert torch.isfinite(loss)
    assert all(torch.isfinite(p.grad).all() for p in net.parameters() if p.grad is not None)


def test_collate_rejects_mismatched_inputs() -> None:
    lay = layout(5, 5)
    x = np.zeros((lay.num_nodes, F), np.float32)
    with pytest.raises(ValueError, match="one layout"):
        collate([x, x], [lay])
    with pytest.raises(ValueError, match="does not fit a layout"):
        collate([x], [layout(6, 6)])


# -- checkpoints -----------------------------------------------------------------------------------
@pytest.fixture
def checkpoint() -> Checkpoint:
    othello = game_class("othello")
    return Checkpoint.of(trained_like_net(othello.num_features()), othello, {"rule": "standard"},
                         training={"generations": 3})


def test_checkpoint_round_trip(tmp_path: Path, checkpoint: Checkpoint) -> None:
    save_checkpoint(checkpoint, tmp_path / "c.pt")
    loaded = load_checkpoint(tmp_path / "c.pt")
    assert (loaded.config, loaded.game, loaded.rules, loaded.feature_names,
            loaded.feature_version, loaded.training) == (
        checkpoint.config, "othello", {"rule": "standard"},
        game_class("othello").feature_names, game_class("othello").feature_version,
        {"generations": 3})
    lay = layout(8, 8)
    x = random_x(np.random.default_rng(7), 2, lay)
    np.testing.assert_array_equal(pyg_outputs(loaded.build_net(), x, lay)[0],
                                  pyg_outputs(checkpoint.build_net(), x, lay)[0])
    assert not (tmp_path / "c.pt.tmp").exists()


def test_checkpoint_rejects_bad_files(tmp_path: Path, checkpoint: Checkpoint) -> None:
    with pytest.raises(CheckpointError, match="not found"):
        load_checkpoint(tmp_path / "missing.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="junk.pt cannot be read"):
        load_checkpoint(tmp_path / "junk.pt")
    torch.save({"weights": torch.zeros(3)}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not a saz checkpoint"):
        load_checkpoint(tmp_path / "other.pt")
    save_checkpoint(checkpoint, tmp_path / "c.pt")
    data = torch.load(tmp_path / "c.pt", weights_only=True)
    torch.save({**data, "format_version": 99}, tmp_path / "future.pt")
    with pytest.raises(CheckpointError, match="format version 99"):
        load_checkpoint(tmp_path / "future.pt")
    del data["game"]
    torch.save(data, tmp_path / "partial.pt")
    with pytest.raises(CheckpointError, match="lacks 'game'"):
        load_checkpoint(tmp_path / "partial.pt")


def test_checkpoint_rejects_weights_of_another_shape(checkpoint: Checkpoint) -> None:
    wider = Checkpoint(config=NetConfig(num_features=F, hidden=48),
                       state_dict=checkpoint.state_dict, game="othello", rules={},
                       feature_version=1, feature_names=checkpoint.feature_names)
    with pytest.raises(CheckpointError, match="do not fit"):
        wider.build_net()
    with pytest.raises(CheckpointError, match=f"takes {F} features but the checkpoint names 4"):
        Checkpoint(config=checkpoint.config, state_dict=checkpoint.state_dict, game="othello",
                   rules={}, feature_version=1, feature_names=("a", "b", "c", "d"))


# -- export ----------------------------------------------------------------------------------------
PARITY_SIZES = [(5, 5), (8, 8), (9, 9), (15, 15), (19, 19), (25, 25), (13, 6)]


@pytest.mark.parametrize("width,height", PARITY_SIZES)
def test_onnx_runtime_matches_torch(tiny_model: Callable[[str], TinyModel], width: int,
                                    height: int) -> None:
    """The exported file in onnxruntime agrees with the torch-geometric network to 1e-5: one
    position alone, and a batch mixing an unmasked position with masked ones."""
    model = tiny_model("go")
    evaluator = Evaluator(model.path, device="cpu")
    lay = layout(width, height)
    rng = np.random.default_rng(width * 100 + height)
    x = random_x(rng, 5, lay, evaluator.num_features)
    masks = random_masks(rng, 5, lay)
    masks[0] = True
    for batch, batch_masks in ((x[:1], None), (x, masks)):
        got_policy, got_value = evaluator.run(batch, lay, batch_masks)
        want_policy, want_value = pyg_outputs(model.net, batch, lay, batch_masks)
        np.testing.assert_allclose(got_policy, want_policy, atol=1e-5, rtol=0)
        np.testing.assert_allclose(got_value, want_value, atol=1e-5, rtol=0)


def test_export_writes_an_opset_18_file_with_dynamic_batch_and_nodes(
        tiny_model: Callable[[str], TinyModel]) -> None:
    model = onnx.load(str(tiny_model("go").path))
    assert [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] == [OPSET]
    assert tuple(i.name for i in model.graph.input) == INPUT_NAMES
    assert tuple(o.name for o in model.graph.output) == OUTPUT_NAMES
    x_dims = [d.dim_param or d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    assert x_dims == ["batch", "nodes", game_class("go").num_features()]
    ops = {node.op_type for node in model.graph.node}
    assert not ops & {"ScatterElements", "ScatterND", "Scatter"}


def test_saz_export_writes_the_card_from_the_checkpoint(
        tiny_model: Callable[[str], TinyModel]) -> None:
    model = tiny_model("go")
    card = ModelCard.load(model.path.with_suffix(".json"))
    go = game_class("go")
    assert card.game == "go" and card.rules == {"test": True}
    assert (card.feature_names, card.feature_version) == (go.feature_names, go.feature_version)
    assert card.network == {**model.checkpoint.config.to_dict(),
                            "parameters": model.net.num_parameters()}
    assert card.training == {"command": "tests/conftest.py"}
    assert card.onnx_bytes == model.path.stat().st_size
    assert sorted(p.name for p in model.path.parent.iterdir()) == [
        "checkpoint.pt", "go.json", "go.onnx"]  # no staging files left behind


def test_saz_export_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      tiny_model: Callable[[str], TinyModel]) -> None:
    assert export_module.main([str(tmp_path / "nothing.pt"), "--out",
                               str(tmp_path / "m.onnx")]) == 1
    assert "nothing.pt not found" in capsys.readouterr().err
    assert export_module.main([str(tiny_model("go").checkpoint_path), "--out",
                               str(tmp_path / "m.bin")]) == 1
    assert "must end in .onnx" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_export_refuses_a_file_that_disagrees_with_torch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        tiny_model: Callable[[str], TinyModel]) -> None:
    """An exported graph that computes something else never ships: here the "export" step
    writes another network's file (same shape, other weights)."""
    model = tiny_model("go")
    other = trained_like_net(game_class("go").num_features(), seed=1)
    assert check_parity(other, model.path) > 1e-2

    def write_the_wrong_file(twin: PolicyValueNetExport, path: Path, game: object) -> None:
        path.write_bytes(model.path.read_bytes())

    monkeypatch.setattr(export_module, "_export_onnx", write_the_wrong_file)
    wrong = Checkpoint.of(other, game_class("go"), {})
    with pytest.raises(ExportError, match="differ by"):
        export_checkpoint(wrong, tmp_path / "go.onnx")
    assert not any(tmp_path.iterdir())


def test_export_accepts_rounding_in_proportion_to_large_outputs(tmp_path: Path) -> None:
    """Float32 errs in proportion to a number's size: a network whose log-policies run to the
    hundreds (a trained Go network's reach -45 on the check's random positions) differs from
    torch by more than 1e-4 absolute, and still exports, since the check is relative there."""
    net = trained_like_net(game_class("go").num_features(), seed=2)
    with torch.no_grad():
        net.policy.weight.mul_(3000.0)
        net.policy.bias.mul_(3000.0)
    card = export_checkpoint(Checkpoint.of(net, game_class("go"), {}), tmp_path / "go.onnx")
    assert card.game == "go" and (tmp_path / "go.onnx").exists()

    evaluator = Evaluator(tmp_path / "go.onnx", device="cpu")
    lay = layout(9, 9)
    x = random_x(np.random.default_rng(0), 3, lay, evaluator.num_features)
    log_policy, _ = evaluator.run(x, lay)
    ours, _ = twin_outputs(net, x, lay)
    assert np.abs(log_policy).max() > 100
    assert np.abs(log_policy - ours).max() > 1e-4  # what the absolute bound refused


# -- the auxiliary heads (ownership, score) ---------------------------------------------------------
@pytest.mark.parametrize("width,height", [(9, 9), (7, 11)])
def test_onnx_ownership_and_score_match_torch(tiny_model: Callable[..., TinyModel], width: int,
                                              height: int) -> None:
    """With the heads, every output agrees between onnxruntime and torch-geometric, masks too:
    ownership is tanh of the per-node logit (0 where masked), score the sum over kept nodes."""
    model = tiny_model("go", heads=True)
    evaluator = Evaluator(model.path, device="cpu")
    assert evaluator.has_ownership and evaluator.has_score
    lay = layout(width, height)
    rng = np.random.default_rng(width)
    x = random_x(rng, 4, lay, evaluator.num_features)
    masks = random_masks(rng, 4, lay)
    for batch_masks in (None, masks):
        log_policy, value, ownership, score = evaluator.run_aux(x, lay, batch_masks)
        with torch.inference_mode():
            want = model.net(*collate(list(x), [lay] * 4,
                                      None if batch_masks is None else list(batch_masks)))
        np.testing.assert_allclose(log_policy.reshape(-1), want.log_policy, atol=1e-5, rtol=0)
        np.testing.assert_allclose(value, want.value, atol=1e-5, rtol=0)
        np.testing.assert_allclose(ownership.reshape(-1), torch.tanh(want.ownership_logit),
                                   atol=1e-5, rtol=0)
        np.testing.assert_allclose(score, want.score, atol=1e-4, rtol=0)
        assert ownership.shape == (4, lay.num_nodes) and np.abs(ownership).max() <= 1
        if batch_masks is not None:
            dropped = ~batch_masks[:, :-1]
            assert np.all(ownership[:, :-1][dropped] == 0)
    # The plain run() still answers two outputs, and the card names all four.
    assert len(evaluator.run(x, lay)) == 2
    assert evaluator.card.outputs == ("log_policy", "value", "ownership", "score")


def test_a_model_without_heads_still_loads_and_reports_none(
        tiny_model: Callable[..., TinyModel]) -> None:
    evaluator = Evaluator(tiny_model("go").path, device="cpu")
    assert not evaluator.has_ownership and not evaluator.has_score
    lay = layout(5, 5)
    x = random_x(np.random.default_rng(0), 2, lay, evaluator.num_features)
    _, _, ownership, score = evaluator.run_aux(x, lay)
    assert ownership is None and score is None


def test_a_card_with_unknown_outputs_is_refused(tiny_model: Callable[..., TinyModel],
                                                tmp_path: Path) -> None:
    model = tiny_model("go", heads=True)
    (tmp_path / "go.onnx").write_bytes(model.path.read_bytes())
    card = ModelCard.load(card_path(model.path))
    replace(card, outputs=("log_policy", "value", "score", "ownership")).save(
        card_path(tmp_path / "go.onnx"))
    with pytest.raises(ModelError, match="outputs"):
        Evaluator(tmp_path / "go.onnx", device="cpu")
