"""Issue 47: the HTML viewer of a 100,000-sample run — export seconds and time to interactive.

    python bench/viewer_html.py [--samples 100000] [--library DIR]
    python bench/viewer_html.py --judge --samples 10000     # the file's size of a judge run with its prompts

A dataset of N generated samples (bench/million.py's ``BUILD``: one INSERT ... SELECT, not timed) is
graded by the built-in exact_match (not timed). Then, in child processes of this tree:

- ``runs export RUN --format html`` (the page), ``--cut-text 200 --no-prompts`` (the cut page), and
  ``runs export RUN --format csv`` — the **baseline**: the same rows streamed as CSV, what an export
  costs without the page; the HTML export's figure is its ratio to this;
- in Chromium (/usr/bin/chromium, Playwright): the page's **time to interactive** (navigation start
  to ``body[data-ready]``: data parsed, header and grid drawn), then a filter (verdict FAIL) and a
  search round trip until the count shows; the **baseline**: ``JSON.parse`` of the same embedded data
  in the same page (the least any page holding this data pays), so the ratio is what the viewer adds.

``--judge``: the size of a judge run's page instead (docs/viewer.md's "Size"): N short-answer QA samples
(a question, a one-line answer, a reference) graded by a binary judge against the scripted judge server
(``grader-studio fake-judge``, over HTTP on 127.0.0.1), so every result keeps the judge's exact prompt and
raw answer as a real judge run does; the page is written whole, ``--no-prompts`` and ``--cut-text 200
--no-prompts``, and the sizes printed (a kilobyte a sample too). Nothing is opened in a browser.

Each figure is printed with the machine's load average; nothing is asserted (tests/slow checks the page
works at this size, the goal here is "opens and filters without freezing": interactive < 5 s,
a filter < 1 s on this shared 2-core machine).
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
from million import BUILD  # noqa: E402  (the same generated dataset as the 1M scenario)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def cli(db: Path, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "studio", "--db", str(db), *args], check=True, cwd=HERE,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def build(db: Path, n: int) -> int:
    if not db.exists():
        subprocess.run([sys.executable, "-c", BUILD, str(db), str(n)], check=True, cwd=HERE)
    con = sqlite3.connect(db)
    row = con.execute("SELECT id FROM runs WHERE status = 'completed' ORDER BY id DESC LIMIT 1").fetchone()
    con.close()
    if row is not None:
        return int(row[0])
    out = subprocess.run([sys.executable, "-m", "studio", "--db", str(db), "run", "exact", "big", "--json"],
                         cwd=HERE, capture_output=True, text=True)
    return int(json.loads(out.stdout)["id"])


def browse(path: Path) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(path.as_uri(), wait_until="commit")
        page.wait_for_selector("body[data-ready]", timeout=600_000)
        tti = page.evaluate("performance.now()") / 1000
        parse = page.evaluate("""() => { const t = performance.now();
            JSON.parse(document.getElementById('studio-data').textContent); return (performance.now() - t) / 1000; }""")
        start = time.perf_counter()
        page.select_option('select[name="verdict"]', "FAIL")
        page.wait_for_function("() => document.querySelector('.count').dataset.count !== document.querySelector('.count').dataset.total")
        filtered = time.perf_counter() - start
        count = int(page.get_attribute(".count", "data-count"))
        page.click('button:has-text("Clear filters")')
        start = time.perf_counter()
        page.fill('input[name="q"]', "answer 99999")
        page.wait_for_function("() => Number(document.querySelector('.count').dataset.count) < 100")
        searched = time.perf_counter() - start
        start = time.perf_counter()
        page.click('button[data-sort="score"]')
        page.wait_for_function("() => document.querySelector('button[data-sort=score]').classList.contains('sorted')")
        sorted_s = time.perf_counter() - start
        browser.close()
    return {"tti": tti, "parse": parse, "filter": filtered, "failing": count, "search": searched, "sort": sorted_s}


COUNTRIES = [("France", "Paris"), ("Italy", "Rome"), ("Spain", "Madrid"), ("Japan", "Tokyo"), ("Peru", "Lima"),
             ("Kenya", "Nairobi"), ("Canada", "Ottawa"), ("Norway", "Oslo"), ("Egypt", "Cairo"), ("Chile", "Santiago")]


def judge_run(db: Path, n: int) -> int:
    """N QA samples graded by a binary judge against the scripted judge server (its prompts kept)."""
    from studio.core.engine.runner import RunOptions, run_grader
    from studio.core.models import BinaryJudge, Sample, Turn
    from studio.core.models.endpoints import EndpointConfig
    from studio.core.store import Library

    library = Library.open(db)
    done = [r for r in library.runs.list() if r.status == "completed"]
    if done:
        return done[0].id
    server = subprocess.Popen([sys.executable, "-m", "studio", "fake-judge", "--port", "0", "--no-reward",
                               "--latency-ms", "0"], stdout=subprocess.PIPE, text=True, cwd=HERE)
    try:
        base_url = server.stdout.readline().strip().rsplit(" ", 1)[-1]  # type: ignore[union-attr]
        library.endpoints.save(EndpointConfig(name="bench", base_url=base_url, model="fake-judge", max_concurrency=32))
        library.graders.create(BinaryJudge(key="capital", endpoint="bench",
                                           criteria="The answer names the capital the question asks for."))
        samples = []
        for i in range(n):
            country, capital = COUNTRIES[i % len(COUNTRIES)]
            wrong = COUNTRIES[(i + 3) % len(COUNTRIES)][1]
            samples.append(Sample(id=f"q{i:05d}", messages=[
                Turn(role="user", content=f"Question {i}: what is the capital of {country}?")],
                completion=f"The capital of {country} is {capital if i % 4 else wrong}.", expected=capital))
        library.datasets.create("qa", samples)
        run = run_grader(library, "capital", "qa", RunOptions(concurrency=32, use_cache=False))
        return run.id
    finally:
        server.terminate()
        server.wait()
        library.close()


def sizes(db: Path, run: int, folder: Path, n: int) -> None:
    pages = {"whole": [], "--no-prompts": ["--no-prompts"], "--cut-text 200 --no-prompts":
             ["--cut-text", "200", "--no-prompts"]}
    print(f"{n:,}-sample judge run {run}, load {os.getloadavg()[0]:.1f}")
    for name, flags in pages.items():
        path = folder / f"judge-{name.replace(' ', '').replace('-', '')}.html"
        seconds = cli(db, "runs", "export", str(run), "--format", "html", *flags, "-o", str(path))
        size = path.stat().st_size
        print(f"  {name}: {size / 1e6:.2f} MB ({size / 1e3 / n:.2f} KB a sample), written in {seconds:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--library", type=Path, help="keep the generated library here and reuse it")
    parser.add_argument("--judge", action="store_true", help="the page's size of a judge run with its prompts")
    args = parser.parse_args()
    folder = args.library or Path(tempfile.mkdtemp(prefix="viewer-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    if args.judge:
        db = folder / f"viewer-judge-{args.samples}.sqlite"
        sizes(db, judge_run(db, args.samples), folder, args.samples)
        return
    db = folder / f"viewer-{args.samples}.sqlite"
    run = build(db, args.samples)
    page, cut, csv = folder / "run.html", folder / "run-cut.html", folder / "run.csv"
    csv_s = cli(db, "runs", "export", str(run), "--format", "csv", "-o", str(csv))
    html_s = cli(db, "runs", "export", str(run), "--format", "html", "-o", str(page))
    cut_s = cli(db, "runs", "export", str(run), "--format", "html", "--cut-text", "200", "--no-prompts",
                "-o", str(cut))
    seen = browse(page)
    load = os.getloadavg()[0]
    mb = page.stat().st_size / 1e6
    print(f"{args.samples:,} samples, load {load:.1f}")
    print(f"export html {html_s:.2f} s ({mb:.1f} MB), csv baseline {csv_s:.2f} s ({csv.stat().st_size / 1e6:.1f} MB): "
          f"{html_s / csv_s:.2f}x; cut (--cut-text 200 --no-prompts) {cut_s:.2f} s ({cut.stat().st_size / 1e6:.1f} MB)")
    print(f"time to interactive {seen['tti']:.2f} s, JSON.parse baseline {seen['parse']:.2f} s: "
          f"{seen['tti'] / seen['parse']:.2f}x")
    print(f"filter verdict FAIL {seen['filter']:.2f} s ({seen['failing']:,} rows), search {seen['search']:.2f} s, "
          f"sort by score {seen['sort']:.2f} s")


if __name__ == "__main__":
    main()
