"""`saz export CHECKPOINT --out MODEL.onnx`: a training checkpoint to one ONNX file and its card.

The file runs every board size and batch size (dynamic B and N, one size per call). It is the
scatter-free twin (`PolicyValueNetExport`; a moves network, `MovePolicyNet`, is its own) exported
with torch's dynamo exporter at opset 18: the
TorchScript exporter (opset 17) is deprecated in torch 2.13, and dynamo's optimiser folds batch
normalisation into the linear layers. Exporting costs 3 to 8 s (8 layers: 5.6-7.9 s with the
parity check), once per trained generation.

Nothing half-checked ships: the model is traced in a temporary folder, then written with its
card beside its destination (`write_model`, which `saz average` and `saz optimize` write
through too), opened through the engine's own `Evaluator` (card and all) and compared with the
torch network at two board sizes (the lattice's `CHECK_SIZES`; for a moves network two sizes
its game admits), with and without masks, before it is renamed into place.

`BackgroundExport` runs the export in a process of its own, for a trainer whose self-play does
not read the ONNX file (the torch runtime): the next generation need not wait for it.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import multiprocessing as mp
import queue
import signal
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import torch

from saz.engine.evaluator import Evaluator, ModelError
from saz.engine.games import Game, game_class
from saz.engine.games.errors import GameError
from saz.engine.graph import GraphLayout, layout
from saz.engine.model_card import (
    GROUP_MEMBERS_INPUT,
    OPSET,
    ModelCard,
    card_path,
    input_names,
    output_names,
)
from saz.tools.train.checkpoint import (
    Checkpoint,
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from saz.tools.train.child import let_go, receive
from saz.tools.train.model import (
    ExportForm,
    MovePolicyNet,
    NetConfig,
    Network,
    build_net,
    collate,
    export_form,
    net_config_for,
)
from saz.tools.train.torch_evaluator import weights_path

#: Largest error the export accepts between torch and onnxruntime, |torch - onnxruntime| /
#: (1 + |torch|): absolute for outputs within [-1, 1] (values, ownership), relative for larger
#: ones. Float32 reassociation errs in proportion to the magnitude: a trained Go network's
#: log-policies reach -45 on the random check positions and differ there by ~1e-4 absolute
#: (a generation of the Go run failed an absolute bound), ~1e-5 relative. A
#: broken export errs by 1e-2 and more.
TOLERANCE = 1e-4
#: The board sizes the export is checked at: one square, one rectangular, neither the tracing
#: example's (5x5), so a size frozen into the graph shows up.
CHECK_SIZES = ((9, 9), (7, 11))
#: The lattice networks are traced on this size (none of `CHECK_SIZES`).
TRACE_SIZE = (5, 5)
#: The tracing example's group members cycle through the entries -1 (padding) .. this - 2: the
#: values do not matter (the graph sizes its pooling by the batch's largest entry), only that
#: there are entries and padding both.
TRACE_ENTRIES = 7
#: The sizes a moves network's export may be checked and traced at: the first two its game
#: admits are checked, the third traces (chess: 8x8 and 5x5 checked, 6x6 traced).
MOVES_SIZES = ((8, 8), (5, 5), (6, 6), (7, 7), (9, 9), (10, 10), (7, 5))


class ExportError(RuntimeError):
    """The export failed, or its result failed its own check; nothing was written."""


def export_random_network(game: type[Game], out: str | Path, *, hidden: int = 64,
                          layers: int = 3, seed: int = 0,
                          with_weights: bool = False) -> Network:
    """Export a randomly initialised network for `game` (seeded: the same weights each time;
    the family its graph calls for, `model.net_config_for`) to `out`, with its card, and return
    it in eval mode. The benchmarks time such networks: speed does not depend on the weights.
    `with_weights`: its checkpoint beside it too (`torch_evaluator.weights_path`), which
    self-play's torch runtime loads."""
    torch.manual_seed(seed)
    net = build_net(net_config_for(game, hidden=hidden, layers=layers)).eval()
    checkpoint = Checkpoint.of(net, game, {})
    export_checkpoint(checkpoint, out)
    if with_weights:
        save_checkpoint(checkpoint, weights_path(out))
    return net


def export_checkpoint(checkpoint: Checkpoint, out: str | Path, *,
                      strength: Mapping[str, Any] | None = None) -> ModelCard:
    """Export `checkpoint` to `out` (an .onnx path) and its card beside it; returns the card."""
    out = Path(out)
    if out.suffix != ".onnx":
        raise ValueError(f"the model file must end in .onnx, got {out}")
    net = checkpoint.build_net()
    game = game_class(checkpoint.game)
    twin = export_form(net)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="saz-export-") as tmp:
        traced = Path(tmp) / out.name
        _export_onnx(twin, traced, game)
        data, opset = traced.read_bytes(), _opset(traced)
    card = ModelCard(
        game=checkpoint.game, rules=dict(checkpoint.rules),
        feature_version=checkpoint.feature_version,
        feature_names=tuple(checkpoint.feature_names),
        network={**checkpoint.config.to_dict(), "parameters": net.num_parameters()},
        opset=opset, inputs=_inputs(twin), outputs=_outputs(net.config),
        training=dict(checkpoint.training), strength=dict(strength or {}))

    def parity(staging: Path) -> None:
        worst = check_parity(net, staging)
        if worst > TOLERANCE:
            raise ExportError(f"onnxruntime and torch differ by {worst:.2e} of the output "
                              f"(> {TOLERANCE:.0e}) on the exported model; not writing {out}")

    return write_model(out, data, card, check=parity)


def _open_in_engine(model_path: Path) -> None:
    """Open the model as the engine does, card and all (ModelError when it cannot)."""
    Evaluator(model_path, device="cpu")


def write_model(out: Path, data: bytes, card: ModelCard,
                check: Callable[[Path], object] = _open_in_engine) -> ModelCard:
    """Write the ONNX file `data` to `out` and `card` beside it (`card_path`), the card with
    the file's size and SHA-256 (`ModelCard.describing`); returns the card written.

    Every writer of a model (export, average, optimize) goes through here, so that nothing
    half-checked ships: the pair is written beside `out` first (`NAME.staging.onnx` and its
    card) and `check`ed there (by default opened by the engine's `Evaluator`, card and all: its
    ModelError propagates); only then are both renamed into place. Whatever happens, the staged
    files are removed: `out` never holds half a model, nor one its card does not describe."""
    card = card.describing(data)
    staging = out.with_name(out.stem + ".staging.onnx")
    try:
        staging.write_bytes(data)
        card.save(card_path(staging))
        check(staging)
        staging.replace(out)
        card_path(staging).replace(card_path(out))
    finally:
        staging.unlink(missing_ok=True)
        card_path(staging).unlink(missing_ok=True)
    return card


def check_parity(net: Network, model_path: Path, *, seed: int = 0) -> float:
    """The largest |torch - onnxruntime| / (1 + |torch|) over every output (log-policies,
    values and the auxiliary heads' where the network has them) on random positions at two
    board sizes (`check_sizes`): a batch of three with every node kept, one with random
    masks. A network with groups is checked on positions whose stones make groups (the torch
    network collates their incidences, the engine feeds their members)."""
    evaluator = Evaluator(model_path, device="cpu")
    game = game_class(evaluator.game_name)
    rng = np.random.default_rng(seed)
    worst = 0.0
    for width, height in check_sizes(net.config, game):
        lay = board_layout(net.config, game, width, height)
        x = rng.integers(0, 2, (3, lay.num_nodes, evaluator.num_features)).astype(np.float32)
        if net.config.group_roles:
            x = _with_stones(x, rng)
        for masks in (None, rng.random((3, lay.num_nodes)) < 0.7):
            if isinstance(net, MovePolicyNet):
                pairs = _moves_pairs(net, evaluator, x, lay, masks)
            else:
                pairs = _lattice_pairs(net, evaluator, x, lay, masks)
            worst = max([worst] + [_relative_error(ours, theirs) for ours, theirs in pairs])
    return worst


def _lattice_pairs(net: Network, evaluator: Evaluator, x: np.ndarray, lay: GraphLayout,
                   masks: np.ndarray | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """(onnxruntime, torch-geometric) for each output of a lattice network."""
    log_policy, value, ownership, score = evaluator.run_aux(x, lay, masks)
    with torch.inference_mode():
        ref = net(*collate(list(x), [lay] * len(x), None if masks is None else list(masks),
                           groups=bool(net.config.group_roles)))
    pairs = [(log_policy.reshape(-1), ref.log_policy.numpy()), (value, ref.value.numpy())]
    if ref.ownership_logit is not None:
        if ownership is None:
            raise RuntimeError("the exported model has lost the ownership head")
        pairs.append((ownership.reshape(-1), torch.tanh(ref.ownership_logit).numpy()))
    if ref.score is not None:
        if score is None:
            raise RuntimeError("the exported model has lost the score head")
        pairs.append((score, ref.score.numpy()))
    return pairs


def _moves_pairs(net: MovePolicyNet, evaluator: Evaluator, x: np.ndarray, lay: GraphLayout,
                 masks: np.ndarray | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """(onnxruntime, torch) for each output of a moves network: log-policy, value, wdl."""
    heads = evaluator.run_heads(x, lay, masks)
    if heads.wdl is None:
        raise RuntimeError("the exported model has lost the wdl head")
    kept = np.ones(x.shape[:2], np.float32) if masks is None else masks.astype(np.float32)
    with torch.inference_mode():
        ref = net(torch.from_numpy(x), *(torch.tensor(lay.table(name)) for name in net.TABLES),
                  torch.from_numpy(kept))
    return [(ours, theirs.numpy()) for ours, theirs in
            zip((heads.log_policy, heads.value, heads.wdl), ref, strict=True)]


def check_sizes(config: NetConfig, game: type[Game]) -> tuple[tuple[int, int], ...]:
    """The two board sizes an export of a `config` network for `game` is checked at."""
    return CHECK_SIZES if config.kind != "moves" else _moves_sizes(game)[:2]


def board_layout(config: NetConfig, game: type[Game], width: int, height: int) -> GraphLayout:
    """The layout a `config` network reads at width x height: the lattice's (whatever the
    lattice game), the game's own where the network pools over its groups or is a moves
    network (its own graph)."""
    plain = config.kind != "moves" and not config.group_roles
    return layout(width, height) if plain else layout(width, height, game)


def _with_stones(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random positions `x` whose first two planes (a game with groups reads its stones
    there: own, opponent) are a board: each point empty, own or the opponent's, never both,
    so the check meets chains of every length and their liberties."""
    stones = rng.choice(3, size=x.shape[:2], p=[0.4, 0.3, 0.3])
    x[:, :, 0] = stones == 1
    x[:, :, 1] = stones == 2
    x[:, -1, :2] = 0.0  # the extra node is no point
    return x


def _moves_sizes(game: type[Game]) -> tuple[tuple[int, int], ...]:
    """The sizes of `MOVES_SIZES` that `game` admits (at least three: two checked, one traced)."""
    sizes = []
    for width, height in MOVES_SIZES:
        try:
            game(width, height)
        except (GameError, ValueError):
            continue
        sizes.append((width, height))
    if len(sizes) < 3:
        raise ExportError(f"{game.name} admits only {sizes} of {list(MOVES_SIZES)}: an export "
                          "needs two sizes to check and one to trace")
    return tuple(sizes)


def _relative_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    """max |ours - theirs| / (1 + |theirs|): see `TOLERANCE`."""
    return float((np.abs(ours - theirs) / (1.0 + np.abs(theirs))).max())


def _export_onnx(twin: ExportForm, path: Path, game: type[Game]) -> None:
    """Trace the twin on an example of a size it is not checked at and write a self-contained
    opset-18 file with dynamic batch and node counts (the lattice's neighbour table's width,
    MAX_IN_DEGREE, stays fixed; a moves network's tables are dynamic throughout)."""
    moves = isinstance(twin, MovePolicyNet)
    width, height = _moves_sizes(game)[2] if moves else TRACE_SIZE
    lay = board_layout(twin.config, game, width, height)
    tables = tuple(torch.tensor(lay.table(name)) for name in twin.TABLES)
    roles = twin.config.group_roles
    groups = (_trace_members(lay, twin.config.num_features),) if roles else ()
    example = (torch.zeros(2, lay.num_nodes, twin.config.num_features), *tables, *groups,
               torch.ones(2, lay.num_nodes))
    batch, nodes = torch.export.Dim("batch"), torch.export.Dim("nodes", min=2)
    dynamic = torch.export.Dim.DYNAMIC
    shapes: dict[str, dict[int, Any]] = {"x": {0: batch, 1: nodes}, "nbr": {0: dynamic},
                                         "hub": {1: nodes}, "mask": {0: batch, 1: nodes}}
    if moves:
        shapes["nbr"] = {0: dynamic, 1: dynamic}
        shapes["promo"] = {0: dynamic}
    if roles:
        shapes[GROUP_MEMBERS_INPUT] = {0: batch, 1: dynamic}  # N-1 points, the game's K
    # In the inputs' order: the exporter names the axes by position.
    shapes = {name: shapes[name] for name in _inputs(twin)}
    with _quiet_exporter():
        try:
            torch.onnx.export(twin, example, str(path), dynamo=True, opset_version=OPSET,
                              input_names=list(_inputs(twin)),
                              output_names=list(_outputs(twin.config)),
                              dynamic_shapes=shapes, external_data=False, optimize=True,
                              verbose=False)
        except Exception as exc:  # torch.export and onnxscript raise many unrelated types
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ExportError(f"torch.onnx.export failed: {reason}") from exc


def _trace_members(lay: GraphLayout, num_features: int) -> torch.Tensor:
    """A `group_members [2, N-1, K]` int32 example for tracing on `lay` (K the game's, read
    from the core on an empty board), its entries cycling through `TRACE_ENTRIES`."""
    empty = np.zeros((1, lay.num_nodes, num_features), np.float32)
    k = lay.group_members(empty).shape[2]
    count = 2 * lay.num_points * k
    cycle = torch.arange(count, dtype=torch.int32) % TRACE_ENTRIES - 1
    return cycle.reshape(2, lay.num_points, k)


def _inputs(twin: ExportForm) -> tuple[str, ...]:
    """The model's ONNX inputs (the card's): x, the twin's tables, group_members where it pools
    over groups, mask."""
    return input_names(twin.TABLES, groups=bool(twin.config.group_roles))


def _outputs(config: NetConfig) -> tuple[str, ...]:
    return output_names(ownership=config.ownership_head, score=config.score_head,
                        wdl=config.kind == "moves")


class BackgroundExport:
    """ONNX exports in one process of their own, one at a time, in order.

    With `selfplay.runtime = "torch"` the workers play from the torch weights the trainer writes
    beside each generation's ONNX file, so the export (5.6-7.9 s a generation on the lent GPU
    machine's cores, a third of a generation there, during which the GPU idled) need not hold
    the next generation back. The trainer hands
    it here and waits for it only when something reads the file: the next export, an evaluation,
    the end of the session. A failure is raised by that wait, naming its generation. On the lent
    H200 this made 1.6 times the games a second."""

    def __init__(self) -> None:
        self._process: BaseProcess | None = None  # started by the first export
        self._requests: mp.Queue | None = None
        self._replies: mp.Queue | None = None
        self._pending: int | None = None

    @property
    def pending(self) -> int | None:
        """The generation whose export was handed over and not yet waited for, if any."""
        return self._pending

    def submit(self, generation: int, weights: Path, out: Path) -> None:
        """Export the checkpoint at `weights` to `out` (and its card), once the export before
        it has finished (whose failure this raises)."""
        self.wait()
        if self._process is None:
            ctx = mp.get_context("spawn")  # never fork a process holding torch's thread pools
            self._requests, self._replies = ctx.Queue(), ctx.Queue()
            self._process = ctx.Process(target=_export_process, name="saz-export", daemon=True,
                                        args=(self._requests, self._replies))
            self._process.start()
        assert self._requests is not None
        self._requests.put((str(weights), str(out)))
        self._pending = generation

    def wait(self) -> None:
        """Block until the pending export is written; ExportError if it failed."""
        if self._pending is None:
            return
        assert self._process is not None and self._replies is not None
        generation, self._pending = self._pending, None
        while True:
            try:
                failure = self._replies.get(timeout=1.0)
                break
            except queue.Empty:
                if not self._process.is_alive():
                    failure = f"the export process died (exit code {self._process.exitcode})"
                    break
        if failure is not None:
            raise ExportError(f"generation {generation}'s export failed: {failure}")

    def close(self) -> None:
        """Let the pending export finish (a failure is not raised: the resumed run exports
        that generation again) and stop the process."""
        if self._process is None:
            return
        with contextlib.suppress(ExportError):
            self.wait()
        assert self._requests is not None
        self._requests.put(None)
        self._process.join(timeout=10.0)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join()
        self._process = None


def _export_process(requests: mp.Queue, replies: mp.Queue) -> None:
    """The background export process: exports (weights, out) requests until None, replying
    None or the failure's message to each."""
    # Ctrl-C (or `timeout -s INT`) reaches the whole process group: the trainer handles it and
    # lets a running export finish. Two threads: the self-play workers have the other cores.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(2)
    while (request := receive(requests, orphaned=None)) is not None:
        weights, out = request
        try:
            export_checkpoint(load_checkpoint(weights), out)
        except Exception as exc:
            replies.put(str(exc) or type(exc).__name__)
        else:
            replies.put(None)
    let_go(replies)


def _opset(path: Path) -> int:
    """The default-domain opset the file really declares (the card states this, not a wish)."""
    model = onnx.load(str(path))
    onnx.checker.check_model(model)
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


@contextlib.contextmanager
def _quiet_exporter() -> Iterator[None]:
    """Silence the exporter's chatter (torchvision notices, deprecation and renaming warnings)
    that would bury the one line `saz export` prints."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logger.setLevel(logging.ERROR)
        try:
            yield
        finally:
            logger.setLevel(level)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="saz export",
        description="Export a training checkpoint to one ONNX file (any board size, any batch "
                    "size) and its model card MODEL.json beside it.")
    parser.add_argument("checkpoint", type=Path, help="checkpoint written by saz train")
    parser.add_argument("--out", type=Path, required=True, metavar="MODEL.onnx",
                        help="where to write the model (the card goes beside it)")
    args = parser.parse_args(argv)
    try:
        checkpoint = load_checkpoint(args.checkpoint)
        card = export_checkpoint(checkpoint, args.out)
    except (CheckpointError, ExportError, ModelError, ValueError, OSError) as exc:
        print(f"saz export: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({card.onnx_bytes} bytes, {card.game}, hidden "
          f"{card.network['hidden']} x {card.network['layers']} layers, "
          f"{card.network['parameters']} parameters) and {card_path(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
