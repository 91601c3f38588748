"""`saz average`: the mean of a run's snapshots, checked weight by weight and refused across
networks."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from conftest import trained_like_net
from saz.engine.games import game_class
from saz.engine.model_card import ModelCardError, card_path, file_digest
from saz.tools.train.average import average_checkpoints, average_models, main
from saz.tools.train.checkpoint import (
    Checkpoint,
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from saz.tools.train.export import check_parity, export_checkpoint

OTHELLO = game_class("othello")


def snapshot(seed: int, generation: int) -> Checkpoint:
    net = trained_like_net(OTHELLO.num_features(), seed=seed)
    with torch.no_grad():
        net.bn1.num_batches_tracked.fill_(100 * generation)
    return Checkpoint.of(net, OTHELLO, {"rule": "standard"},
                         training={"generations": generation},
                         optimizer_state={"state": {}, "param_groups": []})


def test_every_weight_is_the_mean_and_the_newest_record_is_kept() -> None:
    snapshots = [snapshot(1, 10), snapshot(2, 20), snapshot(3, 30)]
    averaged = average_checkpoints(snapshots, ["a.pt", "b.pt", "c.pt"])
    for name, tensor in averaged.state_dict.items():
        parts = [s.state_dict[name] for s in snapshots]
        if tensor.is_floating_point():
            torch.testing.assert_close(tensor, sum(parts) / 3, rtol=0, atol=1e-6)
            if not torch.equal(parts[0], parts[-1]):  # (GIN's eps is 0 in every one)
                assert not torch.equal(tensor, parts[-1]), name  # the mean, not a copy
        else:
            assert torch.equal(tensor, parts[-1]), name
    assert averaged.state_dict["bn1.running_var"].min() > 0
    assert averaged.training == {"generations": 30, "averaged": ["a.pt", "b.pt", "c.pt"]}
    assert averaged.optimizer_state is None
    assert (averaged.game, averaged.config) == ("othello", snapshots[-1].config)
    averaged.build_net()  # the weights fit the network


def test_the_mean_of_one_is_itself() -> None:
    one = snapshot(4, 7)
    averaged = average_checkpoints([one])
    assert all(torch.equal(averaged.state_dict[k], v) for k, v in one.state_dict.items())


def test_different_networks_or_games_are_refused() -> None:
    a = snapshot(1, 10)
    deeper = Checkpoint.of(trained_like_net(OTHELLO.num_features(), layers=4), OTHELLO, {})
    with pytest.raises(CheckpointError, match="different networks"):
        average_checkpoints([a, deeper])
    other_game = replace(a, game="gomoku")
    with pytest.raises(CheckpointError, match="different games"):
        average_checkpoints([other_game, a])
    with pytest.raises(CheckpointError, match="nothing to average"):
        average_checkpoints([])


def test_saz_average_writes_a_checkpoint_and_reports_bad_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = [tmp_path / "gen_00010.pt", tmp_path / "gen_00020.pt"]
    for path, seed, generation in zip(paths, (1, 2), (10, 20)):
        save_checkpoint(snapshot(seed, generation), path)
    out = tmp_path / "avg" / "swa.pt"
    assert main([*map(str, paths), "--out", str(out)]) == 0
    assert "the mean of 2 networks of othello" in capsys.readouterr().out
    loaded = load_checkpoint(out)
    assert loaded.training["averaged"] == [str(p) for p in paths]
    assert loaded.optimizer_state is None

    assert main([str(paths[0]), str(tmp_path / "missing.pt"), "--out", str(out)]) == 1
    assert "missing.pt not found" in capsys.readouterr().err
    assert main([*map(str, paths), "--out", str(paths[1])]) == 1
    assert "is one of the inputs" in capsys.readouterr().err


# -- exported models ---------------------------------------------------------------------------
def nudged(checkpoint: Checkpoint, seed: int, scale: float) -> Checkpoint:
    """`checkpoint` with every float weight moved by up to `scale` (a neighbouring generation)."""
    rng = torch.Generator().manual_seed(seed)
    state = {name: (t + scale * (2 * torch.rand(t.shape, generator=rng) - 1)
                    if t.is_floating_point() and not name.endswith(("running_var", "eps"))
                    else t.clone())
             for name, t in checkpoint.state_dict.items()}
    return replace(checkpoint, state_dict=state)


def test_averaged_models_are_the_export_of_the_averaged_checkpoint(tmp_path: Path) -> None:
    """The export folds batch normalisation into the linear layers: for close snapshots the mean
    of the files still computes what the export of the mean checkpoint does."""
    base = snapshot(5, 10)
    snapshots = [nudged(base, seed, 0.01) for seed in (1, 2, 3)]
    paths = [tmp_path / f"gen_{g}.onnx" for g in (1, 2, 3)]
    for s, path in zip(snapshots, paths):
        export_checkpoint(s, path)
    out = tmp_path / "swa.onnx"
    card = average_models(paths, out)
    assert card.training["averaged"] == [str(p) for p in paths]
    assert card.onnx_sha256 == file_digest(out.read_bytes())
    assert check_parity(average_checkpoints(snapshots).build_net(), out) < 1e-4
    # ... and not what any one of them computes
    assert check_parity(snapshots[-1].build_net(), out) > 1e-3


def test_averaging_models_refuses_other_graphs_and_corrupt_files(tmp_path: Path) -> None:
    a, deeper = tmp_path / "a.onnx", tmp_path / "deeper.onnx"
    export_checkpoint(snapshot(1, 10), a)
    net = trained_like_net(OTHELLO.num_features(), layers=4)
    export_checkpoint(Checkpoint.of(net, OTHELLO, {"rule": "standard"}), deeper)
    with pytest.raises(ModelCardError, match="different networks"):
        average_models([a, deeper], tmp_path / "out.onnx")
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(a.read_bytes()[:-10])
    card_path(a).replace(card_path(corrupt))
    with pytest.raises(ModelCardError, match="corrupt.onnx: the file has"):
        average_models([corrupt, deeper], tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()


def test_saz_average_refuses_mixed_kinds(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "a.pt"), str(tmp_path / "b.onnx"),
                 "--out", str(tmp_path / "c.pt")]) == 1
    assert "all checkpoints (.pt) or all models (.onnx)" in capsys.readouterr().err
