"""The UCI client (`protocol/uci_client.py`) against a scripted fake engine (`tests/fakes/
fake_uci.py`): the handshake, options, positions, clocks, and every way an engine can fail;
and one short conversation with Stockfish when it is installed."""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from saz.protocol.client_errors import EngineExited, EngineTimeout
from saz.protocol.uci_client import (
    UciClient,
    UciOption,
    UciProtocolError,
    UnknownOption,
    parse_option,
)

FAKE = Path(__file__).parent / "fakes" / "fake_uci.py"


def fake(*answers: str, log: Path | None = None, options: tuple[str, ...] = ()) -> UciClient:
    return UciClient([sys.executable, str(FAKE), *(["--log", str(log)] if log else []),
                      *options, "--", *answers], name="fake")


def test_option_lines_parse_with_spaces_in_names_and_values() -> None:
    assert parse_option("option name Skill Level type spin default 20 min 0 max 20") == \
        UciOption("Skill Level", "spin", "20", 0, 20)
    assert parse_option("option name Clear Hash type button") == UciOption("Clear Hash", "button")
    combo = parse_option("option name UCI_Variant type combo default chess var chess "
                         "var gardner var los alamos")
    assert combo.choices == ("chess", "gardner", "los alamos") and combo.default == "chess"
    assert parse_option("option name EvalFile type string default <empty>").default == "<empty>"
    for bad in ("option type spin", "option name X", "option name X type spin min a",
                "opt name X type spin"):
        with pytest.raises(UciProtocolError):
            parse_option(bad)


def test_option_values_are_checked_against_what_the_engine_announced() -> None:
    spin = UciOption("Skill Level", "spin", "20", 0, 20)
    assert spin.accepts("0") and not spin.accepts("21") and not spin.accepts("x")
    assert UciOption("Ponder", "check").accepts("true")
    assert not UciOption("Ponder", "check").accepts("yes")
    assert UciOption("V", "combo", choices=("chess", "Gardner")).accepts("gardner")


def test_handshake_options_position_and_go(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with fake("e2e4", log=log, options=("--variants", "chess,gardner")) as engine:
        options = engine.handshake(timeout=10)
        assert engine.id == {"name": "Fake UCI", "author": "saz tests"}
        assert set(options) == {"Hash", "Skill Level", "Ponder", "UCI_Variant"}
        engine.set_option("skill level", 3)  # names in any case, sent as announced
        engine.set_option("Ponder", False)
        engine.set_option("UCI_Variant", "gardner")
        engine.new_game()
        assert engine.is_ready(timeout=10) >= 0
        engine.position(None, ["d2d4", "d7d5"])
        engine.position("8/8/8/8/8/8/8/K1k5 w - - 0 1")
        best = engine.go(timeout=10, wtime=10, btime=9.5, winc=0.1, binc=0.1)
        assert (best.move, best.ponder) == ("e2e4", None)
        assert best.info == ("info depth 1 score cp 0 nodes 1 pv e2e4",)
        assert best.seconds > 0
        best = engine.go(timeout=10, movetime=0.25)
        assert best.move == "0000"  # the script is used up
    assert log.read_text().splitlines() == [
        "uci", "setoption name Skill Level value 3", "setoption name Ponder value false",
        "setoption name UCI_Variant value gardner", "ucinewgame", "isready",
        "position startpos moves d2d4 d7d5", "position fen 8/8/8/8/8/8/8/K1k5 w - - 0 1",
        "go wtime 10000 btime 9500 winc 100 binc 100", "go movetime 250", "quit"]


def test_unknown_options_and_values_are_refused_before_anything_is_sent(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with fake(log=log) as engine:
        engine.handshake(timeout=10)
        with pytest.raises(UnknownOption, match="no option 'UCI_Elo'"):
            engine.set_option("UCI_Elo", 1350)
        with pytest.raises(UnknownOption, match=r"0\.\.20"):
            engine.set_option("Skill Level", 25)
        engine.is_ready(timeout=10)
    assert "setoption" not in log.read_text()


def test_ponder_move_and_junk_on_stdout_and_stderr_are_handled() -> None:
    with UciClient([sys.executable, str(FAKE), "--chatty", "--", "g1f3 ponder d7d5"]) as engine:
        engine.handshake(timeout=10)
        best = engine.go(timeout=10, depth=3)
        assert (best.move, best.ponder) == ("g1f3", "d7d5")
        # stderr is read on its own thread: the line may land just after the reply.
        deadline = time.monotonic() + 10
        while "fake uci: got go" not in engine.stderr_tail and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "fake uci: got go" in engine.stderr_tail


def test_a_hang_times_out_and_the_engine_still_runs() -> None:
    engine = fake("!hang")
    try:
        engine.handshake(timeout=10)
        with pytest.raises(EngineTimeout, match=r"no 'bestmove' within 0\.3 s"):
            engine.go(timeout=0.3, movetime=0.1)
        assert engine.returncode is None
    finally:
        engine.kill()
    assert engine.returncode is not None


def test_no_uciok_times_out() -> None:
    with fake(options=("--no-uciok",)) as engine, pytest.raises(EngineTimeout, match="uciok"):
        engine.handshake(timeout=0.5)


def test_a_crash_is_reported_with_its_status_and_last_words() -> None:
    with fake("!crash") as engine:
        engine.handshake(timeout=10)
        with pytest.raises(EngineExited, match="exit status 3") as caught:
            engine.go(timeout=10, movetime=0.1)
        assert "crashing as scripted" in str(caught.value)


def test_a_bestmove_without_a_move_breaks_the_protocol() -> None:
    with fake("!empty") as engine:
        engine.handshake(timeout=10)
        with pytest.raises(UciProtocolError, match="without a move"):
            engine.go(timeout=10, movetime=0.1)


def test_an_engine_that_will_not_quit_is_killed() -> None:
    engine = fake("!hang")
    engine.handshake(timeout=10)
    engine.write("go infinite")  # it now sleeps and reads no more
    assert engine.close(grace=0.2) is not None


@pytest.mark.skipif(shutil.which("stockfish", path="/usr/games:/usr/bin") is None,
                    reason="Stockfish is not installed")
def test_a_short_conversation_with_stockfish() -> None:
    program = shutil.which("stockfish", path="/usr/games:/usr/bin")
    assert program is not None
    with UciClient([program]) as engine:
        engine.handshake(timeout=10)
        assert engine.option("UCI_Elo") is not None and engine.option("Skill Level") is not None
        engine.set_option("Skill Level", 0)
        engine.set_option("Threads", 1)
        engine.new_game()
        engine.is_ready(timeout=10)
        engine.position(None, ["f2f3", "e7e5", "g2g4"])
        best = engine.go(timeout=10, movetime=0.2)
        assert best.move == "d8h4"  # mate in one: any level finds it


def test_the_engines_option_lines_parse_back_to_the_options_it_built() -> None:
    """saz uci announces its options with `UciOption.line`; the client reads them back equal."""
    options = [UciOption("Hash", "spin", "256", 1, 1048576), UciOption("Ponder", "check", "false"),
               UciOption("UCI_Variant", "combo", "chess", choices=("chess", "gardner")),
               UciOption("Model", "string", "<empty>"), UciOption("Clear Hash", "button")]
    assert [parse_option(option.line()) for option in options] == options
