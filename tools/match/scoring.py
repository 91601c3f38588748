"""`saz scoring`: does saz count finished Go games as GNU Go does?

    saz scoring --engine "saz gtp --model models/go.onnx" \\
                --referee "gnugo --mode gtp --chinese-rules" docs/matches [more SGF files or folders]

Each Go game record (`*.sgf`, searched recursively; other games are skipped) is loaded into both
programs with GTP's `loadsgf`, and both are asked `final_score`. GNU Go takes dead stones off the
board by its own life-and-death reading; saz by its network's ownership (`final_status_list
dead`); a count that ignored dead stones would disagree on every game where one side's group died
on the board. The table says, per record, both scores and whether they name the same winner and
the same margin; `--csv` keeps it, and `--referee-csv` reuses the referee's counts of an earlier
table (GNU Go spends minutes on a messy 19x19 board; its count of a record never changes). Agreement is the share of records with the same winner (the
result a referee must get right); the exact margin is reported beside it.
"""
from __future__ import annotations

import argparse
import csv
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from saz.protocol.client_errors import ClientError
from saz.protocol.gtp_client import GtpClient
from saz.tools.match.adapters import resolve_program

#: `final_score`'s answer: "B+3.5", "W+12", "0" (a draw).
_SCORE = re.compile(r"(?:([BW])\+(\d+(?:\.\d+)?))|0")
#: A game of Go in an SGF file (GM[1], or no GM at all, which means Go).
_NOT_GO = re.compile(r"GM\[(?!1\])")
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
    """Both programs' counts of one record."""

    record: Path
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


def go_records(paths: Iterable[Path]) -> list[Path]:
    """The Go SGF files among `paths` (folders searched recursively), sorted."""
    found: set[Path] = set()
    for path in paths:
        files = sorted(path.rglob("*.sgf")) if path.is_dir() else [path]
        for file in files:
            if not _NOT_GO.search(file.read_text(encoding="utf-8", errors="replace")[:2000]):
                found.add(file)
    return sorted(found)


def how_it_ended(record: Path) -> str:
    """From the record's RE[] property: "score", "resign", "time", "forfeit" or "?"."""
    match = re.search(r"RE\[([^\]]*)\]", record.read_text(encoding="utf-8", errors="replace"))
    result = match.group(1) if match else ""
    tail = result.partition("+")[2].lower()
    if re.fullmatch(r"\d+(\.\d+)?", tail):
        return "score"
    return {"r": "resign", "resign": "resign", "t": "time", "time": "time",
            "f": "forfeit", "forfeit": "forfeit"}.get(tail, "?")


def count(program: GtpClient, record: Path) -> float:
    program.command(f"loadsgf {record.resolve()}", timeout=TIMEOUT)
    return parse_score(program.command("final_score", timeout=TIMEOUT))


class _Known:
    """Stands in for the referee where an earlier table has its counts."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    def count(self, record: Path) -> float:
        return self.scores[str(record)]

    def kill(self) -> None:
        pass

    close = kill


def known_counts(table: Path) -> dict[str, float]:
    """The referee's counts in a CSV written by `--csv`, by record path."""
    with table.open(newline="", encoding="utf-8") as f:
        return {row["record"]: float(row["referee"]) for row in csv.DictReader(f)}


def compare(engine: Sequence[str], referee: Sequence[str], records: Sequence[Path],
            known: dict[str, float] | None = None) -> tuple[list[Count], list[Path]]:
    """Count every record with both programs (the referee's counts taken from `known` where it
    has them); returns the counts and the records one of them could not count (in time), after
    which both are started afresh."""
    counts: list[Count] = []
    failed: list[Path] = []
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
                counts.append(Count(record, count(ours, record), theirs_count,
                                    how_it_ended(record)))
            except ClientError as exc:
                print(f"{record}: not counted: {exc}", file=sys.stderr, flush=True)
                failed.append(record)
                for program in programs:
                    program.kill()
                programs = None
                continue
            print(f"{record}: saz {counts[-1].ours:+g}, referee {counts[-1].referee:+g}",
                  file=sys.stderr, flush=True)
    finally:
        if programs is not None:
            for program in programs:
                program.close()
    return counts, failed


def summary(counts: Sequence[Count]) -> str:
    """A Markdown table: records, same winner, same margin, overall and by how games ended."""
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
    parser.add_argument("paths", nargs="+", type=Path, help="SGF files or folders of them")
    parser.add_argument("--engine", default="saz gtp", help="saz's command (default: saz gtp)")
    parser.add_argument("--referee", default="gnugo --mode gtp --chinese-rules",
                        help="the referee's GTP command (default: GNU Go, Chinese rules)")
    parser.add_argument("--csv", type=Path, help="write one row per record here")
    parser.add_argument("--referee-csv", type=Path, metavar="CSV",
                        help="take the referee's counts from this earlier --csv table (when it "
                             "has every record; else the referee counts them all)")
    args = parser.parse_args(argv)
    records = go_records(args.paths)
    if not records:
        print("saz scoring: no Go game records found", file=sys.stderr)
        return 1
    try:
        referee = shlex.split(args.referee)
        referee[0] = resolve_program(referee[0])  # Debian's gnugo lives in /usr/games
        known = known_counts(args.referee_csv) if args.referee_csv else None
        if known is not None and any(str(r) not in known for r in records):
            known = None  # a record the table lacks: ask the referee for every one
        counts, failed = compare(shlex.split(args.engine), referee, records, known)
    except (ClientError, ValueError, OSError) as exc:
        print(f"saz scoring: {exc}", file=sys.stderr)
        return 1
    if not counts:
        print("saz scoring: no record could be counted", file=sys.stderr)
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
        print(f"\nnot counted in time ({len(failed)}): " + ", ".join(map(str, failed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
