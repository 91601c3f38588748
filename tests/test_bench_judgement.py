"""`saz bench judgement` (tools/bench/judgement.py): which positions it asks the reference about,
how it reads the answers, and how it scores a network's heads against them."""
from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from saz.engine.games.base import BLACK, WHITE
from saz.protocol.gtp_client import GtpClient
from saz.tools.bench import cli
from saz.tools.bench.judgement import (
    Estimate,
    estimate,
    evaluate,
    judge,
    parse_estimate,
    played_out,
    positions,
    read_estimates,
    recorded,
    sampled_plies,
    standings,
    write_estimates,
)
from saz.tools.match.scoring import go_records

# Two 5x5 games in saz match's form, one collection: 7 moves with a pass among them, then 3.
RECORD = ("(;FF[4]GM[1]SZ[5]KM[2.5]PB[a]PW[b];B[aa];W[ee];B[cc];W[bb];B[dd];W[];B[ca])\n"
          "(;FF[4]GM[1]SZ[5]KM[0.5]PB[b]PW[a];B[cc];W[dd];B[bb])\n")

# A GTP engine that, as the spec has it, loads the position before move N and "estimates" Black's
# lead as Black's stones minus White's: what the bench reads back says which position it asked.
FAKE_REFERENCE = textwrap.dedent("""
    import re, sys
    moves = []
    for line in sys.stdin:
        words = line.split()
        ident = words.pop(0) if words and words[0].isdigit() else ""
        if not words:
            continue
        if words[0] == "loadsgf":
            text = open(words[1]).read()
            moves = re.findall(r";([BW])\\[([a-z]*)\\]", text)[:int(words[2]) - 1]
            reply = "black" if len(moves) % 2 == 0 else "white"
        elif words[0] == "estimate_score":
            stones = [c for c, v in moves if v]
            lead = stones.count("B") - stones.count("W")
            reply = ("B+%d.0 (upper bound: 0, lower: 0)" % lead if lead >= 0
                     else "W+%d.0 (upper bound: 0, lower: 0)" % -lead)
        else:
            reply = ""
        print("=%s %s\\n" % (ident, reply), flush=True)
        if words[0] == "quit":
            break
""")


@pytest.fixture
def record(tmp_path: Path) -> Path:
    path = tmp_path / "match.sgf"
    path.write_text(RECORD)
    return path


def test_estimate_replies_are_read_as_blacks_lead() -> None:
    assert parse_estimate("W+13.2 (upper bound: 23.0, lower: 3.4)") == -13.2
    assert parse_estimate("B+3.5 (upper bound: -0.9, lower: -5.5)") == 3.5
    assert parse_estimate("0") == 0.0
    for bad in ("", "resign", "13.2"):
        with pytest.raises(ValueError):
            parse_estimate(bad)


def test_every_nth_ply_before_the_last_move() -> None:
    assert sampled_plies(7, 2, None) == [2, 4, 6]
    assert sampled_plies(7, 3, None) == [3, 6]
    assert sampled_plies(7, 2, 4) == [2, 4]
    assert sampled_plies(7, 7, None) == []                # after the last move: nothing to judge
    # A game stopped short (a move limit, a resignation) is judged after its last move too.
    assert sampled_plies(8, 4, None, finished=False) == [4, 8]
    assert sampled_plies(8, 4, 6, finished=False) == [4]


def test_only_a_game_ended_by_two_passes_is_played_out(tmp_path: Path) -> None:
    path = tmp_path / "ends.sgf"
    path.write_text("(;FF[4]GM[1]SZ[5]KM[0.5];B[aa];W[];B[])\n"       # two passes: played out
                    "(;FF[4]GM[1]SZ[5]KM[0.5];B[aa];W[];B[cc])\n"     # stopped after a move
                    "(;FF[4]GM[1]SZ[5]KM[0.5];B[])\n")               # one pass only
    assert [played_out(g) for g in go_records([path])] == [True, False, False]


def test_the_reference_is_asked_about_each_game_after_each_ply(record: Path,
                                                               tmp_path: Path) -> None:
    script = tmp_path / "reference.py"
    script.write_text(FAKE_REFERENCE)
    with GtpClient([sys.executable, str(script)]) as reference:
        found = estimate(reference, go_records([record]), every=2, max_ply=None)
    # Game 1 after 2 moves: one stone each; after 4: two each; after 6: three to two (W passed).
    # Game 2 after 2 moves: one each (its own file: loadsgf reads a file's first game).
    where = record.as_posix()
    assert [(e.game, e.ply, e.black_lead) for e in found] == [
        (f"{where}#1", 2, 0.0), (f"{where}#1", 4, 0.0), (f"{where}#1", 6, 1.0),
        (f"{where}#2", 2, 0.0)]
    out = tmp_path / "estimates.csv"
    write_estimates(out, found)
    assert read_estimates(out) == found


def test_positions_are_replayed_with_each_records_komi(record: Path) -> None:
    first, second = f"{record.as_posix()}#1", f"{record.as_posix()}#2"
    games = positions([Estimate(first, 3, 0.0), Estimate(first, 6, 0.0), Estimate(second, 2, 0)])
    assert [len(g.moves) for g in games] == [3, 6, 2]
    assert [g.to_move for g in games] == [WHITE, BLACK, BLACK]
    assert [g.komi for g in games] == [2.5, 2.5, 0.5]
    with pytest.raises(ValueError, match="has 7 moves, not 9"):
        positions([Estimate(first, 9, 0.0)])
    with pytest.raises(ValueError, match="no Go game .*#3"):
        positions([Estimate(f"{record.as_posix()}#3", 2, 0.0)])


class SureOfItself:
    """A stand-in evaluator that, whoever is to move, gives the side to move a value of 0.5, a
    score of 10 and every point of the board."""

    has_score = has_ownership = True

    def run_aux(self, x: np.ndarray, layout: object) -> tuple[np.ndarray, ...]:
        b, n = x.shape[0], x.shape[1]
        return (np.zeros((b, n), np.float32), np.full(b, 0.5, np.float32),
                np.ones((b, n), np.float32), np.full(b, 10.0, np.float32))


def test_every_head_is_turned_to_blacks_view(record: Path) -> None:
    where = f"{record.as_posix()}#1"                       # 5x5, komi 2.5
    games = positions([Estimate(where, 2, 0.0), Estimate(where, 3, 0.0)])  # Black, then White
    value, score, owned = evaluate(SureOfItself(), games)  # type: ignore[arg-type]
    assert value.tolist() == [0.5, -0.5]
    assert score is not None and score.tolist() == [10.0, -10.0]
    # 25 points to the side to move (the extra node's entry left out), less the komi.
    assert owned is not None and owned.tolist() == [25 - 2.5, -25 - 2.5]


def test_judge_counts_the_clear_leads_and_scores_each_head() -> None:
    lead = np.array([20.0, -30.0, 10.0, -12.0])
    value = np.array([0.5, 0.2, -0.9, -0.1])
    j = judge(lead, value, None, None, clear=10.0)
    assert (j.positions, j.clear) == (4, 3)               # 10 points is not more than 10
    assert j.value_agrees == pytest.approx(2 / 3)         # the second sides with the trailer
    assert j.leader_value == pytest.approx((0.5 - 0.2 + 0.1) / 3)
    assert j.score is None and j.ownership is None
    j = judge(lead, value, lead / 2, -lead, clear=10.0)
    assert j.score is not None and j.ownership is not None
    assert j.score.agrees == 1.0 and j.score.r == pytest.approx(1.0)   # right, but short by half
    assert j.score.error == pytest.approx(np.mean(np.abs(lead)) / 2)
    assert j.ownership.agrees == 0.0 and j.ownership.r == pytest.approx(-1.0)
    assert j.ownership.error == pytest.approx(2 * np.mean(np.abs(lead)))


def test_the_table_judges_each_model_on_the_same_positions(
        record: Path, tmp_path: Path, tiny_model: Callable[..., object],
        capsys: pytest.CaptureFixture[str]) -> None:
    where = f"{record.as_posix()}#1"
    table = tmp_path / "estimates.csv"
    write_estimates(table, [Estimate(where, 2, 12.0), Estimate(where, 4, -15.0),
                            Estimate(where, 6, 3.0)])
    with_heads, plain = tiny_model("go", heads=True), tiny_model("go")
    assert cli.main(["judgement", "--estimates", str(table), "--model", str(with_heads.path),
                     "--model", str(plain.path)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| model | positions | lead > 5 |")
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[1:]]
    assert [c[1:3] for c in cells] == [["3", "2"], ["3", "2"]]
    assert cells[0][5] and cells[0][6]                     # only the first has the heads
    assert cells[1][5:] == ["", ""]


def test_a_model_of_another_game_is_refused(record: Path, tmp_path: Path,
                                            tiny_model: Callable[..., object]) -> None:
    table = tmp_path / "estimates.csv"
    write_estimates(table, [Estimate(f"{record.as_posix()}#1", 2, 12.0)])
    with pytest.raises(SystemExit, match="the model plays othello, not go"):
        cli.main(["judgement", "--estimates", str(table), "--model",
                  str(tiny_model("othello").path)])


def test_a_missing_table_or_estimator_is_a_clear_error(tmp_path: Path, record: Path) -> None:
    with pytest.raises(SystemExit, match="No such file"):
        cli.main(["judgement", "--estimates", str(tmp_path / "none.csv"), "--model", "m.onnx"])
    with pytest.raises(SystemExit, match="the estimator failed: .*no-such-engine"):
        cli.main(["judgement", "--estimates", str(tmp_path / "out.csv"), "--records",
                  str(record), "--estimator", "no-such-engine --mode gtp"])


def test_a_players_standing_is_its_own_lead_in_either_colour(record: Path) -> None:
    first, second = f"{record.as_posix()}#1", f"{record.as_posix()}#2"   # a is Black, then White
    estimates = [Estimate(first, 2, 4.0), Estimate(second, 2, -6.0), Estimate(first, 4, -3.0)]
    games = recorded(estimates)
    a = standings(estimates, games, "a")
    assert [(s.ply, s.games) for s in a] == [(2, 2), (4, 1)]
    assert a[0].lead == pytest.approx(5.0)                # +4 as Black, +6 as White
    assert a[0].margin == pytest.approx(1.96 * np.std([4.0, 6.0], ddof=1) / 2 ** 0.5)
    assert a[1].lead == -3.0 and np.isnan(a[1].margin)   # one game: no interval
    assert [s.lead for s in standings(estimates, games, "b")] == [-5.0, 3.0]
    assert standings(estimates, games, "c") == []


def test_the_standings_table_names_each_player(record: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "estimates.csv"
    write_estimates(table, [Estimate(f"{record.as_posix()}#1", 2, 4.0),
                            Estimate(f"{record.as_posix()}#2", 2, -6.0)])
    assert cli.main(["judgement", "--estimates", str(table), "--player", "a",
                     "--player", "b"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[1:] == ["| a | 2 | 2 | +5.0 [+3.0, +7.0] |", "| b | 2 | 2 | -5.0 [-7.0, -3.0] |"]
    with pytest.raises(SystemExit, match="'c' is neither Black nor White"):
        cli.main(["judgement", "--estimates", str(table), "--player", "c"])
