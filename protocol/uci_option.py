"""One UCI option, as an engine announces it (`option name N type T ...`): the value object both
sides of the protocol share. `saz uci` (protocol/uci.py) builds its options as these and prints
`line()`; the client (protocol/uci_client.py) parses an engine's lines into them and checks a
value with `accepts` before it sends a `setoption`."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UciOption:
    """One `option` line: its name as the engine spells it, its type (check, spin, combo,
    button, string), default, bounds (spin) and choices (combo)."""

    name: str
    type: str
    default: str | None = None
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] = ()

    def line(self) -> str:
        """The `option` line that announces it in the answer to `uci`."""
        words = [f"option name {self.name} type {self.type}"]
        if self.default is not None:
            words.append(f"default {self.default}")
        if self.min is not None:
            words.append(f"min {self.min} max {self.max}")
        words += [f"var {choice}" for choice in self.choices]
        return " ".join(words)

    def accepts(self, value: str) -> bool:
        """Whether `value` is one the engine announced it takes (any for a string or button)."""
        if self.type == "check":
            return value in ("true", "false")
        if self.type == "spin":
            try:
                number = int(value)
            except ValueError:
                return False
            return ((self.min is None or number >= self.min)
                    and (self.max is None or number <= self.max))
        if self.type == "combo":
            return value.lower() in (choice.lower() for choice in self.choices)
        return True
