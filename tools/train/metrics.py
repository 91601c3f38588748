"""The training run's metrics: one CSV row per generation, and the PNG plots drawn from it.

The CSV is rewritten whole (beside, then renamed) after every generation, so it is never half a
row; a resumed run first drops the rows of generations its checkpoint does not have.
Evaluation columns are named `eval_<opponent>_<W>x<H>` and hold the network's score (wins plus
half the draws, per game); they are empty in generations without an evaluation.
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: The columns every run writes, in order; evaluation columns follow.
BASE_COLUMNS: tuple[str, ...] = (
    "generation", "wall_seconds", "games", "positions", "positions_per_second", "game_length",
    # How games ended: resigned, by the game's own rules (Go: two passes), stopped at the ply cap.
    "resign_rate", "rules_end_rate", "ply_cap_rate",
    "resign_threshold", "resign_false_positives", "buffer_positions", "steps",
    "learning_rate", "policy_loss", "value_loss", "l2_loss", "ownership_loss", "score_loss",
    "total_loss",
)
#: Prefix of the per-size mean game length columns (`plies_9x9`).
PLIES_PREFIX = "plies_"
EVAL_PREFIX = "eval_"


def eval_column(opponent: str, size: tuple[int, int]) -> str:
    return f"{EVAL_PREFIX}{opponent}_{size[0]}x{size[1]}"


def plies_column(size: tuple[int, int]) -> str:
    return f"{PLIES_PREFIX}{size[0]}x{size[1]}"


class MetricsLog:
    """The rows of `metrics.csv`, in generation order."""

    def __init__(self, path: str | Path, columns: Sequence[str]) -> None:
        self.path = Path(path)
        self.columns = tuple(columns)
        self.rows: list[dict[str, float | None]] = []

    def load(self, up_to: int) -> None:
        """Read the file, keeping the rows of generations 1..`up_to`.

        Columns the file has and this session's config does not (a board size or an evaluation
        the run has since dropped) are kept, after the file's own order: the CSV is the run's
        whole history, and a resumed session rewrites it."""
        self.rows = []
        if not self.path.is_file():
            return
        with self.path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            known = tuple(reader.fieldnames or ())
            self.columns = known + tuple(c for c in self.columns if c not in known)
            for raw in reader:
                row = {k: _number(v) for k, v in raw.items() if k in self.columns}
                generation = row.get("generation")
                if generation is not None and generation <= up_to:
                    self.rows.append(row)

    def append(self, row: Mapping[str, float | None]) -> None:
        unknown = set(row) - set(self.columns)
        if unknown:
            raise ValueError(f"unknown metrics column(s): {', '.join(sorted(unknown))}")
        self.rows.append(dict(row))
        self.save()

    def save(self) -> None:
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=self.columns, lineterminator="\n")
        writer.writeheader()
        for row in self.rows:
            writer.writerow({k: _format(row.get(k)) for k in self.columns})
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(text.getvalue(), encoding="utf-8")
        tmp.replace(self.path)

    def series(self, column: str) -> tuple[list[float], list[float]]:
        """(generations, values) of the rows where `column` has a value."""
        pairs = [(row["generation"], row.get(column)) for row in self.rows]
        kept = [(g, v) for g, v in pairs if g is not None and v is not None]
        return [g for g, _ in kept], [v for _, v in kept]


def _number(text: str | None) -> float | None:
    if text is None or text == "":
        return None
    value = float(text)
    return int(value) if value.is_integer() and "." not in text else value


def _format(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


# -- plots -----------------------------------------------------------------------------------------
def plot(log: MetricsLog, folder: str | Path) -> list[Path]:
    """Draw losses.png, game_length.png and evaluation.png into `folder`; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")  # files only: a training run has no display
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    drawn = []
    panels = (
        ("losses.png", "Training losses", "loss",
         [("policy_loss", "policy cross-entropy"), ("value_loss", "value MSE"),
          ("ownership_loss", "ownership cross-entropy"), ("score_loss", "score MSE / points²"),
          ("total_loss", "total (with L2)")]),
        ("game_length.png", "Self-play game length", "plies per game",
         [("game_length", "all sizes")] + [(c, c[len(PLIES_PREFIX):]) for c in log.columns
                                           if c.startswith(PLIES_PREFIX)]),
        ("evaluation.png", "Evaluation: score of the new network", "score (win = 1, draw = 0.5)",
         [(c, c[len(EVAL_PREFIX):].replace("_", " at ")) for c in log.columns
          if c.startswith(EVAL_PREFIX)]),
    )
    colours: dict[str, str] = {}
    for name, title, ylabel, curves in panels:
        fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
        for column, label in curves:
            xs, ys = log.series(column)
            if not xs:
                continue
            style: dict[str, Any] = {}
            if column.startswith(EVAL_PREFIX):  # one colour per opponent, dashed past the
                opponent = column[len(EVAL_PREFIX):column.rfind("_")]  # first size
                style["color"] = colours.setdefault(opponent, f"C{len(colours)}")
                style["linestyle"] = "-" if column.endswith(_first_size(log.columns)) else "--"
            ax.plot(xs, ys, marker="o" if len(xs) < 30 else None, markersize=3, label=label,
                    **style)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(title)
        ax.set_xlabel("generation")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if name == "evaluation.png":
            ax.set_ylim(-0.02, 1.02)
        if ax.lines:
            ax.legend(fontsize=8, loc="best")
        fig.tight_layout()
        path = folder / name
        tmp = folder / f".{name}"
        fig.savefig(tmp, format="png")
        plt.close(fig)
        tmp.replace(path)
        drawn.append(path)
    return drawn


def _first_size(columns: Sequence[str]) -> str:
    """The board size of the first evaluation column ("_9x9"), or "" when there is none."""
    first = next((c for c in columns if c.startswith(EVAL_PREFIX)), "")
    return first[first.rfind("_"):] if first else ""


def columns_for(eval_columns: Iterable[str], plies_columns: Iterable[str]) -> tuple[str, ...]:
    return BASE_COLUMNS + tuple(plies_columns) + tuple(eval_columns)
