"""The moves network (`MovePolicyNet`, chess) on synthetic tables of the plan's shapes: one
network on every board of the family, a policy over moves whose index is from * P + to and the
promo table's underpromotions, a win/draw/loss value, and masks as the lattice network has them."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from saz.engine.model_card import MASKED_LOG_PROB
from saz.tools.train.model import MovePolicyNet, NetConfig, build_net

#: Relations of the chess graph: 8 ray directions, knight jumps, the extra node.
RELATIONS = 10
FEATURES = 22
DIRECTIONS = ((0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1))
KNIGHT = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))


def tables(width: int, height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`nbr [P, R*D]`, `hub [1, N]` and `promo [3W, 2]` as the plan defines them (rays slot k at
    distance k+1, knight jumps, the extra node in slot 0 of the last relation; padding N)."""
    p = width * height
    n = p + 1
    d = max(max(width, height) - 1, 8)
    nbr = np.full((p, RELATIONS * d), n, np.int64)
    for s in range(p):
        x, y = s % width, s // width
        for r, (dx, dy) in enumerate(DIRECTIONS):
            for k in range(d):
                xx, yy = x + dx * (k + 1), y + dy * (k + 1)
                if 0 <= xx < width and 0 <= yy < height:
                    nbr[s, r * d + k] = yy * width + xx
        for k, (dx, dy) in enumerate(KNIGHT):
            xx, yy = x + dx, y + dy
            if 0 <= xx < width and 0 <= yy < height:
                nbr[s, 8 * d + k] = yy * width + xx
        nbr[s, 9 * d] = p
    hub = np.ones((1, n), np.float32)
    hub[0, p] = 0.0
    promo = np.full((3 * width, 2), n, np.int64)
    for fx in range(width):
        for step in (-1, 0, 1):
            if 0 <= fx + step < width:
                promo[fx * 3 + step + 1] = (width + fx, fx + step)
    return nbr, hub, promo


def moves_net(hidden: int = 16, layers: int = 3, seed: int = 0,
              dropout: float = 0.0) -> MovePolicyNet:
    """A random moves network whose layer norms are off their identity initialisation."""
    torch.manual_seed(seed)
    net = build_net(NetConfig(num_features=FEATURES, hidden=hidden, layers=layers,
                              dropout=dropout, kind="moves", relations=RELATIONS))
    assert isinstance(net, MovePolicyNet)
    with torch.no_grad():
        for norm in net.norms:
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.2, 0.2)
    return net.eval()


def run(net: MovePolicyNet, x: np.ndarray, width: int, height: int,
        mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nbr, hub, promo = tables(width, height)
    kept = np.ones(x.shape[:2], np.float32) if mask is None else mask.astype(np.float32)
    with torch.inference_mode():
        out = net(torch.from_numpy(x), torch.from_numpy(nbr), torch.from_numpy(hub),
                  torch.from_numpy(promo), torch.from_numpy(kept))
    log_policy, value, wdl = (t.numpy() for t in out)
    return log_policy, value, wdl


def random_x(rng: np.random.Generator, batch: int, width: int, height: int) -> np.ndarray:
    x = (rng.random((batch, width * height + 1, FEATURES)) < 0.2).astype(np.float32)
    x[:, -1] = rng.random((batch, FEATURES))
    return x


def test_config_checks_the_kind() -> None:
    with pytest.raises(ValueError, match="kind"):
        NetConfig(num_features=4, kind="transformer")
    with pytest.raises(ValueError, match="no ownership"):
        NetConfig(num_features=4, kind="moves", relations=10, ownership_head=True)
    config = NetConfig(num_features=4, kind="moves", relations=10)
    assert NetConfig.from_dict(config.to_dict()) == config
    assert NetConfig.from_dict({"num_features": 4}).kind == "lattice"  # checkpoints before it


@pytest.mark.parametrize("size", [(5, 5), (6, 6), (8, 8), (7, 5)])
def test_one_network_plays_every_board_of_the_family(size: tuple[int, int]) -> None:
    """The same weights give a distribution over P*P + 9W moves on every size, a value that is
    p_win - p_loss, and off-board underpromotions masked."""
    width, height = size
    net = moves_net()
    x = random_x(np.random.default_rng(width), 3, width, height)
    log_policy, value, wdl = run(net, x, width, height)
    p = width * height
    assert log_policy.shape == (3, p * p + 9 * width) and value.shape == (3,)
    np.testing.assert_allclose(np.exp(log_policy).sum(1), 1.0, atol=1e-5)
    np.testing.assert_allclose(wdl.sum(1), 1.0, atol=1e-6)
    np.testing.assert_allclose(value, wdl[:, 0] - wdl[:, 2], atol=1e-6)
    promotions = log_policy[:, p * p:].reshape(3, width, 3, 3)  # from_x, direction, piece
    assert np.all(promotions[:, 0, 0] == np.float32(MASKED_LOG_PROB))  # a-file capturing left
    assert np.all(promotions[:, -1, 2] == np.float32(MASKED_LOG_PROB))  # last file right
    assert np.all(promotions[:, 1:, 0] > MASKED_LOG_PROB)
    assert np.all(log_policy[:, :p * p] > MASKED_LOG_PROB)


def test_the_policy_follows_the_squares() -> None:
    """Relabelling the squares (the same graph numbered otherwise) moves each from-to entry to
    the relabelled squares' index from * P + to and leaves the value alone: a move's logit is its
    from- and to-squares', not a position in a flat vector."""
    width = height = 5
    p = width * height
    net = moves_net(seed=1)
    rng = np.random.default_rng(2)
    x = random_x(rng, 2, width, height)
    nbr, hub, promo = tables(width, height)
    perm = rng.permutation(p)  # new square of old square s: perm[s]
    old_of = np.argsort(perm)
    relabel = np.concatenate([perm, [p, p + 1]])  # the extra node and the padding stay
    x2 = x.copy()
    x2[:, :p] = x[:, old_of]
    nbr2 = relabel[nbr[old_of]]
    promo2 = relabel[promo]

    def outputs(xs: np.ndarray, nbr_: np.ndarray, promo_: np.ndarray) -> list[np.ndarray]:
        with torch.inference_mode():
            out = net(torch.from_numpy(xs), torch.from_numpy(nbr_), torch.from_numpy(hub),
                      torch.from_numpy(promo_), torch.ones(xs.shape[:2]))
        return [t.numpy() for t in out]

    log_policy, value, wdl = outputs(x, nbr, promo)
    log_policy2, value2, wdl2 = outputs(x2, nbr2, promo2)
    pairs = log_policy[:, :p * p].reshape(2, p, p)
    pairs2 = log_policy2[:, :p * p].reshape(2, p, p)
    np.testing.assert_allclose(pairs2[:, perm][:, :, perm], pairs, atol=1e-5)
    np.testing.assert_allclose(log_policy2[:, p * p:], log_policy[:, p * p:], atol=1e-5)
    np.testing.assert_allclose(value2, value, atol=1e-6)
    np.testing.assert_allclose(wdl2, wdl, atol=1e-6)


def test_underpromotions_read_their_from_and_to_squares() -> None:
    """An underpromotion entry is its promo row's (from, to) pair: pointing a row at other
    squares changes that row's three logits and no other's relative order."""
    width = height = 6
    p = width * height
    net = moves_net(seed=3)
    x = random_x(np.random.default_rng(3), 1, width, height)
    nbr, hub, promo = tables(width, height)
    swapped = promo.copy()
    swapped[[4, 10]] = promo[[10, 4]]  # two on-board rows trade places

    def promotions(table: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            out = net.predict(torch.from_numpy(x), torch.from_numpy(nbr), torch.from_numpy(hub),
                              torch.from_numpy(table))
        return out.log_policy.numpy()[0, p * p:].reshape(3 * width, 3)

    before, after = promotions(promo), promotions(swapped)
    np.testing.assert_allclose(after[[4, 10]], before[[10, 4]], atol=1e-6)
    np.testing.assert_allclose(np.delete(after, [4, 10], 0), np.delete(before, [4, 10], 0),
                               atol=1e-6)
    # Three pieces, three different queries: knight, bishop and rook logits differ.
    assert len(set(np.round(before[4], 5))) == 3


def test_a_position_is_the_same_alone_or_in_a_batch() -> None:
    net = moves_net(seed=4)
    x = random_x(np.random.default_rng(4), 4, 8, 8)
    together = run(net, x, 8, 8)
    for i in range(4):
        alone = run(net, x[i:i + 1], 8, 8)
        for a, b in zip(alone, together):
            np.testing.assert_allclose(a[0], b[i], atol=1e-5)


def test_masked_squares_send_nothing_and_take_no_moves() -> None:
    net = moves_net(seed=5)
    rng = np.random.default_rng(5)
    width = height = 6
    p = width * height
    x = random_x(rng, 2, width, height)
    mask = rng.random((2, p + 1)) < 0.7
    mask[:, -1] = False  # the extra node is kept whatever the mask says
    before = run(net, x, width, height, mask)
    x2 = x.copy()
    dropped = ~mask
    dropped[:, -1] = False
    x2[dropped] = rng.normal(size=(int(dropped.sum()), FEATURES)) * 10
    after = run(net, x2, width, height, mask)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    pairs = before[0][:, :p * p].reshape(2, p, p)
    off = ~(mask[:, :p, None] & mask[:, None, :p])
    assert np.all(pairs[off] == np.float32(MASKED_LOG_PROB))
    assert np.all(pairs[~off] > MASKED_LOG_PROB)
    np.testing.assert_allclose(np.exp(before[0]).sum(1), 1.0, atol=1e-5)
    # Without the mask the changed squares do change the outputs.
    assert not np.allclose(run(net, x, width, height)[1], run(net, x2, width, height)[1])


def test_the_extra_node_reaches_every_square() -> None:
    """The extra node's features (the move counters, repetitions) reach the moves' logits in
    one layer: it is slot 0 of the last relation."""
    net = moves_net(seed=6, layers=1)
    x = random_x(np.random.default_rng(6), 1, 5, 5)
    x2 = x.copy()
    x2[0, -1] += 1.0
    a, b = run(net, x, 5, 5)[0], run(net, x2, 5, 5)[0]
    assert np.abs(a - b)[0, :625].reshape(25, 25).max(axis=1).min() > 0


def test_training_on_masked_targets_has_finite_gradients() -> None:
    net = moves_net(seed=7, dropout=0.1)
    net.train()
    rng = np.random.default_rng(7)
    width = height = 5
    x = torch.from_numpy(random_x(rng, 3, width, height))
    nbr, hub, promo = (torch.from_numpy(t) for t in tables(width, height))
    out = net.predict(x, nbr, hub, promo)
    target = torch.zeros_like(out.log_policy)
    target[:, [7, 30, 625 + 4]] = 1 / 3  # two from-to moves and an underpromotion
    loss = -(target * out.log_policy).sum() / 3 + torch.nn.functional.cross_entropy(
        out.wdl_logit, torch.tensor([0, 1, 2]))
    loss.backward()
    assert torch.isfinite(loss)
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in net.parameters())


# -- the network of the real chess graph, its growth, its export -----------------------------------
def test_the_game_picks_the_moves_network_and_its_relations() -> None:
    from saz.engine.games import game_class
    from saz.engine.graph import layout
    from saz.tools.train.model import net_config_for, relations_of

    chess = game_class("chess")
    config = net_config_for(chess, hidden=16, layers=2)
    assert (config.kind, config.relations, config.num_features) == (
        "moves", RELATIONS, chess.num_features())
    for size in (5, 6, 8):  # the engine's tables are the ones the tests above use
        lay = layout(size, size, chess)
        for name, table in zip(("nbr", "hub", "promo"), tables(size, size), strict=True):
            assert lay.table(name).shape == table.shape
        assert relations_of(lay.nbr, lay.num_points) == RELATIONS
    for lattice in ("go", "gomoku", "othello"):
        assert net_config_for(game_class(lattice), hidden=16).kind == "lattice"
    with pytest.raises(ValueError, match="kind and relations come from the game"):
        net_config_for(chess, kind="lattice")


def test_a_deepened_or_widened_moves_network_computes_what_it_was() -> None:
    from dataclasses import replace

    from saz.tools.train.model import deepen, widen_inputs

    trained = moves_net(seed=8, layers=2)
    rng = np.random.default_rng(8)
    x = random_x(rng, 2, 6, 6)
    want = run(trained, x, 6, 6)
    grown = build_net(replace(trained.config, layers=4))
    grown.load_state_dict(deepen(trained.state_dict(), trained.config, grown.state_dict(),
                                 grown.config))
    for got, w in zip(run(grown.eval(), x, 6, 6), want, strict=True):
        np.testing.assert_allclose(got, w, atol=1e-5)
    state, config = widen_inputs(trained.state_dict(), trained.config, FEATURES + 2)
    widened = build_net(config)
    widened.load_state_dict(state)
    wide = np.concatenate([x, rng.random((2, x.shape[1], 2)).astype(np.float32)], axis=2)
    for got, w in zip(run(widened.eval(), wide, 6, 6), want, strict=True):
        np.testing.assert_allclose(got, w, atol=1e-5)


@pytest.fixture(scope="module")
def chess_model(tmp_path_factory: pytest.TempPathFactory):
    """A small random chess network exported through `saz export` itself."""
    from saz.engine.games import game_class
    from saz.tools.train.checkpoint import Checkpoint, save_checkpoint
    from saz.tools.train.export import main as export_main
    from saz.tools.train.model import net_config_for

    folder = tmp_path_factory.mktemp("model-chess")
    chess = game_class("chess")
    torch.manual_seed(0)
    net = build_net(net_config_for(chess, hidden=16, layers=2))
    with torch.no_grad():
        for norm in net.norms:
            norm.weight.uniform_(0.5, 1.5)
    checkpoint = Checkpoint.of(net.eval(), chess, {}, training={"command": "test"})
    save_checkpoint(checkpoint, folder / "checkpoint.pt")
    path = folder / "chess.onnx"
    assert export_main([str(folder / "checkpoint.pt"), "--out", str(path)]) == 0
    return path, net


@pytest.mark.parametrize("size", [5, 6, 8])
def test_onnx_chess_matches_torch_on_every_board(chess_model, size: int) -> None:
    """The exported chess network through the engine's Evaluator agrees with torch on every
    output at every board of the family, masks too, and its priors cover the legal moves."""
    from saz.engine.evaluator import Evaluator
    from saz.engine.games import new_game
    from saz.engine.graph import layout_of

    path, net = chess_model
    evaluator = Evaluator(path, device="cpu")
    assert evaluator.card.inputs == ("x", "nbr", "hub", "promo", "mask")
    assert evaluator.card.outputs == ("log_policy", "value", "wdl") and evaluator.has_wdl
    game = new_game("chess", size)
    lay = layout_of(game)
    rng = np.random.default_rng(size)
    x = random_x(rng, 4, size, size)[:, :, :evaluator.num_features]
    masks = rng.random((4, lay.num_nodes)) < 0.8
    for batch_masks in (None, masks):
        heads = evaluator.run_heads(x, lay, batch_masks)
        kept = np.ones(x.shape[:2], np.float32) if batch_masks is None else masks.astype(
            np.float32)
        with torch.inference_mode():
            want = net(torch.from_numpy(x), *(torch.tensor(lay.table(n)) for n in net.TABLES),
                       torch.from_numpy(kept))
        for got, w in zip((heads.log_policy, heads.value, heads.wdl), want, strict=True):
            np.testing.assert_allclose(got, w.numpy(), atol=1e-5, rtol=1e-5)
    priors, values = evaluator.evaluate([game])
    assert len(priors[0]) == len(game.legal_moves()) and abs(priors[0].sum() - 1) < 1e-5
    assert -1 <= values[0] <= 1


def test_the_chess_export_has_no_scatter_and_dynamic_sizes(chess_model) -> None:
    import onnx

    path, _ = chess_model
    model = onnx.load(str(path))
    assert not {n.op_type for n in model.graph.node} & {"ScatterElements", "ScatterND",
                                                        "Scatter"}
    dims = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in model.graph.input}
    assert dims["x"][:2] == ["batch", "nodes"] and all(isinstance(d, str) for d in dims["nbr"])


def test_the_torch_runtime_runs_the_chess_network_as_onnxruntime(chess_model,
                                                                 tmp_path) -> None:
    import shutil

    from saz.engine.evaluator import Evaluator
    from saz.engine.graph import layout
    from saz.engine.games import game_class
    from saz.tools.train.torch_evaluator import TorchEvaluator, weights_path

    path, _ = chess_model
    model = tmp_path / "chess.onnx"
    for source, target in ((path, model), (path.with_suffix(".json"), model.with_suffix(".json")),
                           (path.parent / "checkpoint.pt", weights_path(model))):
        shutil.copyfile(source, target)
    lay = layout(5, 5, game_class("chess"))
    x = random_x(np.random.default_rng(9), 3, 5, 5)[:, :, :game_class("chess").num_features()]
    ours = TorchEvaluator(model, device="cpu").run(x, lay)
    theirs = Evaluator(model, device="cpu").run(x, lay)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)
