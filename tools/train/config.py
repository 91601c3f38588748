"""The training configuration: one TOML file per run, read into frozen value objects.

    seed = 1
    [rules]        the game's rule keywords (Go: komi; Gomoku: rule)
    [network]      NetConfig without num_features, kind, relations and group_roles (the game
                   fixes them): hidden, layers, dropout, the auxiliary heads, and groups = true
                   for a network that pools over the game's groups (Go's chains,
                   Gomoku's segments, Othello's lines)
    [selfplay]     SelfPlayConfig (board sizes as "9x9" or "9")
    [learner]      LearnerConfig (lr_schedule as [[step, rate], ...])
    [replay]       ReplayConfig
    [evaluation]   EvaluationConfig

Every table and key is optional (the dataclass defaults apply); an unknown one is a ConfigError,
so that a typo cannot silently train with a default. The shipped configs are in `configs/`.

The file is the run's recipe and travels with it. How one machine runs that recipe (its cores, its
GPU) is not: `saz train --set selfplay.workers=14` overrides one of the `MACHINE_KEYS` for a
session only (`TrainConfig.with_overrides`), so a run carried to a GPU machine and back keeps one
config.toml. The one recipe key a session may set is a growth of the network that keeps its
function (`GROWTH_KEYS`): `--set network.groups=true` resumes a lattice network with its groups
maps at zero, and the network keeps them from then on (`run.open_run`).
"""
from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from saz.engine.games.grid import Size
from saz.engine.games.grid import parse_size as parse_board_size
from saz.tools.train.learner import LearnerConfig
from saz.tools.train.selfplay import SelfPlayConfig

#: Where the shipped configs live: `saz train --game G` reads `configs/G.toml` by default.
CONFIGS_DIR = Path(__file__).resolve().parent / "configs"
#: Opponents the evaluation knows besides the reference players: the previous generation.
PREVIOUS = "previous"


#: The keys a session may override (`--set`): they say how a machine runs the recipe, and
#: leave what a position teaches unchanged. games_per_generation and games_in_flight only set how
#: often the network is refreshed, which a machine with eight times the cores needs to raise.
MACHINE_KEYS: dict[str, tuple[str, ...]] = {
    "selfplay": ("workers", "threads", "device", "games_in_flight", "max_batch",
                 "games_per_generation", "play_while_learning", "runtime", "eval_cache_mib",
                 "chunk_nodes"),
    "learner": ("device", "threads"),
    "evaluation": ("every", "threads"),
}


#: The recipe keys a resumed session may set (`--set`): each grows the trained network into one
#: that computes the same function (`model.add_groups`), and the checkpoint remembers it.
GROWTH_KEYS: dict[str, tuple[str, ...]] = {"network": ("groups",)}


class ConfigError(ValueError):
    """A training configuration that cannot be used; the message names the key."""


def parse_size(text: str) -> Size:
    """`grid.parse_size`, failing with a ConfigError."""
    try:
        return parse_board_size(text)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


@dataclass(frozen=True)
class ReplayConfig:
    #: Positions kept: the newest ones, whatever their generation.
    window: int = 200_000

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError("replay.window must be at least 1")


@dataclass(frozen=True)
class EvaluationConfig:
    """The periodic matches of the newest network (see `arena.py`)."""

    #: Every this many generations (and after the last one); 0 never.
    every: int = 2
    sizes: tuple[Size, ...] = ((9, 9), (15, 15))
    opponents: tuple[str, ...] = (PREVIOUS, "random", "greedy")
    #: Games per opponent and size, colours alternating.
    games: int = 20
    visits: int = 100
    #: Random moves opening every game, so that two searches do not replay one game.
    opening_plies: int = 2
    threads: int = 2

    def __post_init__(self) -> None:
        from saz.engine.players import PLAYERS

        unknown = [o for o in self.opponents if o != PREVIOUS and o not in PLAYERS]
        if unknown:
            raise ValueError(f"evaluation.opponents: unknown {', '.join(unknown)}; expected "
                             f"{PREVIOUS} or one of {', '.join(PLAYERS)}")
        if self.every < 0 or self.games < 1 or self.visits < 1 or self.opening_plies < 0:
            raise ValueError("evaluation: every >= 0, games >= 1, visits >= 1 and "
                             "opening_plies >= 0")


@dataclass(frozen=True)
class TrainConfig:
    """Everything a training run needs besides the game's name."""

    rules: Mapping[str, Any] = field(default_factory=dict)
    #: NetConfig keywords (hidden, layers, dropout).
    network: Mapping[str, Any] = field(default_factory=dict)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    learner: LearnerConfig = field(default_factory=LearnerConfig)
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    seed: int = 0
    #: Keep a copy of the checkpoint every this many generations (0: only the latest).
    snapshot_every: int = 10

    @classmethod
    def from_toml(cls, text: str) -> TrainConfig:
        """Parse a config; ConfigError names what is wrong."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"not valid TOML: {exc}") from None
        tables = {"selfplay": SelfPlayConfig, "learner": LearnerConfig,
                  "replay": ReplayConfig, "evaluation": EvaluationConfig}
        scalars = {"seed", "snapshot_every"}
        unknown = sorted(set(data) - set(tables) - scalars - {"rules", "network"})
        if unknown:
            raise ConfigError(f"unknown key(s) {', '.join(unknown)}")
        values: dict[str, Any] = {k: data[k] for k in scalars if k in data}
        for name in ("rules", "network"):
            table = data.get(name, {})
            if not isinstance(table, dict):
                raise ConfigError(f"[{name}] must be a table")
            values[name] = dict(table)
        for name, kind in tables.items():
            values[name] = _build(kind, name, data.get(name, {}))
        _check_network(values["network"])
        try:
            return cls(**values)
        except (TypeError, ValueError) as exc:
            raise ConfigError(str(exc)) from None

    def with_overrides(self, settings: Sequence[str]) -> TrainConfig:
        """This config with `SECTION.KEY=VALUE` settings applied (VALUE is a TOML value, or a bare
        word such as cuda); ConfigError for a malformed setting, a key outside `MACHINE_KEYS` or
        a value the key does not take."""
        changes: dict[str, dict[str, Any]] = {}
        for setting in settings:
            name, sep, text = setting.partition("=")
            section, _, key = name.strip().partition(".")
            if not sep or not key:
                raise ConfigError(f"--set {setting!r}: expected SECTION.KEY=VALUE, "
                                  "e.g. selfplay.workers=14")
            if key not in MACHINE_KEYS.get(section, ()) and key not in GROWTH_KEYS.get(section,
                                                                                      ()):
                allowed = ", ".join(f"{s}.{k}" for table in (MACHINE_KEYS, GROWTH_KEYS)
                                    for s, keys in table.items() for k in keys)
                raise ConfigError(f"--set {name.strip()}: only a machine's settings and the "
                                  f"network's growth may be overridden ({allowed}); the recipe "
                                  "is the run's config.toml")
            changes.setdefault(section, {})[key] = _toml_value(text.strip())
        values: dict[str, Any] = {}
        if "network" in changes:
            network = {**self.network, **changes.pop("network")}
            try:
                _check_network(network)
            except ConfigError as exc:
                raise ConfigError(f"--set: {exc}") from None
            values["network"] = network
        for section, keys in changes.items():
            try:
                values[section] = replace(getattr(self, section), **keys)
            except ValueError as exc:
                raise ConfigError(f"--set: {exc}") from None
            except TypeError:  # a value of the wrong kind, e.g. workers=many
                given = ", ".join(f"{section}.{k}={v!r}" for k, v in keys.items())
                raise ConfigError(f"--set {given}: a value of the wrong type") from None
        return replace(self, **values)

    @classmethod
    def load(cls, path: str | Path) -> TrainConfig:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
        try:
            return cls.from_toml(text)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None


def _toml_value(text: str) -> Any:
    """A `--set` value: TOML (14, 0.5, "cuda", true), else the bare word as a string."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


def _build(kind: type, section: str, table: Any) -> Any:
    """A config dataclass from a TOML table: lists become tuples, "sizes" become (w, h) pairs,
    "lr_schedule" (step, rate) pairs."""
    if not isinstance(table, dict):
        raise ConfigError(f"[{section}] must be a table")
    known = {f.name for f in fields(kind)}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"unknown key(s) in [{section}]: {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key == "sizes":
            value = tuple(parse_size(v) for v in value)
        elif key == "lr_schedule":
            try:
                value = tuple((int(step), float(rate)) for step, rate in value)
            except (TypeError, ValueError):
                raise ConfigError(f"[{section}] lr_schedule must be [[step, rate], ...]") from None
        elif isinstance(value, list):
            value = tuple(value)
        values[key] = value
    try:
        return kind(**values)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"[{section}] {exc}") from None


def _check_network(network: Mapping[str, Any]) -> None:
    from saz.tools.train.model import NetConfig

    for key in ("num_features", "kind", "relations", "group_roles"):
        if key in network:
            raise ConfigError(f"[network] {key} comes from the game; leave it out")
    shape = dict(network)
    groups = shape.pop("groups", False)
    if not isinstance(groups, bool):
        raise ConfigError(f"[network] groups must be true or false, got {groups!r}")
    try:
        NetConfig(num_features=1, group_roles=int(groups), **shape)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"[network] {exc}") from None
