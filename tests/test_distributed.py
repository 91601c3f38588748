"""`saz train --ray`: self-play on a Ray cluster of two nodes started on loopback with `ray start`,
as a user starts one (docs/TRAINING.md), and a node killed mid-generation."""
from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.test_train import TINY_CONFIG

#: The tiny config without the in-run evaluation.
CONFIG = TINY_CONFIG.replace("[evaluation]\nevery = 2", "[evaluation]\nevery = 0")
#: A generation long enough (about 30 s on two idle cores, more under load) for Ray to notice a
#: dead node, or to start a new one, before its games are in.
LONG_CONFIG = (CONFIG.replace("games_per_generation = 4", "games_per_generation = 400")
               .replace('sizes = ["5x5", "6x6"]', 'sizes = ["9x9"]')
               .replace("visits = 8\n", "visits = 48\n", 1))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """A head and one worker node, one CPU each, as `ray start` makes them."""

    def __init__(self) -> None:
        pytest.importorskip("ray")
        self.port = _free_port()
        self.worker_port = _free_port()
        self.env = dict(os.environ, RAY_AUTH_MODE="token",
                        RAY_AUTH_TOKEN=secrets.token_hex(32), RAY_USAGE_STATS_ENABLED="0",
                        RAY_ADDRESS=f"127.0.0.1:{self.port}")
        self.ray = str(Path(sys.executable).with_name("ray"))

    def start(self, worker: bool = True) -> None:
        self._run("start", "--head", "--port", str(self.port), "--node-ip-address", "127.0.0.1",
                  "--include-dashboard=false", *self._common)
        if worker:
            self.start_worker()

    def start_worker(self) -> None:
        self._run("start", "--address", f"127.0.0.1:{self.port}", "--node-ip-address",
                  "127.0.0.1", "--node-manager-port", str(self.worker_port), *self._common)

    _common = ("--num-cpus", "1", "--disable-usage-stats")

    def stop(self) -> None:
        self._run("stop", "--force", check=False)

    def _run(self, *args: str, check: bool = True) -> None:
        subprocess.run([self.ray, *args], env=self.env, check=check, timeout=120,
                       capture_output=True)

    def worker_raylet(self) -> int:
        """The pid of the worker node's raylet (the one listening on `worker_port`)."""
        out = subprocess.run(["pgrep", "-f", f"node_manager_port={self.worker_port}"],
                             capture_output=True, text=True, check=False).stdout.split()
        raylets = [int(pid) for pid in out
                   if "raylet" in Path(f"/proc/{pid}/comm").read_text(errors="replace")]
        assert len(raylets) == 1, out
        return raylets[0]

    def train(self, run: Path, config: Path, *extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "saz.engine.cli", "train", "--game", "gomoku", "--config",
             str(config), "--out", str(run), "--ray", "auto", *extra],
            env=dict(self.env, PYTHONUNBUFFERED="1"), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    cluster = Cluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def _read_until(proc: subprocess.Popen[str], done: Callable[[str], bool]) -> str:
    """The process's output up to the moment `done` holds for it (failing if it ends first)."""
    assert proc.stdout is not None
    seen = ""
    while not done(seen):
        chunk = proc.stdout.read(64)
        assert chunk, seen[-3000:]
        seen += chunk
    return seen


def _nodes(run: Path) -> dict[str, dict[str, object]]:
    return json.loads((run / "nodes.json").read_text())


@pytest.mark.slow
def test_a_generation_is_played_on_both_nodes(cluster: Cluster, tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(CONFIG.replace("games_per_generation = 4", "games_per_generation = 8"))
    run = tmp_path / "run"
    proc = cluster.train(run, config, "--generations", "1")
    output = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, output[-3000:]
    assert output.count("self-play actor(s) started") == 2
    nodes = _nodes(run)
    assert len(nodes) == 2 and all(n["games"] > 0 for n in nodes.values()), nodes
    from saz.tools.train.checkpoint import load_checkpoint

    record = load_checkpoint(run / "checkpoint.pt").training
    assert record["nodes"] == nodes
    assert sum(n["games"] for n in nodes.values()) == record["games"] >= 8


@pytest.mark.slow
def test_a_node_killed_mid_generation_loses_only_its_games_in_flight(cluster: Cluster,
                                                                     tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(LONG_CONFIG)
    run = tmp_path / "run"
    proc = cluster.train(run, config, "--generations", "1")
    seen = _read_until(proc, lambda seen: max(map(int, re.findall(r"(\d+)/400", seen)),
                                              default=0) >= 40)  # both nodes deliver
    os.kill(cluster.worker_raylet(), signal.SIGKILL)
    output = seen + proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, output[-3000:]
    assert "is lost with its games in flight" in output, output[-6000:]

    from saz.tools.train.checkpoint import load_checkpoint

    record = load_checkpoint(run / "checkpoint.pt").training
    nodes = _nodes(run)
    assert len(nodes) == 2, nodes  # the dead node's games before it died are counted
    assert all(n["games"] > 0 for n in nodes.values()), nodes
    assert sum(n["games"] for n in nodes.values()) == record["games"] >= 400


@pytest.mark.slow
def test_a_node_that_joins_mid_generation_gets_work(tmp_path: Path) -> None:
    cluster = Cluster()
    try:
        cluster.start(worker=False)
        config = tmp_path / "tiny.toml"
        config.write_text(LONG_CONFIG)
        run = tmp_path / "run"
        proc = cluster.train(run, config, "--generations", "1")
        seen = _read_until(proc, lambda seen: "gen 1 self-play:" in seen)  # the head alone
        cluster.start_worker()
        output = seen + proc.communicate(timeout=300)[0]
        assert proc.returncode == 0, output[-3000:]
        assert output.count("self-play actor(s) started") == 2
        nodes = _nodes(run)
        assert len(nodes) == 2 and all(n["games"] > 0 for n in nodes.values()), nodes
    finally:
        cluster.stop()


def test_a_local_run_never_imports_ray(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(CONFIG)
    code = ("import sys; from saz.tools.train.run import main; "
            f"status = main(['--game', 'gomoku', '--config', {str(config)!r}, '--out', "
            f"{str(tmp_path / 'run')!r}, '--generations', '1']); "
            "sys.exit(status or ('ray' in sys.modules and 'ray imported'))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    nodes = _nodes(tmp_path / "run")
    assert list(nodes) == ["local"] and nodes["local"]["games"] >= 4


def test_ray_missing_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from saz.tools.train.run import main

    config = tmp_path / "tiny.toml"
    config.write_text(CONFIG)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    assert main(["--game", "gomoku", "--config", str(config), "--out", str(tmp_path / "run"),
                 "--generations", "1", "--ray"]) == 1
    assert "pip install 'saz[distributed]'" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_ray_is_only_in_the_distributed_extra() -> None:
    import tomllib

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]

    def names(requirements: list[str]) -> set[str]:
        return {r.split(">")[0].split("=")[0].split("[")[0].strip() for r in requirements}

    assert "ray" not in names(project["dependencies"])
    assert "ray" not in names(project["optional-dependencies"]["train"])
    assert "ray" in names(project["optional-dependencies"]["distributed"])
