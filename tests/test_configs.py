"""The shipped training configs (tools/train/configs/G.toml, what `saz train --game G` reads) are
the recipes of the shipped models: each equals, key by key, the config its model's card says the
run was trained under (`training.config` in models/G.json). Chess's has no shipped model yet:
it is only checked to load and to name sizes the game admits."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from saz.engine.games import new_game
from saz.tools.train.config import CONFIGS_DIR, TrainConfig

MODELS = Path(__file__).parents[1] / "models"


@pytest.mark.parametrize("game", ["go", "gomoku", "othello"])
def test_the_config_is_the_shipped_models_recipe(game: str) -> None:
    card = json.loads((MODELS / f"{game}.json").read_text(encoding="utf-8"))
    shipped = TrainConfig.from_toml(card["training"]["config"])
    config = TrainConfig.load(CONFIGS_DIR / f"{game}.toml")
    assert config == shipped
    # and the card's own summary of the run agrees with it
    assert all(card["network"][key] == value for key, value in config.network.items())
    assert [f"{w}x{h}" for w, h in config.selfplay.sizes] == card["training"]["board_sizes"]
    assert config.selfplay.visits == card["training"]["visits"]


@pytest.mark.parametrize("game", ["go", "gomoku", "othello", "chess"])
def test_every_size_of_the_config_is_one_the_game_admits(game: str) -> None:
    config = TrainConfig.load(CONFIGS_DIR / f"{game}.toml")
    for width, height in config.selfplay.sizes + config.evaluation.sizes:
        new_game(game, width, height, **config.rules)


def test_the_configs_are_the_games_and_no_more() -> None:
    assert sorted(p.name for p in CONFIGS_DIR.glob("*.toml")) == [
        "chess.toml", "go.toml", "gomoku.toml", "othello.toml"]
