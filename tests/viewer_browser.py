"""The system's Chromium driven by Playwright, for the HTML viewer's tests (docs/viewer.md).

Debian's /usr/bin/chromium, never a browser Playwright downloads. With CI=true a missing Chromium or
Playwright fails the test (``.ci/run`` installs both); elsewhere the browser tests skip.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("STUDIO_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _missing(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why}: CI needs it for the HTML viewer's browser tests (.ci/run installs it)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
                                     args=ARGS)
        yield launched
        launched.close()


class Watched:
    """A page that fails its test on any dialog (alert, confirm, prompt) or any request but the file's own."""

    def __init__(self, browser: Any, path: Path, width: int = 1280, height: int = 800) -> None:
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.console: list[str] = []
        self.path = path
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.page.on("dialog", self._dialog)
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))
        self.page.route("**/*", self._route)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.split("#")[0] == self.path.as_uri():
            route.continue_()
            return
        self.requests.append(url)
        route.abort()

    def open(self, fragment: str = "") -> Any:
        self.page.goto(self.path.as_uri() + fragment)
        self.page.wait_for_selector("body[data-ready]")
        return self.page

    def rows(self) -> list[str]:
        """The sample ids of the grid's rows on screen, top to bottom, once the grid has painted (it
        paints on the next animation frame after a change)."""
        return self.page.evaluate("""async () => {
            await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
            return Array.from(document.querySelectorAll('.grid-row'))
            .filter(r => r.style.display !== 'none')
            .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
            .map(r => r.getAttribute('data-sample')); }""")

    def count(self) -> int:
        return int(self.page.get_attribute(".count", "data-count"))

    def check_clean(self) -> None:
        """Nothing ran that the page did not mean to run: no dialog, no request, no script error
        (a CSP refusal is logged, which is the policy working)."""
        errors = [c for c in self.console if c.startswith("pageerror")]
        assert not self.dialogs and not self.requests and not errors, (self.dialogs, self.requests, self.console)
