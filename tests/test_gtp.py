"""`saz gtp`: framing, vertices, SGF, golden transcripts, and the engine behind the commands.

Golden transcripts (`tests/transcripts/*.gtp`) are whole sessions. A line `> TEXT` is input
(backslash escapes such as `\\r`, `\\t`, `\\x01` stand for the characters, `{transcripts}` for
the transcripts' folder); `#| args: ...` gives the command line; other `#|` lines are comments;
every other line is expected output, compared with trailing spaces removed (editors strip them;
the exact `= ` framing is tested below). The input goes in all at once, as a pipelining GUI
sends it. Each transcript runs in memory through `main` and once more through the real `saz gtp`
process.
"""
from __future__ import annotations

import codecs
import io
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from saz.engine.engine import Engine, EngineConfig
from saz.engine.games import new_game
from saz.engine.games.base import BLACK, WHITE
from saz.engine.games.go import fixed_handicap_points
from saz.engine.search.clock import (
    Absolute,
    CanadianByoyomi,
    JapaneseByoyomi,
    NoTimeLimit,
)
from saz.engine.search.options import SearchOptions, SubgraphSampling, search_options
from saz.protocol import gomocup
from saz.protocol.client_errors import EngineExited, EngineTimeout
from saz.protocol.engine_options import engine_config
from saz.protocol.gtp import build_parser, clean, format_reply, main, parse_command
from saz.protocol.gtp_client import GtpClient, ProtocolError, parse_reply
from saz.protocol.gtp_commands import Command, GtpEngine, GtpError
from saz.protocol.gtp_go import free_handicap_points
from saz.protocol.sgf import SgfError, SgfMove, parse_sgf
from saz.protocol.vertex import GoVertices, GtpValueError, TopLeftVertices, parse_color

TRANSCRIPTS = Path(__file__).parent / "transcripts"
SAZ_GTP = [sys.executable, "-m", "saz.engine.cli", "gtp"]
MISSING_MODEL = "/nonexistent/model.onnx"


# -- framing --------------------------------------------------------------------------------------
def test_clean_drops_control_characters_comments_and_tabs() -> None:
    assert clean("\x01play\x7f b\td4\r\n") == "play b d4"
    assert clean("name # 12 comment") == "name"
    assert clean("   # only a comment") == ""
    assert clean("\t\r\n") == ""


@pytest.mark.parametrize("line, expected", [
    ("name", Command(None, "name", ())),
    ("12 genmove b", Command(12, "genmove", ("b",))),
    ("  7\tplay  w   D4 ", Command(7, "play", ("w", "D4"))),
    ("42", Command(42, "", ())),
    ("-1 name", Command(None, "-1", ("name",))),
    ("# comment", None),
    ("\r\n", None),
])
def test_parse_command(line: str, expected: Command | None) -> None:
    assert parse_command(line) == expected


def test_reply_framing_is_exact() -> None:
    assert format_reply(True, None, "") == "= \n\n"
    assert format_reply(True, 12, "D4") == "=12 D4\n\n"
    assert format_reply(False, None, "illegal move") == "? illegal move\n\n"
    # A line after the first is never empty: it would end the reply.
    assert format_reply(True, 3, "\nA\n\nB\n") == "=3 \nA\nB\n\n"


def test_client_parses_replies() -> None:
    reply = parse_reply(["=12 A1", "B2"])
    assert (reply.ok, reply.id, reply.text, reply.lines) == (True, 12, "A1\nB2", ["A1", "B2"])
    assert parse_reply(["? illegal move"]).ok is False


# -- the client, against stand-in engines ------------------------------------------------------------
def _fake_engine(script: str) -> list[str]:
    """A stand-in engine: a Python one-liner that speaks (or fails to speak) GTP."""
    return [sys.executable, "-c", script]


def test_client_reports_a_hang_and_kills_the_engine() -> None:
    client = GtpClient(_fake_engine("import time; time.sleep(60)"))
    with pytest.raises(EngineTimeout):
        client.send("name", timeout=0.3)
    assert client.close(grace=0.3) is not None and client.returncode != 0


def test_client_reports_a_crash_with_its_stderr() -> None:
    client = GtpClient(_fake_engine("import sys; sys.stderr.write('boom\\n'); sys.exit(3)"))
    with pytest.raises(EngineExited, match="boom") as exited:
        client.send("name", timeout=30)
    assert exited.value.returncode == 3
    client.close()


def test_client_skips_junk_and_checks_reply_ids() -> None:
    script = ("import sys; print('banner', flush=True); sys.stdin.readline(); "
              "print('=1 first\\n', flush=True); sys.stdin.readline(); "
              "print('=7 stray\\n', flush=True); sys.stdin.readline()")
    client = GtpClient(_fake_engine(script))
    assert client.send("name", timeout=30).text == "first"
    with pytest.raises(ProtocolError):
        client.send("version", timeout=30)
    client.kill()


def test_client_keeps_the_indentation_of_a_replys_lines() -> None:
    # A reply's text is the engine's to lay out (showboard's rows, a list's items): only the
    # line ends go, where the other protocols' clients strip every line.
    script = ("import sys; sys.stdin.readline(); "
              "print('=1 \\n   A B\\n 2 . X \\n', flush=True); sys.stdin.readline()")
    client = GtpClient(_fake_engine(script))
    assert client.send("showboard", timeout=30).text == "\n   A B\n 2 . X "
    client.kill()


# -- vertices -------------------------------------------------------------------------------------
def test_go_vertices_skip_i_and_count_rows_from_the_bottom() -> None:
    v = GoVertices(19, 19)
    assert v.parse("D4") == 15 * 19 + 3
    assert v.parse("q16") == 3 * 19 + 15
    assert v.parse("J1") == 18 * 19 + 8  # J is the ninth column: there is no I
    assert v.parse("T19") == 18
    assert v.parse("PASS") == v.pass_move == 361
    assert v.format(0) == "A19" and v.format(361) == "pass"


def test_vertices_round_trip_on_every_point() -> None:
    for vertices in (GoVertices(25, 25), GoVertices(7, 13), TopLeftVertices(26, 26)):
        names = [vertices.format(p) for p in range(vertices.width * vertices.height)]
        assert len(set(names)) == len(names)
        assert [vertices.parse(name.lower()) for name in names] == list(range(len(names)))


def test_top_left_vertices_start_at_a1_and_use_i() -> None:
    v = TopLeftVertices(10, 10)
    assert v.parse("a1") == 0
    assert v.parse("i1") == 8
    assert v.parse("J10") == 99


@pytest.mark.parametrize("text", ["I5", "A0", "Z1", "A20", "", "D", "4D", "D-4", "DD4", "D٤"])
def test_bad_go_vertices_are_rejected(text: str) -> None:
    with pytest.raises(GtpValueError):
        GoVertices(19, 19).parse(text)


def test_go_letters_name_at_most_25_columns() -> None:
    assert GoVertices.fits(25, 30) and not GoVertices.fits(26, 5)
    with pytest.raises(GtpValueError):
        GoVertices(26, 26)


def test_colours() -> None:
    assert [parse_color(c) for c in ("b", "BLACK", "w", "White")] == [BLACK, BLACK, WHITE, WHITE]
    with pytest.raises(GtpValueError):
        parse_color("red")


# -- SGF ------------------------------------------------------------------------------------------
def test_sgf_main_line_setup_and_moves() -> None:
    record = parse_sgf(r"""(;GM[1]FF[4]SZ[9]KM[6.5]HA[2]AB[cg][gc]C[a \] bracket]
                         ;W[ee];B[ge](;W[eg];B[];W[tt])(;W[aa]))""")
    assert (record.game, record.width, record.height, record.komi, record.handicap) == (
        "go", 9, 9, 6.5, 2)
    assert record.nodes[0].add_black == (6 * 9 + 2, 2 * 9 + 6)
    moves = [node.move for node in record.nodes[1:]]
    assert moves == [SgfMove(WHITE, 40), SgfMove(BLACK, 42), SgfMove(WHITE, 58),
                     SgfMove(BLACK, 81), SgfMove(WHITE, 81)]


def test_sgf_players_and_game_comment() -> None:
    record = parse_sgf(r"(;GM[1]SZ[9]PB[gnugo \] l1]PW[saz]GC[W+3.5; the first 2 moves]"
                       r"RE[W+3.5]RU[Chinese];B[aa])")
    assert (record.player_black, record.player_white) == ("gnugo ] l1", "saz")
    assert record.game_comment == "W+3.5; the first 2 moves"
    assert (record.result, record.rules) == ("W+3.5", "Chinese")
    bare = parse_sgf("(;GM[1]SZ[9];B[aa])")
    assert (bare.player_black, bare.player_white, bare.game_comment) == (None, None, None)
    assert (bare.result, bare.rules) == (None, None)


def test_sgf_compressed_points_rectangles_and_old_identifiers() -> None:
    record = parse_sgf("(;SZ[5:3]AddBlack[aa:bc]PL[w];B[ab])")
    assert (record.width, record.height) == (5, 3)
    assert record.nodes[0].add_black == (0, 1, 5, 6, 10, 11)
    assert record.nodes[0].to_play == WHITE


def test_sgf_tt_is_a_point_on_boards_larger_than_19() -> None:
    assert parse_sgf("(;SZ[21];B[tt])").nodes[1].move == SgfMove(BLACK, 19 * 21 + 19)
    assert parse_sgf("(;SZ[19];B[tt])").nodes[1].move == SgfMove(BLACK, 361)


def test_sgf_deep_nesting_needs_no_recursion() -> None:
    text = "(;SZ[9]" + "".join(f"(;{'BW'[i % 2]}[{chr(97 + i % 9)}{chr(97 + i // 9 % 9)}]"
                               for i in range(5000)) + ")" * 5001
    assert len(parse_sgf(text).nodes) == 5001


@pytest.mark.parametrize("text", [
    "no tree", "(;SZ[9]", "(;GM[3])", "(;SZ[9];B[jj])", "(;B[aa]W[bb])", "(;SZ[x])",
    "(;C[unclosed)", "(;B)", "()", "(;B[aa](;W[bb]);B[cc])", "(;KM[seven])",
])
def test_malformed_sgf_is_an_error(text: str) -> None:
    with pytest.raises(SgfError):
        parse_sgf(text)


# -- golden transcripts ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Transcript:
    args: list[str]
    input: str
    expected: list[str]


def load_transcript(path: Path) -> Transcript:
    args: list[str] = []
    inputs: list[str] = []
    expected: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("#| args:"):
            args = line.removeprefix("#| args:").split()
        elif line.startswith("#|"):
            continue
        elif line.startswith(">"):
            text = codecs.decode(line.removeprefix(">").removeprefix(" "), "unicode_escape")
            inputs.append(text.replace("{transcripts}", str(TRANSCRIPTS)) + "\n")
        else:
            expected.append(line)
    return Transcript(args, "".join(inputs), _trimmed(expected))


def _trimmed(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


TRANSCRIPT_NAMES = sorted(p.stem for p in TRANSCRIPTS.glob("*.gtp"))


@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_transcript_in_memory(name: str) -> None:
    transcript = load_transcript(TRANSCRIPTS / f"{name}.gtp")
    out = io.StringIO()
    status = main(transcript.args, stdin=io.StringIO(transcript.input, newline="\n"), stdout=out)
    assert status == 0
    assert _trimmed(out.getvalue().split("\n")) == transcript.expected


@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_transcript_through_the_process(name: str) -> None:
    transcript = load_transcript(TRANSCRIPTS / f"{name}.gtp")
    run = subprocess.run([*SAZ_GTP, *transcript.args], input=transcript.input.encode(),
                         capture_output=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr.decode()
    assert _trimmed(run.stdout.decode().split("\n")) == transcript.expected


def test_the_module_loads_neither_torch_nor_onnxruntime() -> None:
    code = ("import sys, saz.protocol.gtp; "
            "print(sorted(m for m in ('torch', 'onnxruntime') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.stdout.strip() == "[]"


def test_end_of_input_ends_the_session_cleanly() -> None:
    run = subprocess.run(SAZ_GTP, input=b"name\nboardsize 9", capture_output=True, timeout=60, check=False)
    assert run.returncode == 0
    assert run.stdout == b"= saz\n\n= \n\n"


# -- commands over the engine ---------------------------------------------------------------------
def gtp(game: str = "go", **config: object) -> GtpEngine:
    return GtpEngine(Engine(EngineConfig(game=game, **config)))  # type: ignore[arg-type]


def run(engine: GtpEngine, line: str) -> str:
    command = parse_command(line)
    assert command is not None
    reply = engine.execute(command)
    assert isinstance(reply, str)
    return reply


def test_a_move_out_of_turn_is_played_without_an_invented_pass() -> None:
    engine = gtp()
    run(engine, "boardsize 9")
    run(engine, "play b e5")
    run(engine, "play b d4")  # Black again: GNU Go and KataGo play it as asked
    assert engine.game.moves == [40, 48] and engine.game.to_move == WHITE
    run(engine, "undo")
    assert engine.game.moves == [40] and engine.game.to_move == WHITE


def test_a_failed_move_out_of_turn_changes_nothing() -> None:
    engine = gtp()
    run(engine, "boardsize 9")
    run(engine, "play b e5")
    with pytest.raises(GtpError, match="^illegal move$"):
        run(engine, "play b e5")  # occupied
    assert engine.game.moves == [40] and engine.game.to_move == WHITE


def test_time_commands_set_our_clock() -> None:
    engine = gtp()
    clock = engine.engine.clock
    run(engine, "time_settings 300 30 5")
    assert clock.control == CanadianByoyomi(300, 30, 5)
    run(engine, "kgs-time_settings byoyomi 600 30 5")
    assert clock.control == JapaneseByoyomi(600, 30, 5)
    run(engine, "kgs-time_settings absolute 600")
    assert clock.control == Absolute(600)
    run(engine, "time_left w 20 0")  # Black is to move: not our clock, set aside
    assert clock.state.main_left == 600
    run(engine, "time_left b 200 0")
    assert clock.state.main_left == 200
    run(engine, "time_settings 0 1 0")  # byo-yomi time without stones: no limit
    assert clock.control == NoTimeLimit()


@pytest.mark.parametrize("size, stones", [(19, n) for n in range(2, 10)] + [(9, 5), (13, 4)])
def test_free_handicap_is_the_fixed_handicap_where_there_is_one(size: int, stones: int) -> None:
    assert free_handicap_points(size, size, stones) == fixed_handicap_points(size, stones)


@pytest.mark.parametrize("width, height, stones", [(19, 19, 30), (5, 5, 24), (7, 4, 6),
                                                   (2, 2, 3)])
def test_free_handicap_beyond_the_fixed_points(width: int, height: int, stones: int) -> None:
    points = free_handicap_points(width, height, stones)
    assert len(set(points)) == stones and all(0 <= p < width * height for p in points)
    game = new_game("go", width, height)
    game.place_free_handicap(points)  # type: ignore[attr-defined]
    assert int((game.board == BLACK).sum()) == stones


# -- thinking (a tiny random network) -------------------------------------------------------------
def test_genmove_plays_and_reg_genmove_does_not(tiny_model) -> None:
    engine = gtp(model=tiny_model("go").path, visits=8)
    run(engine, "boardsize 7")
    move = engine.vertices.parse(run(engine, "reg_genmove b"))
    assert engine.game.moves == [] and engine.game.is_legal(move)
    first = engine.vertices.parse(run(engine, "genmove b"))
    assert engine.game.moves == [first]
    # Black again, out of turn (the issue's `play B E5; genmove B`): Black's move, with no pass
    # invented for White. (A random network may well choose Black's pass here.)
    second = engine.vertices.parse(run(engine, "genmove b"))
    assert second == engine.game.pass_move or engine.game.board[second] == BLACK
    assert engine.game.moves == [first, second] and engine.game.to_move == WHITE
    assert not engine.game.is_over()
    run(engine, "undo")
    assert engine.game.moves == [first] and engine.game.to_move == WHITE
    # The cleanup genmove passes only when nothing else is legal: out of turn, a black stone.
    stone = engine.vertices.parse(run(engine, "kgs-genmove_cleanup b"))
    assert stone != engine.game.pass_move and engine.game.board[stone] == BLACK
    assert engine.game.moves == [first, stone] and engine.game.to_move == WHITE


def test_genmove_after_two_passes_plays_on(tiny_model) -> None:
    engine = gtp(model=tiny_model("go").path, visits=16)
    run(engine, "boardsize 7")
    for line in ("play b d4", "play w pass", "play b pass"):
        run(engine, line)
    assert engine.game.is_over()
    run(engine, "play w c3")  # the controller plays on: not refused
    assert engine.game.moves[-1] == engine.vertices.parse("c3") and not engine.game.is_over()
    for line in ("play b pass", "play w pass"):
        run(engine, line)
    move = engine.vertices.parse(run(engine, "genmove b"))  # searched as played on
    assert engine.game.moves[-1] == move and engine.game.to_move == WHITE


def test_cleanup_genmove_plays_on_where_genmove_passes(tiny_model) -> None:
    engine = gtp(model=tiny_model("go").path, visits=8)
    run(engine, "boardsize 5")
    run(engine, "komi 0.5")
    run(engine, "play b c3")
    run(engine, "play w pass")
    # Black's pass would end the game and win it by area: the rules decide, not the network.
    assert run(engine, "reg_genmove b") == "pass"
    assert run(engine, "kgs-genmove_cleanup b") != "pass"


def test_resign_threshold_resigns_and_leaves_the_position(tiny_model) -> None:
    engine = GtpEngine(Engine(EngineConfig(game="go", model=tiny_model("go").path, visits=8)),
                       resign_threshold=0.999)
    run(engine, "boardsize 7")
    run(engine, "play b d4")
    assert run(engine, "genmove w") == "resign"
    assert engine.game.moves == [24] and engine.game.to_move == WHITE


def test_pondering_stops_for_the_next_command(tiny_model) -> None:
    engine = gtp(model=tiny_model("go").path, visits=8, ponder=True)
    run(engine, "boardsize 9")
    run(engine, "genmove b")
    assert engine.engine.searching_in_background
    run(engine, "play w j9")
    assert not engine.engine.searching_in_background
    assert len(engine.game.moves) == 2


# -- the real process -----------------------------------------------------------------------------
INFO_LZ = re.compile(r"info move (\S+) visits (\d+) winrate (\d+) prior (\d+) lcb (\d+) "
                     r"order (\d+) pv( \S+)+")
INFO_KATA = re.compile(r"info move (\S+) visits (\d+) utility (\S+) winrate (\S+) scoreMean 0 "
                       r"scoreStdev 0 scoreLead 0 scoreSelfplay 0 prior (\S+) lcb (\S+) "
                       r"utilityLcb (\S+) order (\d+) pv( \S+)+")


def _snapshots(line: str, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    parts = ["info" + part for part in line.split("info")[1:]]
    matches = [pattern.fullmatch(part.strip()) for part in parts]
    assert all(matches), line
    return matches  # type: ignore[return-value]


def test_live_analysis_streams_until_the_next_line(tiny_model) -> None:
    with GtpClient([*SAZ_GTP, "--model", str(tiny_model("go").path), "--size", "9"]) as saz:
        saz.command("play b e5")
        assert saz.begin("lz-analyze 2", timeout=30).ok
        first = _snapshots(saz.read_line(timeout=30), INFO_LZ)
        later = _snapshots(saz.read_line(timeout=30), INFO_LZ)
        assert sum(int(m[2]) for m in later) >= sum(int(m[2]) for m in first) > 0
        assert all(0 <= int(m[3]) <= 10000 for m in later)
        assert [int(m[6]) for m in later] == list(range(len(later)))
        name = saz.write("name")  # stops the analysis, whose reply then ends
        while line := saz.read_line(timeout=30):
            _snapshots(line, INFO_LZ)
        assert saz.read_reply(timeout=30, expect_id=name).text == "saz"
        # KataGo's format, restricted by allow, ended by a comment line; the position is intact.
        assert saz.begin("kata-analyze interval 2 maxmoves 3 allow w c3,g7 1", timeout=30).ok
        snapshot = _snapshots(saz.read_line(timeout=30), INFO_KATA)
        assert {m[1] for m in snapshot} <= {"C3", "G7"} and len(snapshot) <= 3
        saz.interrupt()
        while saz.read_line(timeout=30):
            pass
        # Sabaki's `analyze COLOR INTERVAL`: Leela's format.
        assert saz.begin("analyze W 1", timeout=30).ok
        _snapshots(saz.read_line(timeout=30), INFO_LZ)
        side = saz.write("gogui-rules_side_to_move")
        while saz.read_line(timeout=30):
            pass
        assert saz.read_reply(timeout=30, expect_id=side).text == "white"
        # Black is not to move: the analysis is for Black all the same (Sabaki asks for the
        # colour it expects), and the position is left as it was.
        assert saz.begin("kata-analyze b 1", timeout=30).ok
        _snapshots(saz.read_line(timeout=30), INFO_KATA)
        saz.interrupt()
        while saz.read_line(timeout=30):
            pass
        side = saz.write("gogui-rules_side_to_move")
        assert saz.read_reply(timeout=30, expect_id=side).text == "white"


def test_genmove_analyze_ends_with_the_move_played(tiny_model) -> None:
    with GtpClient([*SAZ_GTP, "--model", str(tiny_model("go").path), "--size", "7",
                    "--visits", "400"]) as saz:
        reply = saz.send("lz-genmove_analyze b 1", timeout=60)
        *infos, last = reply.lines
        assert all(INFO_LZ.fullmatch(part.strip()) for line in infos
                   for part in ["info" + p for p in line.split("info")[1:]])
        assert last.startswith("play ")
        board = saz.command("gogui-rules_board")
        assert board.count("X") == 1 and saz.command("gogui-rules_side_to_move") == "white"


def test_pipelined_commands_are_answered_in_order() -> None:
    with GtpClient([*SAZ_GTP, "--model", MISSING_MODEL]) as saz:
        ids = [saz.write(command) for command in
               ["boardsize 9", "play b e5", "genmove w", "play w e5", "undo", "showboard",
                "lz-analyze", "name", "kata-analyze 1", "undo", "undo"]]
        replies = [saz.read_reply(timeout=30) for _ in ids]
        assert [r.id for r in replies] == ids
        assert [r.ok for r in replies] == [True, True, False, False, True, True,
                                           False, True, False, False, False]


def test_gogui_interrupt_ends_a_long_genmove(tiny_model) -> None:
    with GtpClient([*SAZ_GTP, "--model", str(tiny_model("go").path), "--size", "9",
                    "--time-per-move", "600"]) as saz:
        assert saz.command("known_command gogui-interrupt") == "true"
        genmove = saz.write("genmove b")
        time.sleep(0.5)
        saz.interrupt()
        reply = saz.read_reply(timeout=60, expect_id=genmove)  # not the 600 seconds asked for
        assert reply.ok and GoVertices(9, 9).parse(reply.text) < 82


def test_a_complete_game_refereed_move_by_move(tiny_model) -> None:
    referee = new_game("go", 5, komi=0.5)
    vertices = GoVertices(5, 5)
    with GtpClient([*SAZ_GTP, "--model", str(tiny_model("go").path), "--size", "5",
                    "--visits", "8"]) as saz:
        saz.command("komi 0.5")
        while not referee.is_over() and len(referee.moves) < 200:
            color = "b" if referee.to_move == BLACK else "w"
            move = vertices.parse(saz.command(f"genmove {color}", timeout=30))
            assert referee.is_legal(move)
            referee.play(move)
        assert referee.is_over()
        score = referee.score()  # type: ignore[attr-defined]
        assert saz.command("final_score") == f"{'B' if score > 0 else 'W'}+{abs(score):g}"
        assert saz.command("gogui-rules_final_result") == ("black" if score > 0 else "white")


# -- search options on the command line -----------------------------------------------------------
def test_subgraph_options_reach_the_search() -> None:
    parser = build_parser()
    args = parser.parse_args(["--subgraphs", "2", "--subgraph-blend", "0.4"])
    assert search_options(parser, args).subgraphs == SubgraphSampling(count=2, blend=0.4)
    assert not search_options(parser, parser.parse_args([])).subgraphs.enabled  # off by default


@pytest.mark.parametrize(("argv", "reason"), [
    (["--subgraphs", "-1"], "subgraph count must be >= 0"),
    (["--subgraph-blend", "1.5"], r"subgraph blend must be in \[0, 1\]"),
    (["--c-puct", "0"], "c_puct must be > 0"),
    (["--batch-size", "0"], "batch_size must be >= 1"),
    (["--fpu-reduction", "x"], "invalid float value"),
    (["--focus-side", "-1"], r"focus_side must be >= 0"),
    (["--eval-cache=-5M"], r"invalid size '-5M': must be positive"),
    (["--eval-cache", "lots"], r"invalid size 'lots'"),
])
def test_bad_search_options_are_refused_with_the_reason(
        argv: list[str], reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv, stdin=[], stdout=io.StringIO())
    assert exit_.value.code == 2
    assert re.search(reason, capsys.readouterr().err)


def test_the_evaluation_cache_size_reaches_the_search() -> None:
    parser = build_parser()
    assert search_options(parser, parser.parse_args(["--eval-cache", "256M"])).eval_cache_bytes \
        == 256 << 20
    assert search_options(parser, parser.parse_args(["--eval-cache", "0"])).eval_cache_bytes == 0
    assert search_options(parser, parser.parse_args([])).eval_cache_bytes == 64 << 20


# -- the engine options, one definition for saz gtp and pbrain-saz --------------------------------
def test_both_front_ends_read_the_engine_options_alike() -> None:
    argv = ["--player", "greedy", "--device", "cpu", "--visits", "7", "--threads", "2", "--ponder",
            "--subgraphs", "1"]
    gtp_parser, brain_parser = build_parser(), gomocup._parser()
    ours = engine_config(gtp_parser, gtp_parser.parse_args(argv), game="gomoku")
    theirs = engine_config(brain_parser, brain_parser.parse_args(argv), game="gomoku")
    assert ours == theirs
    assert (ours.player, ours.device, ours.visits, ours.threads, ours.ponder) == (
        "greedy", "cpu", 7, 2, True)
    assert ours.search.subgraphs.count == 1 and ours.time_per_move is None
    with pytest.raises(SystemExit):  # GTP's alone: a controller may set no clock
        brain_parser.parse_args(["--time-per-move", "1"])


@pytest.mark.parametrize("argv", [["--visits", "0"], ["--threads", "0"]])
def test_both_front_ends_refuse_a_visit_or_thread_count_below_one(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    for run in (lambda: main(argv, stdin=[], stdout=io.StringIO()), lambda: gomocup.main(argv)):
        with pytest.raises(SystemExit) as exit_:
            run()
        assert exit_.value.code == 2
        assert f"{argv[0]} must be at least 1" in capsys.readouterr().err


# -- PUCT's constants on the command line (Leela Zero's --puct, --fpu_reduction, --batchsize) -----
def test_puct_options_reach_the_search() -> None:
    parser = build_parser()
    args = parser.parse_args(["--c-puct", "1.1", "--fpu-reduction", "0.4", "--batch-size", "4"])
    options = search_options(parser, args)
    assert (options.c_puct, options.fpu_reduction, options.batch_size) == (1.1, 0.4, 4)
    defaults = search_options(parser, parser.parse_args([]))
    assert (defaults.c_puct, defaults.fpu_reduction, defaults.batch_size) == (
        SearchOptions.c_puct, SearchOptions.fpu_reduction, SearchOptions.batch_size)


def test_cputime_counts_the_process_cpu_seconds() -> None:
    """gogui-twogtp's CPU column: seconds of CPU the engine has used, growing with work."""
    engine = gtp()
    before = float(run(engine, "cputime"))
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    # The reply has 3 decimals: each reading may be rounded by half a millisecond.
    assert float(run(engine, "cputime")) >= before + 0.05 - 0.001
