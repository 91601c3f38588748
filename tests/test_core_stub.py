"""engine/_core.pyi, the compiled core's interface for the type checker, names exactly what the
built module defines: a binding added or renamed in module.cpp without its stub fails here."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

from saz.engine import _core

STUB = Path(__file__).resolve().parents[1] / "engine" / "_core.pyi"


def _stub_names() -> dict[str, set[str]]:
    """Top-level name -> the names defined in its body (empty for functions and aliases)."""
    names: dict[str, set[str]] = {}
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = {item.name for item in node.body
                                if isinstance(item, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = set()
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = set()
    return names


def _public(names: object) -> set[str]:
    return {n for n in dir(names) if not n.startswith("_") or n == "__init__"}


def test_the_stub_names_every_binding_and_no_other() -> None:
    stub = _stub_names()
    aliases = {"GoPosition", "OthelloPosition"}  # the stub's own unions of the core's classes
    module = {n for n in dir(_core) if not n.startswith("_")}
    assert set(stub) - aliases == module
    for name in module:
        value = getattr(_core, name)
        if not inspect.isclass(value):
            continue
        own = {n for n in vars(value) if not n.startswith("_") or n == "__init__"}
        if "__init__" in own and "__init__" not in stub[name]:
            own.discard("__init__")  # nanobind's default constructor: the stub leaves it out
        assert own == stub[name], name


def test_the_aliases_are_the_classes_the_factories_return() -> None:
    go = _core.new_go(9, 9, [], [], 1, 7.5, [1] * 81, [2] * 81, 3)
    othello = _core.new_othello(8, 8, [27, 36], [28, 35], 1)
    stub = STUB.read_text(encoding="utf-8")
    assert type(go).__name__ in stub.split("GoPosition: TypeAlias =")[1].split("\n")[0]
    assert type(othello).__name__ in stub.split("OthelloPosition: TypeAlias =")[1].split("\n\n")[0]
