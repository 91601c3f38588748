"""The model card: the JSON file beside every exported network, and the model contract it states.

The trainer writes a card when it exports a network (`saz export`); the engine reads it before it
trusts the ONNX file next to it. The card says which game and rules the network plays, which node
features it expects (names and version, checked against the game's own), the network's shape, the
ONNX interface (opset, input and output names) and the size and SHA-256 of the ONNX file, so a
truncated or replaced file is caught before onnxruntime ever parses it. It also carries the
training record and the measured strength, filled in by the trainer and the match runner.

This module must not import torch: the engine loads it at start-up.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

# -- the model contract (both sides of the export read these) ----------------------------------
#: ONNX inputs of the lattice games (Go, Gomoku, Othello): x [B, N, F] float32 node features;
#: nbr [N-1, 5] int64 in-neighbours of each point; hub [1, N] float32 the extra node's
#: in-neighbours; mask [B, N] float32, nonzero = node kept. A game with its own graph
#: (`Game.graph_tables`) has its tables between x and mask (`input_names`): chess's
#: nbr [N-1, 10 * D], hub and promo [3 * width, 2] int64, the (from, to) squares of each
#: underpromotion family.
INPUT_NAMES: tuple[str, ...] = ("x", "nbr", "hub", "mask")
#: The optional input of a network that pools over the position's groups (a game with
#: `Game.group_roles`: Go's chains, Gomoku's segments, Othello's lines), between the tables and
#: mask: group_members [B, N-1, K] int32, each point's groups as entries `slot * R + role` (R the
#: game's roles, slots 0..G-1 per position), ascending, padded with -1 (`GraphLayout.group_members`;
#: the extra node is in none). B and N are dynamic, K is the game's (Go's 4, Othello's 4, Gomoku's
#: 8).
GROUP_MEMBERS_INPUT = "group_members"
#: The input of the retired dense form, `groups [B, R, G, N]` float32 0/1: the engine refuses a
#: model that declares it (it must be exported again from its checkpoint) instead of guessing.
DENSE_GROUPS_INPUT = "groups"
#: The inputs that are not graph tables: the batch's features, its groups and its mask.
BATCH_INPUTS: tuple[str, ...] = ("x", GROUP_MEMBERS_INPUT, "mask")
#: ONNX outputs every model has: log_policy [B, policy_size] float32 (`Game.policy_size`: the
#: nodes in the lattice games, the extra node's entry being pass; chess's from-to pairs and
#: underpromotions); value [B] in [-1, 1], the side to move's (W - L with a wdl head).
OUTPUT_NAMES: tuple[str, ...] = ("log_policy", "value")
#: Optional outputs after them, in this order, where the network has the heads: ownership [B, N]
#: in [-1, 1] (final owner of each point from the side to move's view; the extra node's entry
#: means nothing), score [B] (the final margin in points from the side to move's view) and
#: wdl [B, 3] (the probabilities of a win, a draw and a loss for the side to move).
AUX_OUTPUT_NAMES: tuple[str, ...] = ("ownership", "score", "wdl")


def input_names(tables: Sequence[str] = ("nbr", "hub"), groups: bool = False
                ) -> tuple[str, ...]:
    """The inputs of a model of a game whose graph has `tables` (`GraphLayout.tables`, in
    order): x, the tables, `group_members` where the network pools over groups, mask. The
    default is the lattice games' `INPUT_NAMES`."""
    return ("x", *tables, *((GROUP_MEMBERS_INPUT,) if groups else ()), "mask")


def output_names(*, ownership: bool, score: bool, wdl: bool = False) -> tuple[str, ...]:
    """The outputs of a model with (or without) the auxiliary heads, in contract order."""
    chosen = (ownership, score, wdl)
    return OUTPUT_NAMES + tuple(n for n, on in zip(AUX_OUTPUT_NAMES, chosen, strict=True) if on)


#: Every output list the engine accepts.
VALID_OUTPUTS: frozenset[tuple[str, ...]] = frozenset(
    output_names(ownership=o, score=s, wdl=w)
    for o in (False, True) for s in (False, True) for w in (False, True))


def check_outputs(outputs: Mapping[str, Any], batch: int, nodes: int,
                  policy_size: int | None = None) -> None:
    """ValueError naming the first output of a call on `batch` positions of `nodes` nodes whose
    shape is not the contract's; the policy's width is checked when `policy_size` is given
    (the game's: `Game.policy_size`)."""
    policy = policy_size if policy_size is not None else -1
    wanted = {"log_policy": (batch, policy), "value": (batch,), "ownership": (batch, nodes),
              "score": (batch,), "wdl": (batch, 3)}
    for name, value in outputs.items():
        shape = tuple(getattr(value, "shape", ()))
        want = wanted.get(name)
        if want is None:
            continue
        if len(shape) != len(want) or any(w >= 0 and s != w for s, w in zip(shape, want)):
            shown = ", ".join("?" if w < 0 else str(w) for w in want)
            raise ValueError(f"the network's {name} has shape {list(shape)}, the contract's "
                             f"is [{shown}]")


#: The ONNX opset the exporter writes (torch's dynamo exporter; onnxruntime >= 1.14 runs it).
OPSET = 18
#: The log-probability of a masked-out node. Finite on purpose: `0 * MASKED_LOG_PROB` is 0 in a
#: cross-entropy whose target is 0 there (-inf would make it NaN), `exp` of it is exactly 0, and
#: torch and onnxruntime write the very same constant, so outputs compare with plain allclose.
MASKED_LOG_PROB = -1.0e9

#: Bumped when the card's fields change meaning; `load` rejects versions it does not know.
CARD_FORMAT = 1


class ModelCardError(ValueError):
    """A card that is missing, unreadable or does not describe the file beside it."""


def card_path(model_path: str | Path) -> Path:
    """Where the card of `model_path` lives: the same name with the suffix `.json`."""
    return Path(model_path).with_suffix(".json")


def file_digest(data: bytes) -> str:
    """The hex SHA-256 the card records for an ONNX file's bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ModelCard:
    """What an exported network is, and what it expects."""

    #: Registry name of the game ("go", "gomoku", "othello", "chess").
    game: str
    #: The rules parameters the network was trained under (e.g. komi), as the game names them.
    rules: Mapping[str, Any]
    #: `Game.feature_version` at training time; the engine refuses another, unless the game
    #: lists it in `feature_prefixes` (planes appended since).
    feature_version: int
    #: `Game.feature_names` at training time, in input order; their count is the input width.
    feature_names: tuple[str, ...]
    #: The network's shape (the trainer's NetConfig: hidden width, layers, ... and its parameter
    #: count); informative for people, not read by the engine.
    network: Mapping[str, Any]
    opset: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    #: Size in bytes and SHA-256 of the ONNX file this card describes; a card being made for a
    #: new file leaves them out and takes them from its bytes (`describing`). `from_dict` (so
    #: `load`) refuses a card without them.
    onnx_bytes: int = 0
    onnx_sha256: str = ""
    #: The training record (command, config, board sizes, generations, wall time, hardware).
    training: Mapping[str, Any] = field(default_factory=dict)
    #: Measured strength (opponents, Elo, match records), filled in by the match runner.
    strength: Mapping[str, Any] = field(default_factory=dict)
    format: int = CARD_FORMAT

    @property
    def num_features(self) -> int:
        """The width F of the network's input `x [B, N, F]`."""
        return len(self.feature_names)

    # -- (de)serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The card as JSON-ready data (tuples become lists)."""
        data = asdict(self)
        data["rules"], data["network"] = dict(self.rules), dict(self.network)
        data["training"], data["strength"] = dict(self.training), dict(self.strength)
        for name in ("feature_names", "inputs", "outputs"):
            data[name] = list(data[name])
        return data

    @classmethod
    def from_dict(cls, data: Any) -> ModelCard:
        """A card from parsed JSON; ModelCardError names the first field that is wrong."""
        if not isinstance(data, dict):
            raise ModelCardError(f"expected a JSON object, got {type(data).__name__}")
        version = data.get("format", CARD_FORMAT)
        if version != CARD_FORMAT:
            raise ModelCardError(f"card format {version!r} is not supported (this engine reads "
                                 f"format {CARD_FORMAT})")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ModelCardError(f"unknown field(s) {', '.join(unknown)}")
        missing = sorted(f.name for f in fields(cls)
                         if f.name not in data and f.name not in _OPTIONAL)
        if missing:
            raise ModelCardError(f"missing field(s) {', '.join(missing)}")
        values: dict[str, Any] = {}
        for name, value in data.items():
            values[name] = _check_field(name, value)
        if values["onnx_bytes"] <= 0:
            raise ModelCardError("field 'onnx_bytes' must be positive")
        sha = values["onnx_sha256"]
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise ModelCardError("field 'onnx_sha256' is not a hex SHA-256")
        if not values["feature_names"]:
            raise ModelCardError("field 'feature_names' is empty")
        return cls(**values)

    def save(self, path: str | Path) -> None:
        """Write the card as indented JSON (written beside, then renamed: never half a card)."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> ModelCard:
        """Read and validate a card; ModelCardError (naming the file) when missing or malformed."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ModelCardError(f"model card {path} not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ModelCardError(f"model card {path} cannot be read: {exc}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ModelCardError(f"model card {path} is not valid JSON: {exc}") from None
        try:
            return cls.from_dict(data)
        except ModelCardError as exc:
            raise ModelCardError(f"model card {path}: {exc}") from None

    def describing(self, data: bytes) -> ModelCard:
        """This card with the size and SHA-256 of the ONNX bytes `data` (what `check_contents`
        checks), every other field kept: how a new or rewritten file gets a card the engine
        accepts."""
        return replace(self, onnx_bytes=len(data), onnx_sha256=file_digest(data))

    def check_contents(self, data: bytes) -> None:
        """Raise ModelCardError unless `data` are the bytes of the ONNX file this card describes."""
        if len(data) != self.onnx_bytes:
            raise ModelCardError(f"the file has {len(data)} bytes but its card says "
                                 f"{self.onnx_bytes}: truncated or replaced")
        if file_digest(data) != self.onnx_sha256:
            raise ModelCardError("the file's SHA-256 differs from its card's: corrupt or replaced")


_OPTIONAL = frozenset({"training", "strength", "format"})


def _check_field(name: str, value: Any) -> Any:
    """The field's value in its dataclass type, or ModelCardError when JSON gave another type."""
    if name in ("game", "onnx_sha256"):
        if not isinstance(value, str) or not value:
            raise ModelCardError(f"field {name!r} must be a non-empty string")
        return value
    if name in ("feature_version", "opset", "onnx_bytes", "format"):
        # bool is an int in Python; a card saying `true` is still malformed.
        if not isinstance(value, int) or isinstance(value, bool):
            raise ModelCardError(f"field {name!r} must be an integer")
        return value
    if name in ("feature_names", "inputs", "outputs"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ModelCardError(f"field {name!r} must be a list of strings")
        return tuple(value)
    if not isinstance(value, dict):  # rules, network, training, strength
        raise ModelCardError(f"field {name!r} must be an object")
    return value
