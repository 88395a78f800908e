"""Campaigns on a Ray cluster (fuzzgpu.workers.ray_cluster, docs/ray.md): a local cluster of two nodes on
this machine (a head and a second ``ray start --address``, each with its own resources, its own
ports and temp dir), started with ``ray start --block`` in their own sessions so that a node is
"lost" by killing exactly its processes (by id).  Bounded by events (the first finding on disk),
with generous timeouts; the campaign's --time is a budget, not a measurement."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from paths import ROOT

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'fuzzgpu[ray]'): the Ray campaign tests need it")

pytestmark = pytest.mark.slow
RAY = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))
#: a lost node is noticed within a few seconds (the defaults wait tens of seconds)
FAST_HEALTH = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "4",
               "RAY_health_check_initial_delay_ms": "500", "RAY_health_check_timeout_ms": "1000"}


def _free_ports(n: int) -> list[int]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Node:
    """One ``ray start --block`` (its own session); ``kill()`` SIGKILLs it and every process under it."""

    def __init__(self, args: list[str], tmp: Path, name: str, ray_tmp: str, avoid: tuple[int, ...] = ()) -> None:
        p = _free_ports(8)
        lo = 20000 + (os.getpid() * 97 + len(name) * 1013 + p[0]) % 30000
        # ray start refuses worker ports that overlap a component's port, the head's GCS port (``avoid``)
        # included: a worker range over it failed one run ("worker_ports ... 33049 ... used by other components")
        while any(lo <= q <= lo + 200 for q in (*p, *avoid)):
            lo = 20000 + (lo - 20000 + 211) % 30000
        ports = ["--node-manager-port", str(p[0]), "--object-manager-port", str(p[1]), "--metrics-export-port", str(p[2]),
                 "--dashboard-agent-listen-port", str(p[3]), "--dashboard-agent-grpc-port", str(p[4]),
                 "--runtime-env-agent-port", str(p[5]), "--dashboard-port", str(p[6]), "--min-worker-port", str(lo), "--max-worker-port", str(lo + 200)]
        self.log = open(tmp / f"{name}.log", "w")  # noqa: SIM115 -- closed in kill()
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", **FAST_HEALTH)
        env.pop("RAY_ADDRESS", None)
        self.proc = subprocess.Popen([RAY, "start", "--block", "--disable-usage-stats", "--object-store-memory", str(80 << 20),
                                      "--temp-dir", ray_tmp, *ports, *args],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.name = name

    def pids(self) -> list[int]:
        """This node's processes: those of the session ``ray start`` leads, and every process under
        them (from /proc; an orphan keeps its session)."""
        children: dict[int, list[int]] = {}
        todo = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except (OSError, IndexError):
                    continue
                children.setdefault(int(fields[1]), []).append(int(d))
                if int(fields[3]) == self.proc.pid:
                    todo.append(int(d))
        out: set[int] = set()
        while todo:
            pid = todo.pop()
            if pid not in out:
                out.add(pid)
                todo += children.get(pid, [])
        return sorted(out)

    def kill(self) -> None:
        for pid in self.pids():
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        self.proc.wait(30)
        self.log.close()


class Cluster:
    def __init__(self, tmp: Path, head: list[str], second: list[str] | None) -> None:
        import tempfile

        self.ray_tmp = tempfile.mkdtemp(prefix="fgray-", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
        self.port = _free_ports(1)[0]
        self.address = f"127.0.0.1:{self.port}"
        self.nodes = [Node(["--head", "--port", str(self.port), "--include-dashboard", "false", "--node-ip-address", "127.0.0.1", *head],
                           tmp, "head", self.ray_tmp, avoid=(self.port,))]
        self._wait(1)
        if second is not None:
            self.nodes.append(Node(["--address", self.address, "--node-ip-address", "127.0.0.1", *second], tmp, "node2", self.ray_tmp,
                                   avoid=(self.port,)))
            self._wait(2)

    def _wait(self, n: int, timeout: float = 240) -> None:
        """Until ``n`` nodes are alive (asked in a subprocess: this test process stays out of Ray)."""
        code = ("import ray,sys; ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False); "
                "print(sum(1 for x in ray.nodes() if x['Alive']))")
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            for node in self.nodes:
                if node.proc.poll() is not None:
                    raise RuntimeError(f"ray start ({node.name}) exited {node.proc.returncode}: {Path(node.log.name).read_text()[-2000:]}")
            try:
                r = subprocess.run([sys.executable, "-c", code, self.address], capture_output=True, text=True, timeout=30,
                                   env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"})
            except subprocess.TimeoutExpired:
                continue
            if r.returncode == 0 and r.stdout.strip().splitlines() and int(r.stdout.strip().splitlines()[-1]) >= n:
                return
            time.sleep(1)
        raise RuntimeError(f"the Ray cluster did not reach {n} nodes within {timeout:.0f} s")

    def node_id(self, resource: str) -> str:
        """The id of the node that has the custom resource ``resource``."""
        code = ("import ray,sys; ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False); "
                "print([x['NodeID'] for x in ray.nodes() if x['Alive'] and sys.argv[2] in x['Resources']][0])")
        r = subprocess.run([sys.executable, "-c", code, self.address, resource], capture_output=True, text=True, timeout=120,
                           env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}, check=True)
        return r.stdout.strip().splitlines()[-1]

    def close(self) -> None:
        for node in reversed(self.nodes):
            if node.proc.poll() is None or node.pids():
                node.kill()
        shutil.rmtree(self.ray_tmp, ignore_errors=True)


def _campaign(args: list[str], corpus: Path, log: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("RAY_ADDRESS", None)
    return subprocess.Popen([sys.executable, "-m", "fuzzgpu", "campaign", *args, "--corpus", str(corpus), "--no-live", "--json"],
                            cwd=ROOT, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env)  # noqa: SIM115


@contextlib.contextmanager
def _campaign_on(cluster: Cluster, args: list[str], corpus: Path, log: Path) -> Iterator[subprocess.Popen]:
    """``fuzzgpu campaign ARGS --ray`` on ``cluster``; on leaving, a campaign still running is killed
    and the cluster closed."""
    p = None
    try:
        p = _campaign([*args, "--ray", cluster.address], corpus, log)
        yield p
    finally:
        if p is not None and p.poll() is None:
            p.kill()
        cluster.close()


def _report(log: Path) -> dict:
    text = log.read_text()
    start = text.index('{\n "schema": "fuzzgpu.campaign-report"')
    return json.loads(text[start:text.rindex("}") + 1])


def _entries(corpus: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in corpus.glob("*.json") if p.name != "known.json"}


def _state_synced(corpus: Path, wid: str) -> bool:
    """The driver holds a copy of worker ``wid``'s campaign state (brought back by a poll)."""
    try:
        return bool(json.loads((corpus / ".fuzzgpu" / "workers" / wid / "state.json").read_text()).get("sessions"))
    except (OSError, ValueError):
        return False


def test_two_nodes_four_sim_workers_a_node_lost(tmp_path: Path) -> None:
    """4 sim actors (SPREAD: two on each node) with an injected fault; once a finding is on disk
    the second node is killed: its actors are restarted on the head's free CPUs, the campaign goes
    on to one combined report, every finding on disk before the kill is still there, every entry
    is in the report once, and no class has two entries."""
    from fuzzgpu.corpus import entry_class

    cluster = Cluster(tmp_path, ["--num-cpus", "4", "--num-gpus", "0"], ["--num-cpus", "2", "--num-gpus", "0", "--resources", '{"node2": 1}'])
    node2 = cluster.node_id("node2")
    corpus, log = tmp_path / "corpus", tmp_path / "campaign.log"
    ids = ["w0", "w1", "w2", "w3"]

    def placed() -> dict[str, dict]:
        out = {}
        for w in ids:
            try:
                out[w] = json.loads((corpus / ".fuzzgpu" / "workers" / w / "actor.json").read_text())
            except (OSError, ValueError):
                pass
        return out

    with _campaign_on(cluster, ["--profile", "classic", "--backend", "sim", "--sim-fault", "relacq-as-relaxed", "--workers", "4",
                                "--time", "75", "--seed", "11"], corpus, log) as p:
        t0 = time.monotonic()
        # the kill waits for every actor's state to reach the driver (the copy a restarted actor resumes
        # from; an actor killed before its first poll answer has none and restarts as a first session)
        while (not _entries(corpus) or len(placed()) < 4 or not all(_state_synced(corpus, w) for w in ids)) \
                and p.poll() is None and time.monotonic() - t0 < 600:
            time.sleep(0.5)
        assert p.poll() is None, f"the campaign ended before its first finding: {log.read_text()[-3000:]}"
        before = _entries(corpus)
        assert before, "no finding within 600 s"
        on_node2 = sorted(w for w, a in placed().items() if a["node_id"] == node2)
        assert on_node2, f"no actor on the second node (SPREAD): {placed()}"
        pids = cluster.nodes[1].pids()
        assert all(placed()[w]["pid"] in pids for w in on_node2)
        cluster.nodes[1].kill()
        rc = p.wait(900)
    text = log.read_text()
    assert rc == 1, text[-3000:]
    rep = _report(log)
    actors = rep["ray"]["actors"]
    assert sorted(actors) == ["w0", "w1", "w2", "w3"]
    lost = sorted(w for w, a in actors.items() if a["restarts"] > 0)
    assert lost == on_node2, f"lost {lost}, on the second node {on_node2}: {text[-3000:]}"
    assert all(actors[w]["node_id"] != node2 for w in lost), "restarted on the dead node?"
    # one death, one restart (Ray's "actor is restarting" answers while it comes back are not deaths)
    assert all(actors[w]["restarts"] == 1 for w in lost), {w: actors[w]["restarts"] for w in lost}
    assert all(a["ended"] == "done" for a in actors.values()), actors
    assert "lost (" in text and "restarting it" in text
    after = _entries(corpus)
    assert set(before) <= set(after), "an entry saved before the node was lost is gone"
    assert all(after[k] == v for k, v in before.items())
    keys = [entry_class(e) for e in after.values()]
    assert len(keys) == len(set(keys)), "two entries of one class"
    files = [f["file"] for f in rep["combined"]["findings"]]
    assert sorted(files) == sorted(after), (files, sorted(after))
    # every worker's findings name entries that exist; each entry is new for exactly one worker
    new_by = {}
    for wid, st in rep["workers_state"].items():
        for f in st["findings"]:
            assert f["file"] in after
            if not f.get("saved_by_another"):
                assert f["file"] not in new_by, f"{f['file']} new for {new_by.get(f['file'])} and {wid}"
                new_by[f["file"]] = wid
    assert set(new_by) == set(after)
    assert rep["combined"]["programs"] > 0 and len(rep["workers_state"]) == 4
    # the restarted actors went on: their state has a second session
    assert all(rep["workers_state"][w]["sessions"] >= 2 for w in lost)


def test_fake_gpus_one_actor_per_gpu(tmp_path: Path) -> None:
    """A node with two fake GPUs (``--num-gpus 2``, no GPU there) and ``gpus='all'``: two actors,
    one per GPU, each pinned by Ray with its own CUDA_VISIBLE_DEVICES (the sim backend runs: no
    GPU is touched)."""
    import io

    from fuzzgpu.workers.ray_cluster import run_ray

    cluster = Cluster(tmp_path, ["--num-cpus", "3", "--num-gpus", "2"], None)
    # 30 s: an actor Ray has not placed 5 s after the end is reported, not waited for (UNPLACED_AFTER);
    # on a loaded 2-core CI machine starting two actor processes has taken over 10 s
    try:
        res = run_ray(address=cluster.address, profile="classic", backend="sim", seconds=30, corpus_dir=str(tmp_path / "c"),
                      prop="model", seed=3, sim_fault=None, workers=1, gpus="all", watchdog=60, max_findings=None, out=io.StringIO())
    finally:
        cluster.close()
    actors = res["actors"]
    assert sorted(actors) == ["w0", "w1"]
    devices = sorted(a["cuda_visible_devices"] for a in actors.values())
    assert devices == ["0", "1"], actors
    assert sorted(a["gpu_ids"][0] for a in actors.values()) == ["0", "1"]
    rep = json.loads((tmp_path / "c" / "report" / "report.json").read_text())
    assert sorted(g.rsplit(":", 1)[1] for g in rep["gpus"]) == ["0", "1"]  # NODE-IP:CUDA_VISIBLE_DEVICES
    assert all(st["programs"] > 0 for st in res["states"].values())


def test_in_flight_program_quarantined_when_its_node_is_lost(tmp_path: Path) -> None:
    """The only CPU is on the second node; its actor's first program hangs (``--sim-fault hang``,
    a watchdog far past the test); once the driver knows the program in flight, the node is killed:
    that program is quarantined on the driver's disk, named as the one the dead actor was running,
    and the campaign still ends with its report (the actor has nowhere to go: reported, not waited for)."""
    cluster = Cluster(tmp_path, ["--num-cpus", "0", "--num-gpus", "0"], ["--num-cpus", "1", "--num-gpus", "0"])
    corpus, log = tmp_path / "corpus", tmp_path / "campaign.log"
    flight = corpus / ".fuzzgpu" / "workers" / "w0" / "in_flight.json"
    with _campaign_on(cluster, ["--profile", "classic", "--backend", "sim", "--sim-fault", "hang", "--workers", "1",
                                "--watchdog", "3000", "--time", "60", "--seed", "2"], corpus, log) as p:
        t0 = time.monotonic()
        while not flight.exists() and p.poll() is None and time.monotonic() - t0 < 600:
            time.sleep(0.5)
        assert flight.exists(), f"no program in flight: {log.read_text()[-3000:]}"
        want = json.loads(flight.read_text())["program_hash"]
        cluster.nodes[1].kill()
        rc = p.wait(900)
    text = log.read_text()
    assert rc == 0, text[-3000:]
    q = json.loads((corpus / "quarantine" / f"{want[:16]}.json").read_text())
    assert q["program_hash"] == want and q["fault"]["kind"] == "crash"
    assert "the Ray actor w0 died while running it" in q["fault"]["detail"]
    assert (corpus / "quarantine" / f"{want[:16]}.litmus").exists()
    rep = _report(log)
    assert rep["ray"]["actors"]["w0"]["ended"] != "done", rep["ray"]["actors"]["w0"]  # lost, with nowhere to go
    assert rep["combined"]["quarantined"] == 1
