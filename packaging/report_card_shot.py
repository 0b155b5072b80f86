"""The judge report card screenshot (docs/1280x800/18-report-card.png), on the demo library.

    xvfb-run -s "-screen 0 1920x1080x24" python packaging/report_card_shot.py [OUT.png]

Builds the demo library in a temporary file, probes the demo pairwise judge against a scripted
judge that always prefers the first answer (so the card shows a flagged position bias), then
opens the window on the judge's page with the Report card tab showing.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from studio.core.demo import build_demo
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.probes import probe_judge
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from screenshots import open_window, wait  # noqa: E402


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent / "docs" / "1280x800" / "18-report-card.png"
    db = Path(tempfile.mkdtemp()) / "library.sqlite"
    library = Library.open(db)
    build_demo(library)
    server = FakeJudgeServer(bias="first").start()
    EndpointRepository.of(library).save(EndpointConfig(name="first-answer-judge", base_url=server.base_url,
                                                       model="fake-judge"))
    probe_judge(library, "pairwise-preference", "qa-pairs", ["position", "verbosity", "reference", "repeat"],
                limit=40, endpoint="first-answer-judge")
    app, window = open_window(library, db, db.with_suffix(".ini"))
    wait(app, 1.0)
    window.open_grader("pairwise-preference")
    page = window.page
    page.bottom.setCurrentWidget(page.report_card)
    page.splitter.setSizes([380, 340])
    wait(app, 10, lambda: page.report_card.table.rowCount() > 0)
    wait(app, 0.5)
    out.parent.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(out))
    print(out)
    window.close()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
