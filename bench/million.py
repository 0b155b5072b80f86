"""Issue 38's 1M-sample scenario: ``grader-studio run`` of the built-in exact_match, then the reads.

    python bench/million.py [--samples 1000000] [--base /path/to/a/checkout/of/ec46486 [--base ...]]
                            [--library DIR] [--only grid]

A dataset of N generated samples (one in seven answers wrong) is written straight into a temporary
library's SQLite (one INSERT ... SELECT, not timed, nothing committed). Then, each in a child process
of the tree under test (its ``.venv/bin/python`` if it has one, run from its own folder), timed wall
and CPU (user+sys of the child and what it waited for) with its peak RSS:

- ``graders list``: the CLI's start-up, the baseline every command pays;
- ``run exact big --json``: the write path (samples/s; peak RSS flat: < 150 MB);
- ``runs show RUN --failed``: what a reviewer reads first (its output's lines and bytes printed too:
  it must stay bounded at 1M);
- ``runs report RUN``, ``runs report RUN --markdown FILE --github``: the verdict and CI summary;
- the grid opening: the window's ``ResultsView.set_run`` until every id is in the model and the
  summary band (aggregates + histogram) is filled (QT_QPA_PLATFORM=offscreen; bench/ui_grid.py's way).

Baselines measured in the same run, on a plain ``sqlite3`` connection (in a child process): the failing
rows with their samples' texts (what ``--failed`` selects), one aggregate pass over the run (what a
summary needs), the grid's bare id query. With ``--base`` the same scenario runs first with the
other checkout's code (its own library: an older tree may not open a library a newer one migrated),
so the before and after figures come from one run (``--base`` may be given more than once: ec46486 and
the main the work started from). ``--library DIR`` keeps each tree's generated library and run there
(``DIR/<tree folder>-<samples>.sqlite``) and reuses it next time; ``--only grid`` then times the grid
opening alone on that run (the build and run are done first where the library has none). The
children run compiled trees: their bytecode goes to a cache of this run (``PYTHONPYCACHEPREFIX``), never
into a checkout, and one untimed child compiles it first. Each figure: goal each read < 1 s wall, run
>= 100,000 samples/s, peak RSS < 150 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
TARGET_MB = 150
READ_GOAL_S = 1.0
RUN_GOAL = 100_000

BUILD = r"""
import sqlite3, sys
from studio.core.models import BuiltinGrader
from studio.core.store import Library
db, n = sys.argv[1], int(sys.argv[2])
with Library.open(db) as lib:
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
con = sqlite3.connect(db)
with con:
    con.execute("INSERT INTO datasets (name, format, source, sample_count, created_at)"
                " VALUES ('big', 'flat', '', ?, '2026-01-01 00:00:00')", (n,))
    (dataset_id,) = con.execute("SELECT id FROM datasets WHERE name = 'big'").fetchone()
    con.execute(
        '''WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ? - 1)
           INSERT INTO samples (dataset_id, idx, sample_id, input_text, completion, expected, data)
           SELECT ?, i, 's' || i, 'question ' || i, 'answer ' || i, 'answer ' || (i - i % 7 / 6),
                  json_object('id', 's' || i, 'messages', json_array(json_object('role', 'user',
                              'content', 'question ' || i)), 'completion', 'answer ' || i,
                              'expected', 'answer ' || (i - i % 7 / 6))
           FROM c''', (n, dataset_id))
con.close()
"""

GRID = r"""
import json, os, resource, sys, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
started = time.perf_counter()
from studio.core.store import Library
from studio.ui.context import AppContext
from studio.ui.qt import QtWidgets
from studio.ui.results import ResultsView
db, run_id, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv)
lib = Library.open(db)
ctx = AppContext(lib, db)
view = ResultsView(ctx)
view.resize(1400, 900)
view.show()
app.processEvents()
imported = time.perf_counter() - started
def status_mb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0
bare_mb = status_mb("VmHWM")  # the window shown, no run yet
cpu0 = time.process_time()
def wait(cond, timeout=300.0):
    t = time.perf_counter()
    while not cond():
        app.processEvents()
        time.sleep(0.001)
        if time.perf_counter() - t > timeout:
            raise TimeoutError("grid did not open")
t = time.perf_counter()
view.set_run(run_id)
wait(lambda: view.model.rowCount() == n)
view.table.viewport().repaint()
rows = time.perf_counter() - t
wait(lambda: view.summary is not None)
app.processEvents()
summary = time.perf_counter() - t
cpu = time.process_time() - cpu0
opened_mb = status_mb("VmHWM")
sorts = []
for key, descending in (("score", True), ("score", False), ("idx", False)):  # then each sort, in SQL
    t = time.perf_counter()
    view.sort_by(key, descending)
    wait(lambda: (view.model.query.sort_key, view.model.query.descending) == (key, descending)
         and not view.model.is_loading and view.model.rowCount() == n)
    view.table.viewport().repaint()
    sorts.append(time.perf_counter() - t)
view.close()
ctx.tasks.wait_idle()
print(json.dumps({"imported": imported, "rows": rows, "summary": summary, "cpu_in_process": cpu,
                  "materialised": view.model.materialised_rows(), "bare_mb": bare_mb,
                  "opened_mb": opened_mb, "sorts": sorts, "peak_mb": status_mb("VmHWM"),
                  "rss_after_mb": status_mb("VmRSS")}))
lib.close()
os._exit(0)
"""


class Child:
    """One child process: wall, CPU (user+sys, its waited-for children included), peak RSS."""

    def __init__(self, wall: float, cpu: float, rss_mb: float, code: int, out: bytes) -> None:
        self.wall, self.cpu, self.rss_mb, self.code, self.out = wall, cpu, rss_mb, code, out


def child(argv: list[str], cwd: Path, env: dict[str, str]) -> Child:
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        data = out.read()
    return Child(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status),
                 data)


BARE = r"""
import json, sqlite3, sys, time
db, sql, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
best = float("inf")
for _ in range(3):
    con = sqlite3.connect(db)
    start = time.perf_counter()
    con.execute(sql, params).fetchall()
    best = min(best, time.perf_counter() - start)
    con.close()
print(best)
"""


def bare(db: Path, sql: str, params: tuple[object, ...]) -> float:
    """Best of 3: ``sql`` on a plain sqlite3 connection, every row fetched, in a child process: a
    million rows fetched here would grow this process, and a child's peak RSS counts the pages of
    the process it was forked from until it execs."""
    out = subprocess.run([sys.executable, "-c", BARE, str(db), sql, json.dumps(list(params))],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def python_of(tree: Path) -> str:
    venv = tree / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def completed_run(db: Path, n: int) -> int | None:
    """The id of a completed run of ``n`` results in ``db`` (a library kept by ``--library``), else None."""
    if not db.exists():
        return None
    con = sqlite3.connect(db)
    try:
        row = con.execute("SELECT max(id) FROM runs WHERE status = 'completed'").fetchone()
        if row is None or row[0] is None:
            return None
        (stored,) = con.execute("SELECT count(*) FROM results WHERE run_id = ?", (row[0],)).fetchone()
    except sqlite3.Error:
        return None
    finally:
        con.close()
    return int(row[0]) if stored == n else None


def scenario(tree: Path, name: str, n: int, library: Path | None = None, only: str | None = None,
             pycache: Path | None = None) -> dict[str, object]:
    python = python_of(tree)
    figures: dict[str, object] = {"tree": str(tree), "name": name}
    with tempfile.TemporaryDirectory(prefix="million-") as tmp:
        db = (library / f"{tree.name}-{n}.sqlite") if library is not None else Path(tmp) / "lib.sqlite"
        env = {**os.environ, "GRADER_STUDIO_DB": str(db), "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(tree),
               "COLUMNS": "160"}
        if pycache is not None:  # compiled once, into this run's cache: no checkout is written to
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(pycache)
            subprocess.run([python, "-m", "compileall", "-q", str(tree / "studio")], cwd=tree, env=env,
                           stdout=subprocess.DEVNULL, check=False)
        cli = [python, "-m", "studio"]
        print(f"\n== {name}: {tree} ({n:,} samples; load {load()})", flush=True)
        kept = completed_run(db, n) if library is not None else None
        if kept is not None and only == "grid":
            print(f"library kept: {db}, run {kept} (built and run before; not timed here)", flush=True)
            bare_ids = bare(db, "SELECT id FROM results WHERE run_id = ? ORDER BY sample_idx", (kept,))
            print(f"bare sqlite3 (best of 3): the grid's ids {bare_ids * 1000:.0f} ms", flush=True)
            figures["bare"] = {"ids": bare_ids}
            grid_step(figures, python, tree, env, db, kept, n, bare_ids)
            return figures
        if db.exists():
            db.unlink()
            for extra in ("-wal", "-shm"):
                Path(str(db) + extra).unlink(missing_ok=True)
        made = child([python, "-c", BUILD, str(db), str(n)], tree, env)
        if made.code:
            raise SystemExit(f"{name}: building the dataset failed")

        base = min((child([*cli, "graders", "list"], tree, env) for _ in range(3)), key=lambda c: c.wall)
        figures["startup"] = base
        print(f"`graders list` (start-up baseline): {base.wall:.3f} s wall, {base.cpu:.3f} s CPU, "
              f"peak {base.rss_mb:.0f} MB", flush=True)

        ran = child([*cli, "run", "exact", "big", "--json"], tree, env)
        con = sqlite3.connect(db)
        (run_id,) = con.execute("SELECT max(id) FROM runs").fetchone()
        (stored, distinct) = con.execute("SELECT count(*), count(DISTINCT sample_idx) FROM results WHERE run_id = ?",
                                         (run_id,)).fetchone()
        (dataset_id,) = con.execute("SELECT dataset_id FROM runs WHERE id = ?", (run_id,)).fetchone()
        con.close()
        figures["run"] = ran
        print(f"run: {ran.wall:.2f} s wall ({n / ran.wall:,.0f} samples/s; goal >= {RUN_GOAL:,}), "
              f"{ran.cpu:.2f} s CPU ({ran.cpu / n * 1e6:.1f} us a sample), peak {ran.rss_mb:.0f} MB "
              f"({ran.rss_mb / base.rss_mb:.2f}x start-up; goal < {TARGET_MB} MB); exit {ran.code}; "
              f"{stored:,} stored, {distinct:,} distinct samples; load {load()}", flush=True)

        failing = ("SELECT r.sample_idx, r.sample_id, r.status, r.score, r.error, r.rationale, s.input_text,"
                   " s.completion, s.expected FROM results r LEFT JOIN samples s ON s.dataset_id = ?"
                   " AND s.idx = r.sample_idx WHERE r.run_id = ? AND (r.status IN ('error', 'invalid')"
                   " OR r.score < 0.5) ORDER BY r.sample_idx")
        bare_failed = bare(db, failing, (dataset_id, run_id))
        bare_page = bare(db, failing + " LIMIT 50", (dataset_id, run_id))
        bare_tally = bare(db, "SELECT count(*), sum(score), sum(score * score), min(score), max(score),"
                          " sum(duration_ms), count(CASE WHEN score < 0.5 THEN 1 END) FROM results WHERE run_id = ?",
                          (run_id,))
        bare_ids = bare(db, "SELECT id FROM results WHERE run_id = ? ORDER BY sample_idx", (run_id,))
        print(f"bare sqlite3 (best of 3): every failing row with its texts {bare_failed * 1000:.0f} ms, "
              f"the first 50 {bare_page * 1000:.1f} ms, one aggregate pass {bare_tally * 1000:.0f} ms, "
              f"the grid's ids {bare_ids * 1000:.0f} ms", flush=True)
        figures["bare"] = {"failed": bare_failed, "page": bare_page, "tally": bare_tally, "ids": bare_ids}

        reads = {
            "runs show --failed": [*cli, "runs", "show", str(run_id), "--failed"],
            "runs report": [*cli, "runs", "report", str(run_id)],
            "runs report --markdown --github": [*cli, "runs", "report", str(run_id), "--markdown",
                                               str(Path(tmp) / "r.md"), "--github"],
        }
        for label, argv in reads.items():
            if only == "grid":
                break
            got = child(argv, tree, env)
            figures[label] = got
            lines = got.out.count(b"\n")
            print(f"{label}: {got.wall:.2f} s wall ({got.wall - base.wall:.2f} s beyond start-up; goal < "
                  f"{READ_GOAL_S:.0f} s), {got.cpu:.2f} s CPU ({got.cpu / base.cpu:.1f}x start-up's), peak "
                  f"{got.rss_mb:.0f} MB ({got.rss_mb / base.rss_mb:.2f}x start-up); exit {got.code}; "
                  f"stdout {lines:,} lines, {len(got.out):,} bytes; load {load()}", flush=True)
        grid_step(figures, python, tree, env, db, run_id, n, bare_ids)
    return figures


def grid_step(figures: dict[str, object], python: str, tree: Path, env: dict[str, str], db: Path, run_id: int,
              n: int, bare_ids: float) -> None:
    """The grid opening in a child: ids in the model, then the summary band; the window's RSS bare and at peak."""
    grid = child([python, "-c", GRID, str(db), str(run_id), str(n)], tree, env)
    figures["grid"] = grid
    try:
        inner = json.loads(grid.out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        inner = {}
    figures["grid_inner"] = inner
    if inner:
        print(f"grid opening: ids in the model {inner['rows'] * 1000:.0f} ms ({inner['rows'] / bare_ids:.2f}x "
              f"the bare id query), with the summary band {inner['summary'] * 1000:.0f} ms (goal < "
              f"{READ_GOAL_S:.0f} s), {inner['cpu_in_process']:.2f} s CPU in the window's process; "
              f"rows materialised {inner['materialised']}; the bare window {inner.get('bare_mb', 0):.0f} MB, open "
              f"{inner.get('opened_mb', 0):.0f} MB; then sorts by score desc, asc, # "
              f"{', '.join(f'{x * 1000:.0f}' for x in inner.get('sorts', []))} ms, after them "
              f"{inner.get('rss_after_mb', 0):.0f} MB; child peak {grid.rss_mb:.0f} MB (goal < {TARGET_MB} MB), "
              f"{grid.wall:.2f} s wall, {grid.cpu:.2f} s CPU with imports; load {load()}", flush=True)
    else:
        print(f"grid opening: FAILED (exit {grid.code})", flush=True)


def compare(before: dict[str, object], after: dict[str, object], n: int) -> None:
    print(f"\n== before ({before['tree']}) -> after, same run ({n:,} samples; load {load()})")
    for key in ("run", "runs show --failed", "runs report", "runs report --markdown --github", "grid"):
        if key not in before or key not in after:
            continue
        b, a = before[key], after[key]
        assert isinstance(b, Child) and isinstance(a, Child)
        extra = ""
        if key == "run":
            extra = f"; {n / b.wall:,.0f} -> {n / a.wall:,.0f} samples/s"
        if key == "grid":
            bi, ai = before["grid_inner"], after["grid_inner"]
            if isinstance(bi, dict) and isinstance(ai, dict) and bi and ai:
                extra = (f" (with three sorts); ids {bi['rows']:.2f} -> {ai['rows']:.2f} s, open with summary "
                         f"{bi['summary']:.2f} -> {ai['summary']:.2f} s, peak at the opening "
                         f"{bi.get('opened_mb', 0):.0f} -> {ai.get('opened_mb', 0):.0f} MB, RSS after the sorts "
                         f"{bi.get('rss_after_mb', 0):.0f} -> {ai.get('rss_after_mb', 0):.0f} MB")
        print(f"{key}: wall {b.wall:.2f} -> {a.wall:.2f} s, CPU {b.cpu:.2f} -> {a.cpu:.2f} s, "
              f"peak {b.rss_mb:.0f} -> {a.rss_mb:.0f} MB{extra}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--base", type=Path, action="append", default=[],
                        help="another checkout: the same scenario with its code first (may be repeated)")
    parser.add_argument("--library", type=Path, help="keep each tree's generated library and run here, and reuse it")
    parser.add_argument("--only", choices=["grid"], help="grid: time the grid opening alone on the kept run")
    parser.add_argument("--rounds", type=int, default=1,
                        help="with --only grid: this many rounds, the trees alternating; each tree's fastest "
                             "opening (and its highest peak) compared")
    args = parser.parse_args()
    if args.library is not None:
        args.library.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores; load average {load()}; {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    trees = [(base.resolve(), f"before ({base.name})") for base in args.base] + [(HERE, "this tree")]
    rounds = max(1, args.rounds) if args.only == "grid" else 1
    seen: list[list[dict[str, object]]] = [[] for _ in trees]
    with tempfile.TemporaryDirectory(prefix="million-pycache-") as pycache:
        for r in range(rounds):
            if rounds > 1:
                print(f"\n## round {r + 1} of {rounds}", flush=True)
            for i, (tree, name) in enumerate(trees):
                seen[i].append(scenario(tree, name, args.samples, args.library, args.only, Path(pycache)))
    chosen = [fastest(runs) for runs in seen]
    for before in chosen[:-1]:
        compare(before, chosen[-1], args.samples)
    return 0


def fastest(runs: list[dict[str, object]]) -> dict[str, object]:
    """A tree's rounds as one: the round whose grid opened fastest, with the highest peak of any round."""
    opened = [r for r in runs if r.get("grid_inner")]
    if len(runs) == 1 or not opened:
        return runs[0]
    best = dict(min(opened, key=lambda r: r["grid_inner"]["summary"]))  # type: ignore[index]
    peak = max(r["grid"].rss_mb for r in opened)  # type: ignore[attr-defined]
    grid = best["grid"]
    assert isinstance(grid, Child)
    best["grid"] = Child(grid.wall, grid.cpu, peak, grid.code, grid.out)
    inner = [r["grid_inner"] for r in opened]
    opens = ", ".join(f"{i['summary'] * 1000:.0f}" for i in inner)  # type: ignore[index]
    cpus = ", ".join(f"{i['cpu_in_process']:.2f}" for i in inner)  # type: ignore[index]
    peaks = ", ".join(f"{r['grid'].rss_mb:.0f}" for r in opened)  # type: ignore[attr-defined]
    print(f"{best['name']}: {len(opened)} rounds, openings with the band {opens} ms; CPU in the window's "
          f"process {cpus} s; peaks {peaks} MB")
    return best

if __name__ == "__main__":
    raise SystemExit(main())
