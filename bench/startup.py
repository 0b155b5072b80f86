"""Start-up: the main window mapped, and ``grader-studio graders list``, each against a bare baseline.

Every figure is the median of ``--repeat`` fresh processes, timed from spawn to exit (the window
child quits from the first event-loop turn after ``show()``: its window is then mapped):

1. a bare PySide6 ``QMainWindow`` (offscreen) vs the studio's window (``studio.ui.app.run_app``)
   on an empty library; target: studio window within 0.8 s
2. ``python -c pass`` vs ``grader-studio graders list`` on the same library; target: within 0.3 s
3. ``python -c pass`` vs ``grader-studio --help`` and ``--version`` (issue 32: no SQLAlchemy, scipy or
   judge imported for them); target: within 0.3 s beyond the bare interpreter
4. ``graders list`` (the CLI started, the library opened) vs a one-sample judge run (``run
   qa-correctness-judge qa --limit 1 --no-cache`` against the scripted judge answering at once):
   what a judge run costs before and around its one call; target: within 0.4 s beyond the listing

Run: ``python bench/startup.py [--repeat 5] [--cli-only]`` (``--cli-only``: rows 2 and 3, no window).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WINDOW_TARGET_S = 0.8
LIST_TARGET_S = 0.3
#: ``--help`` / ``--version``: seconds beyond ``python -c pass``
HELP_BEYOND_S = 0.3
#: a one-sample judge run: seconds beyond ``graders list`` (interpreter, CLI and library start-up)
JUDGE_RUN_BEYOND_S = 0.4
ROOT = Path(__file__).resolve().parents[1]

WINDOW_CHILD = """
import os, sys
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6 import QtCore, QtWidgets
app = QtWidgets.QApplication(sys.argv)

def mapped():
    shown = [w for w in app.topLevelWidgets() if w.isVisible()]
    sys.stdout.write(f"mapped {len(shown)}\\n")
    sys.stdout.flush()
    os._exit(0 if shown else 1)

QtCore.QTimer.singleShot(0, mapped)
if sys.argv[1] == "bare":
    window = QtWidgets.QMainWindow()
    window.resize(1200, 800)
    window.show()
    app.exec()
else:
    from pathlib import Path
    from studio.ui.app import run_app
    run_app(Path(sys.argv[1]))
"""


def timed(argv: list[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of the child. On a machine other work
    shares, the CPU time is what the start-up itself costs; the wall time also counts the waiting."""
    walls, cpus = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - started)
        cpus.append(usage.ru_utime + usage.ru_stime)
        if status != 0:
            raise SystemExit(f"{argv[:3]} exited with {status}")
    return statistics.median(walls), statistics.median(cpus)


def one_sample_judge_run(env: dict[str, str], repeat: int) -> tuple[float, float]:
    """The demo's binary judge over one QA sample, its endpoint the scripted judge (no latency) on a
    free port; the cache bypassed so every process makes its call."""
    server = subprocess.Popen([sys.executable, "-m", "studio", "fake-judge", "--port", "0", "--no-reward"],
                              env=env, stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().strip().rsplit(" ", 1)[-1]  # type: ignore[union-attr]
        for argv in (["endpoints", "add", "demo-scripted-judge", "--base-url", base_url, "--model", "fake-judge"],
                     ["datasets", "import", str(ROOT / "resources/demo/datasets/qa.jsonl"), "--name", "qa"],
                     ["graders", "create", str(ROOT / "resources/demo/graders/qa-correctness-judge.grader.yaml")]):
            subprocess.run([sys.executable, "-m", "studio", *argv], env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return timed([sys.executable, "-m", "studio", "run", "qa-correctness-judge", "qa", "--limit", "1",
                       "--no-cache"], env, repeat)
    finally:
        server.terminate()
        server.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cli-only", action="store_true", help="skip the window rows")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "lib.sqlite")
        env = {**os.environ, "GRADER_STUDIO_DB": db, "QT_QPA_PLATFORM": "offscreen"}
        subprocess.run([sys.executable, "-m", "studio", "graders", "list"], env=env, check=True,
                       stdout=subprocess.DEVNULL)  # creates the library (not timed)
        if not args.cli_only:
            bare_window = timed([sys.executable, "-c", WINDOW_CHILD, "bare"], env, args.repeat)
            window = timed([sys.executable, "-c", WINDOW_CHILD, db], env, args.repeat)
        bare_python = timed([sys.executable, "-c", "pass"], env, args.repeat)
        listing = timed([sys.executable, "-m", "studio", "graders", "list"], env, args.repeat)
        helped = timed([sys.executable, "-m", "studio", "--help"], env, args.repeat)
        version = timed([sys.executable, "-m", "studio", "--version"], env, args.repeat)
        judge_run = one_sample_judge_run(env, args.repeat)
    print(f"start-up, median of {args.repeat} fresh processes each: wall time (CPU time of the process)")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (other work slows every row)")
    rows = [] if args.cli_only else [("bare PySide6 window", bare_window, None, None),
                                     ("studio window mapped", window, bare_window, WINDOW_TARGET_S)]
    rows += [("python -c pass", bare_python, None, None), ("graders list", listing, bare_python, LIST_TARGET_S)]
    for label, (wall, cpu), base, target in rows:
        line = f"{label:<24} {wall:6.3f} s ({cpu:6.3f} s CPU)"
        if base is not None:
            line += (f" = {wall / base[0]:5.2f}x the baseline's wall ({cpu / base[1]:5.2f}x its CPU);"
                     f" target <= {target} s")
        print(line)
    for label, (wall, cpu) in (("--help", helped), ("--version", version)):
        print(f"{label:<24} {wall:6.3f} s ({cpu:6.3f} s CPU) = {wall - bare_python[0]:+.3f} s wall "
              f"({cpu - bare_python[1]:+.3f} s CPU) beyond python -c pass; target <= +{HELP_BEYOND_S} s")
    wall, cpu = judge_run
    print(f"{'one-sample judge run':<24} {wall:6.3f} s ({cpu:6.3f} s CPU) = {wall - listing[0]:+.3f} s wall "
          f"({cpu - listing[1]:+.3f} s CPU) beyond graders list; target <= +{JUDGE_RUN_BEYOND_S} s")
    ok = (args.cli_only or window[0] <= WINDOW_TARGET_S) and listing[0] <= LIST_TARGET_S and all(
        t[0] - bare_python[0] <= HELP_BEYOND_S for t in (helped, version)) and (
        wall - listing[0] <= JUDGE_RUN_BEYOND_S)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
