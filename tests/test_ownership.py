"""Ownership and score: the games' final owners, dead stones, and what analysis and scoring show.

The network side is checked with a stand-in whose "ownership head" reads the stones themselves
(own +1, opponent -1, empty 0 from the side to move's view), so that a hand-made position has an
obviously owned corner and every step after it, the side-to-move view, the PV averaging and
KataGo's printing order, can be checked point by point.
"""
from __future__ import annotations

import re
import sys
import threading

import numpy as np
import pytest

from saz.engine.engine import Engine, EngineConfig
from saz.engine.games import new_game
from saz.engine.games.base import BLACK, WHITE
from saz.engine.games.go import Go
from saz.engine.games.othello import Othello
from saz.engine.graph import GraphLayout
from saz.engine.search.mcts import MCTS, MoveInfo
from saz.engine.search.ownership import Estimate, OwnershipEstimator
from saz.protocol.gtp_analysis import kata_info, lz_info, parse_analysis, sabaki_info
from saz.protocol.gtp_client import GtpClient
from saz.protocol.gtp_commands import Command, GtpEngine, GtpError
from saz.protocol.vertex import GoVertices, GtpValueError

SAZ_GTP = [sys.executable, "-m", "saz.engine.cli", "gtp"]
OWN, OPPONENT = Go.feature_names.index("own"), Go.feature_names.index("opponent")

#: 9x9, Black owns the top-left corner, White the bottom-right one.
CORNERS = """
X X . . . . . . .
X . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . O
. . . . . . . O O
"""


class StoneNet:
    """A stand-in network with both heads: uniform priors, value 0, ownership = the stones from
    the side to move's view, score = their sum."""

    has_ownership = True
    has_score = True

    def __init__(self) -> None:
        self.rows = 0

    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        b, n = x.shape[:2]
        return np.full((b, n), -np.log(n), np.float32), np.zeros(b, np.float32)

    def run_aux(self, x: np.ndarray, layout: GraphLayout, mask: np.ndarray | None = None):
        log_policy, value = self.run(x, layout, mask)
        self.rows += len(x)
        ownership = (x[:, :, OWN] - x[:, :, OPPONENT]).astype(np.float32)
        ownership[:, -1] = 0.0
        return log_policy, value, ownership, ownership.sum(axis=1)


def stone_engine(**config) -> Engine:
    engine = Engine(EngineConfig(game="go", visits=16, **config))
    engine._searches["go"] = MCTS(StoneNet())  # type: ignore[arg-type]
    return engine


# -- the games' own count ---------------------------------------------------------------------------
def test_go_ownership_is_the_tromp_taylor_area_point_by_point() -> None:
    game = Go.from_diagram("""
        . X . O .
        X X . O .
        . . . O O
        . . . . .
        . . . . .
    """, komi=0.5)
    owners = game.ownership().reshape(5, 5)
    assert owners[0].tolist() == [BLACK, BLACK, 0, WHITE, WHITE]
    assert owners[1].tolist() == [BLACK, BLACK, 0, WHITE, WHITE]
    assert owners[2].tolist() == [0, 0, 0, WHITE, WHITE]  # the open area reaches both colours
    assert (owners == BLACK).sum() == game.area(BLACK) == 4
    assert (owners == WHITE).sum() == game.area(WHITE) == 6


def test_othello_ownership_is_the_discs() -> None:
    game = Othello(8)
    game.play(game.point(3, 2))  # d3 flips d4
    owners = game.ownership()
    assert np.array_equal(owners, game.board) and owners.dtype == np.int8
    assert (owners == BLACK).sum() == 4 and (owners == WHITE).sum() == 1


def test_gomoku_has_no_ownership() -> None:
    assert new_game("gomoku", 9).ownership() is None


# -- dead stones and the final score ------------------------------------------------------------
DEAD_WHITE_STONE = """
. X . O .
. X . O .
O X . O .
. X . O .
. X . O .
"""


def test_a_chain_the_ownership_gives_away_is_dead_and_its_points_change_hands() -> None:
    game = Go.from_diagram(DEAD_WHITE_STONE, komi=0.5)
    ownership = np.tile(np.array([1.0, 1.0, 0.0, -1.0, -1.0]), 5)  # Black's view
    assert game.dead_stones(ownership) == [10]  # the white stone at the left edge
    assert game.score() == 5 - 11 - 0.5  # as it stands, the A column reaches both colours
    assert game.score_without(game.dead_stones(ownership)) == 10 - 10 - 0.5
    assert game.score_without([]) == game.score()


def test_a_chain_lives_or_dies_whole() -> None:
    game = Go.from_diagram(DEAD_WHITE_STONE, komi=0.5)
    ownership = np.tile(np.array([1.0, 1.0, 0.0, -1.0, -1.0]), 5)
    ownership[1 + 5 * 4] = -0.9  # one stone of the black wall in doubt; its chain holds it
    assert game.dead_stones(ownership) == [10]
    with pytest.raises(ValueError, match="does not fit"):
        game.dead_stones(np.zeros(9))


# -- the estimate --------------------------------------------------------------------------------------
def test_the_estimate_is_from_the_side_to_move_and_in_point_order() -> None:
    estimator = OwnershipEstimator(StoneNet(), depth=0)  # type: ignore[arg-type]
    for to_move in (BLACK, WHITE):
        game = Go.from_diagram(CORNERS, to_move=to_move)
        estimate = estimator.estimate(game, [])
        expected = game.board.astype(np.float32) * to_move
        assert np.array_equal(estimate.ownership, expected)
        assert estimate.root_score == float(expected.sum())
        assert np.array_equal(estimator.ownership(game), game.board)  # Black's view


def test_score_leads_average_the_scores_along_each_pv() -> None:
    net = StoneNet()
    estimator = OwnershipEstimator(net, depth=2)  # type: ignore[arg-type]
    game = Go.from_diagram(CORNERS)  # Black 3 stones, White 3: even
    center, edge = game.point(4, 4), game.point(0, 4)
    moves = [MoveInfo(center, 10, 0.0, 0.5, 0.0, (center, edge)),
             MoveInfo(edge, 5, 0.0, 0.5, 0.0, (edge,))]
    estimate = estimator.estimate(game, moves)
    # After E5 Black leads by a stone; after White's A5 it is even again: mean 0.5.
    assert estimate.score_leads == {center: 0.5, edge: 1.0}
    rows = net.rows
    estimator.estimate(game, moves)
    assert net.rows == rows  # a repeated snapshot is answered from the cache


def test_kata_info_prints_score_leads_and_ownership_after_the_moves() -> None:
    vertices = GoVertices(9, 9)
    game = Go.from_diagram(CORNERS)
    info = MoveInfo(game.point(4, 4), 7, 0.2, 0.3, 0.1, (game.point(4, 4),))
    from saz.engine.search.mcts import SearchResult, SearchStats

    result = SearchResult(info.move, 0.2, 7, (info,), SearchStats(), num_nodes=82)
    ownership = np.linspace(-1, 1, 81).astype(np.float32)
    line = kata_info(result, vertices, None, Estimate(ownership, {info.move: 2.5}, 1.0))
    assert "scoreMean 2.5 scoreStdev 0 scoreLead 2.5 scoreSelfplay 2.5" in line
    head, _, tail = line.partition(" ownership ")
    assert head.startswith("info move E5 ") and "pv E5" in head
    assert [float(v) for v in tail.split()] == pytest.approx(ownership.tolist(), abs=1e-6)
    assert "ownership" not in lz_info(result, vertices, None, Estimate(ownership))
    assert "scoreLead 0 " in kata_info(result, vertices, None, None)


def test_sabakis_analyze_is_leelas_format_with_the_score_lead() -> None:
    """Sabaki picks `analyze` before kata-analyze and reads its winrate as an integer: the
    lines keep Leela's fields and gain scoreLead (before the PV, which runs to the line's end)
    only where the network has a score head."""
    vertices = GoVertices(9, 9)
    game = Go.from_diagram(CORNERS)
    info = MoveInfo(game.point(4, 4), 7, 0.2, 0.3, 0.1, (game.point(4, 4), game.point(5, 5)))
    from saz.engine.search.mcts import SearchResult, SearchStats

    result = SearchResult(info.move, 0.2, 7, (info,), SearchStats(), num_nodes=82)
    line = sabaki_info(result, vertices, None, Estimate(None, {info.move: -3.25}, 1.0))
    assert line == ("info move E5 visits 7 winrate 6000 prior 3000 lcb 5500 order 0 "
                    "scoreLead -3.25 pv E5 F4")
    assert sabaki_info(result, vertices, None, None) == lz_info(result, vertices, None)


def test_ownership_true_and_false_parse_and_anything_else_is_refused() -> None:
    vertices = GoVertices(9, 9)
    assert parse_analysis(["b", "50", "ownership", "true"], vertices, kata=True).ownership
    assert not parse_analysis(["ownership", "false"], vertices, kata=True).ownership
    with pytest.raises(GtpValueError, match="true or false"):
        parse_analysis(["ownership", "yes"], vertices, kata=True)
    with pytest.raises(GtpValueError, match="unknown or unsupported"):
        parse_analysis(["ownership", "true"], vertices, kata=False)


# -- through GTP ----------------------------------------------------------------------------------
def _run(commands: GtpEngine, line: str):
    name, *args = line.split()
    return commands.execute(Command(None, name, tuple(args)))


def _kata_snapshot(commands: GtpEngine, line: str, snapshots: int = 2) -> list[str]:
    """The lines a kata-analyze streams until `snapshots` of them have come."""
    streamed = _run(commands, line)
    lines: list[str] = []
    enough = threading.Event()

    def emit(text: str) -> None:
        lines.append(text)
        if len(lines) >= snapshots:
            enough.set()

    streamed.start(emit)
    assert enough.wait(30)
    streamed.finish()
    return lines


def test_analyze_streams_score_leads_from_the_heads() -> None:
    commands = GtpEngine(stone_engine())
    _run(commands, "boardsize 9")
    _run(commands, "play b A9")
    lines = _kata_snapshot(commands, "analyze w 10")
    assert all(re.search(r"winrate \d+ .* scoreLead -?[\d.]+ pv ", line) for line in lines)
    assert "ownership" not in lines[-1]


def test_kata_analyze_ownership_follows_katago_order_on_an_owned_corner() -> None:
    commands = GtpEngine(stone_engine())
    _run(commands, "boardsize 9")
    for black, white in (("A9", "J1"), ("B9", "H1"), ("A8", "J2")):
        _run(commands, f"play b {black}")
        _run(commands, f"play w {white}")
    # White played last: Black to move, and KataGo prints Black's view.
    snapshot = _kata_snapshot(commands, "kata-analyze b 10 ownership true")[-1]
    values = [float(v) for v in snapshot.partition(" ownership ")[2].split()]
    assert len(values) == 81 and all(-1 <= v <= 1 for v in values)
    a9, j9, a1, j1 = values[0], values[8], values[72], values[80]
    assert a9 > 0.5 and j1 < -0.5  # A9 first, row by row down to J1 last
    assert abs(j9) < 0.5 and abs(a1) < 0.5
    # For White the same map, negated.
    snapshot = _kata_snapshot(commands, "kata-analyze w 10 ownership true")[-1]
    values = [float(v) for v in snapshot.partition(" ownership ")[2].split()]
    assert values[0] < -0.5 and values[80] > 0.5


def test_final_status_and_score_take_the_dead_stones_off() -> None:
    commands = GtpEngine(stone_engine())
    _run(commands, "boardsize 5")
    _run(commands, "komi 0.5")
    game = Go.from_diagram(DEAD_WHITE_STONE, komi=0.5)
    commands.engine.replace_game(game)
    # The stand-in sees every stone as owned by its colour: nothing is dead, all alive.
    assert _run(commands, "final_status_list dead") == ""
    assert len(_run(commands, "final_status_list alive").split()) == 11
    assert _run(commands, "final_score") == f"W+{abs(game.score()):g}"


def test_ownership_true_is_refused_without_the_head(tiny_model) -> None:
    with GtpClient([*SAZ_GTP, "--model", str(tiny_model("go").path), "--size", "9"]) as saz:
        reply = saz.send("kata-analyze b 50 ownership true", timeout=30)
        assert not reply.ok and "no ownership head" in reply.text
        assert saz.command("final_status_list dead") == ""


@pytest.mark.parametrize("size", [9, 19])
def test_a_network_with_the_heads_streams_ownership_per_point(tiny_model, size: int) -> None:
    model = tiny_model("go", heads=True)
    with GtpClient([*SAZ_GTP, "--model", str(model.path), "--size", str(size)]) as saz:
        saz.command("play b d4")
        assert saz.begin("kata-analyze B 50 ownership true", timeout=30).ok
        line = saz.read_line(timeout=30)
        saz.interrupt()
        while saz.read_line(timeout=30):
            pass
        head, _, tail = line.partition(" ownership ")
        assert re.search(r"scoreLead -?\d", head)
        values = [float(v) for v in tail.split()]
        assert len(values) == size * size and all(-1 <= v <= 1 for v in values)
        score = saz.command("final_score")
        assert re.fullmatch(r"[BW]\+\d+(\.\d+)?|0", score)


def test_a_stand_in_without_heads_gives_no_estimate() -> None:
    engine = Engine(EngineConfig(game="go", visits=8))

    class Plain:
        has_ownership = has_score = False

        def run(self, x, layout, mask=None):
            b, n = x.shape[:2]
            return np.full((b, n), -np.log(n), np.float32), np.zeros(b, np.float32)

    engine._searches["go"] = MCTS(Plain())  # type: ignore[arg-type]
    assert engine.estimator() is None and engine.final_ownership() is None
    commands = GtpEngine(engine)
    with pytest.raises(GtpError, match="no ownership head"):
        commands.execute(Command(None, "kata-analyze", ("b", "10", "ownership", "true")))
