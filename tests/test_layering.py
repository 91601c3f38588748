"""The rooms import downwards only: engine <- protocol <- tools, and within tools, match never
imports train (train's evaluation plays its matches through match). Read from the sources, so a
function-local import counts as much as one at the top."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Each room, and the rooms of saz it must not import.
FORBIDDEN = {
    "engine": ("protocol", "tools"),
    "protocol": ("tools",),
    "tools/match": ("tools/train", "tools/bench"),
    "tools/train": ("tools/bench",),
}


def imported_rooms(path: Path) -> set[str]:
    """The saz modules that `path` imports, as room paths ("tools/train/selfplay"); a name
    imported from a module counts as a path below it."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from saz.tools import bench` imports saz.tools.bench: count the names too
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        out.update(name.removeprefix("saz.").replace(".", "/") for name in names
                   if name.startswith("saz."))
    return out


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_a_room_imports_no_room_above_it(room: str) -> None:
    offences = [f"{path.relative_to(ROOT)} imports saz.{target.replace('/', '.')}"
                for path in sorted((ROOT / room).rglob("*.py"))
                for target in sorted(imported_rooms(path))
                if any(target == above or target.startswith(above + "/")
                       for above in FORBIDDEN[room])]
    assert not offences, "\n".join(offences)


def test_the_reader_sees_imports_of_every_form(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("import saz.tools.train.model\nfrom saz.tools import bench\n"
                      "def f():\n    from saz.protocol.gtp import main\n", encoding="utf-8")
    assert imported_rooms(source) == {"tools/train/model", "tools", "tools/bench", "protocol/gtp",
                                      "protocol/gtp/main"}
