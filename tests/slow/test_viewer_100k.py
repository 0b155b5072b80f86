"""A 100,000-sample run's HTML page exports, opens and filters in Chromium (issue 47). Its timings are
bench/viewer_html.py's (bench/README.md), never asserted here: this checks the page is whole and right
at that size (every row counted, a filter's count equal to runs show's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from viewer_browser import Watched, browser  # noqa: F401  (the module-scoped fixture)

from tests.conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]
N = 100_000


def test_a_100k_sample_page_opens_and_filters(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    sys.path.insert(0, str(REPO / "bench"))
    from million import BUILD

    db = tmp_path / "big.sqlite"
    subprocess.run([sys.executable, "-c", BUILD, str(db), str(N)], check=True, cwd=REPO)

    def cli(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "studio", "--db", str(db), *args], cwd=REPO,
                              capture_output=True, text=True, timeout=1800)
        assert done.returncode in (0, 1), done.stderr
        return done.stdout

    run = json.loads(cli("run", "exact", "big", "--json"))
    page_path = tmp_path / "big.html"
    cli("runs", "export", str(run["id"]), "--format", "html", "-o", str(page_path))
    failing = run["aggregates"]["n"] - round(run["aggregates"]["pass_rate"] * run["aggregates"]["n"])

    watched = Watched(browser, page_path)
    watched.page.set_default_timeout(180_000)  # a loaded machine, not a timing check
    page = watched.open()
    assert watched.count() == N
    assert page.locator(".grid-row").count() < 100  # virtualized: a screenful of rows, not 100,000
    page.select_option('select[name="verdict"]', "FAIL")
    assert watched.count() == failing
    page.click('button:has-text("Clear filters")')
    assert watched.count() == N
    page.fill('input[name="q"]', "question 99999")
    page.wait_for_function("() => document.querySelector('.count').dataset.count === '1'")
    assert watched.rows() == ["s99999"]
    page.goto(page_path.as_uri() + "#sample=s54321")
    page.wait_for_selector("body[data-ready]")
    assert page.text_content(".detail h2") == "sample s54321 (#54321)"
    watched.check_clean()
