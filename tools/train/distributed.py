"""Self-play on a Ray cluster: `saz train ... --ray [ADDRESS]`.

`RaySelfPlayPool` has `SelfPlayPool`'s interface (`play`, `close`), so the trainer, its run
directory, its resume and its metrics are the same; only where the games are played changes.

* **Actors.** One `SelfPlayActor` per CPU core of every live node (per `selfplay.threads` cores,
  as onnxruntime threads are), each a `SelfPlayWorker` with its `games_in_flight` games in
  lockstep, exactly as a local worker process. On a node with GPUs and `selfplay.device` other
  than `cpu`, the node's actors share its GPUs (each asks for GPUs / actors of them).
* **The network** goes into Ray's object store once per generation (`ray.put` of the ONNX file
  and its card);
  an actor fetches it when its generation changes and keeps its unfinished games, as a local
  worker does.
* **Positions flow back game by game.** An actor's `chunk` call returns as soon as at least one of
  its games has finished (or after a few seconds without one), so an actor or node that dies
  loses only the games it had in flight; the driver keeps one call outstanding per actor until the
  generation has its games, then collects the calls still out (their games are kept).
* **Faults and growth.** A call that fails because its actor or node died drops that actor; the
  generation completes on the others. Every few seconds the driver compares the live nodes with
  its actors and starts actors on any node (or free core) that has none, so a node that joins
  mid-run gets work. If every actor is gone and no node has room, `play` raises SelfPlayError.
* **The ledger.** Each batch says how many games and positions each node played
  (`SelfPlayBatch.by_node`); the trainer adds them up in `RUN/nodes.json`.

Every node needs the same saz installed (the actors import this module). Ray is imported only
here, and this module only when `--ray` is given: the local path never imports ray.
"""
from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from saz.engine.model_card import card_path
from saz.tools.train.selfplay import (
    SelfPlayBatch,
    SelfPlayConfig,
    SelfPlayError,
    SelfPlayRecord,
    SelfPlayWorker,
    WorkerStats,
    open_network,
    tally,
)

#: The longest an actor's call runs without a finished game before it reports anyway, so the
#: driver hears from every actor every few seconds (and can stop a generation promptly).
CHUNK_SECONDS = 5.0
#: How often the driver looks for new nodes and lost actors while a generation plays.
RECONCILE_SECONDS = 5.0
#: How long, once a generation has its games, the driver waits for the calls still out: a call
#: answers within CHUNK_SECONDS and a step, so one that has not by then is an actor whose node
#: is dying (Ray notices a dead node only after its health checks fail, tens of seconds).
STRAGGLER_SECONDS = 3 * CHUNK_SECONDS


class SelfPlayActor:
    """A Ray actor (wrapped by `ray.remote` in the pool): one self-play worker on one core."""

    def __init__(self, game_name: str, rules: Mapping[str, Any], config: SelfPlayConfig,
                 seed: int) -> None:
        self.worker = SelfPlayWorker(game_name, rules, config, seed)
        self.config = config
        self.generation: int | None = None
        self._folder = tempfile.mkdtemp(prefix="saz-actor-")

    def chunk(self, generation: int, model: list[Any], threshold: float | None
              ) -> tuple[list[SelfPlayRecord], WorkerStats]:
        """Play until the worker hands on at least one game (or CHUNK_SECONDS pass) with generation
        `generation`'s network (`model[0]`, an object ref of its ONNX file's and its card's
        bytes, fetched only when the generation changes); the finished games and what was done."""
        if generation != self.generation:
            import ray

            path = Path(self._folder) / f"gen_{generation}.onnx"
            network, card = ray.get(model[0])
            path.write_bytes(network)
            card_path(path).write_bytes(card)
            self.worker.load(open_network(path, self.config), threshold)
            path.unlink()
            card_path(path).unlink()
            self.generation = generation
        self.worker.resign_threshold = threshold
        stats, start = WorkerStats(), time.perf_counter()
        finished: list[SelfPlayRecord] = []
        while not finished and time.perf_counter() - start < CHUNK_SECONDS:
            finished.extend(self.worker.step(stats))
        stats.seconds = time.perf_counter() - start
        return finished, stats


@dataclass
class _Actor:
    handle: Any
    node: str
    host: str


class RaySelfPlayPool:
    """Self-play on Ray actors across a cluster (`close` disconnects: use `contextlib.closing`).

    `address` is Ray's: None starts (or joins, with RAY_ADDRESS set) a cluster as `ray.init()`
    does; "auto" joins the one `ray start` made here; "HOST:PORT" a head elsewhere.
    """

    def __init__(self, game_name: str, rules: Mapping[str, Any], config: SelfPlayConfig,
                 seed: int, address: str | None = None,
                 log: Callable[[str], None] = lambda text: print(text, file=sys.stderr)) -> None:
        import ray

        self._ray = ray
        self.game_name = game_name
        self.rules = dict(rules)
        self.config = config
        self.seed = seed
        self.log = log
        ray.init(address=address, namespace="saz", include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
        self._remote = ray.remote(SelfPlayActor)
        self._actors: dict[str, _Actor] = {}  # by actor id
        self._started = 0  # actors ever started: each gets its own seed
        self._generation = 0
        self._reconcile()

    # -- the cluster --------------------------------------------------------------------------
    def _nodes(self) -> list[dict[str, Any]]:
        return [n for n in self._ray.nodes() if n.get("Alive")]

    def _reconcile(self) -> None:
        """Start actors where a live node has more room than actors: one per `threads` CPUs."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        threads = self.config.threads
        for node in self._nodes():
            node_id = node["NodeID"]
            resources = node.get("Resources", {})
            room = int(resources.get("CPU", 0)) // threads
            have = sum(a.node == node_id for a in self._actors.values())
            gpus = float(resources.get("GPU", 0))
            per_actor_gpu = gpus / room if gpus and room and self.config.device != "cpu" else 0
            for _ in range(room - have):
                handle = self._remote.options(
                    num_cpus=threads, num_gpus=per_actor_gpu,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                ).remote(self.game_name, self.rules, self.config,
                         self.seed * 1000 + self._started)
                actor_id = f"actor-{self._started}"
                self._started += 1
                host = str(node.get("NodeManagerHostname") or node.get("NodeManagerAddress"))
                self._actors[actor_id] = _Actor(handle, node_id, host)
            if room > have:
                self.log(f"ray: {room - have} self-play actor(s) started on {node_id[:8]} "
                         f"({node.get('NodeManagerAddress')})")

    def _drop(self, actor_id: str, reason: str) -> None:
        """Forget an actor (killing it, in case it lives on unreachable: its core is freed)."""
        actor = self._actors.pop(actor_id, None)
        if actor is None:
            return
        self.log(f"ray: a self-play actor on {actor.node[:8]} ({actor.host}) is lost with its "
                 f"games in flight: {reason}")
        try:
            self._ray.kill(actor.handle)
        except Exception:
            pass

    @property
    def layout(self) -> str:
        """Where the actors are, for logs and benchmarks: "3 actors on 2 nodes"."""
        nodes = {a.node for a in self._actors.values()}
        return f"{len(self._actors)} actors on {len(nodes)} node{'s' * (len(nodes) != 1)}"

    # -- SelfPlayPool's interface -------------------------------------------------------------
    def play(self, model_path: Path, games: int, resign_threshold: float | None,
             on_game: Callable[[SelfPlayRecord], None] | None = None) -> SelfPlayBatch:
        """At least `games` finished games with the network at `model_path`, from every actor
        of the cluster (those finishing in the calls still out when the count is reached are
        kept too); `on_game` is called as each arrives."""
        ray = self._ray
        self._generation += 1
        generation = self._generation
        # In a list, so that Ray passes the reference and an actor fetches it only when new.
        model = [ray.put((model_path.read_bytes(), card_path(model_path).read_bytes()))]
        start = time.perf_counter()
        records: list[SelfPlayRecord] = []
        stats = WorkerStats()
        by_node: dict[str, dict[str, Any]] = {}
        out: dict[Any, str] = {}  # call -> actor id

        def submit(actor_id: str) -> None:
            call = self._actors[actor_id].handle.chunk.remote(generation, model, resign_threshold)
            out[call] = actor_id

        for actor_id in list(self._actors):
            submit(actor_id)
        last_reconcile = time.monotonic()
        grace: float | None = None  # when the calls still out stop being waited for
        while out:
            done, _ = ray.wait(list(out), num_returns=1, timeout=RECONCILE_SECONDS)
            for call in done:
                actor_id = out.pop(call)
                try:
                    finished, chunk_stats = ray.get(call)
                except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError,
                        ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as exc:
                    self._drop(actor_id, type(exc).__name__)
                    continue
                except ray.exceptions.RayTaskError as exc:  # the self-play code itself failed
                    raise SelfPlayError(f"self-play actor failed:\n{exc}") from None
                actor = self._actors[actor_id]
                tally(by_node, actor.node, actor.host, len(finished),
                      sum(len(r.positions) for r in finished))
                stats.add(chunk_stats)
                for record in finished:
                    records.append(record)
                    if on_game is not None:
                        on_game(record)
                if len(records) < games:
                    submit(actor_id)
            if len(records) >= games:  # collect the calls still out, start none
                if grace is None:
                    grace = time.monotonic() + STRAGGLER_SECONDS
                elif time.monotonic() > grace:  # an actor that cannot answer (node dying)
                    for actor_id in out.values():
                        self._drop(actor_id, "no answer at the end of the generation")
                    out.clear()
                continue
            if not out or time.monotonic() - last_reconcile >= RECONCILE_SECONDS:
                self._reconcile()  # lost actors replaced where their node lives, new nodes used
                last_reconcile = time.monotonic()
                if not self._actors:
                    raise SelfPlayError("no self-play actor is left and no live node has room "
                                        f"for one ({len(records)} of {games} games played)")
                for actor_id in set(self._actors) - set(out.values()):
                    submit(actor_id)
        return SelfPlayBatch(records, stats, time.perf_counter() - start, by_node)

    def close(self) -> None:
        """Stop the actors and leave the cluster (a cluster this pool started stops with it)."""
        for actor in self._actors.values():
            try:
                self._ray.kill(actor.handle)
            except Exception:
                pass
        self._actors.clear()
        self._ray.shutdown()
