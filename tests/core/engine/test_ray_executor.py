"""The Ray executor on a real local cluster (several Ray nodes on this machine): same scores as the
local engine, every sample stored exactly once after a node is killed, after a cancel, and after the
driver itself is killed and the run resumed on the cluster.

Small on purpose (nodes of 1 CPU, a few hundred samples): the machine is shared. The 100,000-sample
check and the throughput figures are in bench/ray_executor.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.core.demo import build_demo
from studio.core.engine.runner import Progress, RunOptions, execute_run, run_grader, start_run
from studio.core.models import FunctionGrader, Sample, Turn
from studio.core.store import Library

pytestmark = pytest.mark.slow

WORKER_NODES = 3

SLOW = """import time
from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    time.sleep(0.02)
    return 1.0 if thread.completion() == thread.metadata.get("expected") else 0.0
"""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        message = "Ray is not installed: pip install -e '.[test,ray]' (the Ray executor's tests need it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return ray


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head without CPUs (the driver's node) and three worker nodes of one CPU each."""
    _ray()
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "include_dashboard": False,
        # notice a killed node within a few seconds instead of the default half minute
        "_system_config": {"health_check_period_ms": 1000, "health_check_failure_threshold": 3},
    })
    try:
        for _ in range(WORKER_NODES):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()


def on_cluster(cluster: Any, **kwargs: Any) -> RunOptions:
    return RunOptions(executor="ray", ray_address=cluster.address, **kwargs)


def per_sample(library: Library, run_id: int) -> dict[int, tuple[Any, ...]]:
    return {r["sample_idx"]: (r["sample_id"], r["status"], r["score"], r["scores"], r["error"])
            for r in library.runs.results(run_id)}


def stored_counts(db: Path | str, run_id: int) -> dict[int, int]:
    """How many rows each sample has (exactly once means 1 for each), read through a connection of
    its own on either backend."""
    with Library.open(db) as lib, lib.engine.connect() as conn:
        return {int(idx): int(n) for idx, n in conn.exec_driver_sql(
            "SELECT sample_idx, count(*) FROM results WHERE run_id = ? GROUP BY sample_idx", (run_id,))}


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """The cluster writes into a SQLite file and into a team's PostgreSQL library alike (issue 36)."""
    return any_db


def slow_library(library: Library, n: int) -> Library:
    library.graders.create(FunctionGrader(key="slow", source=SLOW))
    library.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content="q")],
                                         completion=str(i % 3), expected="0") for i in range(n)])
    return library


@pytest.mark.parametrize(("key", "dataset"), [
    ("qa-exact-match", "qa"), ("qa-token-f1-mka1", "qa"), ("contact-fields-letta", "json-outputs"),
    ("qa-exact-builtin", "qa"), ("answer-not-empty", "qa"), ("qa-blended-score", "qa"),
    ("json-strict-gate", "json-outputs"),  # a composite with a function component: sandbox and builtins
])
def test_demo_graders_score_the_same_on_the_cluster(cluster: Any, library: Library, key: str, dataset: str) -> None:
    """Function (Adaptive, MKA1, Letta), builtin, bash and composite demo graders: every sample, every score."""
    build_demo(library)
    remote = run_grader(library, key, dataset, on_cluster(cluster))
    local = run_grader(library, key, dataset)
    assert remote.status == local.status == "completed"
    report = remote.aggregates["executor"]
    assert report["placement"] == "cluster" and report["actors"] == WORKER_NODES
    assert report["duplicates_refused"] == 0 and report["blocks_rerun"] == 0
    assert "Ray cluster at" in report["where"]
    assert per_sample(library, remote.id) == per_sample(library, local.id)
    assert len(per_sample(library, remote.id)) == library.datasets.get(dataset).sample_count
    # the scores are equal sample by sample (above); the means are added up in different orders:
    # the local run's as it wrote its rows (exact sums, engine/written_tally.py), the cluster's in
    # SQL at its end: equal to the last bits a float sum's order moves
    assert remote.aggregates["mean"] == pytest.approx(local.aggregates["mean"], rel=1e-12)


def test_a_cancelled_cluster_run_keeps_what_it_graded_and_resumes(cluster: Any, library: Library,
                                                                  db_path: Path) -> None:
    slow_library(library, 300)
    cancel = threading.Event()

    def on_progress(progress: Progress) -> None:
        if progress.done >= 16:
            cancel.set()

    run = start_run(library, "slow", "d", on_cluster(cluster))
    info = execute_run(library, run.id, on_progress=on_progress, cancel=cancel)
    assert info.status == "cancelled" and 16 <= info.done < 300
    assert "cancelled" not in {r["error"] for r in library.runs.results(run.id)}  # cut short: left for resume
    assert set(stored_counts(db_path, run.id).values()) == {1}

    info = execute_run(library, run.id)  # the stored settings still say: on the cluster
    assert info.status == "completed" and info.done == 300
    counts = stored_counts(db_path, run.id)
    assert sorted(counts) == list(range(300)) and set(counts.values()) == {1}
    assert info.aggregates["executor"]["duplicates_refused"] == 0
    assert sum(r["score"] for r in library.runs.results(run.id)) == 100


def test_a_killed_driver_leaves_an_interrupted_run_that_resumes_on_the_cluster(cluster: Any, library: Library,
                                                                               db_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    slow_library(library, 300)
    env = {**os.environ, "GRADER_STUDIO_DB": str(db_path)}
    proc = subprocess.Popen([sys.executable, "-m", "studio", "run", "slow", "d", "--executor", "ray",
                             "--ray-address", cluster.address, "--progress-jsonl"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    started = None
    try:
        for line in proc.stdout:
            event = json.loads(line)
            if event["event"] == "started":
                started = event
            if event["event"] == "progress" and event["done"] > 0:
                break
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert started is not None and "Ray cluster at" in started["where"]
    kept = sum(stored_counts(db_path, 1).values())
    assert 0 < kept < 300
    assert json.loads(cli("runs", "list", "--json").stdout)[0]["status"] == "interrupted"

    resumed = cli("run", "--resume", "1", "--executor", "ray", "--ray-address", cluster.address, "--json")
    summary = json.loads(resumed.stdout)
    assert summary["status"] == "completed" and summary["done"] == 300
    assert summary["aggregates"]["executor"]["duplicates_refused"] == 0
    counts = stored_counts(db_path, 1)
    assert sorted(counts) == list(range(300)) and set(counts.values()) == {1}
    results = json.loads(cli("runs", "show", "1", "--json").stdout)["results"]
    assert sum(r["score"] for r in results) == 100


def test_a_node_killed_mid_run_has_its_blocks_graded_elsewhere_exactly_once(cluster: Any, library: Library,
                                                                            db_path: Path) -> None:
    """Last in this module: it leaves the cluster one node short."""
    from studio.core.engine.executors.ray_driver import RayExecutor

    slow_library(library, 400)
    executor = RayExecutor(address=cluster.address)
    killed: list[Any] = []

    def on_progress(progress: Progress) -> None:
        if progress.done > 0 and not killed:  # the first blocks are in: kill a node grading one now
            busy = {a.node_id for a in executor._actors.values() if a.ready and a.in_flight}
            node = next((n for n in cluster.worker_nodes if n.node_id in busy), None)
            if node is not None:
                cluster.remove_node(node, allow_graceful=False)
                killed.append(node)

    run = start_run(library, "slow", "d", on_cluster(cluster))
    info = execute_run(library, run.id, on_progress=on_progress, executor=executor)
    assert killed and info.status == "completed" and info.done == 400
    report = info.aggregates["executor"]
    assert report["actors_lost"] >= 1 and report["blocks_rerun"] >= 1
    assert report["duplicates_refused"] == 0
    counts = stored_counts(db_path, info.id)
    assert sorted(counts) == list(range(400)) and set(counts.values()) == {1}
    expected = {i: 1.0 if i % 3 == 0 else 0.0 for i in range(400)}
    assert {r["sample_idx"]: r["score"] for r in library.runs.results(info.id)} == expected


def test_a_suite_grades_on_the_cluster_as_it_does_here(cluster: Any, library: Library) -> None:
    """A suite of function and built-in graders: every node grades each block with every grader; the
    rows (overall score and every grader's score) equal the local engine's, sample by sample."""
    from studio.core.models.suite import SuiteDefinition, SuiteMember
    from studio.core.store.run_graders import grader_results

    build_demo(library)
    library.suites.create(SuiteDefinition(key="qa-suite", overall="mean", graders=[
        SuiteMember(grader="qa-exact-match"), SuiteMember(grader="qa-exact-builtin"),
        SuiteMember(grader="qa-token-f1-mka1", weight=2.0)]))
    remote = run_grader(library, "qa-suite", "qa", on_cluster(cluster))
    local = run_grader(library, "qa-suite", "qa")
    assert remote.status == local.status == "completed"
    assert remote.aggregates["executor"]["placement"] == "cluster"
    assert per_sample(library, remote.id) == per_sample(library, local.id)
    for key in ("qa-exact-match", "qa-exact-builtin", "qa-token-f1-mka1"):
        assert [(r["sample_idx"], r["status"], r["score"]) for r in grader_results(library, remote.id, key)] == \
               [(r["sample_idx"], r["status"], r["score"]) for r in grader_results(library, local.id, key)]


def test_a_suite_with_a_judge_stays_on_this_machine_and_says_which_grader(library: Library) -> None:
    from judge_helpers import add_endpoint

    from studio.core.demo.fake_server import FakeJudgeServer
    from studio.core.engine.executors.ray_driver import RayExecutor
    from studio.core.engine.planning import plan_of
    from studio.core.models.suite import SuiteDefinition, SuiteMember

    _ray()
    build_demo(library)
    library.suites.create(SuiteDefinition(key="mixed", graders=[
        SuiteMember(grader="qa-exact-builtin"), SuiteMember(grader="qa-correctness-judge")]))
    server = FakeJudgeServer().start()  # the run's preflight connects to the judge's endpoint
    try:
        add_endpoint(library, server, name="demo-scripted-judge")
        run = start_run(library, "mixed", "qa", RunOptions(executor="ray"))
    finally:
        server.stop()
    plan = plan_of(library, library.runs.get(run.id), 0.5)
    executor = RayExecutor()
    sentinel = object()
    assert executor.grade_fn(plan, sentinel) is sentinel  # type: ignore[arg-type]  # the local loop
    assert executor.report()["placement"] == "driver" and "qa-correctness-judge" in executor.report()["reason"]


@pytest.mark.parametrize("target", ["qa-exact-match", "qa-suite"])
def test_a_broken_sample_is_that_samples_error_on_the_cluster(cluster: Any, library: Library, target: str) -> None:
    """A sample row a teammate broke (tests/hostile_rows.py) is that sample's error on a cluster too,
    told apart by the driver before any actor sees it; the other samples score as the local engine's."""
    from hostile_rows import AUTHOR, BAD_SAMPLES, break_sample

    from studio.core.models.suite import SuiteDefinition, SuiteMember

    build_demo(library)
    library.suites.create(SuiteDefinition(key="qa-suite", overall="mean", graders=[
        SuiteMember(grader="qa-exact-match"), SuiteMember(grader="qa-exact-builtin")]))
    broken_id = library.datasets.sample("qa", 3).id
    break_sample(library, "qa", broken_id, BAD_SAMPLES["wrong-type"])
    remote = run_grader(library, target, "qa", on_cluster(cluster))
    local = run_grader(library, target, "qa")
    assert remote.status == local.status == "completed"
    assert remote.aggregates["executor"]["placement"] == "cluster"
    rows = per_sample(library, remote.id)
    assert per_sample(library, local.id) == rows
    assert rows[3][1] == "error" and "“qa #3”" in rows[3][4] and AUTHOR in rows[3][4]
    assert len(rows) == library.datasets.get("qa").sample_count
