"""The engine's evaluator: loading and validating a model, `run`, `evaluate`, and staying
torch-free."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from conftest import GOMOKU_GEN118, TinyModel
from saz.engine import evaluator as evaluator_module
from saz.engine.evaluator import Evaluator, ModelError, default_model_path
from saz.engine.games import new_game
from saz.engine.graph import GraphLayout, encode, layout
from saz.engine.model_card import MASKED_LOG_PROB, card_path, file_digest
from saz.tools.match.strength import rows

#: Go's feature planes today (the tiny Go model is made for them).
GO_FEATURES = 17


@pytest.fixture
def go_model(tiny_model: Callable[[str], TinyModel]) -> TinyModel:
    return tiny_model("go")


@pytest.fixture
def go_evaluator(go_model: TinyModel) -> Evaluator:
    return Evaluator(go_model.path, device="cpu")


@pytest.fixture
def copied(go_model: TinyModel, tmp_path: Path) -> Path:
    """A private copy of the go model and its card, free to be damaged."""
    path = tmp_path / "copy.onnx"
    shutil.copy(go_model.path, path)
    shutil.copy(card_path(go_model.path), card_path(path))
    return path


def edit_card(model: Path, **changes: object) -> None:
    card = json.loads(card_path(model).read_text())
    card.update(changes)
    card_path(model).write_text(json.dumps(card))


def test_evaluator_never_imports_torch_and_is_quiet(go_model: TinyModel) -> None:
    """In a fresh interpreter: load (device "auto", which tries CUDA first), evaluate, and
    torch is still not imported; onnxruntime's GPU fallback prints nothing."""
    script = (
        "import sys\n"
        "from saz.engine.evaluator import Evaluator\n"
        "from saz.engine.games import new_game\n"
        f"ev = Evaluator({str(go_model.path)!r})\n"
        "priors, values = ev.evaluate([new_game('go', 9)])\n"
        "assert len(priors[0]) == 82 and values.shape == (1,)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torch_geometric')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert done.stderr == ""


def test_attributes(go_evaluator: Evaluator, go_model: TinyModel) -> None:
    assert go_evaluator.provider == "cpu"
    assert go_evaluator.game_name == "go"
    assert go_evaluator.num_features == go_evaluator.input_features == GO_FEATURES
    assert go_evaluator.card.network["hidden"] == go_model.checkpoint.config.hidden
    assert go_evaluator.threads >= 1


def test_run_returns_log_probabilities_and_values(go_evaluator: Evaluator) -> None:
    lay = layout(9, 9)
    x = np.random.default_rng(0).integers(0, 2, (4, lay.num_nodes, GO_FEATURES)).astype(np.float32)
    log_policy, value = go_evaluator.run(x, lay)
    assert log_policy.shape == (4, 82) and log_policy.dtype == np.float32
    assert value.shape == (4,) and value.dtype == np.float32
    np.testing.assert_allclose(np.exp(log_policy).sum(axis=1), 1.0, atol=1e-5)
    assert np.all(np.abs(value) <= 1.0)
    # a non-contiguous float64 batch is converted, not misread
    wide = np.concatenate([x, x], axis=2).astype(np.float64)[:, :, :GO_FEATURES]
    np.testing.assert_array_equal(go_evaluator.run(wide, lay)[0], go_evaluator.run(x, lay)[0])


def test_bool_and_float_masks_agree(go_evaluator: Evaluator) -> None:
    lay = layout(7, 7)
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2, (3, lay.num_nodes, GO_FEATURES)).astype(np.float32)
    mask = rng.random((3, lay.num_nodes)) < 0.5
    with_bool = go_evaluator.run(x, lay, mask)
    for weight in (1.0, 0.25):  # any nonzero value keeps the node
        with_float = go_evaluator.run(x, lay, mask.astype(np.float32) * weight)
        np.testing.assert_array_equal(with_bool[0], with_float[0])
        np.testing.assert_array_equal(with_bool[1], with_float[1])
    dropped = ~mask
    dropped[:, -1] = False
    assert np.all(with_bool[0][dropped] == np.float32(MASKED_LOG_PROB))
    assert not np.allclose(with_bool[1], go_evaluator.run(x, lay)[1])


def test_run_rejects_inputs_of_the_wrong_shape(go_evaluator: Evaluator) -> None:
    lay = layout(9, 9)
    fit = rf"does not fit \[B, 82, {GO_FEATURES}\]"
    with pytest.raises(ValueError, match=fit):
        go_evaluator.run(np.zeros((2, 50, GO_FEATURES), np.float32), lay)
    with pytest.raises(ValueError, match=fit):
        go_evaluator.run(np.zeros((2, 82, 5), np.float32), lay)
    with pytest.raises(ValueError, match="mask of shape"):
        go_evaluator.run(np.zeros((2, 82, GO_FEATURES), np.float32), lay, np.ones((2, 81), bool))


# -- evaluate on real positions --------------------------------------------------------------------
POSITIONS = {
    "go": (9, 9, [40, 41, 30, 81]),  # two stones, then a pass
    "othello": (8, 8, [19, 18]),
    "gomoku": (15, 15, [112, 113, 97]),
}


@pytest.mark.parametrize("game_name", sorted(POSITIONS))
def test_evaluate_gives_priors_over_legal_moves(tiny_model: Callable[[str], TinyModel],
                                                game_name: str) -> None:
    width, height, line = POSITIONS[game_name]
    evaluator = Evaluator(tiny_model(game_name).path, device="cpu", game=game_name)
    start = new_game(game_name, width, height)
    played = new_game(game_name, width, height)
    for move in line:
        played.play(move)
    games = [start, played]
    priors, values = evaluator.evaluate(games)
    log_policy, want_values = evaluator.run(encode(games), layout(width, height))
    np.testing.assert_array_equal(values, want_values)
    for game, p, row in zip(games, priors, log_policy, strict=True):
        legal = game.legal_moves()
        assert p.shape == legal.shape and p.dtype == np.float32
        np.testing.assert_allclose(p.sum(), 1.0, atol=1e-6)
        want = np.exp(row[legal])
        np.testing.assert_allclose(p, want / want.sum(), rtol=1e-5)


def test_evaluate_with_masks_gives_dropped_moves_no_prior(go_evaluator: Evaluator) -> None:
    game = new_game("go", 5)
    mask = np.ones((1, 26), bool)
    mask[0, :10] = False
    priors, _ = go_evaluator.evaluate([game], mask)
    assert np.all(priors[0][:10] == 0.0) and np.all(priors[0][10:] > 0.0)
    np.testing.assert_allclose(priors[0].sum(), 1.0, atol=1e-6)


def test_evaluate_a_finished_game_gives_no_priors(go_evaluator: Evaluator) -> None:
    game = new_game("go", 5)
    game.play(25)
    game.play(25)  # two passes end the game
    assert game.is_over()
    priors, values = go_evaluator.evaluate([game])
    assert priors[0].shape == (0,) and values.shape == (1,)


def test_evaluate_rejects_other_games_and_mixed_sizes(go_evaluator: Evaluator) -> None:
    with pytest.raises(ValueError, match="go model cannot evaluate Othello"):
        go_evaluator.evaluate([new_game("othello", 8)])
    with pytest.raises(ValueError, match="one board size"):
        go_evaluator.evaluate([new_game("go", 9), new_game("go", 7)])
    with pytest.raises(ValueError, match="at least one"):
        go_evaluator.evaluate([])


# -- what a bad model looks like -------------------------------------------------------------------
def test_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"nowhere\.onnx: model file not found"):
        Evaluator(tmp_path / "nowhere.onnx")


def test_missing_card(copied: Path) -> None:
    card_path(copied).unlink()
    with pytest.raises(ModelError, match=r"copy\.onnx: model card .*copy\.json not found"):
        Evaluator(copied)


def test_malformed_cards(copied: Path) -> None:
    card_path(copied).write_text("{ not json")
    with pytest.raises(ModelError, match="copy.onnx: model card .* is not valid JSON"):
        Evaluator(copied)
    card_path(copied).write_text(json.dumps({"game": "go"}))
    with pytest.raises(ModelError, match="missing field.*feature_names"):
        Evaluator(copied)
    card_path(copied).write_text("[1, 2]")
    with pytest.raises(ModelError, match="expected a JSON object"):
        Evaluator(copied)


def test_truncated_model(copied: Path) -> None:
    data = copied.read_bytes()
    copied.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match=f"copy.onnx: the file has {len(data) // 2} bytes but "
                                         f"its card says {len(data)}: truncated"):
        Evaluator(copied)


def test_random_bytes_instead_of_a_model(copied: Path) -> None:
    size = copied.stat().st_size
    copied.write_bytes(np.random.default_rng(0).bytes(size))
    with pytest.raises(ModelError, match="SHA-256 differs from its card's"):
        Evaluator(copied)
    # ... and when the card is rewritten to match the garbage, onnxruntime's refusal is reported
    edit_card(copied, onnx_sha256=file_digest(copied.read_bytes()))
    with pytest.raises(ModelError, match="copy.onnx: onnxruntime cannot load it: "):
        Evaluator(copied)


def test_model_of_another_game(go_model: TinyModel) -> None:
    with pytest.raises(ModelError, match="go.onnx: the model plays go, not othello"):
        Evaluator(go_model.path, game="othello")


@pytest.mark.parametrize("changes,message", [
    ({"feature_version": 4}, "features version 4, but this engine encodes version 3"),
    # version 1's planes are version 3's first ten; a card naming all of them is not version 1
    ({"feature_version": 1}, "trained on the features"),
    ({"feature_version": 2}, "trained on the features"),
    ({"feature_names": ["own", "opponent", "empty", "extra"]}, "trained on the features"),
    ({"opset": 17}, "ONNX opset 17; this engine runs opset 18"),
    ({"inputs": ["x", "edge_index", "batch"]}, "its card states inputs"),
    ({"game": "shogi"}, "unknown game 'shogi'"),
])
def test_card_that_does_not_fit_the_engine(copied: Path, changes: dict, message: str) -> None:
    edit_card(copied, **changes)
    with pytest.raises(ModelError, match=message):
        Evaluator(copied)


def test_onnx_graph_with_other_inputs(copied: Path) -> None:
    """A valid ONNX file whose card is right about its bytes, but whose graph is not a saz
    network."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["y"], ["log_policy"]),
         helper.make_node("ReduceSum", ["y"], ["value"], keepdims=0)],
        "not-saz", [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "N"])],
        [helper.make_tensor_value_info("log_policy", TensorProto.FLOAT, ["B", "N"]),
         helper.make_tensor_value_info("value", TensorProto.FLOAT, ["B"])])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                             ir_version=8).SerializeToString()
    onnx.checker.check_model(onnx.load_from_string(data))
    copied.write_bytes(data)
    edit_card(copied, onnx_bytes=len(data), onnx_sha256=file_digest(data))
    with pytest.raises(ModelError, match=r"the ONNX graph has inputs \['y'\]"):
        Evaluator(copied)


def test_device_cuda_without_a_gpu_is_a_clear_error(go_model: TinyModel) -> None:
    if Evaluator(go_model.path).provider == "cuda":
        pytest.skip("this machine has a usable GPU")
    with pytest.raises(ModelError, match="device 'cuda' was asked for, but onnxruntime cannot "
                                         "use a GPU here"):
        Evaluator(go_model.path, device="cuda")


def test_bad_arguments(go_model: TinyModel) -> None:
    with pytest.raises(ValueError, match="device must be"):
        Evaluator(go_model.path, device="tpu")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threads must be positive"):
        Evaluator(go_model.path, threads=0)


# -- the shipped models ----------------------------------------------------------------------------
def test_default_model_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluator_module, "MODELS_DIR", tmp_path)
    with pytest.raises(ModelError, match=r"no shipped gomoku model: .*gomoku\.onnx does not exist"):
        default_model_path("gomoku")
    with pytest.raises(ModelError, match="unknown game 'shogi'"):
        default_model_path("shogi")
    (tmp_path / "gomoku.onnx").write_bytes(b"")
    assert default_model_path("gomoku") == tmp_path / "gomoku.onnx"


def test_models_dir_is_beside_the_packages() -> None:
    package_root = Path(evaluator_module.__file__).resolve().parents[1]
    assert evaluator_module.MODELS_DIR == package_root / "models"


#: The games whose trained model ships in `models/`, with sizes it was not
#: trained on beside one it was.
SHIPPED = {"gomoku": (9, 15, 20), "othello": (8, 10, 16), "go": (9, 13, 19)}


@pytest.mark.parametrize(("game", "sizes"), SHIPPED.items())
def test_a_shipped_model_loads_with_its_training_record_and_plays_every_size(
        game: str, sizes: tuple[int, ...]) -> None:
    evaluator = Evaluator(default_model_path(game), game=game)
    training = evaluator.card.training
    assert training["generations"] > 0 and training["board_sizes"]
    assert training["command"].startswith("saz train")
    table = rows(evaluator.card)  # its strength table, measured at sizes it never trained on
    assert table and any(row.board not in training["board_sizes"] for row in table)
    for size in sizes:  # trained on small boards, played on large ones
        position = new_game(game, size)
        priors, value = evaluator.evaluate([position])
        assert priors[0].shape == position.legal_moves().shape
        assert abs(float(priors[0].sum()) - 1.0) < 1e-4 and -1.0 <= float(value[0]) <= 1.0


@pytest.mark.parametrize(("version", "planes"), [(1, 10), (2, 14)])
def test_a_network_of_older_features_reads_its_planes_of_the_new_ones(
        tiny_model: Callable[[str], TinyModel], tmp_path: Path, version: int, planes: int) -> None:
    """Go features version 2 appended the line planes to version 1's ten, version 3 the ladder
    planes to version 2's fourteen. An older network (here: a tiny network with its input cut
    back to its planes, its card saying its version) is fed the first planes of the game's
    batch, and answers what onnxruntime answers on those alone."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    from saz.engine.games.go import Go

    source = tiny_model("go").path
    model = onnx.load(source)
    for init in model.graph.initializer:
        if init.name == "convs.0.nn.0.weight":  # the one weight that reads the planes
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init)[:, :planes],
                                                  init.name))
        elif numpy_helper.to_array(init).tolist() == [-1, GO_FEATURES]:  # x to [-1, features]
            init.CopyFrom(numpy_helper.from_array(np.array([-1, planes], np.int64), init.name))
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_value = planes
    del model.graph.value_info[:]
    old = tmp_path / f"v{version}.onnx"
    onnx.save(model, old)
    card = json.loads(card_path(source).read_text())
    card.update(feature_version=version, feature_names=list(Go.feature_names[:planes]),
                onnx_bytes=old.stat().st_size, onnx_sha256=file_digest(old.read_bytes()))
    card_path(old).write_text(json.dumps(card))

    evaluator = Evaluator(old, device="cpu")
    assert (evaluator.num_features, evaluator.input_features) == (planes, GO_FEATURES)
    game = new_game("go", 9)
    for move in (10, 11, 40, 19):  # Black's 10 on two liberties by the corner: a ladder takes it
        game.play(move)
    lay = layout(9, 9)
    x = encode([game])
    assert x.shape[2] == GO_FEATURES and x[0, :, planes:].any()  # the new planes, dropped
    _answers_as_onnxruntime_on_the_first_planes(evaluator, old, x, lay, planes)


def test_a_gomoku_network_of_version_three_reads_its_eleven_planes_of_version_four() -> None:
    """Generation 118 of the Gomoku run (shipped until the shape planes) was trained on Gomoku
    features version 3; the engine encodes version 4, which appended the shape planes, and
    feeds it the first eleven."""
    evaluator = Evaluator(GOMOKU_GEN118, device="cpu")
    assert (evaluator.card.feature_version, evaluator.num_features, evaluator.input_features) == (
        3, 11, 21)
    game = new_game("gomoku", 15)
    for x, y in [(7, 7), (0, 0), (8, 7), (1, 0), (9, 7)]:  # Black's open three, White to move
        game.play(game.point(x, y))
    lay = layout(15, 15)
    x = encode([game])
    assert x.shape[2] == 21 and x[0, :, 11:].any()  # the shape planes are there, and dropped
    _answers_as_onnxruntime_on_the_first_planes(evaluator, GOMOKU_GEN118, x, lay, 11)


def _answers_as_onnxruntime_on_the_first_planes(evaluator: Evaluator, model: Path,
                                                x: np.ndarray, lay: GraphLayout, planes: int) -> None:
    """The evaluator's answer on the game's whole batch `x` is onnxruntime's on the model given
    only the first `planes` planes."""
    import onnxruntime as ort
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    expected = session.run(["log_policy", "value"], {
        "x": np.ascontiguousarray(x[:, :, :planes]), "nbr": lay.nbr, "hub": lay.hub,
        "mask": np.ones((1, lay.num_nodes), np.float32)})
    got = evaluator.run(x, lay)
    np.testing.assert_allclose(got[0], expected[0], atol=1e-6)
    np.testing.assert_allclose(got[1], expected[1], atol=1e-6)


# -- chess: a policy over moves, its own graph, a win/draw/loss head -------------------------------
@pytest.fixture
def chess_net(tmp_path: Path) -> Callable[..., Path]:
    """`chess_net(policy=None, **kw)`: a fake 8x8 chess network (tests/fakes/fake_network.py)
    whose log-policy is `policy` (default: rising with the index, so every entry differs)."""
    pytest.importorskip("onnx")
    from fakes.fake_network import log_softmax, write_network

    from saz.engine.games import game_class

    chess = game_class("chess")
    size = new_game("chess", 8).policy_size

    def make(policy: np.ndarray | None = None, **kwargs: object) -> Path:
        row = log_softmax(np.arange(size) / 500.0) if policy is None else policy
        return write_network(tmp_path / "chess.onnx", chess, 8, 8, row, **kwargs)
    return make


def test_a_chess_network_is_fed_its_tables_and_priors_are_read_at_policy_indices(
        chess_net: Callable[..., Path]) -> None:
    evaluator = Evaluator(chess_net(), device="cpu", game="chess")
    assert evaluator.card.inputs == ("x", "nbr", "hub", "promo", "mask")
    white = new_game("chess", 8)
    black = new_game("chess", 8)
    black.play(black.parse_uci("e2e4"))
    priors, values = evaluator.evaluate([white, black])
    row = np.arange(white.policy_size) / 500.0
    for game, p in zip((white, black), priors, strict=True):
        index = game.policy_indices(game.legal_moves())
        want = np.exp(row[index] - row[index].max())
        np.testing.assert_allclose(p, want / want.sum(), rtol=1e-5)
    # Black's moves are read in Black's frame: its e7e5 where White's e2e4 is.
    e5 = black.parse_uci("e7e5")
    e4 = white.parse_uci("e2e4")
    assert black.policy_indices(np.array([e5]))[0] == white.policy_indices(np.array([e4]))[0]
    np.testing.assert_allclose(values, [0.25, 0.25])


def test_a_wdl_head_reaches_callers_and_the_other_calls_stay_as_they_were(
        chess_net: Callable[..., Path], go_evaluator: Evaluator) -> None:
    from saz.engine.graph import layout_of

    evaluator = Evaluator(chess_net(), device="cpu")
    game = new_game("chess", 8)
    x = encode([game, game, game])
    heads = evaluator.run_heads(x, layout_of(game))
    assert evaluator.has_wdl and heads.wdl is not None and heads.wdl.shape == (3, 3)
    np.testing.assert_allclose(heads.wdl[0], [0.5, 0.3, 0.2])
    assert heads.ownership is None and heads.score is None
    assert heads.log_policy.shape == (3, game.policy_size)
    log_policy, _ = evaluator.run(x, layout_of(game))
    np.testing.assert_array_equal(log_policy, heads.log_policy)
    assert len(evaluator.run_aux(x, layout_of(game))) == 4
    assert not go_evaluator.has_wdl
    go = encode([new_game("go", 9)])
    assert go_evaluator.run_heads(go, layout(9, 9)).wdl is None


def test_a_chess_network_without_its_tables_or_of_the_wrong_width_is_refused(
        chess_net: Callable[..., Path]) -> None:
    with pytest.raises(ModelError, match=r"its card states inputs \['x', 'nbr', 'hub', 'mask'\].*"
                                         r"needs \['x', 'nbr', 'hub', 'promo', 'mask'\]"):
        Evaluator(chess_net(inputs=("x", "nbr", "hub", "mask")), device="cpu")
    nodes_wide = Evaluator(chess_net(np.full(65, -np.log(65), np.float32)), device="cpu")
    with pytest.raises(ModelError, match=r"log_policy has shape \[1, 65\], the contract's is "
                                         r"\[1, 4168\]"):
        nodes_wide.evaluate([new_game("chess", 8)])
    evaluator = Evaluator(chess_net(), device="cpu")
    with pytest.raises(ValueError, match="reads the graph table 'promo'"):
        evaluator.run(encode([new_game("chess", 8)]), layout(8, 8))  # the lattice's layout


def test_the_contract_names_a_games_tables_and_the_optional_heads() -> None:
    from saz.engine.evaluator import game_inputs
    from saz.engine.games import game_class
    from saz.engine.model_card import (
        INPUT_NAMES,
        VALID_OUTPUTS,
        check_outputs,
        input_names,
        output_names,
    )

    assert input_names() == INPUT_NAMES == game_inputs(game_class("go"))
    assert game_inputs(game_class("chess")) == ("x", "nbr", "hub", "promo", "mask")
    assert output_names(ownership=False, score=False, wdl=True) == ("log_policy", "value", "wdl")
    assert output_names(ownership=True, score=True) == ("log_policy", "value", "ownership",
                                                         "score")
    assert len(VALID_OUTPUTS) == 8
    check_outputs({"log_policy": np.zeros((2, 7)), "value": np.zeros(2),
                   "wdl": np.zeros((2, 3))}, 2, 5)
    with pytest.raises(ValueError, match=r"wdl has shape \[2, 2\]"):
        check_outputs({"wdl": np.zeros((2, 2))}, 2, 5)
    with pytest.raises(ValueError, match=r"log_policy has shape \[2, 7\], the contract's is "
                                         r"\[2, 9\]"):
        check_outputs({"log_policy": np.zeros((2, 7))}, 2, 5, policy_size=9)
