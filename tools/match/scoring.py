"""`saz scoring`: does saz count finished Go games as GNU Go does?

    saz scoring --engine "saz gtp --model models/go.onnx" \\
                --referee "gnugo --mode gtp --chinese-rules" models/records [more records]

Each Go game of the records (match records, SGF files of one game or many, folders of them:
`tools/match/records.py`; other games are skipped) is loaded into both programs with GTP's
`loadsgf` (one game a file, as GTP reads it), and both are asked `final_score`. GNU Go takes dead
stones off the board by its own life-and-death reading; saz by its network's ownership
(`final_status_list dead`); a count that ignored dead stones would disagree on every game where one
side's group died on the board. The table says, per game, both scores and whether they name the
same winner and the same margin; `--csv` keeps it (a game is named `FILE.sgf#N`, its place in its
file), and `--referee-csv` reuses the referee's counts of an earlier table (GNU Go spends minutes
on a messy 19x19 board; its count of a game never changes). Agreement is the share of games with
the same winner (the result a referee must get right); the exact margin is reported beside it.
"""
from __future__ import annotations

import argparse
import csv
import re
import shlex
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from saz.engine.games import game_class
from saz.engine.games.capabilities import AreaScored
from saz.protocol.client_errors import ClientError
from saz.protocol.gtp_client import GtpClient
from saz.tools.match.adapters import resolve_program
from saz.tools.match.records import RecordedGame, read_games

#: `final_score`'s answer: "B+3.5", "W+12", "0" (a draw).
_SCORE = re.compile(r"(?:([BW])\+(\d+(?:\.\d+)?))|0")
#: Seconds a program may take to load a record and count it (GNU Go reads a messy 19x19 board
#: for minutes).
TIMEOUT = 600.0


def parse_score(text: str) -> float:
    """Black's margin from a `final_score` reply (ValueError if it is not one)."""
    match = _SCORE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a final_score reply: {text!r}")
    if match.group(1) is None:
        return 0.0
    margin = float(match.group(2))
    return margin if match.group(1) == "B" else -margin


@dataclass(frozen=True)
class Count:
    """Both programs' counts of one game."""

    #: The game, as `RecordedGame.where` names it ("FILE.sgf#N").
    record: str
    ours: float
    referee: float
    #: How the record says the game ended ("score", "resign", "time", "?").
    ended: str

    @property
    def same_winner(self) -> bool:
        return (self.ours > 0) == (self.referee > 0) and (self.ours < 0) == (self.referee < 0)

    @property
    def same_margin(self) -> bool:
        return self.ours == self.referee


def go_records(paths: Sequence[Path]) -> list[RecordedGame]:
    """The games of Go (counted by area: `AreaScored`) in the records `paths` name
    (`records.read_games`), in order."""
    return [game for game in read_games(paths)
            if issubclass(game_class(game.sgf.game), AreaScored)]


def how_it_ended(game: RecordedGame) -> str:
    """From the game's result (RE): "score", "resign", "time", "forfeit" or "?"."""
    tail = (game.sgf.result or "").partition("+")[2].lower()
    if re.fullmatch(r"\d+(\.\d+)?", tail):
        return "score"
    return {"r": "resign", "resign": "resign", "t": "time", "time": "time",
            "f": "forfeit", "forfeit": "forfeit"}.get(tail, "?")


def count(program: GtpClient, game: RecordedGame) -> float:
    """The program's `final_score` of the game, loaded from a file of its own: GTP's `loadsgf`
    reads the first game of a file."""
    with tempfile.TemporaryDirectory(prefix="saz-scoring-") as folder:
        path = Path(folder) / "game.sgf"
        path.write_text(game.text, encoding="utf-8")
        program.command(f"loadsgf {path}", timeout=TIMEOUT)
    return parse_score(program.command("final_score", timeout=TIMEOUT))


class _Known:
    """Stands in for the referee where an earlier table has its counts."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    def count(self, game: RecordedGame) -> float:
        return self.scores[game.where]

    def kill(self) -> None:
        pass

    close = kill


def known_counts(table: Path) -> dict[str, float]:
    """The referee's counts in a CSV written by `--csv`, by game ("FILE.sgf#N")."""
    with table.open(newline="", encoding="utf-8") as f:
        return {row["record"]: float(row["referee"]) for row in csv.DictReader(f)}


def compare(engine: Sequence[str], referee: Sequence[str], records: Sequence[RecordedGame],
            known: dict[str, float] | None = None) -> tuple[list[Count], list[str]]:
    """Count every game with both programs (the referee's counts taken from `known` where it
    has them); returns the counts and the games one of them could not count (in time), after
    which both are started afresh."""
    counts: list[Count] = []
    failed: list[str] = []
    programs = None
    try:
        for record in records:
            if programs is None:
                programs = (GtpClient(list(engine)),
                            _Known(known) if known is not None else GtpClient(list(referee)))
            ours, theirs = programs
            try:
                theirs_count = (theirs.count(record) if isinstance(theirs, _Known)
                                else count(theirs, record))
                counts.append(Count(record.where, count(ours, record), theirs_count,
                                    how_it_ended(record)))
            except ClientError as exc:
                print(f"{record.where}: not counted: {exc}", file=sys.stderr, flush=True)
                failed.append(record.where)
                for program in programs:
                    program.kill()
                programs = None
                continue
            print(f"{record.where}: saz {counts[-1].ours:+g}, referee {counts[-1].referee:+g}",
                  file=sys.stderr, flush=True)
    finally:
        if programs is not None:
            for program in programs:
                program.close()
    return counts, failed


def summary(counts: Sequence[Count]) -> str:
    """A Markdown table: games, same winner, same margin, overall and by how games ended."""
    rows = ["| games | records | same winner | same margin |", "|---|---:|---:|---:|"]
    groups = {"all": list(counts)}
    for ended in sorted({c.ended for c in counts}):
        groups[f"ended by {ended}"] = [c for c in counts if c.ended == ended]
    for name, group in groups.items():
        n = len(group)
        winners = sum(c.same_winner for c in group)
        margins = sum(c.same_margin for c in group)
        rows.append(f"| {name} | {n} | {winners} ({100 * winners / n:.0f}%) | "
                    f"{margins} ({100 * margins / n:.0f}%) |")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="saz scoring",
        description="Compare saz's final_score with a referee's (GNU Go) over Go game records.")
    parser.add_argument("paths", nargs="+", type=Path,
                        help="match records (PATH, PATH.sgf), SGF files or folders of them")
    parser.add_argument("--engine", default="saz gtp", help="saz's command (default: saz gtp)")
    parser.add_argument("--referee", default="gnugo --mode gtp --chinese-rules",
                        help="the referee's GTP command (default: GNU Go, Chinese rules)")
    parser.add_argument("--csv", type=Path, help="write one row per game here")
    parser.add_argument("--referee-csv", type=Path, metavar="CSV",
                        help="take the referee's counts from this earlier --csv table (when it "
                             "has every game; else the referee counts them all)")
    args = parser.parse_args(argv)
    try:
        records = go_records(args.paths)
    except (ValueError, OSError) as exc:  # RecordError and SgfError are ValueErrors
        print(f"saz scoring: {exc}", file=sys.stderr)
        return 1
    if not records:
        print("saz scoring: no game of Go in the records", file=sys.stderr)
        return 1
    try:
        referee = shlex.split(args.referee)
        referee[0] = resolve_program(referee[0])  # Debian's gnugo lives in /usr/games
        known = known_counts(args.referee_csv) if args.referee_csv else None
        if known is not None and any(r.where not in known for r in records):
            known = None  # a game the table lacks: ask the referee for every one
        counts, failed = compare(shlex.split(args.engine), referee, records, known)
    except (ClientError, ValueError, OSError) as exc:
        print(f"saz scoring: {exc}", file=sys.stderr)
        return 1
    if not counts:
        print("saz scoring: no game could be counted", file=sys.stderr)
        return 1
    if args.csv is not None:
        with args.csv.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["record", "ended", "saz", "referee", "same_winner", "same_margin"])
            for c in counts:
                writer.writerow([c.record, c.ended, f"{c.ours:g}", f"{c.referee:g}",
                                 int(c.same_winner), int(c.same_margin)])
    print(summary(counts))
    if failed:
        print(f"\nnot counted in time ({len(failed)}): " + ", ".join(failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
