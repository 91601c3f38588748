"""`saz bench variants` (tools/bench/variants.py): the shipped Go model run several ways, end to end
on a tiny grid; the variants that compute the same function agree with base exactly."""
from __future__ import annotations

import argparse

import pytest

from saz.engine.evaluator import default_model_path
from saz.tools.bench.cli import main
from saz.tools.bench.variants import VARIANT_NAMES, _names


def _rows(lines: list[str], header: str) -> list[list[str]]:
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.split("|")[1:-1]])
    return rows


def test_variants_speed_and_agreement_tables(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = ["offline", "sum", "iobinding", "nospin", "chunk"]
    assert main(["variants", "--model", str(default_model_path("go")), "--sizes", "5",
                 "--batch", "1,3", "--threads", "1", "--repeat", "2", "--seconds", "0.01",
                 "--positions", "6", "--chunk-nodes", "40,100", "--variants",
                 ",".join(chosen)]) == 0
    columns = ["base", "offline", "sum", "iobinding", "nospin", "chunk-40", "chunk-100"]
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "| size | batch | threads | " + " | ".join(columns) + " |"
    speed = _rows(lines, "| size | batch | threads |")
    assert [row[:3] for row in speed] == [["5x5", "1", "1"], ["5x5", "3", "1"]]
    for row in speed:
        assert len(row) == 3 + len(columns)
        assert float(row[3].replace(",", "")) > 0
        assert all(cell.endswith("x)") for cell in row[4:])
    agreement = _rows(lines, "| variant | size |")
    assert [row[0] for row in agreement] == columns
    for name, size, value_max, _value_mean, kl, top1, opened in agreement:
        assert size == "5x5" and float(opened) > 0
        # Every variant here computes the same function (the optimised file to rounding).
        assert float(value_max) < 1e-4 and float(kl) < 1e-6 and top1 == "100.0%", name


def test_variant_names_put_base_first_and_refuse_unknown_ones() -> None:
    assert _names("sum,base,chunk") == ["base", "sum", "chunk"]
    assert VARIANT_NAMES[0] == "base"
    with pytest.raises(argparse.ArgumentTypeError, match="unknown variant"):
        _names("sum,turbo")
