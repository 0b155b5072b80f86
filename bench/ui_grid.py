"""Results grid benchmark: open and sort a 1,000,000-result run; GUI-thread stalls while a run streams.

    QT_QPA_PLATFORM=offscreen python bench/ui_grid.py [--rows 1000000] [--stream 20000]

Each figure is printed with a baseline measured in the same process, so the ratio says what the
window adds: the bare SQL id query for open/sort, and an idle window's heartbeat for the stall.
The stall is the longest gap between ticks of a 5 ms ``QTimer`` on the GUI thread (target < 50 ms);
the run panel grades in a child process (``RunWorker``), so the stream figure also says how long the
child took to report its first results and in which phase (starting, streaming, final refresh) the
worst stall fell. Other processes on the machine move these figures: compare runs made side by side.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from studio.core.models import BuiltinGrader, Sample, Turn  # noqa: E402
from studio.core.store import Library  # noqa: E402
from studio.core.store.results_query import ResultQuery  # noqa: E402
from studio.ui.context import AppContext  # noqa: E402
from studio.ui.qt import QTimer, QtWidgets  # noqa: E402
from studio.ui.results import ResultsView  # noqa: E402
from studio.ui.runs import RunPanel  # noqa: E402


def _load_big_run():  # type: ignore[no-untyped-def]
    """The results-grid tests' million-result run builder, so bench and tests measure the same data."""
    path = Path(__file__).resolve().parents[1] / "tests" / "ui" / "results" / "big_run.py"
    spec = importlib.util.spec_from_file_location("big_run", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_big_run


build_big_run = _load_big_run()


class Heartbeat:
    def __init__(self, interval_ms: int = 5) -> None:
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[float] = []
        self.ends: list[float] = []
        self.last = 0.0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self.last)
        self.ends.append(now)
        self.last = now

    def worst_at(self) -> float:
        """When the worst gap ended (``perf_counter`` time)."""
        return self.ends[max(range(len(self.gaps)), key=self.gaps.__getitem__)] if self.gaps else 0.0

    def start(self) -> None:
        self.gaps.clear()
        self.ends.clear()
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self) -> tuple[float, float]:
        self.timer.stop()
        if not self.gaps:
            return 0.0, 0.0
        ordered = sorted(self.gaps)
        return ordered[-1], ordered[int(len(ordered) * 0.99) - 1]


def wait(app: QtWidgets.QApplication, condition, timeout: float = 120.0) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    while not condition():
        app.processEvents()
        time.sleep(0.001)
        if time.perf_counter() - start > timeout:
            raise TimeoutError("benchmark step timed out")
    return time.perf_counter() - start


def bare_ids(path: Path, query: ResultQuery) -> float:
    """The bare id query: the grid's SQL on a plain ``sqlite3`` connection, every row fetched."""
    sql, params = query.select("r.id")
    con = sqlite3.connect(path)
    try:
        start = time.perf_counter()
        con.execute(sql, params).fetchall()
        return time.perf_counter() - start
    finally:
        con.close()


def bench_grid(app: QtWidgets.QApplication, folder: Path, rows: int) -> None:
    path = folder / "big.sqlite"
    lib = Library.open(path)
    t = time.perf_counter()
    run_id = build_big_run(lib, rows)
    print(f"built a {rows:,}-result run in {time.perf_counter() - t:.1f} s")
    dataset_id = lib.runs.raw(run_id).dataset_id
    ctx = AppContext(lib, path)
    base_open = min(bare_ids(path, ResultQuery(run_id, dataset_id)) for _ in range(3))
    base_sort = min(bare_ids(path, ResultQuery(run_id, dataset_id, sort_key="score", descending=True))
                    for _ in range(3))

    view = ResultsView(ctx)
    view.resize(1400, 900)
    view.show()
    app.processEvents()
    start = time.perf_counter()
    view.set_run(run_id)
    wait(app, lambda: view.model.rowCount() == rows)
    view.table.viewport().repaint()
    opened = time.perf_counter() - start
    wait(app, lambda: view.summary is not None)
    with_summary = time.perf_counter() - start
    print(f"open {rows:,} rows: grid {opened * 1000:.0f} ms (bare id query {base_open * 1000:.0f} ms, "
          f"x{opened / base_open:.2f}); with aggregates + histogram {with_summary * 1000:.0f} ms; "
          f"rows materialised {view.model.materialised_rows()}")

    for key, descending, base in (("score", True, base_sort), ("latency", False, None)):
        start = time.perf_counter()
        view.sort_by(key, descending)
        wait(app, lambda: not view.model.is_loading)
        view.table.viewport().repaint()
        took = time.perf_counter() - start
        ratio = f", bare id query {base * 1000:.0f} ms, x{took / base:.2f}" if base else " (read off the (run_id, duration_ms) index)"
        print(f"sort by {key}{' desc' if descending else ''}: {took * 1000:.0f} ms{ratio}")

    # scrolling: jump through the run, painting each screen; the worst single paint is the stall
    view.sort_by("idx")
    wait(app, lambda: not view.model.is_loading)
    bar = view.table.verticalScrollBar()
    paints = []
    for step in range(200):
        bar.setValue(int(bar.maximum() * step / 199))
        t = time.perf_counter()
        view.table.viewport().repaint()
        paints.append(time.perf_counter() - t)
    print(f"scroll: 200 jumps across the run, paint median {statistics.median(paints) * 1000:.1f} ms, "
          f"worst {max(paints) * 1000:.1f} ms; rows materialised {view.model.materialised_rows()}")
    view.close()
    view.deleteLater()
    ctx.tasks.wait_idle()
    app.processEvents()
    lib.close()


def bench_stream(app: QtWidgets.QApplication, folder: Path, samples: int) -> None:
    path = folder / "stream.sqlite"
    lib = Library.open(path)
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    lib.datasets.create("math", (Sample(id=f"s{i}", messages=[Turn(role="user", content=f"{i}+{i}?")],
                                        completion=str(2 * i if i % 4 else i), expected=str(2 * i))
                                 for i in range(samples)))
    ctx = AppContext(lib, path)
    panel = RunPanel(ctx)
    panel.resize(1400, 900)
    panel.show()
    heartbeat = Heartbeat()
    wait(app, lambda: not panel.runs._loading)
    heartbeat.start()
    wait_until = time.perf_counter() + 1.0
    wait(app, lambda: time.perf_counter() > wait_until)
    idle_worst, idle_p99 = heartbeat.stop()

    finished: list[object] = []
    first: list[float] = []
    panel.run_finished.connect(finished.append)
    panel.select(grader="exact", dataset="math")
    heartbeat.start()
    start = time.perf_counter()
    panel.start()
    start_call = time.perf_counter() - start
    assert panel.worker is not None
    panel.worker.progress.connect(lambda _p: first or first.append(time.perf_counter()))
    wait(app, lambda: bool(finished), timeout=600)
    took = time.perf_counter() - start
    ended = time.perf_counter()
    wait(app, lambda: panel.results.model.rowCount() == samples and not panel.results.model.is_loading)
    worst_at = heartbeat.worst_at()
    worst, p99 = heartbeat.stop()
    first_at = first[0] if first else ended
    phase = ("starting" if worst_at < first_at else "streaming" if worst_at <= ended else "final refresh")
    print(f"stream {samples:,} samples (builtin exact_match, the fastest grader, graded in a child "
          f"process): run {took:.1f} s, first results after {(first_at - start) * 1000:.0f} ms, "
          f"start() {start_call * 1000:.0f} ms; GUI stall worst {worst * 1000:.1f} ms ({phase}), "
          f"p99 {p99 * 1000:.1f} ms (idle window: worst {idle_worst * 1000:.1f} ms, "
          f"p99 {idle_p99 * 1000:.1f} ms); target < 50 ms: {'met' if worst < 0.05 else 'MISSED'}")
    panel.shutdown()
    panel.close()
    panel.deleteLater()
    ctx.tasks.wait_idle()
    app.processEvents()
    lib.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--stream", type=int, default=20_000)
    args = parser.parse_args()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv)
    with tempfile.TemporaryDirectory(prefix="ui-grid-bench-") as folder:
        bench_grid(app, Path(folder), args.rows)
        bench_stream(app, Path(folder), args.stream)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
