"""`saz evaluate`: a training run's generations against fixed anchors, with Elo, to choose the
one to ship.

    saz evaluate runs/go --size 9 --size 13 --games 20 --tc move=5 --every 8 \\
        --anchor gnugo-l1="gnugo --mode gtp --level 1 --chinese-rules --capture-all-dead" \\
        --anchor shipped="saz gtp --game go --model models/go.onnx --visits 100"

The run's own evaluation (`arena.py`, inside `saz train`) plays the previous generation and the
reference players in-process; anchors are real programs (GNU Go, gtp-rhino, AIWine, the model
shipped before), played through `saz match` exactly as any other match, and never change, so the
Elo of every generation against them is on one scale. Each (generation, anchor, board) is one
match of the generation's network (searched at `--visits`, no noise) against the anchor, recorded
in `RUN/evaluation/gen_NNNNN-vs-ANCHOR-WxH.sgf` (the games) and `.json` (the summary, whose
command replays it; `tools/match/records.py`).

A match whose summary has all its games is never played again, one cut short is played again from
its start: the command resumes where it stopped, on this machine or another, and runs beside
`saz train` with `--follow` (it waits for new generations). Matches use the run's rules (its
config's komi or Gomoku rule). After every match `RUN/evaluation.csv` is rebuilt from every
summary: one row per match with the generation's wall time, games and positions (from the run's
metrics), the score and the Elo with its 95% interval. `--best WxH` names the generation with
the highest total score against the anchors at that board (the board should be larger than any
the run trained on: that is the claim the model makes), the later one on ties.

This module imports no torch.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shlex
import sys
import time
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from saz.engine.games.grid import parse_size
from saz.tools.match import match as match_cli
from saz.tools.match.adapters import EngineSpec, GameSetup
from saz.tools.match.records import SUMMARY_SUFFIX, MatchRecord, RecordError, read_summary
from saz.tools.match.time_control import MatchTimeControl, MatchTimeControlError

#: Where a run keeps its anchor matches, and the table built from them.
EVALUATION_DIR = "evaluation"
EVALUATION_CSV = "evaluation.csv"
#: Gomoku rules `saz match --rule` takes (Go's rule is always Tromp-Taylor area with `--komi`).
_MATCH_RULES = ("freestyle", "exact-five", "renju")
_MODEL = re.compile(r"gen_(\d+)\.onnx$")
_RECORD = re.compile(r"gen_(\d+)-vs-(.+)-(\d+)x(\d+)$")


class EvaluateError(ValueError):
    """A run or an option that cannot be evaluated as asked."""


@dataclass(frozen=True)
class Anchor:
    """A fixed opponent: its name (a folder name part, so letters, digits, `-_.`) and command."""

    name: str
    command: str

    @classmethod
    def parse(cls, text: str) -> Anchor:
        """`NAME=COMMAND`; EvaluateError when malformed or the program is not found."""
        try:
            spec = EngineSpec.parse(text)
        except ValueError as exc:
            raise EvaluateError(f"--anchor: {exc}") from None
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", spec.name) or spec.name.startswith("gen"):
            raise EvaluateError(f"--anchor name {spec.name!r}: use letters, digits, '-', '_' or "
                                "'.', not starting with 'gen'")
        return cls(spec.name, text.partition("=")[2].strip())


@dataclass(frozen=True)
class Plan:
    """What to play: the boards, the match settings and the generation's search."""

    sizes: tuple[tuple[int, int], ...]
    anchors: tuple[Anchor, ...]
    games: int
    time_control: str
    visits: int
    random_plies: int
    seed: int
    concurrency: int


class Run:
    """The parts of a run directory the evaluation reads (no torch: not `run.RunDir`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        if not (root / "config.toml").is_file() or not (root / "models").is_dir():
            raise EvaluateError(f"{root} is not a training run (no config.toml or models/)")
        with open(root / "config.toml", "rb") as f:
            self.rules: dict[str, Any] = dict(tomllib.load(f).get("rules", {}))
        generations = self.generations()
        card = self._card(0) or (self._card(generations[-1]) if generations else None)
        if card is None:
            raise EvaluateError(f"{root}/models holds no exported generation")
        self.game = str(card["game"])

    def _card(self, generation: int) -> dict[str, Any] | None:
        path = self.model_of(generation).with_suffix(".json")
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None

    def model_of(self, generation: int) -> Path:
        return self.root / "models" / f"gen_{generation:05d}.onnx"

    def generations(self) -> list[int]:
        """Every exported generation but the random start, oldest first."""
        found = (_MODEL.search(p.name) for p in (self.root / "models").glob("gen_*.onnx"))
        return sorted(int(m.group(1)) for m in found if m and int(m.group(1)) > 0)

    def record_of(self, generation: int, anchor: str, size: tuple[int, int]) -> Path:
        return (self.root / EVALUATION_DIR /
                f"gen_{generation:05d}-vs-{anchor}-{size[0]}x{size[1]}")

    def progress(self) -> dict[int, dict[str, float]]:
        """generation -> its wall seconds, games and positions, from metrics.csv."""
        out: dict[int, dict[str, float]] = {}
        try:
            with open(self.root / "metrics.csv", newline="", encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
        except OSError:
            return out
        games = positions = 0.0
        for row in rows:
            games += float(row.get("games") or 0)
            positions += float(row.get("positions") or 0)
            out[int(row["generation"])] = {"wall_seconds": float(row.get("wall_seconds") or 0),
                                           "games": games, "positions": positions}
        return out


def chosen(generations: Sequence[int], every: int | None, listed: Sequence[int] | None
           ) -> list[int]:
    """The generations to evaluate: those listed, else every `every`-th and the newest."""
    if listed:
        return [g for g in generations if g in set(listed)]
    if not generations:
        return []
    step = every or 1
    return sorted({g for g in generations if g % step == 0} | {generations[-1]})


def _finished(record: Path, games: int) -> bool:
    try:
        summary = read_summary(record)
    except RecordError:
        return False
    return len(summary.get("games", [])) >= games


def _saz_program() -> str:
    """The `saz` script of this installation (beside the interpreter), relative when it can be
    so the recorded command reads like the others in docs/."""
    script = Path(sys.executable).with_name("saz")
    if not script.is_file():
        return "saz"
    try:
        return os.path.relpath(script)
    except ValueError:
        return str(script)


def match_argv(run: Run, plan: Plan, generation: int, anchor: Anchor,
               size: tuple[int, int]) -> list[str]:
    """The `saz match` arguments of one evaluation match."""
    protocol = GameSetup(run.game, *size, MatchTimeControl.parse(plan.time_control)).protocol
    engine = [_saz_program(), protocol, *(["--game", run.game] if protocol == "gtp" else []),
              "--model", str(run.model_of(generation)), "--visits", str(plan.visits),
              "--threads", "1"]
    argv = ["--game", run.game, "--size", f"{size[0]}x{size[1]}", "--games", str(plan.games),
            "--tc", plan.time_control, "--concurrency", str(plan.concurrency),
            "--out", str(run.record_of(generation, anchor.name, size)),
            "--engine", f"gen{generation}={shlex.join(engine)}",
            "--engine", f"{anchor.name}={anchor.command}"]
    if plan.random_plies:
        argv += ["--random-plies", str(plan.random_plies), "--seed", str(plan.seed)]
    if "komi" in run.rules:
        argv += ["--komi", str(run.rules["komi"])]
    if run.rules.get("rule") in _MATCH_RULES:
        argv += ["--rule", str(run.rules["rule"])]
    return argv


def pending(run: Run, plan: Plan, generations: Iterable[int]) -> list[tuple[int, Anchor,
                                                                            tuple[int, int]]]:
    """The matches still to play, newest generation first (the one a user most wants to know)."""
    return [(g, a, s) for g in sorted(generations, reverse=True) for s in plan.sizes
            for a in plan.anchors if not _finished(run.record_of(g, a.name, s), plan.games)]


def table(run: Run) -> list[dict[str, Any]]:
    """One row per recorded match (finished or not), by generation, board and anchor."""
    progress = run.progress()
    rows = []
    for summary_path in sorted((run.root / EVALUATION_DIR).glob(f"*{SUMMARY_SUFFIX}")):
        record = MatchRecord.of(summary_path.relative_to(run.root))
        m = _RECORD.match(record.stem.name)
        if m is None:
            continue
        try:
            summary = read_summary(summary_path)
            elo = summary["elo"]
            totals = summary["totals"][elo["engine"]]
        except (RecordError, KeyError):
            continue
        generation = int(m.group(1))
        played = totals["wins"] + totals["losses"] + totals["draws"]
        rows.append({
            "generation": generation,
            **{k: progress.get(generation, {}).get(k, "") for k in
               ("wall_seconds", "games", "positions")},
            "anchor": m.group(2), "board": f"{m.group(3)}x{m.group(4)}",
            "played": played, "scheduled": summary["settings"]["games"],
            "wins": totals["wins"], "losses": totals["losses"], "draws": totals["draws"],
            "score": round((totals["wins"] + totals["draws"] / 2) / played, 4),
            "elo": elo["elo"], "elo_lower": elo["lower"], "elo_upper": elo["upper"],
            "elo_text": elo["text"], "record": record.name,
        })
    rows.sort(key=lambda r: (r["generation"], r["board"], r["anchor"]))
    return rows


def write_table(run: Run, rows: Sequence[dict[str, Any]]) -> Path:
    path = run.root / EVALUATION_CSV
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["generation"])
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)
    return path


def best(rows: Sequence[dict[str, Any]], board: str, anchors: Sequence[str]) -> int | None:
    """The generation with the most points against `anchors` at `board`, over generations
    whose every anchor match there is complete; the later one on ties; None when none is."""
    points: dict[int, dict[str, float]] = {}
    for r in rows:
        if r["board"] == board and r["anchor"] in anchors and r["played"] >= r["scheduled"]:
            points.setdefault(r["generation"], {})[r["anchor"]] = r["wins"] + r["draws"] / 2
    complete = {g: sum(p.values()) for g, p in points.items() if set(p) == set(anchors)}
    return max(complete, key=lambda g: (complete[g], g)) if complete else None


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| generation | wall (s) | anchor | board | W-L-D | score | Elo [95%] |",
             "|---:|---:|---|---|---|---:|---|"]
    for r in rows:
        partial = "" if r["played"] >= r["scheduled"] else f" ({r['played']}/{r['scheduled']})"
        wall = f"{float(r['wall_seconds']):,.0f}" if r["wall_seconds"] != "" else ""
        lines.append(f"| {r['generation']} | {wall} | {r['anchor']} | {r['board']} | "
                     f"{r['wins']}-{r['losses']}-{r['draws']}{partial} | "
                     f"{100 * r['score']:.0f}% | {r['elo_text']} |")
    return "\n".join(lines)


# -- the command -----------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="saz evaluate",
        description="Play a training run's generations against fixed anchors through saz match; "
                    "tabulate score and Elo per generation in RUN/evaluation.csv.")
    parser.add_argument("run", type=Path, metavar="RUN_DIR", help="the training run")
    parser.add_argument("--anchor", action="append", default=[], metavar="NAME=COMMAND",
                        help="a fixed opponent (repeatable)")
    parser.add_argument("--size", action="append", type=parse_size, default=[],
                        metavar="N|WxH", help="a board to play at (repeatable)")
    parser.add_argument("--games", type=int, default=20, help="games per match (default 20)")
    parser.add_argument("--tc", default="move=5", help="saz match's time control (move=5)")
    parser.add_argument("--visits", type=int, default=100,
                        help="the generation's visits a move (default 100)")
    parser.add_argument("--random-plies", type=int, default=2,
                        help="random opening plies, each opening with both colours (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="of the openings (default 1)")
    parser.add_argument("--concurrency", type=int, default=1, help="games at once (default 1)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--every", type=int, metavar="K",
                       help="every K-th generation and the newest (default: every one)")
    which.add_argument("--generations", metavar="G,G,...",
                       help="exactly these generations")
    parser.add_argument("--follow", action="store_true",
                        help="keep waiting for new generations (stop with Ctrl-C)")
    parser.add_argument("--best", type=parse_size, metavar="N|WxH",
                        help="name the generation with the most points against the anchors "
                             "at this board")
    parser.add_argument("--report", action="store_true",
                        help="play nothing: rebuild evaluation.csv and print its table")
    return parser


def _plan(args: argparse.Namespace) -> Plan:
    anchors = tuple(Anchor.parse(text) for text in args.anchor)
    if len({a.name for a in anchors}) != len(anchors):
        raise EvaluateError("two anchors share a name")
    if not args.report and (not anchors or not args.size):
        raise EvaluateError("give at least one --anchor and one --size (or --report)")
    for name, value in (("--games", args.games), ("--visits", args.visits),
                        ("--concurrency", args.concurrency), ("--every", args.every or 1)):
        if value < 1:
            raise EvaluateError(f"{name} must be at least 1")
    try:
        MatchTimeControl.parse(args.tc)
    except MatchTimeControlError as exc:
        raise EvaluateError(str(exc)) from None
    return Plan(tuple(dict.fromkeys(args.size)), anchors, args.games, args.tc, args.visits,
                args.random_plies, args.seed, args.concurrency)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        plan = _plan(args)
        run = Run(args.run)
        listed = None
        if args.generations:
            try:
                listed = [int(g) for g in args.generations.split(",")]
            except ValueError:
                raise EvaluateError(f"--generations {args.generations!r}: write G,G,...") \
                    from None
    except EvaluateError as exc:
        parser.error(str(exc))
    try:
        while not args.report:
            todo = pending(run, plan, chosen(run.generations(), args.every, listed))
            for generation, anchor, size in todo:
                argv_match = match_argv(run, plan, generation, anchor, size)
                print(f"saz evaluate: generation {generation} vs {anchor.name} at "
                      f"{size[0]}x{size[1]}", file=sys.stderr, flush=True)
                status = match_cli.main(argv_match, stdout=sys.stderr)
                if status != 0:
                    print(f"saz evaluate: the match failed (status {status}); stopping",
                          file=sys.stderr)
                    return status
                write_table(run, table(run))
            if not args.follow:
                break
            if not todo:
                time.sleep(60)
    except KeyboardInterrupt:
        print("\nsaz evaluate: interrupted; run again to continue", file=sys.stderr)
    rows = table(run)
    write_table(run, rows)
    print(markdown(rows))
    if args.best is not None:
        board = f"{args.best[0]}x{args.best[1]}"
        names = [a.name for a in plan.anchors] or sorted({r["anchor"] for r in rows})
        winner = best(rows, board, names)
        print(f"best at {board} against {', '.join(names)}: "
              f"{'none complete yet' if winner is None else f'generation {winner}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
