"""Screenshots of the HTML viewer for docs/viewer.md, taken in the system's Chromium at 1280×800.

    python packaging/viewer_shots.py RUN.html COMPARE.html [--out docs]

RUN.html: ``runs export RUN --format html`` of the demo's judge run (``grader-studio demo``, run 1);
COMPARE.html: ``runs compare 1 3 --html`` (the judge against the built-in exact match). The pages
are opened from disk with the network refused, as a reader would open a mail attachment.
"""

from __future__ import annotations

import argparse
from pathlib import Path

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run", type=Path)
    parser.add_argument("compare", type=Path)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "1280x800")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
        shots = [
            (args.run, "#verdict=FAIL&sample=qa-009", "viewer-run.png", True),
            (args.compare, "#sample=qa-003", "viewer-compare.png", False),
        ]
        for path, fragment, name, open_calls in shots:
            page.goto(path.resolve().as_uri() + fragment)
            page.wait_for_selector("body[data-ready]")
            if open_calls:
                page.evaluate("document.querySelectorAll('details.calls').forEach(d => d.open = true)")
            page.wait_for_timeout(100)
            page.screenshot(path=str(args.out / name))
            print(f"wrote {args.out / name}")
        browser.close()


if __name__ == "__main__":
    main()
