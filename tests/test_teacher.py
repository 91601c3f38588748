"""Learning from a teacher's games: records into positions (`teacher.py`) and `saz distill`,
which fits a run's network to them as the run's next generation."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from saz.engine.games import BLACK, WHITE, new_game
from saz.protocol.sgf import parse_sgf
from saz.tools.train.teacher import game_positions, teacher_positions
from tests.test_train import TINY_CONFIG

#: Black makes five on the top row of a 7x7 board; the first two moves were a random opening.
#: Moves: B a1 (aa), W a2 (ab), B b1, W b2, B c1, W c2, B d1, W d2, B e1: five.
FIVE = ("(;FF[4]GM[4]SZ[7]RU[freestyle]PB[teacher]PW[pupil]RE[B+]"
        "GC[B+ by five; the first 2 moves are the opening]"
        ";B[aa];W[ab];B[ba];W[bb];B[ca];W[cb];B[da];W[db];B[ea])")


def _records(folder: Path, *games: str) -> Path:
    (folder / "games").mkdir(parents=True)
    for number, text in enumerate(games, start=1):
        (folder / "games" / f"{number:04d}.sgf").write_text(text, encoding="utf-8")
    return folder


def test_a_teachers_positions_are_its_moves_after_the_opening_with_the_outcome() -> None:
    sgf = parse_sgf(FIVE)
    batch = game_positions(sgf, {"rule": "freestyle"})
    assert batch is not None and batch.size == (7, 7)
    # Plies 3..9 (b1 .. e1): the two opening moves are nobody's choice.
    played = [n.move.move for n in sgf.nodes if n.move is not None][2:]
    assert len(batch) == len(played) == 7
    assert list(batch.policy.astype(np.float32).argmax(axis=1)) == played
    assert np.all(batch.policy.astype(np.float32).sum(axis=1) == 1.0)
    # Black won: +1 where Black was to move (b1, c1, d1, e1), -1 where White was.
    assert list(batch.value) == [1, -1, 1, -1, 1, -1, 1]
    # The features are the position before each move, as the engine encodes it.
    game = new_game("gomoku", 7, 7, rule="freestyle")
    for move in [n.move.move for n in sgf.nodes if n.move is not None][:4]:
        game.play(move)
    x = np.empty((game.num_nodes, game.num_features()), np.float32)
    game.encode(x)
    assert np.array_equal(batch.features(slice(2, 3))[0], x)


def test_only_the_named_teachers_moves_are_learned() -> None:
    batch = game_positions(parse_sgf(FIVE), {"rule": "freestyle"}, ["pupil"])
    assert batch is not None
    assert list(batch.value) == [-1, -1, -1]  # White's three moves after the opening, lost


def test_a_game_the_rules_did_not_end_teaches_nothing() -> None:
    resigned = FIVE.replace(";B[ea])", ")").replace("RE[B+]", "RE[B+R]")
    assert game_positions(parse_sgf(resigned), {"rule": "freestyle"}) is None
    # A record that goes on past the five is not a game of these rules.
    past_end = FIVE.replace(";B[ea])", ";B[ea];W[ec])")
    assert game_positions(parse_sgf(past_end), {"rule": "freestyle"}) is None


def test_records_are_split_by_whole_games_and_checked_for_their_game(tmp_path: Path) -> None:
    resigned = FIVE.replace(";B[ea])", ")")
    folder = _records(tmp_path / "m", FIVE, FIVE, resigned, FIVE, FIVE)
    taken = teacher_positions([folder], "gomoku", {"rule": "freestyle"}, holdout_every=2)
    assert (taken.games, taken.unfinished) == (4, 1)
    assert taken.positions == 2 * 7 and sum(len(b) for b in taken.held_out) == 2 * 7
    go = _records(tmp_path / "go", "(;GM[1]SZ[9];B[ee];W[cc])")
    with pytest.raises(ValueError, match="record of go, not gomoku"):
        teacher_positions([go], "gomoku", {})


def test_distill_commits_the_fitted_network_as_the_runs_next_generation(tmp_path: Path) -> None:
    from saz.tools.train.checkpoint import load_checkpoint
    from saz.tools.train.distill import main as distill
    from saz.tools.train.run import main as train

    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    run = tmp_path / "run"
    assert train(["--game", "gomoku", "--config", str(config), "--out", str(run),
                  "--generations", "1"]) == 0
    before = load_checkpoint(run / "checkpoint.pt")
    folder = _records(tmp_path / "teacher", *[FIVE] * 6)
    assert distill(["--out", str(run), "--records", str(folder), "--player", "teacher",
                    "--epochs", "3", "--lr", "0.01", "--holdout-every", "3"]) == 0

    after = load_checkpoint(run / "checkpoint.pt")
    record = after.training
    assert record["generations"] == 2
    assert record["steps"] > before.training["steps"]
    assert record["games"] == before.training["games"]  # self-play games only
    assert record["commands"][-1].startswith("saz distill --out")
    teacher = record["sessions"][-1]["teacher"]
    assert teacher["games"] == 6 and teacher["positions"] == 4 * 4
    assert teacher["held_out_positions"] == 2 * 4
    assert teacher["positions_by_size"] == {"7x7": 16}
    # The same few moves over and over: the held-out games (the same moves) are learned.
    assert teacher["held_out_after"]["policy_loss"] < teacher["held_out_before"]["policy_loss"]
    assert (run / "models" / "gen_00002.onnx").is_file()
    rows = (run / "metrics.csv").read_text().splitlines()
    assert rows[-1].split(",")[0] == "2"
    # The run carries on with self-play from the distilled network.
    assert train(["--out", str(run), "--resume", "--generations", "3"]) == 0
    assert load_checkpoint(run / "checkpoint.pt").training["generations"] == 3


def test_distill_refuses_records_without_the_teachers_moves(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    from saz.tools.train.distill import main as distill
    from saz.tools.train.run import main as train

    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    run = tmp_path / "run"
    assert train(["--game", "gomoku", "--config", str(config), "--out", str(run),
                  "--generations", "1"]) == 0
    folder = _records(tmp_path / "teacher", FIVE)
    assert distill(["--out", str(run), "--records", str(folder), "--player", "nobody"]) == 1
    assert "no gomoku positions of nobody" in capsys.readouterr().err
    assert distill(["--out", str(tmp_path / "none"), "--records", str(folder)]) == 1
    assert "holds no run to resume" in capsys.readouterr().err
