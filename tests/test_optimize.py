"""`saz optimize` (tools/train/optimize.py): the shipped Go model rewritten, opened by the engine.

The int8 model must stay close to float32 on fixed random-play positions, close enough that
quantising the graph layers too (`--int8 all`, value off by 0.2-0.6 on average, the best move
kept in 10-60% of positions) fails every bound; the summed gathers must be exact; and the card
written beside each must describe the new bytes, so a tampered file is still refused.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from saz.engine.evaluator import Evaluator, ModelError, default_model_path
from saz.engine.games import game_class
from saz.engine.graph import encode, layout
from saz.engine.model_card import ModelCard, card_path
from saz.tools.train.optimize import (
    OptimizeError,
    agreement,
    main,
    optimize_model,
    quantize_int8,
    random_positions,
)

GO = default_model_path("go")


@pytest.fixture(scope="module")
def int8_fc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("int8") / "go-int8.onnx"
    optimize_model(GO, out, int8="fc")
    return out


@pytest.mark.parametrize("size", [9, 19])
def test_int8_fc_stays_close_to_float(int8_fc: Path, size: int) -> None:
    reference, candidate = Evaluator(GO, device="cpu"), Evaluator(int8_fc, device="cpu")
    positions = random_positions(game_class("go"), size, 64, np.random.default_rng(size))
    found = agreement(reference, candidate, positions)
    # Measured: value mean 0.016-0.021, max 0.05-0.09, KL 0.003-0.004, best move 92-94%.
    assert found.positions == 64
    assert found.value_mean < 0.05 and found.value_max < 0.2
    assert found.kl_mean < 0.02
    assert found.top1 >= 0.8


def test_int8_fc_card_describes_the_new_file_and_keeps_the_rest(int8_fc: Path) -> None:
    source, card = ModelCard.load(card_path(GO)), ModelCard.load(card_path(int8_fc))
    data = int8_fc.read_bytes()
    card.check_contents(data)
    assert card.onnx_bytes == len(data) != source.onnx_bytes
    assert card.training["optimized"] == {"from_sha256": source.onnx_sha256, "int8": "fc",
                                          "per_channel": True, "sum_gathers": False}
    assert card.strength == {}
    for name in ("game", "rules", "feature_version", "feature_names", "network", "opset",
                 "inputs", "outputs"):
        assert getattr(card, name) == getattr(source, name), name
    model = onnx.load_from_string(data)
    assert sum(node.op_type == "MatMulInteger" for node in model.graph.node) == 2


def test_a_tampered_int8_file_is_refused(int8_fc: Path, tmp_path: Path) -> None:
    copy = tmp_path / "go.onnx"
    data = bytearray(int8_fc.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    card_path(copy).write_text(card_path(int8_fc).read_text())
    with pytest.raises(ModelError, match="SHA-256"):
        Evaluator(copy, device="cpu")


def test_summed_gathers_compute_exactly_the_same(tmp_path: Path) -> None:
    out = tmp_path / "go-sum.onnx"
    optimize_model(GO, out, sum_adds=True)
    before, after = onnx.load(GO).graph.node, onnx.load(out).graph.node
    adds = sum(n.op_type == "Add" for n in before) - sum(n.op_type == "Add" for n in after)
    assert sum(n.op_type == "Sum" for n in after) == 6 and adds == 24  # 6 layers x 5 gathers
    reference, candidate = Evaluator(GO, device="cpu"), Evaluator(out, device="cpu")
    game = game_class("go")
    for size in (9, 19):
        x = encode(random_positions(game, size, 8, np.random.default_rng(size)))
        mask = np.random.default_rng(1).random(x.shape[:2]) < 0.8
        for mask_or_none in (None, mask):
            ours = candidate.run_heads(x, layout(size, size, game), mask_or_none)
            theirs = reference.run_heads(x, layout(size, size, game), mask_or_none)
            for a, b in zip(ours, theirs, strict=True):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_array_equal(a, b)


def test_no_fully_connected_layer_to_quantise() -> None:
    """Chess's network has no fc1/fc2: --int8 fc says so rather than writing a float model."""
    with pytest.raises(OptimizeError, match="no matrix product"):
        quantize_int8(onnx.load(default_model_path("chess")), "fc")


def test_saz_optimize_writes_and_reports(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fast.onnx"
    assert main([str(GO), "--out", str(out), "--sum-gathers", "--positions", "4",
                 "--sizes", "9"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"wrote {out} ({out.stat().st_size} bytes) and {card_path(out)}"
    assert lines[1].startswith("9x9, 4 random positions: value |diff| mean 0.0000 max 0.0000")
    assert json.loads(card_path(out).read_text())["training"]["optimized"]["sum_gathers"]
    assert main([str(GO), "--out", str(tmp_path / "none.onnx")]) == 1
    assert "nothing to do" in capsys.readouterr().err
    assert main([str(out), "--out", str(out), "--sum-gathers"]) == 1
    assert "is the input" in capsys.readouterr().err
    assert not (tmp_path / "none.onnx").exists()
