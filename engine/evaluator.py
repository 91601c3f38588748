"""The evaluator: positions in, move priors and values out, through an exported network in
onnxruntime.

It loads a model (`MODEL.onnx` with its card `MODEL.json`, see `model_card.py`) and checks it before
trusting it: the card must be well formed and describe these very bytes (size and SHA-256), the
game's feature names and version must be the ones the network was trained on, and the ONNX
interface must be the contract's. Anything wrong is a `ModelError` naming the file and the problem
in one line, never a traceback from onnxruntime.

`run` is the search's hot path (a raw batch of encoded positions of one board size); `evaluate`
is the convenience on top (positions in, priors over each position's legal moves out). `run_heads`
adds the auxiliary heads' outputs (ownership, score, win/draw/loss) for the networks that have
them, and `run_aux` the first two; the analysis, the scoring and UCI's `wdl` read those, the
search itself does not. Every input the network declares besides `x`, `group_members` and `mask` is
a table of the board's graph layout (`GraphLayout.tables`: the lattice's `nbr` and `hub`, chess's
`promo` too), fed by name; a network of a game with groups (Go's chains, Gomoku's segments,
Othello's lines) may also declare `group_members`, which the layout computes from each batch it runs
(`GraphLayout.group_members`). A file of the retired dense form (input `groups`) is refused.

Never imports torch: an engine launched by a GUI must be ready in a fraction of a second.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import onnxruntime as ort

from saz.engine.games import GAME_NAMES, game_class
from saz.engine.games.base import Game
from saz.engine.games.errors import UnsupportedRuleError
from saz.engine.graph import GraphLayout, encode, layout, layout_of, move_priors
from saz.engine.model_card import (
    BATCH_INPUTS,
    DENSE_GROUPS_INPUT,
    GROUP_MEMBERS_INPUT,
    OPSET,
    OUTPUT_NAMES,
    VALID_OUTPUTS,
    ModelCard,
    ModelCardError,
    card_path,
    check_outputs,
    input_names,
)

Device = Literal["auto", "cpu", "cuda"]

#: Where the shipped models live: `models/` beside the packages (`saz/models/` when installed).
MODELS_DIR = Path(__file__).resolve().parent.parent / "models"

_CUDA = "CUDAExecutionProvider"
_CPU = "CPUExecutionProvider"


class ModelError(ValueError):
    """A model file that cannot be used: missing, corrupt, or not for this game and engine."""


class Heads(NamedTuple):
    """Every output of one network call, each from the side to move's view: `log_policy
    [B, policy_size]` and `value [B]` always, the others None where the network has no such
    head: `ownership [B, num_nodes]`, `score [B]`, `wdl [B, 3]` (win, draw, loss)."""

    log_policy: np.ndarray
    value: np.ndarray
    ownership: np.ndarray | None = None
    score: np.ndarray | None = None
    wdl: np.ndarray | None = None


def default_model_path(game: str) -> Path:
    """The shipped model of `game`, `models/<game>.onnx`; ModelError when there is none."""
    if game not in GAME_NAMES:
        raise ModelError(f"no model for unknown game {game!r}; expected one of "
                         f"{', '.join(GAME_NAMES)}")
    path = MODELS_DIR / f"{game}.onnx"
    if not path.is_file():
        raise ModelError(f"no shipped {game} model: {path} does not exist (train one with "
                         f"'saz train' and 'saz export', or pass a model path)")
    return path


class Evaluator:
    """An exported network in an onnxruntime session, checked against its card and its game."""

    def __init__(self, model_path: str | Path, *, device: Device = "auto",
                 threads: int | None = None, game: str | None = None,
                 chunk_nodes: int | None = None) -> None:
        if device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', got {device!r}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be positive, got {threads}")
        if chunk_nodes is not None and chunk_nodes < 1:
            raise ValueError(f"chunk_nodes must be positive, got {chunk_nodes}")
        #: A batch of more nodes than this is run in calls of at most this many (at least one
        #: position each) and the answers joined: the same numbers, from activations that stay
        #: in the cache (`chunk_step`). None: one call per batch.
        self.chunk_nodes: int | None = chunk_nodes
        self.path = Path(model_path)
        self.card = self._load_card(game)
        self._game_cls = self._check_card()
        self.game_name: str = self.card.game
        #: Whether the network pools over the position's groups (its input `group_members`).
        self.uses_groups: bool = GROUP_MEMBERS_INPUT in self.card.inputs
        #: The planes a batch carries (the game's); the network reads the first `num_features`
        #: of them (fewer for a network trained before the game appended planes).
        self.input_features: int = self._game_cls.num_features()
        self.num_features: int = self.card.num_features
        #: Whether the network has the auxiliary heads (`run_heads` gives None for one without).
        self.has_ownership: bool = "ownership" in self.card.outputs
        self.has_score: bool = "score" in self.card.outputs
        self.has_wdl: bool = "wdl" in self.card.outputs
        self.threads: int = threads if threads is not None else _default_threads()
        self._device: Device = device
        self._session, self.provider = self._open_session(device, self.threads)
        self._check_interface()
        #: The network's inputs that are graph tables, fed from the batch's layout.
        self._tables: tuple[str, ...] = tuple(n for n in self.card.inputs
                                              if n not in BATCH_INPUTS)
        # The tables are cached by their layout; the all-kept mask per (B, N) here.
        self._all_kept: dict[tuple[int, int], np.ndarray] = {}

    # -- loading ----------------------------------------------------------------------------------
    def _fail(self, problem: str) -> ModelError:
        return ModelError(f"{self.path}: {problem}")

    def _load_card(self, game: str | None) -> ModelCard:
        if not self.path.is_file():
            raise self._fail("model file not found")
        try:
            card = ModelCard.load(card_path(self.path))
        except ModelCardError as exc:
            raise self._fail(str(exc)) from None
        if game is not None and card.game != game:
            raise self._fail(f"the model plays {card.game}, not {game}")
        return card

    def _check_card(self) -> type[Game]:
        """The card against this engine: the game's features (same names, same meaning) and
        the ONNX contract. Returns the game's class."""
        card = self.card
        try:
            cls = game_class(card.game)
        except UnsupportedRuleError:
            raise self._fail(f"its card names an unknown game {card.game!r}") from None
        if (card.feature_version != cls.feature_version
                and card.feature_version not in cls.feature_prefixes):
            raise self._fail(f"trained on {card.game} features version {card.feature_version}, "
                             f"but this engine encodes version {cls.feature_version}")
        if cls.features_read_by(card.feature_version, card.feature_names) is None:
            raise self._fail(f"trained on the features {list(card.feature_names)}, but this "
                             f"engine encodes {list(cls.feature_names)}")
        if card.opset != OPSET:
            raise self._fail(f"ONNX opset {card.opset}; this engine runs opset {OPSET} models")
        if DENSE_GROUPS_INPUT in card.inputs:
            raise self._fail(f"its card states the input {DENSE_GROUPS_INPUT!r}, the dense group "
                             f"table of an older export; this engine feeds each point's groups "
                             f"as {GROUP_MEMBERS_INPUT!r} [B, P, K] int32: export the network "
                             f"again from its checkpoint (saz export CHECKPOINT --out MODEL.onnx)")
        groups = GROUP_MEMBERS_INPUT in card.inputs
        if groups and not cls.group_roles:
            raise self._fail(f"its card states the input {GROUP_MEMBERS_INPUT!r}, but "
                             f"{card.game} has no groups: a network of a game without "
                             f"group_roles cannot pool over them")
        wanted = game_inputs(cls, groups=groups)
        if (len(set(card.inputs)) != len(card.inputs) or set(card.inputs) != set(wanted)
                or card.outputs not in VALID_OUTPUTS):
            raise self._fail(f"its card states inputs {list(card.inputs)} and outputs "
                             f"{list(card.outputs)}; this engine needs {list(wanted)} and "
                             f"{list(OUTPUT_NAMES)} (then optionally ownership, score, wdl)")
        return cls

    def _open_session(self, device: Device, threads: int) -> tuple[ort.InferenceSession, str]:
        data = self.path.read_bytes()
        try:
            self.card.check_contents(data)
        except ModelCardError as exc:
            raise self._fail(str(exc)) from None
        # Level 4 (fatal only): onnxruntime-gpu on a machine without a usable GPU logs an error
        # and a warning while it falls back to the CPU, which we detect and report ourselves.
        ort.set_default_logger_severity(4)
        options = _session_options(threads)
        want_cuda = device != "cpu" and _CUDA in ort.get_available_providers()
        providers = [_CUDA, _CPU] if want_cuda else [_CPU]
        try:
            session = ort.InferenceSession(data, options, providers=providers)
        except Exception as exc:  # onnxruntime's own exception types, not exported publicly
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise self._fail(f"onnxruntime cannot load it: {reason}") from None
        # The available-provider list is a build-time list: only the session knows whether
        # CUDA really came up.
        on_cuda = _CUDA in session.get_providers()
        if device == "cuda" and not on_cuda:
            raise self._fail("device 'cuda' was asked for, but onnxruntime cannot use a GPU "
                             "here (no CUDA device, or its CUDA/cuDNN libraries are missing)")
        return session, "cuda" if on_cuda else "cpu"

    def _check_interface(self) -> None:
        """The file's actual inputs and outputs against the contract (the card could lie only
        if someone rewrote its hash too)."""
        inputs = self._session.get_inputs()
        outputs = self._session.get_outputs()
        names = tuple(i.name for i in inputs), tuple(o.name for o in outputs)
        if names != (self.card.inputs, self.card.outputs):
            raise self._fail(f"the ONNX graph has inputs {list(names[0])} and outputs "
                             f"{list(names[1])}; its card states {list(self.card.inputs)} and "
                             f"{list(self.card.outputs)}")
        x = next(i for i in inputs if i.name == "x")
        width = x.shape[-1] if x.shape else None
        if width != self.num_features:
            raise self._fail(f"the network takes {width} features per node, its card names "
                             f"{self.num_features}")
        if self.uses_groups:
            members = next(i for i in inputs if i.name == GROUP_MEMBERS_INPUT)
            shape = list(members.shape or [])
            if len(shape) != 3 or members.type != "tensor(int32)":
                raise self._fail(f"the network's {GROUP_MEMBERS_INPUT} input is {members.type} "
                                 f"of shape {shape}; the engine feeds int32 [B, P, K] (each "
                                 f"point's entries slot * roles + role, -1 padding)")

    def set_threads(self, threads: int | None) -> None:
        """Run with `threads` intra-op threads from now on (None: the default), reopening the
        session if that changes them: onnxruntime fixes a session's threads when it opens it
        (tens of milliseconds; the file is read and checked again, ModelError leaves the old
        session in place). Not while a `run` is in progress."""
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be positive, got {threads}")
        wanted = threads if threads is not None else _default_threads()
        if wanted != self.threads:
            self._session, self.provider = self._open_session(self._device, wanted)
            self.threads = wanted

    # -- evaluation -------------------------------------------------------------------------------
    def run(self, x: np.ndarray, layout: GraphLayout,
            mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate a raw batch of one board size.

        x: `[B, num_nodes, F]` float32, F the game's planes (as `graph.encode` returns it) or
        the network's own (`num_features`); passed through uncopied when C-contiguous float32
        and the network reads every plane. mask: optional `[B, num_nodes]`, bool or float32,
        nonzero = node kept (the extra node is kept regardless). Returns
        `(log_policy [B, policy_size], value [B])`, float32, `policy_size` the game's
        (`Game.policy_size`: the nodes in the lattice games); a masked-out node's
        log-probability is `model_card.MASKED_LOG_PROB`. The layout is the game's
        (`graph.layout_of`): its tables feed the network's other inputs.
        """
        step = self.chunk_step(len(x), layout.num_nodes)
        if step is not None:
            parts = [self.run(x[i:i + step], layout, None if mask is None else mask[i:i + step])
                     for i in range(0, len(x), step)]
            return (np.concatenate([p[0] for p in parts]),
                    np.concatenate([p[1] for p in parts]))
        log_policy, value = self._session.run(OUTPUT_NAMES, self._feed(x, layout, mask))
        return log_policy, value

    def chunk_step(self, batch: int, num_nodes: int) -> int | None:
        """The positions per call for a batch of `batch` positions of `num_nodes` nodes: None
        (one call) unless `chunk_nodes` is set and the batch has more nodes. On one intra-op
        thread, calls of at most 1,024 nodes ran the shipped Go model 1.2x faster on 9x9
        batches of 64 and 1.25-1.6x on 19x19 batches of 16-64; on two threads of a quiet
        machine they were 0.77-0.95x (`saz bench variants`, docs/BENCHMARKS.md)."""
        if self.chunk_nodes is None or batch * num_nodes <= self.chunk_nodes:
            return None
        step = max(1, self.chunk_nodes // num_nodes)
        return step if step < batch else None

    def _feed(self, x: np.ndarray, layout: GraphLayout,
              mask: np.ndarray | None) -> dict[str, np.ndarray]:
        """The session's inputs for a batch, its shapes checked."""
        if (x.ndim != 3 or x.shape[1] != layout.num_nodes
                or x.shape[2] not in (self.input_features, self.num_features)):
            raise ValueError(f"x of shape {x.shape} does not fit [B, {layout.num_nodes}, "
                             f"{self.input_features}] ({layout.width}x{layout.height}, "
                             f"{self.game_name})")
        x = x[:, :, :self.num_features]  # a view; the copy below only for an older network
        if mask is None:
            mask = self._kept_everywhere(x.shape[0], layout.num_nodes)
        else:
            if mask.shape != x.shape[:2]:
                raise ValueError(f"mask of shape {mask.shape} does not fit the batch "
                                 f"{x.shape[:2]}")
            mask = np.ascontiguousarray(mask, dtype=np.float32)
        feed = {"x": np.ascontiguousarray(x, dtype=np.float32), "mask": mask}
        if self.uses_groups:
            feed[GROUP_MEMBERS_INPUT] = group_input(feed["x"], layout, self._game_cls)
        for name in self._tables:
            try:
                feed[name] = layout.tables[name]
            except KeyError:
                raise ValueError(f"the network reads the graph table {name!r}, which the "
                                 f"{layout.width}x{layout.height} layout has not (it has "
                                 f"{', '.join(layout.tables)}): not this game's layout") from None
        return feed

    def run_heads(self, x: np.ndarray, layout: GraphLayout,
                  mask: np.ndarray | None = None) -> Heads:
        """`run` with every output the network has (`Heads`), their shapes checked."""
        step = self.chunk_step(len(x), layout.num_nodes)
        if step is not None:
            parts = [self.run_heads(x[i:i + step], layout,
                                    None if mask is None else mask[i:i + step])
                     for i in range(0, len(x), step)]
            return _joined(parts)
        feed = self._feed(x, layout, mask)
        outputs = dict(zip(self.card.outputs, self._session.run(list(self.card.outputs), feed)))
        try:
            check_outputs(outputs, len(x), layout.num_nodes)
        except ValueError as exc:
            raise self._fail(str(exc)) from None
        return Heads(outputs["log_policy"], outputs["value"], outputs.get("ownership"),
                     outputs.get("score"), outputs.get("wdl"))

    def run_aux(self, x: np.ndarray, layout: GraphLayout, mask: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """`run` plus the ownership and score heads: `(log_policy, value, ownership
        [B, num_nodes] or None, score [B] or None)`, from the side to move's view."""
        heads = self.run_heads(x, layout, mask)
        return heads.log_policy, heads.value, heads.ownership, heads.score

    def evaluate(self, games: Sequence[Game],
                 masks: np.ndarray | None = None) -> tuple[list[np.ndarray], np.ndarray]:
        """Evaluate positions of this evaluator's game and one board size.

        Returns, per position, the priors over `game.legal_moves()` (same order, float32, summing
        to 1; empty once the game is over), read at the moves' policy indices
        (`Game.policy_indices`), and the values `[B]` in [-1, 1] from the side to move's view.
        `masks` as in `run`.
        """
        if not games:
            raise ValueError("evaluate needs at least one position")
        first = games[0]
        if not isinstance(first, self._game_cls):
            raise ValueError(f"a {self.game_name} model cannot evaluate {type(first).__name__} "
                             f"positions")
        lay = layout_of(first)
        # A fresh batch per call (np.empty costs about a microsecond), so that threads may share
        # one evaluator; onnxruntime sessions allow concurrent runs.
        log_policy, value = self.run(encode(games), lay, masks)
        try:
            check_outputs({"log_policy": log_policy, "value": value}, len(games),
                          lay.num_nodes, first.policy_size)
        except ValueError as exc:
            raise self._fail(str(exc)) from None
        priors = [move_priors(row, game.policy_indices(game.legal_moves()))
                  for row, game in zip(log_policy, games, strict=True)]
        return priors, value

    def _kept_everywhere(self, batch: int, num_nodes: int) -> np.ndarray:
        mask = self._all_kept.get((batch, num_nodes))
        if mask is None:
            mask = self._all_kept[(batch, num_nodes)] = np.ones((batch, num_nodes), np.float32)
        return mask

    def __repr__(self) -> str:
        return (f"<Evaluator {self.path.name} game={self.game_name} provider={self.provider} "
                f"hidden={self.card.network.get('hidden')}>")


def _joined(parts: Sequence[Heads]) -> Heads:
    """The heads of consecutive chunks of one batch as the batch's (a head None stays None)."""

    def join(arrays: Sequence[np.ndarray | None]) -> np.ndarray | None:
        kept = [a for a in arrays if a is not None]
        return np.concatenate(kept) if len(kept) == len(arrays) else None

    log_policy, value = join([p.log_policy for p in parts]), join([p.value for p in parts])
    assert log_policy is not None and value is not None
    return Heads(log_policy, value, join([p.ownership for p in parts]),
                 join([p.score for p in parts]), join([p.wdl for p in parts]))


def group_input(x: np.ndarray, lay: GraphLayout, game: type[Game]) -> np.ndarray:
    """The `group_members` input of a network of `game` for the batch `x` (C-contiguous
    float32) on `lay`'s board: `lay.group_members(x)` where the layout knows the groups, else
    that of the game's layout of the same size (a window cut to a smaller board, `mcts.crop`,
    comes with the plain lattice's). The core's array goes to onnxruntime as it is."""
    grouped = lay if lay.group_roles else layout(lay.width, lay.height, game)
    return grouped.group_members(x)


def game_inputs(game: type[Game], groups: bool = False) -> tuple[str, ...]:
    """The ONNX inputs a network of `game` takes (`model_card.input_names`): x, the tables of
    its graph (`Game.graph_tables`, the same names on every board size), `group_members` for a
    network that pools over the game's groups (`groups`; ValueError for a game without
    `Game.group_roles`), mask."""
    if groups and not game.group_roles:
        raise ValueError(f"{game.name} has no groups (its group_roles are empty): its networks "
                         f"take no {GROUP_MEMBERS_INPUT!r} input")
    size = game.info.default_size
    return input_names(tuple(layout(size, size, game).tables), groups=groups)


def _session_options(threads: int) -> ort.SessionOptions:
    """Options measured on the 2-core development machine (hidden 64, go, ms per call, one
    thread vs two, `saz bench evaluator --threads 1|2`; docs/BENCHMARKS.md):

    * Two intra-op threads win from about 1,500 nodes per call: 19x19 batch 16 6.1 vs 9.4, 13x13
      batch 32 5.7 vs 8.8, 9x9 batch 128 11.1 vs 17.8. One thread wins only on small calls, by about
      10% (19x19 batch 1 0.49 vs 0.55, 9x9 batch 1 0.154 vs 0.165). The search sends batches of
      8 and more, and two threads still won (19x19 batch 8 4.9 vs 6.3 per step) with the search
      running its tree on a second thread meanwhile, so the default is two threads (`threads`).
    * Spinning stays on (onnxruntime's default): without it, two threads were slower than one
      (9x9 batch 32 4.0 vs 2.8 with spinning; 19x19 batch 8 with the search thread busy 6.3 vs
      4.9).
    * Full graph optimisation (the default level): no run-time difference from the basic or
      extended levels within noise, and a session still opens in about 10 ms.
    """
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return options


def _default_threads() -> int:
    """Two intra-op threads (see `_session_options`), or one where this process may use only one
    core (a tournament manager pinning engines, say). Not more: only two cores were measured."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(2, cores or 1))
