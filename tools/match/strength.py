"""The strength table of a model card: one row per `saz match` played by the model.

    saz card models/gomoku.json                                   # the table, as Markdown
    saz card models/gomoku.json --add models/records/gomoku-lr-gen402-vs-aiwine-15x15 ...

A row says whom the model played (the opponent's name and command), with which engine command,
on which board, the games' W-L-D and the Elo with its 95% interval (`tools/match/elo.py`), the time
control and openings, the command that reproduces the match and its record (`PATH` of the games
`PATH.sgf` and the summary `PATH.json`, `tools/match/records.py`). Rows are made from a match's
summary, where the model is the first engine unless named; `saz match --card MODEL.json`
records its own row when it ends, and `saz card --add` records matches played before.

The table is the list `strength["table"]` of the card (`engine/model_card.py`). Everything else
in the card, the trainer's in-run evaluation under `strength` included, is kept as it was.
Recording a match whose record is already in the table replaces that row in place, so a re-run
match updates its row instead of adding a second one.

This module imports no torch: `saz card` starts at once.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path, PurePath
from typing import Any

from saz.engine.model_card import ModelCard, ModelCardError, card_path
from saz.tools.match.elo import Record, estimate
from saz.tools.match.records import MatchRecord, RecordError, read_summary

#: The key of `ModelCard.strength` that holds the table.
TABLE = "table"
#: The columns of the Markdown table, as docs/STRENGTH.md has them, then the model's command.
COLUMNS = ("opponent", "board", "games", "W-L-D", "Elo [95%]", "time control", "engine")


class StrengthError(ValueError):
    """A match summary or strength table that cannot be read, or does not fit the card."""


@dataclass(frozen=True)
class StrengthRow:
    """One match of the model: whom it played, where, how it went and how to play it again."""

    #: The model's engine: its name in the match and the command that ran it.
    engine: str
    engine_command: str
    #: The opponent: its name in the match and the command that ran it.
    opponent: str
    opponent_command: str
    #: The game's registry name and the board, "WxH".
    game: str
    board: str
    #: Games played (fewer than scheduled when an SPRT stopped the match) and the model's record.
    games: int
    wins: int
    losses: int
    draws: int
    #: The model's Elo with its 95% interval, as the match printed it ("+636 [+441, +inf]").
    elo: str
    #: As `saz match --tc` writes it ("move=5", "5+0.1").
    time_control: str
    #: How the games were opened ("random 2 plies, seed 1", an openings file, "none").
    openings: str
    #: The `saz match ...` command line that plays the match again.
    command: str
    #: The match record: PATH of PATH.sgf (the games) and PATH.json (the summary), as given on
    #: the command line.
    record: str

    def __post_init__(self) -> None:
        """StrengthError unless every field has its type and the counts add up."""
        for f in fields(self):
            kind = int if f.type == "int" else str
            value = getattr(self, f.name)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise StrengthError(f"strength row {self.record!r}: {f.name!r} must be "
                                    f"{'an integer' if kind is int else 'a string'}, not "
                                    f"{value!r}")
        if min(self.wins, self.losses, self.draws) < 0 or self.games != (
                self.wins + self.losses + self.draws):
            raise StrengthError(f"strength row {self.record!r}: {self.games} games cannot be "
                                f"{self.wld} (W-L-D)")

    @property
    def wld(self) -> str:
        """The model's wins, losses and draws, "W-L-D"."""
        return f"{self.wins}-{self.losses}-{self.draws}"

    @classmethod
    def from_summary(cls, summary: Mapping[str, Any], record: str | PurePath,
                     command: str | None = None, engine: str | None = None) -> StrengthRow:
        """The row of a match from its summary (`tools/match/match.py`) and its record. The
        summary's own command unless `command` is given; StrengthError when a summary written
        before summaries had one (or not by `saz match` at all) gives none. The model is the
        engine that played first unless `engine` names it; its Elo is then the other side of
        the summary's."""
        try:
            command = command or summary.get("command")
            if not command:
                raise StrengthError("the summary does not say which command played the match "
                                    "(written before summaries did): give the command")
            settings, elo = summary["settings"], summary["elo"]
            first, second = elo["engine"], elo["opponent"]
            if engine is not None and engine not in (first, second):
                raise StrengthError(f"no engine {engine!r} in the match: it was {first} "
                                    f"against {second}")
            engine = engine or first
            opponent = second if engine == first else first
            totals = summary["totals"][engine]
            elo_text = elo["text"] if engine == first else str(estimate(
                Record(totals["wins"], totals["draws"], totals["losses"])))
            options = summary.get("options", {})
            return cls(
                engine=engine, engine_command=_with_options(summary["engines"][engine],
                                                            options.get(engine, {})),
                opponent=opponent, opponent_command=_with_options(summary["engines"][opponent],
                                                                  options.get(opponent, {})),
                game=settings["game"], board=f"{settings['width']}x{settings['height']}",
                games=totals["wins"] + totals["losses"] + totals["draws"],
                wins=totals["wins"], losses=totals["losses"], draws=totals["draws"],
                elo=elo_text, time_control=settings["time_control"],
                openings=settings["openings"], command=command, record=record_name(record))
        except KeyError as exc:  # `elo` is absent until a game has ended
            raise StrengthError(f"not the summary of a match with a game played: no {exc}") \
                from None
        except TypeError:
            raise StrengthError("not a match summary: a field has the wrong type") from None

    @classmethod
    def from_dict(cls, data: Any) -> StrengthRow:
        """A row as the card stores it; StrengthError naming what is wrong."""
        names = sorted(f.name for f in fields(cls))
        if not isinstance(data, dict) or sorted(data) != names:
            raise StrengthError(f"a strength row is an object with the keys {', '.join(names)}; "
                                f"got {data!r}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """The row as the card stores it."""
        return asdict(self)


def _with_options(command: str, options: Mapping[str, str]) -> str:
    """An engine's command with the UCI options the match set (`Skill Level=0`), which are
    as much its strength as its arguments."""
    if not options:
        return command
    return f"{command} ({', '.join(f'{name}={value}' for name, value in options.items())})"


def record_name(record: str | PurePath) -> str:
    """How a match record is named in the table: its PATH as given, in the same form however it
    was spelled ("./a/b.json" and "a/b" are one record), so that a re-run replaces its row."""
    return MatchRecord.of(record).name


def read_record(record: str | PurePath, command: str | None = None,
                engine: str | None = None) -> StrengthRow:
    """The row of the match recorded at `record` (PATH, PATH.sgf or PATH.json: its summary),
    the model being `engine` (default: the engine that played first); StrengthError naming the
    file when it is missing or not a match summary."""
    path = MatchRecord.of(record).summary
    try:
        return StrengthRow.from_summary(read_summary(record), record, command, engine)
    except RecordError as exc:
        raise StrengthError(str(exc)) from None
    except StrengthError as exc:
        raise StrengthError(f"{path}: {exc}") from None


# -- the table of a card ---------------------------------------------------------------------------
def load_card(path: str | Path, game: str | None = None) -> ModelCard:
    """The card at `path` (or beside the model `path`), which must be of `game` when one is
    given; ModelCardError when it is no card, StrengthError when it is another game's."""
    card = ModelCard.load(card_path(path))
    if game is not None and card.game != game:
        raise StrengthError(f"{card_path(path)} is the card of a {card.game} model, not {game}")
    return card


def rows(card: ModelCard) -> tuple[StrengthRow, ...]:
    """The card's strength table, in the order the matches were first recorded."""
    table = card.strength.get(TABLE, [])
    if not isinstance(table, list):
        raise StrengthError(f"strength[{TABLE!r}] of the card must be a list of rows")
    return tuple(StrengthRow.from_dict(row) for row in table)


def with_row(card: ModelCard, row: StrengthRow) -> ModelCard:
    """The card with `row` in its table: in place of the row of the same record, else
    last. Every other field, and every other key of `strength`, is unchanged."""
    if row.game != card.game:
        raise StrengthError(f"a {row.game} match ({row.record}) cannot rate a {card.game} model")
    table = list(rows(card))
    places = [index for index, old in enumerate(table) if old.record == row.record]
    if places:
        table[places[0]] = row
    else:
        table.append(row)
    strength = {**card.strength, TABLE: [entry.to_dict() for entry in table]}
    return replace(card, strength=strength)


def record_rows(path: str | Path, new_rows: Iterable[StrengthRow]) -> ModelCard:
    """Record the rows in the card at `path` (see `with_row`) and save it once, all or none:
    written beside, then renamed, so a reader never sees half a card. The card as saved."""
    card = load_card(path)
    for row in new_rows:
        card = with_row(card, row)
    card.save(card_path(path))
    return card


def markdown(table: Iterable[StrengthRow]) -> str:
    """The rows as a Markdown table with the columns of docs/STRENGTH.md (COLUMNS)."""
    lines = [_line(COLUMNS), _line(["---"] * len(COLUMNS))]
    for row in table:
        lines.append(_line([f"{row.opponent} ({_code(row.opponent_command)})", row.board,
                            str(row.games), row.wld, row.elo, row.time_control,
                            _code(row.engine_command)]))
    return "\n".join(lines)


def training_markdown(training: Mapping[str, Any]) -> str:
    """The card's training record as Markdown: the totals, then one row per session (command,
    generations made, hours, where it ran, GPU minutes). Records written before sessions were
    kept show their sessions' commands and the run's totals only. Empty for an untrained card."""
    if not training:
        return ""
    boards = ", ".join(training.get("board_sizes", []))
    lines = [f"Trained on {boards or 'unknown boards'}: {training.get('generations', '?')} "
             f"generations, {training.get('games', 0):,} games, "
             f"{training.get('positions', 0):,} positions, {training.get('steps', 0):,} "
             f"learner steps, {float(training.get('wall_seconds', 0)) / 3600:.2f} h, "
             f"{float(training.get('gpu_minutes', 0)):g} GPU minutes.", ""]
    sessions = training.get("sessions")
    if not sessions:
        lines.append("| session | command |")
        lines.append(_line(["---"] * 2))
        commands = training.get("commands") or [training.get("command", "?")]
        lines += [_line([str(i), _code(c)]) for i, c in enumerate(commands, 1)]
        return "\n".join(lines)
    lines.append(_line(["started", "command", "generations", "hours", "learner", "self-play",
                        "GPU minutes", "hardware"]))
    lines.append(_line(["---"] * 8))
    # Sessions run before the record kept them are known by their commands: one alone made the
    # generations before the first kept session, in the wall time the kept ones do not account for.
    commands = list(training.get("commands") or [])
    earlier = commands[:max(len(commands) - len(sessions), 0)]
    first_kept = (sessions[0].get("generations") or [1])[0]
    unaccounted = float(training.get("wall_seconds", 0)) - sum(
        float(s.get("wall_seconds", 0)) for s in sessions)
    for command in earlier:
        alone = len(earlier) == 1
        lines.append(_line(["before the record kept sessions", _code(command),
                            f"1-{first_kept - 1}" if alone and first_kept > 1 else "?",
                            f"{unaccounted / 3600:.2f}" if alone and unaccounted > 0 else "?",
                            "?", "?", "?", "?"]))
    for s in sessions:
        made = s.get("generations") or []
        hardware = s.get("hardware", {})
        where = f"{hardware.get('cpu', '?')}, {hardware.get('cores', '?')} cores" + (
            f", {hardware['gpu']}" if hardware.get("gpu") else "")
        generations = f"{made[0]}-{made[1]}" if made else "none"
        if s.get("grew_layers"):  # this session deepened the network first (`deepen`)
            generations += " (grew from {} to {} layers)".format(*s["grew_layers"])
        if s.get("grew_groups"):  # the network gained group maps (`add_groups`)
            generations += " (gained groups of {1} roles)".format(*s["grew_groups"])
        if s.get("widened_features"):  # the game had appended feature planes (`widen_inputs`)
            generations += " (input widened from {} to {} planes)".format(*s["widened_features"])
        lines.append(_line([str(s.get("started", "")), _code(str(s.get("command", ""))),
                            generations,
                            f"{float(s.get('wall_seconds', 0)) / 3600:.2f}",
                            str(s.get("learner_device", "")), str(s.get("selfplay_device", "")),
                            f"{float(s.get('gpu_minutes', 0)):g}", where]))
    return "\n".join(lines)


def _line(cells: Sequence[str]) -> str:
    # A pipe inside a cell, even in a code span, would end the cell: Markdown wants it escaped.
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _code(text: str) -> str:
    return f"`{text}`"


# -- the command line ------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="saz card",
        description="Print a model card's strength table (one row per `saz match` of the "
                    "model) as Markdown, after recording match records in it with --add.")
    parser.add_argument("model", type=Path, metavar="MODEL.json",
                        help="the model card (or the .onnx file beside it)")
    parser.add_argument("--add", type=Path, nargs="+", default=[], metavar="PATH",
                        help="record these matches (PATH.json, the summary `saz match --out "
                             "PATH` wrote; the model playing first unless --engine names it); "
                             "a record already in the table replaces its row")
    parser.add_argument("--engine", metavar="NAME",
                        help="the model's engine in the records, where it did not play first "
                             "(its wins, losses and Elo are recorded)")
    parser.add_argument("--command", metavar="'saz match ...'",
                        help="the command that played the match, for a summary written before "
                             "summaries recorded it (one PATH only)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """`saz card ARGS`; the exit status (2 for a card or record that cannot be used)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is not None and len(args.add) != 1:
        parser.error("--command names the command of one match: give exactly one --add PATH")
    try:
        # Every record is read before the card is written: a bad one changes nothing.
        added = [read_record(directory, args.command, args.engine) for directory in args.add]
        card = record_rows(args.model, added) if added else load_card(args.model)
        table = rows(card)
    except (ModelCardError, StrengthError) as exc:
        print(f"saz card: {exc}", file=sys.stderr)
        return 2
    training = training_markdown(card.training)
    if training:
        print(f"## Training\n\n{training}\n\n## Strength\n")
    if not table:
        print(f"{card_path(args.model)}: no match recorded yet (saz match --card, "
              "saz card --add)", file=sys.stderr)
        return 0
    print(markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
