"""The Othello endgame solver (`Othello.solve`, `saz solve`) against a plain minimax of the rules.

The reference below is written over the Python `Othello` API only (legal moves, play, undo,
`score()`), with nothing from the solver: no table, no ordering, no shortcut at the last empty
point. It is a plain negamax with alpha-beta, which returns the same value as minimax and is
fast enough for positions with up to 10 empty points.
"""
from __future__ import annotations

import argparse
import io
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from saz.engine import _core
from saz.engine.games import BLACK, WHITE, new_game
from saz.engine.games.capabilities import Solution, Solvable
from saz.engine.games.othello import Othello
from saz.engine.search.mcts import MCTS, SearchLimits
from saz.engine.search.options import SearchOptions, add_search_arguments, search_options
from saz.protocol.gtp_client import GtpClient
from saz.protocol.sgf_writer import format_sgf
from saz.protocol.solve import main as solve_main
from saz.protocol.vertex import vertices_for
from saz.tools.bench.solve import Endgame, parse_endgames, verify


def vertex(move: int, width: int = 4) -> str:
    """The Othello GTP vertex of a move, written out here: column letter, row 1 at the top."""
    y, x = divmod(move, width)
    return f"{'abcdefghijklmnopqrstuvwxyz'[x]}{y + 1}"


def played(game: Othello, moves: str) -> Othello:
    """`game` after the vertices of `moves`."""
    for name in moves.split():
        game.play(game.point("abcdefghijklmnopqrstuvwxyz".index(name[0]), int(name[1:]) - 1))
    return game


# -- the reference ------------------------------------------------------------------------------
def reference(game: Othello, alpha: float = -1000, beta: float = 1000) -> int:
    """The final disc margin under perfect play, from the side to move's view."""
    if game.is_over():
        return int(game.score()) * game.to_move
    best = -1000
    for move in game.legal_moves().tolist():  # the forced pass is listed when it is the move
        game.play(move)
        value = -reference(game, -beta, -max(alpha, best))
        game.undo()
        best = max(best, value)
        if best >= beta:
            break
    return best


def child_values(game: Othello) -> dict[int, int]:
    """Each legal move's exact value for the side to move (empty once the game is over)."""
    values = {}
    for move in game.legal_moves().tolist():
        game.play(move)
        values[move] = -reference(game)
        game.undo()
    return values


def sign(value: int) -> int:
    return (value > 0) - (value < 0)


# -- positions ------------------------------------------------------------------------------------
def empties(game: Othello) -> int:
    return int((game.board == 0).sum())


def by_play(width: int, height: int, left: int, rng: random.Random) -> Othello:
    """A position reached by random play from the start with at most `left` empty points (the
    game may have ended on the way: then it is solved as it stands)."""
    game = Othello(width, height)
    while not game.is_over() and empties(game) > left:
        game.play(rng.choice(game.legal_moves().tolist()))
    return game


def by_setup(width: int, height: int, left: int, rng: random.Random) -> Othello:
    """Random discs on every point but `left` random empty ones, and a random side to move:
    positions play rarely reaches (lopsided boards, forced passes, finished games)."""
    points = list(range(width * height))
    rng.shuffle(points)
    rows = [["."] * width for _ in range(height)]
    for p in points[left:]:
        rows[p // width][p % width] = rng.choice("XXXOOO" if rng.random() < 0.7 else "XXXXXO")
    text = "\n".join("".join(row) for row in rows)
    return Othello.from_diagram(text, to_move=rng.choice((BLACK, WHITE)))


@dataclass(frozen=True)
class Case:
    game: Othello
    origin: str


def cases(count: int, seed: int) -> list[Case]:
    """`count` positions with at most 10 empty points: 8x8 mostly, then 6x6, and a few 4x4,
    10x10 (two 64-bit words in the core) and rectangular ones; by play and by set-up."""
    rng = random.Random(seed)
    sizes = [(8, 8)] * 12 + [(6, 6)] * 4 + [(4, 4), (10, 10), (10, 4), (4, 6)]
    out = []
    for _ in range(count):
        width, height = rng.choice(sizes)
        left = min(rng.choice((1, 2, 3, 4, 5, 6, 7, 8, 8, 9, 9, 10)), width * height - 4)
        if rng.random() < 0.6:
            out.append(Case(by_play(width, height, left, rng), "play"))
        else:
            out.append(Case(by_setup(width, height, left, rng), "setup"))
    return out


def check(case: Case) -> Counter[str]:
    """Solve exactly and win/draw/loss-only; compare with the reference, and check that each
    best move reaches the value it claims. Returns what the case exercised."""
    game = case.game
    values = child_values(game)
    board_before = str(game)
    _core.clear_solve_table()  # win/draw/loss from scratch; the exact solve then reuses it
    wdl = game.solve(exact=False)
    exact = game.solve()
    assert str(game) == board_before, "solving must leave the position as it was"
    assert exact is not None and wdl is not None
    assert exact.exact and not wdl.exact
    if not values:  # the game is over: the margin is the count as it stands
        truth = int(game.score()) * game.to_move
        assert exact == Solution(None, truth, True, exact.nodes)
        assert wdl.move is None and wdl.margin == sign(truth)
        return Counter({"over": 1})
    truth = max(values.values())
    assert exact.move is not None and wdl.move is not None
    assert exact.margin == truth, f"{case.origin}\n{game}\nto move {game.to_move}"
    assert values[exact.move] == truth, "the best move must reach the margin"
    assert wdl.margin == sign(truth)
    assert sign(values[wdl.move]) == wdl.margin, "the move must reach the result"
    seen = Counter({f"{game.width}x{game.height}": 1, case.origin: 1})
    if list(values) == [game.pass_move]:
        seen["pass"] += 1
    if empties(game) >= 7:
        seen["table"] += 1  # deep enough for the solver's table and ordered search
    return seen


# -- agreement with the reference -----------------------------------------------------------------
def test_agrees_with_minimax() -> None:
    """200 positions in the default run; more under `slow` below."""
    seen: Counter[str] = Counter()
    for case in cases(200, seed=16):
        seen += check(case)
    # The sample exercises what it should: each kind of position, several sizes, both origins.
    assert seen["over"] and seen["pass"] and seen["table"] > 40, seen
    assert seen["8x8"] > 80 and seen["6x6"] and seen["10x10"] and seen["setup"] and seen["play"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_minimax_many(seed: int) -> None:
    """1,000 more positions (5 x 200), different seeds from the default run."""
    for case in cases(200, seed=1000 + seed):
        check(case)


def test_known_results() -> None:
    # 4x4 Othello is a White win by 11 discs to 3 (known since the 1990s).
    solution = Othello(4).solve()
    assert solution is not None and solution.margin == -8 and solution.result == -1
    wdl = Othello(4).solve(exact=False)
    assert wdl is not None and wdl.margin == -1
    # A full board is over: nothing to search, the count as it stands.
    full = Othello.from_diagram("XXXX\nXXXX\nXOOO\nOOOO", to_move=WHITE)
    assert full.solve() == Solution(None, -2, True, 1)


def test_forced_pass_is_the_move() -> None:
    # Black has no placement here, White has: Black's best (only) move is the pass.
    game = Othello.from_diagram("""
        O O . O
        O . X .
        O O X X
        O O O O
        """, to_move=BLACK)
    assert game.legal_moves().tolist() == [game.pass_move]
    solution = game.solve()
    assert solution is not None and solution.move == game.pass_move
    assert solution.margin == reference(game)


# -- the node budget ----------------------------------------------------------------------------
def test_budget_runs_out() -> None:
    game = by_play(8, 8, 20, random.Random(3))
    assert empties(game) == 20 and not game.is_over()
    assert game.solve(max_nodes=1000) is None
    assert game.solve(max_nodes=1000, exact=False) is None
    with pytest.raises(ValueError):
        game.solve(max_nodes=0)


def test_an_interrupted_solve_leaves_no_wrong_bounds() -> None:
    # Solves cut short at every budget leave the table consistent: the full solve after them
    # is still exact.
    game = by_play(8, 8, 10, random.Random(5))
    truth = reference(game)
    _core.clear_solve_table()
    for budget in range(1, 400, 7):
        partial = game.solve(max_nodes=budget)
        assert partial is None or partial.margin == truth
    solution = game.solve()
    assert solution is not None and solution.margin == truth


def test_only_othello_has_a_solver() -> None:
    assert isinstance(Othello(4), Solvable)
    assert not isinstance(new_game("go", 5), Solvable)
    assert not isinstance(new_game("gomoku", 7), Solvable)


# -- saz solve ------------------------------------------------------------------------------------
def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        status = solve_main(args)
    except SystemExit as exc:  # argparse's own errors
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_moves(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(["--game", "othello", "--size", "4", "--moves", ""], capsys)
    assert status == 0 and err == ""
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert lines["margin"] == "-8 for black (to move)"
    # The move is a GTP vertex (row 1 at the top) and reaches the margin.
    assert -reference(played(Othello(4), lines["move"].lower())) == -8
    assert int(lines["nodes"]) > 0 and lines["time"].endswith(" s")


def test_cli_diagram(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    game = by_play(8, 8, 9, random.Random(11))
    truth = reference(game)
    color = "black" if game.to_move == BLACK else "white"
    path = tmp_path / "board.txt"
    path.write_text(str(game) + "\n")
    status, out, _ = run_cli(["--game", "othello", str(path), "--to-move", color], capsys)
    assert status == 0 and f"margin: {truth:+d} for {color} (to move)" in out
    # The same diagram on stdin, win/draw/loss only.
    monkeypatch.setattr("sys.stdin", io.StringIO(str(game)))
    status, out, _ = run_cli(["--game", "othello", "--to-move", color, "--wdl"], capsys)
    result = ("loss", "draw", "win")[sign(truth) + 1]
    assert status == 0 and f"result: {result} for {color} (to move)" in out


def test_cli_moves_with_a_forced_pass(capsys: pytest.CaptureFixture[str]) -> None:
    # On 4x4 after b1 c1 d3 a1 Black cannot place a disc: its best move is the pass, and a move
    # list may leave the pass out, as a GTP controller does.
    game = played(Othello(4), "b1 c1 d3 a1")
    assert game.legal_moves().tolist() == [game.pass_move]
    status, out, _ = run_cli(["--game", "othello", "--size", "4", "--moves", "b1 c1 d3 a1"],
                             capsys)
    assert status == 0 and "move: pass\n" in out
    assert f"margin: {reference(game):+d} for black (to move)" in out
    game.play(game.pass_move)
    reply = vertex(game.legal_moves().tolist()[0])
    game.play(game.legal_moves().tolist()[0])
    status, out, err = run_cli(
        ["--game", "othello", "--size", "4", "--moves", f"b1 c1 d3 a1 {reply}"], capsys)
    assert status == 0, err
    assert f"margin: {reference(game):+d} for black (to move)" in out


@pytest.mark.parametrize("args, message", [
    (["--moves", "f5 f5"], "move 2 (f5) is illegal for white"),
    (["--moves", "f5 z9"], "move 2: 'z9' is off the 8x8 board"),
    (["--moves", "f5", "--to-move", "white"], "--to-move applies to a diagram"),
    (["--moves", "f5", "--max-nodes", "0"], "--max-nodes must be at least 1"),
    (["--moves", "f5", "--size", "7"], "even board side"),
    (["/nonexistent/board.txt"], "cannot read /nonexistent/board.txt"),
    (["--size", "x"], "invalid board size"),
])
def test_cli_bad_input(args: list[str], message: str,
                       capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(["--game", "othello", *args], capsys)
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1 and err.startswith("saz solve: "), err


def test_cli_bad_diagram(capsys: pytest.CaptureFixture[str],
                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("X X O\nO Q .\n"))
    status, _, err = run_cli(["--game", "othello"], capsys)
    assert status == 2 and "unknown diagram characters 'Q'" in err and err.count("\n") == 1


def test_cli_budget(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(["--game", "othello", "--moves", "f5 d6", "--max-nodes", "100"],
                               capsys)
    assert status == 1 and out == "" and "not solved within 100 nodes" in err


# -- the solver in the search ---------------------------------------------------------------------
class UniformNet:
    """A stand-in network: uniform priors and a value of 0, and a count of its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def run(self, x: np.ndarray, layout: object, mask: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
        self.calls += 1
        b, n = x.shape[0], x.shape[1]
        return np.full((b, n), -np.log(n), np.float32), np.zeros(b, np.float32)


def test_tree_settles_leaves_near_the_end() -> None:
    game = by_play(8, 8, 9, random.Random(21))
    assert not game.is_over() and empties(game) == 9
    values = child_values(game)
    options = _core.TreeOptions()
    options.solve_empties = 8  # the root's children, not the root
    tree = _core.Tree(options)
    tree.reset(game._core)
    x = np.zeros((64, game.num_nodes, game.num_features()), np.float32)
    leaves, settled, _ = tree.collect(64, 64, x)
    assert (leaves, settled) == (1, 0)  # the root waits for the network
    n = game.num_nodes
    tree.absorb(np.full((1, n), -np.log(n), np.float32), np.zeros(1, np.float32))
    for _ in range(20):
        leaves, settled, _ = tree.collect(64, 64, x)
        assert leaves == 0  # every leaf below the root is settled: the network is never asked
    # Each root move's value is the proven result of that move, from the root's view.
    for move, _visits, value, _prior in tree.root_children():
        assert value == pytest.approx(sign(values[move])), move
    assert tree.validate() == ""
    # Off by default: the same tree asks the network.
    tree = _core.Tree(_core.TreeOptions())
    tree.reset(game._core)
    tree.collect(64, 64, x)
    tree.absorb(np.full((1, n), -np.log(n), np.float32), np.zeros(1, np.float32))
    assert tree.collect(64, 64, x)[0] > 0


def test_search_plays_the_solved_move() -> None:
    game = by_play(8, 8, 10, random.Random(23))
    values = child_values(game)
    truth = max(values.values())
    net = UniformNet()
    search = MCTS(net, SearchOptions(solve_empties=12))
    result = search.search(game, SearchLimits(visits=50))
    assert result.decided_by_rules and net.calls == 0
    assert values[result.best_move] == truth and result.value == sign(truth)
    # Beyond `solve_empties`, or off, the search runs as ever.
    too_far = SearchOptions(solve_empties=9)
    result = MCTS(UniformNet(), too_far).search(game, SearchLimits(visits=50))
    assert not result.decided_by_rules
    result = MCTS(UniformNet(), SearchOptions(solve_empties=0)).search(
        game, SearchLimits(visits=50))
    assert not result.decided_by_rules
    # The default (auto) solves a position this near the end at once, without a clock too.
    net = UniformNet()
    result = MCTS(net).search(game, SearchLimits(visits=50))
    assert result.decided_by_rules and net.calls == 0
    assert values[result.best_move] == truth and result.exact_score == truth


def test_analysis_shows_the_solved_margin_as_the_score() -> None:
    """A move the solver chose is proven, and its exact final margin is the `scoreLead` of
    every analysis format (Leela's winrate then reads 10000, 5000 or 0)."""
    from saz.protocol.gtp_analysis import kata_info, lz_info, sabaki_info
    from saz.protocol.vertex import vertices_for
    game = by_play(8, 8, 10, random.Random(23))
    solution = game.solve()
    assert solution is not None
    margin = solution.margin
    result = MCTS(UniformNet(), SearchOptions(solve_empties=12)).search(
        game, SearchLimits(visits=50))
    assert result.proven and result.exact_score == margin
    vertices = vertices_for("othello", 8, 8)
    for info in (lz_info, sabaki_info, kata_info):
        line = info(result, vertices, None, None)
        assert f"scoreLead {margin:g} " in line, line
    winrate = {1: "10000", 0: "5000", -1: "0"}[int(np.sign(margin))]
    assert f"winrate {winrate} " in lz_info(result, vertices, None, None)


def test_front_ends_take_solve_empties() -> None:
    parser = argparse.ArgumentParser()
    add_search_arguments(parser)
    assert search_options(parser, parser.parse_args([])).solve_empties is None  # auto
    assert search_options(parser, parser.parse_args(["--solve-empties", "auto"])
                          ).solve_empties is None
    assert search_options(parser, parser.parse_args(["--solve-empties", "0"])).solve_empties == 0
    assert search_options(parser, parser.parse_args(["--solve-empties", "14"])).solve_empties == 14
    for bad in ("-1", "sometimes"):
        with pytest.raises(SystemExit):
            search_options(parser, parser.parse_args(["--solve-empties", bad]))


# -- the endgame position set (tests/data/othello-endgames.txt) ----------------------------------
ENDGAMES = Path(__file__).parent / "data" / "othello-endgames.txt"
#: The engine under test, as it ships.
SAZ_GTP = [sys.executable, "-m", "saz.engine.cli", "gtp", "--game", "othello"]
#: Seconds any one reply may take: a 2 s move, or loading the network at the first command, with
#: room for a loaded machine; past it the test fails saying so rather than hanging.
REPLY_TIMEOUT = 60.0


def endgame_set() -> list[Endgame]:
    return parse_endgames(ENDGAMES.read_text())


def test_the_endgame_set_is_what_the_issue_asks() -> None:
    """30 or more 8x8 positions of 10 to 20 empty points, some where the greedy move is wrong."""
    endgames = endgame_set()
    counts = Counter(e.game.num_empty for e in endgames)
    assert len(endgames) >= 30 and set(counts) == set(range(10, 21))
    assert sum(e.greedy_wrong for e in endgames) >= 10
    assert all(len(e.game.legal_moves()) > len(e.optimal) for e in endgames)


def test_the_endgame_set_answers_hold_to_18_empties() -> None:
    """The stored margin and an optimal move are the solver's (a node budget, no clock); to 14
    empty points every stored optimal move is checked, and the others shown worse."""
    for e in endgame_set():
        if e.game.num_empty > 18:
            continue
        solution = e.game.solve(50_000_000, exact=True)
        assert solution is not None
        assert solution.margin == e.margin and solution.move in e.optimal, str(e.game)
        if e.game.num_empty <= 14:
            assert verify(e.game, 50_000_000) == e


@pytest.mark.slow
def test_the_whole_endgame_set_verifies() -> None:
    """Every position's optimal moves and margin, by solving each child (a minute or so)."""
    for e in endgame_set():
        assert verify(e.game) == e, str(e.game)


@pytest.mark.slow
def test_the_default_engine_plays_every_endgame_optimally_at_2s_a_move(tmp_path: Path) -> None:
    """`saz gtp --game othello` as it ships (the default search: the endgame planner on), at
    2 s a move (a one-stone Canadian period), plays an optimal move in every position."""
    endgames = endgame_set()
    vertices = vertices_for("othello", 8, 8)
    wrong: list[tuple[int, int, str]] = []
    # command() fails the test on a `?` reply; leaving the block sends `quit` (or kills the
    # engine on an error).
    with GtpClient(SAZ_GTP) as saz:
        for k, e in enumerate(endgames):
            record = tmp_path / f"{k}.sgf"
            record.write_text(format_sgf(e.game))
            saz.command(f"loadsgf {record}", timeout=REPLY_TIMEOUT)
            saz.command("time_settings 0 2 1", timeout=REPLY_TIMEOUT)
            color = "b" if e.game.to_move == BLACK else "w"
            move = vertices.parse(saz.command(f"genmove {color}", timeout=REPLY_TIMEOUT))
            if move not in e.optimal:
                wrong.append((k + 1, e.game.num_empty, vertices.format(move)))
    print(f"optimal in {len(endgames) - len(wrong)} of {len(endgames)}; wrong: {wrong}")
    assert not wrong


def test_a_solve_stops_at_its_time_limit() -> None:
    """`max_seconds` stops a solve the node budget would let run on (the search's clock)."""
    import time
    game = by_play(8, 8, 28, random.Random(5))
    assert not game.is_over()
    start = time.perf_counter()
    assert game.solve(10**12, exact=True, max_seconds=0.05) is None
    assert time.perf_counter() - start < 0.5
    small = by_play(8, 8, 8, random.Random(5))
    timed, plain = small.solve(10**6, max_seconds=5.0), small.solve(10**6)
    assert timed is not None and plain is not None and timed.margin == plain.margin
