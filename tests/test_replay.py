"""`Replay` (tools/match/replay.py): a match record played move by move, as the readers see it."""
from __future__ import annotations

import pytest

from saz.engine.games import BLACK, WHITE, UnsupportedRuleError
from saz.engine.games.gomoku import Gomoku
from saz.protocol.sgf import parse_sgf
from saz.tools.match.replay import Replay

# A 5x5 Go record in saz match's form: two random opening plies, then the engines; White passes.
RECORD = ("(;FF[4]GM[1]SZ[5]KM[0.5]PB[other]PW[ref]GC[B+1 by score; the first 2 moves are the "
          "opening];B[aa];W[ee];B[cc];W[bb];B[dd];W[];B[ca];W[ac])")
# Gomoku 5x5: Black's five along the top row at its fifth move, then one move too many.
PAST_END = ("(;FF[4]GM[4]SZ[5]RU[freestyle]PB[a]PW[b];B[aa];W[ab];B[ba];W[bb];B[ca];W[cb]"
            ";B[da];W[db];B[ea];W[eb])")


def test_each_turn_is_the_position_before_its_move() -> None:
    replay = Replay(parse_sgf(RECORD))
    seen = [(turn.ply, turn.move, turn.color, turn.player, turn.chosen,
             turn.game.to_move == turn.color) for turn in replay]
    pass_move = replay.game.pass_move
    assert seen == [(0, 0, BLACK, "other", False, True), (1, 24, WHITE, "ref", False, True),
                    (2, 12, BLACK, "other", True, True), (3, 6, WHITE, "ref", True, True),
                    (4, 18, BLACK, "other", True, True),
                    (5, pass_move, WHITE, "ref", True, True),
                    (6, 2, BLACK, "other", True, True), (7, 10, WHITE, "ref", True, True)]
    assert replay.opening == 2
    assert len(replay.game.moves) == 8 and not replay.past_end
    assert replay.game.rules.komi == 0.5  # the record's KM, not Go's default 7.5


def test_a_reader_that_stops_leaves_the_game_before_that_move() -> None:
    replay = Replay(parse_sgf(RECORD))
    for turn in replay:
        if turn.ply == 3:
            break
    assert len(replay.game.moves) == 3 and replay.game.to_move == WHITE


def test_a_record_past_the_end_of_the_game_stops_there() -> None:
    replay = Replay(parse_sgf(PAST_END))
    plies = [turn.ply for turn in replay]
    assert plies == list(range(9))  # W[eb] comes after Black's five
    assert replay.past_end and replay.game.is_over() and replay.game.winner() == BLACK


def test_rules_given_replace_the_records() -> None:
    assert Replay(parse_sgf(RECORD), komi=6.5).game.rules.komi == 6.5


# Black's six along the top row: a win under freestyle, stones under exact five.
SIX = "(;FF[4]GM[4]SZ[7]RU[{}];B[aa];W[ag];B[ba];W[bg];B[ca];W[cg];B[ea];W[dg];B[fa];W[gg];B[da])"


@pytest.mark.parametrize("ru, over", [("freestyle", True), ("Exact-Five", False)])
def test_a_gomoku_record_is_replayed_under_the_rule_its_ru_names(ru: str, over: bool) -> None:
    replay = Replay(parse_sgf(SIX.format(ru)))
    assert [turn.ply for turn in replay][-1] == 10
    assert replay.game.is_over() is over


def test_a_gomoku_record_of_a_rule_saz_does_not_play_is_refused() -> None:
    with pytest.raises(UnsupportedRuleError, match="unknown Gomoku rule 'caro'"):
        Replay(parse_sgf(SIX.format("Caro")))


@pytest.mark.parametrize("rule", Gomoku.RULES)
def test_a_gomoku_rule_survives_the_round_trip_through_ru(rule: str) -> None:
    text = Gomoku(9, rule=rule).rules_text
    assert Gomoku(9, **Gomoku.rules_from_record(None, text)).rules.name == rule


@pytest.mark.parametrize(("result", "winner"), [
    ("B+3.5", BLACK), ("W+R", WHITE), ("B+F", BLACK), ("0", None), ("Draw", None), (None, None),
])
def test_a_records_winner_is_the_colour_its_result_names(result: str | None,
                                                         winner: int | None) -> None:
    record = "(;GM[4]SZ[9]" + (f"RE[{result}]" if result else "") + ";B[ee];W[ef])"
    assert parse_sgf(record).winner == winner


def test_a_players_colour_is_read_from_pb_and_pw() -> None:
    record = parse_sgf("(;GM[4]SZ[9]PB[saz]PW[aiwine];B[ee];W[ef])")
    assert (record.color_of("saz"), record.color_of("aiwine"), record.color_of("Saz"),
            parse_sgf("(;GM[4]SZ[9];B[ee])").color_of("saz")) == (BLACK, WHITE, None, None)
