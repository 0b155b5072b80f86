"""The Ray executor on a local multi-node cluster against the local engine on the same cores.

A Ray cluster of ``--nodes`` nodes with one CPU each (plus a head without CPUs, where the driver runs)
is started on this machine; the local engine gets a sandbox pool of the same number of workers. Two
Adaptive function graders: a fast exact match (Ray's per-block cost shows) and one that burns 5 ms of
CPU per sample (the case a cluster is for). For each: samples/s end to end (Ray: connecting, shipping
the code and starting the actors included) and in steady state (first stored result to last), and the
ratio Ray / local, which is the executor's overhead.

``--check N`` then grades N samples both ways with one node killed mid-run and checks the same mean,
the same score for every sample, and every sample stored exactly once.

Run: ``python bench/ray_executor.py [--nodes 2] [--fast 20000] [--slow 1500] [--check 0]``
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from studio.core.engine.runner import Progress, RunOptions, run_grader
from studio.core.models import FunctionGrader, Sample, Turn
from studio.core.sandbox import close_shared_pool
from studio.core.store import Library

FAST = """from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    return 1.0 if (thread.completion() or "").strip() == thread.metadata.get("expected", "") else 0.0
"""

SLOW = """import time
from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    end = time.process_time() + 0.005  # 5 ms of CPU, not of sleep: the cores are what is compared
    while time.process_time() < end:
        pass
    return 1.0 if (thread.completion() or "").strip() == thread.metadata.get("expected", "") else 0.0
"""


def samples(n: int) -> list[Sample]:
    return [Sample(id=f"s{i}", messages=[Turn(role="user", content=f"What is {i} + {i}?")],
                   completion=str(2 * i if i % 5 else i), expected=str(2 * i)) for i in range(n)]


class Clock:
    """Steady state: from the first stored result to the last."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.first_done = 0
        self.last = 0.0
        self.done = 0

    def __call__(self, progress: Progress) -> None:
        now = time.perf_counter()
        if self.first is None and progress.done:
            self.first, self.first_done = now, progress.done
        if progress.done > self.done:
            self.done, self.last = progress.done, now

    def rate(self) -> float:
        if self.first is None or self.last <= self.first:
            return float("nan")
        return (self.done - self.first_done) / (self.last - self.first)


def timed(library: Library, key: str, dataset: str, options: RunOptions) -> tuple[Any, float, float]:
    clock = Clock()
    start = time.perf_counter()
    info = run_grader(library, key, dataset, options, on_progress=clock)
    elapsed = time.perf_counter() - start
    return info, info.done / elapsed, clock.rate()


def compare(library: Library, name: str, key: str, address: str) -> None:
    local, local_e2e, local_steady = timed(library, key, key, RunOptions())
    close_shared_pool()  # the local pool's workers would otherwise share the cores with the cluster
    remote, ray_e2e, ray_steady = timed(library, key, key, RunOptions(executor="ray", ray_address=address))
    same = local.aggregates["mean"] == remote.aggregates["mean"]
    print(f"{name}: {local.done} samples, same mean {same}")
    print(f"  local engine  end to end {local_e2e:9,.0f}/s   steady {local_steady:9,.0f}/s")
    print(f"  ray executor  end to end {ray_e2e:9,.0f}/s   steady {ray_steady:9,.0f}/s")
    print(f"  ratio ray/local: end to end {ray_e2e / local_e2e:.0%}, steady {ray_steady / local_steady:.0%}"
          f"   ({remote.aggregates['executor']['blocks']} blocks)")


def check(db: Path, library: Library, cluster: Any, address: str, n: int) -> None:
    """N samples, the local engine and the cluster with a node killed mid-run: exactly once, same scores."""
    library.datasets.create("check", samples(n))
    local = run_grader(library, "fast", "check")
    killed: list[Any] = []

    def kill_one(progress: Progress) -> None:
        if progress.done >= n // 3 and not killed:
            node = next(iter(cluster.worker_nodes))
            cluster.remove_node(node, allow_graceful=False)
            killed.append(node)

    remote = run_grader(library, "fast", "check", RunOptions(executor="ray", ray_address=address), on_progress=kill_one)
    conn = sqlite3.connect(db)
    try:
        per_sample = conn.execute(
            "SELECT count(*), max(n) FROM (SELECT sample_idx, count(*) AS n FROM results WHERE run_id = ? "
            "GROUP BY sample_idx)", (remote.id,)).fetchone()
        differing = conn.execute(
            "SELECT count(*) FROM results a JOIN results b ON a.sample_idx = b.sample_idx "
            "WHERE a.run_id = ? AND b.run_id = ? AND (a.score IS NOT b.score OR a.status != b.status)",
            (local.id, remote.id)).fetchone()[0]
    finally:
        conn.close()
    report = remote.aggregates["executor"]
    print(f"check: {n} samples, a node killed mid-run: {bool(killed)}; status {remote.status}")
    print(f"  mean local {local.aggregates['mean']!r} ray {remote.aggregates['mean']!r}; samples whose score "
          f"differs: {differing}")
    print(f"  distinct samples stored {per_sample[0]}, most rows for one sample {per_sample[1]}; actors lost "
          f"{report['actors_lost']}, blocks re-run {report['blocks_rerun']}, duplicate writes refused "
          f"{report['duplicates_refused']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2, help="Ray worker nodes of one CPU each (default 2)")
    parser.add_argument("--fast", type=int, default=20000, help="samples for the fast grader")
    parser.add_argument("--slow", type=int, default=1500, help="samples for the 5 ms grader")
    parser.add_argument("--check", type=int, default=0, help="also the exactly-once check on N samples")
    args = parser.parse_args()

    from ray.cluster_utils import Cluster

    started = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "include_dashboard": False,
        "_system_config": {"health_check_period_ms": 1000, "health_check_failure_threshold": 3}})
    try:
        for _ in range(args.nodes):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        print(f"local Ray cluster: {args.nodes} nodes of 1 CPU (started in {time.perf_counter() - started:.0f} s)")
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.sqlite"
            library = Library.open(db)
            library.graders.create(FunctionGrader(key="fast", source=FAST))
            library.graders.create(FunctionGrader(key="slow", source=SLOW))
            import studio.core.sandbox.pool as pool

            pool.default_size = lambda: args.nodes  # the local engine on the same number of cores
            if args.fast:
                library.datasets.create("fast", samples(args.fast))
                compare(library, "fast exact match", "fast", cluster.address)
            if args.slow:
                library.datasets.create("slow", samples(args.slow))
                compare(library, "5 ms of CPU per sample", "slow", cluster.address)
            if args.check:
                cluster.add_node(num_cpus=1)  # one more node: the check kills one mid-run
                cluster.wait_for_nodes()
                check(db, library, cluster, cluster.address, args.check)
            library.close()
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
