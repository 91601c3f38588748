"""The engine facade: position changes, thinking under a clock, pondering, analysis, errors."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from saz.engine.engine import Engine, EngineConfig
from saz.engine.evaluator import ModelError
from saz.engine.games import UnsupportedSizeError
from saz.engine.search.clock import Absolute, CanadianByoyomi, FixedTimePerMove, FixedVisits
from saz.engine.search.mcts import MCTS, SearchLimits
from saz.engine.search.options import SearchOptions


@pytest.fixture
def go_engine(tiny_model) -> Engine:
    return Engine(EngineConfig(game="go", model=tiny_model("go").path, visits=40,
                               search=SearchOptions(batch_size=8)))


def test_genmove_plays_a_legal_move(go_engine: Engine) -> None:
    go_engine.new_game(9)
    result = go_engine.genmove()
    assert go_engine.game.moves == [result.best_move]
    assert 40 <= result.root_visits < 48


def test_think_does_not_play(go_engine: Engine) -> None:
    go_engine.new_game(7)
    go_engine.think()
    assert go_engine.game.moves == []


def test_clock_budget_is_used(tiny_model) -> None:
    engine = Engine(EngineConfig(game="gomoku", model=tiny_model("gomoku").path))
    engine.new_game(9)
    engine.play(engine.game.point(4, 4))  # on the empty board the book answers at once
    engine.set_time_control(Absolute(2.0))
    engine.genmove()
    # Some of the 2 s went to the move, far less than half: a game has dozens of moves.
    assert 1.0 < engine.clock.state.main_left < 2.0


def test_time_that_would_be_lost_is_searched_to_the_end(tiny_model, monkeypatch) -> None:
    """A move whose unused time is lost (a one-stone period, a fixed time per move) searches
    until its budget: stopping once the best move is settled would save nothing."""
    seen: list[SearchLimits] = []
    search = MCTS.search

    def spy(self: MCTS, game, limits: SearchLimits, *args, **kwargs):
        seen.append(limits)
        return search(self, game, limits, *args, **kwargs)

    monkeypatch.setattr(MCTS, "search", spy)
    engine = Engine(EngineConfig(game="go", model=tiny_model("go").path))
    engine.new_game(5)
    for control in (CanadianByoyomi(0, 0.2, 1), FixedTimePerMove(0.2), Absolute(10.0),
                    CanadianByoyomi(0, 2.0, 10)):
        engine.set_time_control(control)
        engine.genmove()
    assert [limits.early_stop for limits in seen] == [False, False, True, True]
    assert all(limits.soft_seconds is not None for limits in seen)


def test_fixed_visits_control(tiny_model) -> None:
    engine = Engine(EngineConfig(game="othello", model=tiny_model("othello").path))
    engine.set_time_control(FixedVisits(30))
    assert 30 <= engine.think().root_visits < 30 + SearchOptions().batch_size


def test_bad_size_leaves_the_game_alone(go_engine: Engine) -> None:
    go_engine.new_game(9)
    go_engine.play(go_engine.game.point(4, 4))
    with pytest.raises(UnsupportedSizeError):
        go_engine.new_game(26)
    assert go_engine.game.width == 9 and len(go_engine.game.moves) == 1


def test_set_rules_keeps_the_moves(go_engine: Engine) -> None:
    go_engine.new_game(9)
    go_engine.play(10)
    go_engine.play(20)
    go_engine.set_rules(komi=0.5)
    assert go_engine.game.moves == [10, 20]
    assert go_engine.game.rules.komi == 0.5


def test_missing_model_is_a_clear_error_and_the_game_goes_on(tmp_path: Path) -> None:
    engine = Engine(EngineConfig(game="gomoku", model=tmp_path / "nope.onnx"))
    engine.play(12)
    with pytest.raises(ModelError, match="nope.onnx"):
        engine.genmove()
    assert engine.game.moves == [12]


def test_the_tree_budget_is_set_between_searches_and_its_fill_read(go_engine: Engine) -> None:
    """UCI's Hash and hashfull, through the facade's public calls."""
    go_engine.new_game(9)
    assert go_engine.tree_permille() is None  # no network loaded yet, no tree
    go_engine.set_tree_bytes(64 << 20)
    assert go_engine.config.search.max_tree_bytes == 64 << 20
    go_engine.think()
    search = go_engine._searcher()
    assert isinstance(search, MCTS) and search.tree_budget == 64 << 20
    full = go_engine.tree_permille()
    assert full is not None and 0 < full <= 1000
    assert full == round(1000 * search.tree_bytes / search.tree_budget)
    go_engine.set_tree_bytes(1 << 20)  # a loaded search takes the new budget at once
    assert search.options.max_tree_bytes == 1 << 20
    with pytest.raises(ValueError):
        go_engine.set_tree_bytes(0)
    assert go_engine.config.search.max_tree_bytes == 1 << 20
    assert Engine(EngineConfig(game="chess", player="random")).tree_permille() is None


def test_the_model_path_is_named_before_anything_loads(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from saz.engine import evaluator

    given = tmp_path / "mine.onnx"
    assert Engine(EngineConfig(game="chess", model=given)).model_path() == given
    assert Engine(EngineConfig(game="chess", player="random")).model_path() is None
    monkeypatch.setattr(evaluator, "MODELS_DIR", tmp_path)
    with pytest.raises(ModelError, match="no shipped chess model"):
        Engine(EngineConfig(game="chess")).model_path()
    (tmp_path / "chess.onnx").write_bytes(b"")
    assert Engine(EngineConfig(game="chess")).model_path() == tmp_path / "chess.onnx"


def test_ponder_runs_until_the_next_command_and_is_reused(tiny_model) -> None:
    engine = Engine(EngineConfig(game="gomoku", model=tiny_model("gomoku").path, visits=30,
                                 ponder=True, search=SearchOptions(batch_size=4)))
    engine.new_game(9)
    engine.genmove()
    assert engine.searching_in_background
    search = engine._searcher()
    tree = search._tree
    deadline = time.monotonic() + 30  # a loaded machine ponders slowly; wait for the visits
    while time.monotonic() < deadline and max((c[1] for c in tree.root_children()),
                                              default=0) <= 30:
        time.sleep(0.05)
    reply, visits, _, _ = max(tree.root_children(), key=lambda c: c[1])
    engine.play(reply)  # halts the ponder
    assert not engine.searching_in_background
    assert visits > 30  # pondering went well past the visit limit of a move
    result = engine.think()
    # The pondered reply's subtree became the root: the move kept its visits.
    assert result.root_visits >= visits and result.stats.playouts < visits


def test_analysis_reports_until_stopped(tiny_model) -> None:
    engine = Engine(EngineConfig(game="othello", model=tiny_model("othello").path))
    snapshots = []
    got_two = threading.Event()

    def report(result) -> None:
        snapshots.append(result)
        if len(snapshots) >= 2:
            got_two.set()

    engine.analyze(report, 0.05)
    assert got_two.wait(10)
    engine.stop()
    engine.halt()
    assert not engine.searching_in_background
    assert snapshots[-1].root_visits >= snapshots[0].root_visits
    assert engine.game.moves == []


def test_a_stop_right_after_analysis_starts_is_not_lost(tiny_model) -> None:
    engine = Engine(EngineConfig(game="othello", model=tiny_model("othello").path))
    engine.load_network()
    for _ in range(20):  # the race is between starting the thread and the search's first batch
        engine.analyze(lambda result: None, 1.0)
        start = time.monotonic()
        engine.halt()
        assert time.monotonic() - start < 2.0
        assert not engine.searching_in_background


def test_a_model_that_fails_to_load_costs_no_clock_time(tmp_path: Path) -> None:
    engine = Engine(EngineConfig(game="gomoku", model=tmp_path / "missing.onnx"))
    engine.set_time_control(Absolute(60.0))
    with pytest.raises(ModelError):
        engine.genmove()
    assert engine.clock.state.main_left == 60.0


# -- chess: moves of two squares, no pass, a win/draw/loss head -----------------------------------
@pytest.fixture
def chess_engine(tmp_path: Path) -> Engine:
    """An engine on a fake chess network (tests/fakes/fake_network.py): uniform policy, value
    0.25, wdl 0.5 0.3 0.2."""
    pytest.importorskip("onnx")
    import numpy as np
    from fakes.fake_network import write_network

    from saz.engine.games import game_class, new_game

    size = new_game("chess", 8).policy_size
    path = write_network(tmp_path / "chess.onnx", game_class("chess"), 8, 8,
                         np.full(size, -np.log(size), np.float32))
    return Engine(EngineConfig(game="chess", model=path, visits=30,
                               search=SearchOptions(batch_size=8)))


def test_a_chess_engine_starts_on_its_default_board_and_plays_legal_moves(
        chess_engine: Engine) -> None:
    assert (chess_engine.game.name, chess_engine.game.width) == ("chess", 8)
    for _ in range(4):  # both colours, twice
        before = chess_engine.game.copy()
        result = chess_engine.genmove()
        assert before.is_legal(result.best_move)
        assert chess_engine.game.moves[-1] == result.best_move
    assert len(chess_engine.game.moves) == 4


def test_the_wdl_of_a_search_keeps_its_value_and_the_networks_draw_rate(
        chess_engine: Engine) -> None:
    root = chess_engine.game.copy()
    result = chess_engine.think()
    wdl = chess_engine.wdl(root, result.value)
    assert wdl is not None and sum(wdl) == pytest.approx(1.0)
    assert wdl[0] - wdl[2] == pytest.approx(result.value, abs=1e-6)
    assert wdl[1] == pytest.approx(0.3, abs=1e-6)
    assert chess_engine.wdl(root, 1.0, proven=True) == (1.0, 0.0, 0.0)
    assert chess_engine.wdl(root, 0.0, proven=True) == (0.0, 1.0, 0.0)


def test_no_wdl_without_the_head_or_the_network(go_engine: Engine) -> None:
    go_engine.new_game(9)
    assert go_engine.wdl(go_engine.game, 0.1) is None
    player = Engine(EngineConfig(game="chess", player="random"))
    assert player.wdl(player.game, 0.1) is None
    result = player.genmove()
    assert player.game.moves == [result.best_move]
    assert result.visit_distribution().shape == (player.game.policy_size,)


def test_a_wdl_split_leaves_the_draw_only_the_room_the_value_leaves() -> None:
    from saz.engine.search.wdl import split

    assert split(0.2, 0.4) == pytest.approx((0.4, 0.4, 0.2))
    assert split(0.9, 0.4) == pytest.approx((0.9, 0.1, 0.0))  # the draw capped at 1 - |v|
    assert split(-1.0, 0.5) == pytest.approx((0.0, 0.0, 1.0))
    assert split(-0.3, 0.9, proven=True) == (0.0, 0.0, 1.0)
