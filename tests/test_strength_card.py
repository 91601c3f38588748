"""The strength table of a model card (`tools/match/strength.py`): rows from match summaries, recorded
in a copy of a shipped card without touching the rest of it, printed as Markdown, and recorded
by `saz match --card` and `saz card --add`."""
from __future__ import annotations

import io
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from saz.engine.model_card import ModelCard, ModelCardError
from saz.tools.match import strength
from saz.tools.match.match import main as match_main
from saz.tools.match.strength import StrengthError, StrengthRow, markdown, read_record, record_rows, rows
from conftest import DATA
# The scripted fake engines of the match tests: `five` wins every game, `broken` loses it.
from test_match import _winner_and_loser

REPO = Path(__file__).resolve().parent.parent
#: A real record's summary (its games are not needed here): the Gomoku model shipped after one
#: hour of training against greedy at 15x15, 39-1-0, written before summaries held the command.
RECORD_15 = DATA / "gomoku-1h-vs-greedy-15x15"
COMMAND_15 = ("saz match --game gomoku --size 15 --games 40 --tc move=5 --random-plies 2 "
              "--seed 1 --out runs/gomoku-1h-vs-greedy-15x15 --engine 'saz=.venv/bin/"
              "pbrain-saz --visits 100' --engine 'greedy=.venv/bin/pbrain-saz --player greedy'")
ROW_15 = StrengthRow(
    engine="saz", engine_command=".venv/bin/pbrain-saz --visits 100",
    opponent="greedy", opponent_command=".venv/bin/pbrain-saz --player greedy",
    game="gomoku", board="15x15", games=40, wins=39, losses=1, draws=0,
    elo="+636 [+441, +inf]", time_control="move=5", openings="random 2 plies, seed 1",
    command=COMMAND_15, record="tests/data/gomoku-1h-vs-greedy-15x15")


@pytest.fixture
def card(tmp_path: Path) -> Path:
    """A copy of the shipped Gomoku card with no strength table yet (the shipped one has its
    matches recorded), and its ONNX file beside it."""
    shutil.copy(REPO / "models" / "gomoku.onnx", tmp_path / "gomoku.onnx")
    data = json.loads((REPO / "models" / "gomoku.json").read_text())
    data["strength"].pop("table", None)
    (tmp_path / "gomoku.json").write_text(json.dumps(data, indent=2) + "\n")
    return tmp_path / "gomoku.json"


def summary_of(row: StrengthRow) -> dict[str, Any]:
    """A summary as `saz match` writes it (the fields a row reads), for `row`'s match."""
    width, height = (int(n) for n in row.board.split("x"))
    counts = {"wins": row.wins, "losses": row.losses, "draws": row.draws}
    return {"command": row.command,
            "engines": {row.engine: row.engine_command, row.opponent: row.opponent_command},
            "settings": {"game": row.game, "width": width, "height": height,
                         "time_control": row.time_control, "openings": row.openings},
            "totals": {row.engine: counts,
                       row.opponent: {"wins": row.losses, "losses": row.wins,
                                      "draws": row.draws}},
            "elo": {"engine": row.engine, "opponent": row.opponent, "text": row.elo}}


def write_record(path: Path, summary: dict[str, Any]) -> Path:
    """The record PATH whose summary, PATH.json, is `summary` (no games: a row reads none)."""
    path.with_name(path.name + ".json").write_text(json.dumps(summary))
    return path


# -- rows ------------------------------------------------------------------------------------------
def test_a_real_summary_becomes_its_row() -> None:
    """The 15x15 record predates summaries' commands: refused without one, exact with one."""
    with pytest.raises(StrengthError, match=r"15x15\.json: .* give the command"):
        read_record(RECORD_15)
    row = read_record(RECORD_15, COMMAND_15)
    assert row == StrengthRow(**ROW_15.to_dict() | {"record": RECORD_15.as_posix()})
    assert row.wld == "39-1-0"
    summary = json.loads(RECORD_15.with_name(RECORD_15.name + ".json").read_text())
    # The record as given on the command line, however it was spelled: PATH, PATH.json or
    # PATH.sgf, from here or not.
    for spelled in ("./tests/data/gomoku-1h-vs-greedy-15x15",
                    "tests/data/gomoku-1h-vs-greedy-15x15.json",
                    "tests/data/gomoku-1h-vs-greedy-15x15.sgf"):
        assert StrengthRow.from_summary(summary, spelled, COMMAND_15) == ROW_15


def test_the_summarys_own_command_is_used_and_an_explicit_one_wins(tmp_path: Path) -> None:
    record = write_record(tmp_path / "m", summary_of(ROW_15) | {"command": "saz match --own"})
    assert read_record(record).command == "saz match --own"
    assert read_record(record, "saz match --given").command == "saz match --given"
    assert read_record(record).record == record.as_posix()


@pytest.mark.parametrize(("summary", "words"), [
    ({key: value for key, value in summary_of(ROW_15).items() if key != "elo"}, "no 'elo'"),
    (summary_of(ROW_15) | {"totals": {}}, "no 'saz'"),
    (summary_of(ROW_15) | {"settings": ["gomoku"]}, "wrong type"),
    (summary_of(ROW_15) | {"command": None}, "give the command"),
])
def test_summaries_that_make_no_row_are_refused(tmp_path: Path, summary: dict[str, Any],
                                                words: str) -> None:
    record = write_record(tmp_path / "m", summary)
    with pytest.raises(StrengthError, match=words):
        read_record(record)
    with pytest.raises(StrengthError, match="cannot read"):
        read_record(tmp_path / "nowhere")


def test_rows_check_their_fields() -> None:
    data = ROW_15.to_dict()
    assert StrengthRow.from_dict(data) == ROW_15
    with pytest.raises(StrengthError, match="'wins' must be an integer"):
        StrengthRow.from_dict(data | {"wins": "39"})
    with pytest.raises(StrengthError, match="40 games cannot be 38-1-0"):
        StrengthRow.from_dict(data | {"wins": 38})
    with pytest.raises(StrengthError, match="keys"):
        StrengthRow.from_dict({k: v for k, v in data.items() if k != "record"})


# -- the card --------------------------------------------------------------------------------------
def test_recording_keeps_every_other_field_and_the_onnx_check(card: Path) -> None:
    before = json.loads(card.read_text())
    saved = record_rows(card, [ROW_15])
    after = json.loads(card.read_text())
    assert after["strength"].pop("table") == [ROW_15.to_dict()]
    assert after == before  # the trainer's visits, opening_plies and matches included
    assert rows(ModelCard.load(card)) == rows(saved) == (ROW_15,)
    ModelCard.load(card).check_contents(card.with_suffix(".onnx").read_bytes())
    assert not list(card.parent.glob("*.tmp"))


def test_a_rerun_match_replaces_its_row_in_place(card: Path) -> None:
    other = StrengthRow(**ROW_15.to_dict() | {"opponent": "random", "record": "m/random"})
    record_rows(card, [ROW_15, other])
    rerun = StrengthRow(**ROW_15.to_dict() | {"games": 41, "wins": 40, "elo": "+650 [+450, +inf]"})
    spelled_otherwise = StrengthRow.from_summary(summary_of(rerun), "./" + ROW_15.record + ".json")
    record_rows(card, [spelled_otherwise])
    assert rows(ModelCard.load(card)) == (rerun, other)


def test_another_games_match_or_card_is_refused_and_the_card_unchanged(card: Path,
                                                                      tmp_path: Path) -> None:
    before = card.read_bytes()
    othello = StrengthRow(**ROW_15.to_dict() | {"game": "othello"})
    with pytest.raises(StrengthError, match="othello match .* cannot rate a gomoku model"):
        record_rows(card, [ROW_15, othello])
    assert card.read_bytes() == before
    with pytest.raises(StrengthError, match="card of a gomoku model, not go"):
        strength.load_card(card, "go")
    with pytest.raises(ModelCardError, match="not found"):
        strength.load_card(tmp_path / "none.json")


def test_the_table_as_markdown() -> None:
    rhino = StrengthRow(**ROW_15.to_dict() | {
        "opponent": "rhino-l1", "opponent_command": "/usr/games/gtp-rhino -l 1",
        "board": "8x8", "games": 20, "wins": 6, "losses": 12, "draws": 2,
        "elo": "-108 [-298, +33]", "engine_command": "saz gtp | tee log"})
    assert markdown([ROW_15, rhino]).splitlines() == [
        "| opponent | board | games | W-L-D | Elo [95%] | time control | engine |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        ("| greedy (`.venv/bin/pbrain-saz --player greedy`) | 15x15 | 40 | 39-1-0 "
         "| +636 [+441, +inf] | move=5 | `.venv/bin/pbrain-saz --visits 100` |"),
        ("| rhino-l1 (`/usr/games/gtp-rhino -l 1`) | 8x8 | 20 | 6-12-2 | -108 [-298, +33] "
         "| move=5 | `saz gtp \\| tee log` |")]


# -- the command lines -----------------------------------------------------------------------------
def test_saz_match_card_records_the_match_end_to_end(card: Path, tmp_path: Path) -> None:
    five, broken = _winner_and_loser(tmp_path)
    argv = ["--game", "gomoku", "--size", "5", "--games", "2", "--tc", "move=5",
            "--out", str(tmp_path / "m"), "--card", str(card),
            "--engine", f"five={five.command}", "--engine", f"broken={broken.command}"]
    out = io.StringIO()
    assert match_main(argv, stdout=out) == 0
    summary = json.loads((tmp_path / "m.json").read_text())
    assert shlex.split(summary["command"]) == ["saz", "match", *argv]
    (row,) = rows(ModelCard.load(card))  # -291: the exact bound after two straight wins
    assert row == StrengthRow(
        engine="five", engine_command=five.command, opponent="broken",
        opponent_command=broken.command, game="gomoku", board="5x5", games=2, wins=2, losses=0,
        draws=0, elo="+inf [-291, +inf]", time_control="move=5", openings="none",
        command=summary["command"], record=(tmp_path / "m").as_posix())
    assert out.getvalue().splitlines()[-1] == (
        f"recorded in {card}: broken 5x5 2-0-0 (W-L-D), Elo +inf [-291, +inf]")


@pytest.mark.parametrize(("card_name", "game", "words"), [
    ("none.json", "gomoku", "none.json not found"),
    ("list.json", "gomoku", "expected a JSON object"),
    ("gomoku.json", "go", "card of a gomoku model, not go"),
])
def test_saz_match_refuses_a_bad_card_before_any_game(card: Path, tmp_path: Path, capsys,
                                                      card_name: str, game: str,
                                                      words: str) -> None:
    (tmp_path / "list.json").write_text("[1, 2]")
    five, broken = _winner_and_loser(tmp_path)
    argv = ["--game", game, "--size", "5", "--out", str(tmp_path / "m"),
            "--card", str(tmp_path / card_name),
            "--engine", f"five={five.command}", "--engine", f"broken={broken.command}"]
    with pytest.raises(SystemExit) as exit_info:
        match_main(argv, stdout=io.StringIO())
    assert exit_info.value.code == 2
    assert words in capsys.readouterr().err
    assert not list(tmp_path.glob("m*"))  # no game was played, no record written


def test_saz_match_card_needs_out(card: Path, capsys) -> None:
    with pytest.raises(SystemExit):
        match_main(["--game", "gomoku", "--card", str(card), "--engine", "a=true",
                    "--engine", "b=true"], stdout=io.StringIO())
    assert "--card needs --out" in capsys.readouterr().err


def test_saz_card_adds_records_and_prints_the_table(card: Path, tmp_path: Path,
                                                    capsys) -> None:
    assert strength.main([str(card)]) == 0
    assert "no match recorded yet" in capsys.readouterr().err
    before = card.read_bytes()
    assert strength.main([str(card), "--add", str(RECORD_15)]) == 2  # no command in it
    assert "give the command" in capsys.readouterr().err and card.read_bytes() == before
    assert strength.main([str(card), "--add", str(RECORD_15) + ".json", "--command",
                          COMMAND_15]) == 0
    out = capsys.readouterr().out
    assert out.endswith(markdown(
        [StrengthRow(**ROW_15.to_dict() | {"record": RECORD_15.as_posix()})]) + "\n")
    (row,) = rows(ModelCard.load(card))
    assert row.record == RECORD_15.as_posix()  # the record's PATH, without the suffix given
    training = json.loads(card.read_text())["training"]  # the shipped model's, whichever it is
    assert out.startswith(f"## Training\n\nTrained on {', '.join(training['board_sizes'])}: "
                          f"{training['generations']} generations")
    with pytest.raises(SystemExit):
        strength.main([str(card), "--add", "a", "b", "--command", "saz match"])
    assert "exactly one --add PATH" in capsys.readouterr().err


def test_saz_card_is_a_subcommand_that_imports_no_torch(card: Path) -> None:
    code = ("import sys; from saz.engine.cli import main; status = main(['card', sys.argv[1]]); "
            "sys.exit(status or bool({'torch', 'onnxruntime'} & set(sys.modules)))")
    assert subprocess.run([sys.executable, "-c", code, str(card)], check=False,
                          capture_output=True).returncode == 0


def test_the_training_record_lists_every_session() -> None:
    session = {"command": "saz train --out runs/go --resume --hours 0.5", "started": "2026-11-26",
               "wall_seconds": 1800.0, "generations": [23, 30], "learner_device": "cuda",
               "selfplay_device": "cuda", "gpu_minutes": 30.0,
               "hardware": {"cpu": "Xeon", "cores": 16, "gpu": "NVIDIA H100"}}
    first = {"command": "saz train --game go --out runs/go --hours 1", "started": "2026-11-25",
             "wall_seconds": 3600.0, "generations": [1, 22], "learner_device": "cpu",
             "selfplay_device": "cpu", "gpu_minutes": 0.0,
             "hardware": {"cpu": "EPYC", "cores": 2, "gpu": None}}
    text = strength.training_markdown({
        "board_sizes": ["5x5", "9x9"], "generations": 30, "games": 3000, "positions": 50000,
        "steps": 4000, "wall_seconds": 5400.0, "gpu_minutes": 30.0,
        "sessions": [first, session]})
    assert text.startswith("Trained on 5x5, 9x9: 30 generations, 3,000 games")
    assert "1.50 h, 30 GPU minutes." in text
    assert "| 2026-11-25 | `saz train --game go --out runs/go --hours 1` | 1-22 | 1.00 | cpu | " \
           "cpu | 0 | EPYC, 2 cores |" in text
    assert "| 23-30 | 0.50 | cuda | cuda | 30 | Xeon, 16 cores, NVIDIA H100 |" in text
    assert strength.training_markdown({}) == ""
    grown = strength.training_markdown({"sessions": [dict(session, grew_layers=[3, 6])]})
    assert "| 23-30 (grew from 3 to 6 layers) | 0.50 |" in grown
    widened = strength.training_markdown({"sessions": [dict(session, widened_features=[10, 14])]})
    assert "| 23-30 (input widened from 10 to 14 planes) | 0.50 |" in widened
    grouped = strength.training_markdown({"sessions": [dict(session, grew_groups=[0, 2])]})
    assert "| 23-30 (gained groups of 2 roles) | 0.50 |" in grouped

    # A run whose first session predates the sessions record: its command, the generations
    # before the first kept session, and the wall time the kept sessions leave over.
    text = strength.training_markdown({
        "generations": 30, "wall_seconds": 9000.0,
        "commands": ["saz train --game go --out runs/go --hours 1", first["command"],
                     session["command"]],
        "sessions": [dict(first, generations=[5, 22]), session]})
    assert "| before the record kept sessions | `saz train --game go --out runs/go --hours 1` | " \
           "1-4 | 1.00 | ? | ? | ? | ? |" in text


def test_a_model_that_played_second_is_named_and_its_side_recorded(tmp_path: Path) -> None:
    """A match run as `--engine aiwine=... --engine saz=...`: the row is saz's, its Elo the
    other side of the summary's."""
    first = StrengthRow(**ROW_15.to_dict() | {"engine": "greedy", "opponent": "saz",
                                              "engine_command": ROW_15.opponent_command,
                                              "opponent_command": ROW_15.engine_command,
                                              "wins": 1, "losses": 39, "elo": "-636 [-inf, -441]"})
    record = write_record(tmp_path / "m", summary_of(first))
    row = read_record(record, engine="saz")
    assert (row.engine, row.opponent, row.wld) == ("saz", "greedy", "39-1-0")
    assert row.engine_command == ROW_15.engine_command
    assert row.elo == "+636 [+441, +inf]"
    assert read_record(record).engine == "greedy"  # by default, the first engine's
    with pytest.raises(StrengthError, match="no engine 'nobody' in the match"):
        read_record(record, engine="nobody")


@pytest.mark.parametrize("game", ["go", "gomoku", "othello"])
def test_every_row_of_a_shipped_card_is_its_record(game: str) -> None:
    """Each row of a shipped model's strength table is the row its match record makes (the
    record's summary, its command included, the model named by the row), and the record's
    collection holds the games its summary lists, in order."""
    from saz.tools.match.records import MatchRecord, read_games, read_summary

    table = rows(ModelCard.load(REPO / "models" / f"{game}.json"))
    assert table
    for row in table:
        assert row.record.startswith("models/records/")
        record = MatchRecord.of(REPO / row.record)
        assert read_record(record.stem, engine=row.engine) == StrengthRow(
            **row.to_dict() | {"record": record.name})
        games = [g["result"] for g in read_summary(record)["games"]]
        assert [g.sgf.result for g in read_games([record.games])] == games
        assert len(games) == row.games
