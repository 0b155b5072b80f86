"""The Review page screenshots (docs/1280x800/23-25), on the demo library.

    xvfb-run -a -s "-screen 0 1280x800x24" python packaging/review_shot.py [OUT_DIR]

Builds the demo library in a temporary file, grades the demo QA dataset with the demo judge (the
scripted judge over HTTP), makes a review queue of a random 12 for ann and bob (lea leads), has ann
label most of it, then opens the window as bob: a sample shown blind (23), the same sample once bob
labelled it, side by side with ann and the judge (24), lea's Agreement tab (25), and lea's New review
queue dialog over the page, the low-confidence rule chosen (26: the screen, the dialog being its own window).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from screenshots import open_window, save_png, wait  # noqa: E402

from studio.core.demo import build_demo  # noqa: E402
from studio.core.demo.run import DEMO_JUDGE  # noqa: E402
from studio.core.engine.queues import QueueRule, create_queue  # noqa: E402
from studio.core.engine.runner import RunOptions, execute_run, start_run  # noqa: E402
from studio.core.store import Library  # noqa: E402
from studio.ui.app import shut_down, start_demo_servers  # noqa: E402


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent / "docs" / "1280x800"
    out.mkdir(parents=True, exist_ok=True)
    db = Path(tempfile.mkdtemp()) / "library.sqlite"
    library = Library.open(db)
    build_demo(library)
    servers, problems = start_demo_servers()
    for problem in problems:
        print("warning:", problem, file=sys.stderr)
    dataset = "qa"
    run = start_run(library, DEMO_JUDGE, dataset, RunOptions(limit=30))
    execute_run(library, run.id)
    os.environ["GRADER_STUDIO_USER"] = "lea"
    create_queue(library, "qa-spot-check", [run.id], QueueRule(rule="random", n=12, seed=4), labels_wanted=2,
                 assignees=["ann", "bob"])
    ids = [sid for sid, _ in library.queues.samples("qa-spot-check")]
    for n, sid in enumerate(ids[:9]):
        library.queues.put_label("qa-spot-check", sid, "FAIL" if n % 4 == 1 else "PASS",
                                 "the date is wrong" if n % 4 == 1 else "", reviewer="ann")
    for sid in ids[:3]:
        library.queues.put_label("qa-spot-check", sid, "PASS", reviewer="bob")
    os.environ["GRADER_STUDIO_USER"] = "bob"

    app, window = open_window(library, db, db.with_suffix(".ini"))
    ctx = window.ctx
    wait(app, 1.0)
    try:
        window.tabs.setCurrentWidget(window.review_tab)
        page = window.review_tab.page
        wait(app, 10, lambda: page.shown is not None)
        wait(app, 0.5)
        shots = [out / "23-review-blind.png"]
        save_png(window.grab(), shots[-1])
        page.note.setText("Gives the year of the treaty, not of the war")
        page.label("FAIL")
        wait(app, 10, lambda: page.shown is not None and page.shown.item.revealed)
        wait(app, 0.5)
        shots.append(out / "24-review-revealed.png")
        save_png(window.grab(), shots[-1])
        os.environ["GRADER_STUDIO_USER"] = "lea"
        library.queues.settle("qa-spot-check", ids[1], "FAIL", "the date is wrong")
        page.user = "lea"
        page.open_queue()
        wait(app, 10, lambda: page.tabs.isTabEnabled(1))
        page.tabs.setCurrentIndex(1)
        page.compute_agreement()
        wait(app, 30, lambda: "Judges against" in page.report_text.toPlainText())
        wait(app, 0.5)
        shots.append(out / "25-review-agreement.png")
        save_png(window.grab(), shots[-1])
        page.tabs.setCurrentIndex(0)
        dialog = page.new_queue(runs=[run.id])
        wait(app, 10, lambda: dialog.runs.count() > 0)
        dialog.name.setText("qa-borderline")
        dialog.rule.setCurrentIndex(3)  # low-confidence verdicts: the margin alone
        dialog.named.setChecked(True)
        dialog.reviewers.setText("ann, bob, cy")
        dialog.labels_wanted.setValue(2)
        wait(app, 0.5)
        shots.append(out / "26-review-new-queue.png")
        save_png(app.primaryScreen().grabWindow(0), shots[-1])
        dialog.reject()
        for path in shots:
            print(path)
    finally:
        ctx.tasks.wait_idle()
        window.close()
        shut_down(ctx, servers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
