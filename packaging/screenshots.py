"""Screenshots of each main view of the studio, taken from a real window on the demo library.

    python packaging/screenshots.py --db LIBRARY [OUT_DIR]

Expects a library built with ``grader-studio --db LIBRARY demo`` (``screenshots.sh`` does that and
runs this under Xvfb). Serves the scripted demo judge so the judge views and the run have answers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.safe_files import write_bytes
from studio.core.store import Library
from studio.ui.app import shut_down, start_demo_servers
from studio.ui.context import AppContext
from studio.ui.main_window import TAB_DATASETS, TAB_GRADER, TAB_RUN, MainWindow
from studio.ui.qt import QtCore, QtGui, QtWidgets
from studio.ui.theme import apply_theme

SIZE = (1280, 800)


def open_window(library: Library, db: Path, settings_file: Path,
                size: tuple[int, ...] = SIZE) -> tuple[QtWidgets.QApplication, MainWindow]:
    """The window as every screenshot shows it: a readable font (10 pt at least), the light theme,
    settings in ``settings_file`` (never the user's), resized to ``size`` and shown."""
    app = QtWidgets.QApplication(sys.argv[:1])
    font = app.font()
    font.setPointSizeF(max(10.0, font.pointSizeF()))
    app.setFont(font)
    apply_theme(app, "light")
    settings = QtCore.QSettings(str(settings_file), QtCore.QSettings.Format.IniFormat)
    window = MainWindow(AppContext(library, db, settings))
    window.resize(*size)
    window.show()
    return app, window


def wait(app: QtWidgets.QApplication, seconds: float, until: Callable[[], bool] | None = None) -> bool:
    """Let the window paint and background work report (a script may spin; the window never does)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        if until is not None and until():
            app.processEvents()
            return True
        time.sleep(0.02)
    return until is None


def save_png(pixmap: QtGui.QPixmap, path: Path) -> None:
    """PNG bytes written by studio.core.safe_files: never through a link planted at ``path``."""
    data = QtCore.QByteArray()
    buffer = QtCore.QBuffer(data)
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not pixmap.save(buffer, "PNG"):
        raise OSError(f"cannot encode the screenshot {path.name} as PNG")
    buffer.close()
    write_bytes(path, bytes(data.data()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(Path(__file__).parent / "screenshots" / "out"))
    parser.add_argument("--db", required=True, help="a library built with `grader-studio --db PATH demo`")
    parser.add_argument("--size", default=f"{SIZE[0]}x{SIZE[1]}", help="window size, WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    size = tuple(int(n) for n in args.size.lower().split("x"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    library = Library.open(args.db)
    servers, problems = start_demo_servers()
    for problem in problems:
        print("warning:", problem, file=sys.stderr)
    app, window = open_window(library, Path(args.db), Path(tempfile.mkdtemp()) / "settings.ini", size)
    ctx = window.ctx
    wait(app, 1.0, lambda: "checking" not in window.sandbox_label.text())
    shots: list[Path] = []

    wrong_size: list[str] = []

    def shoot(name: str, widget: QtWidgets.QWidget | None = None) -> None:
        wait(app, 0.4)
        path = out / f"{name}.png"
        pixmap = (widget or window).grab()
        if widget is None and (pixmap.width(), pixmap.height()) != size:
            # the window grew past the size asked for: a widget's minimum size forced it (issue 35)
            wrong_size.append(f"{name}: {pixmap.width()}x{pixmap.height()}, not {size[0]}x{size[1]}")
        save_png(pixmap, path)
        shots.append(path)

    try:
        # 1. the function editor, validated
        window.open_grader("qa-exact-match")
        window.page.validate()
        wait(app, 20, lambda: bool(window.page.checks.checks))
        shoot("01-function-editor")

        # 2. Try on a dataset sample
        picker = window.page.try_panel.picker
        picker.select("qa", 1)
        window.page.try_sample()
        wait(app, 20, lambda: window.page.try_panel.outcome is not None)
        shoot("02-try-panel")

        # 3. the judge designer with its live preview
        window.open_grader("answer-quality-1to5")
        window.page.body.preview.picker.select("qa", 2)
        window.page.body.refresh_preview()
        window.page.try_sample()
        wait(app, 20, lambda: window.page.try_panel.outcome is not None)
        shoot("03-judge-designer")

        # 3b. a binary judge's few-shot examples beside the preview; 3c. a criteria judge (folded Try panel)
        window.open_grader("qa-correctness-judge")
        body = window.page.body
        body.sections.setCurrentIndex(1)  # Examples
        body.preview.picker.select("qa", 1)
        body.refresh_preview()
        window.page.try_panel.picker.select("qa", 1)
        window.page.try_sample()  # Try on a binary judge: its verdict beside the score
        wait(app, 20, lambda: "·" in window.page.try_panel.score.text())
        shots_table = body.shots

        def fill_new_example() -> None:  # a third example, written in the roomy row editor
            dialog = shots_table.dialog
            if dialog is None:
                return
            user, completion, reasoning, verdict = dialog.fields
            user.setPlainText("Which planet is the largest in the Solar System?")
            completion.setPlainText("Saturn, thanks to its rings, is the largest planet.")
            reasoning.setPlainText("Jupiter is the largest planet; Saturn is second. The rings do not "
                                   "count towards a planet's size, so the answer is wrong.")
            verdict.setCurrentText("FAIL")
            wait(app, 0.4)
            dialog.grab().save(str(out / "03f-example-editor.png"))
            shots.append(out / "03f-example-editor.png")
            dialog.accept()

        QtCore.QTimer.singleShot(300, fill_new_example)
        shots_table.add.click()
        shoot("03b-binary-judge-examples")
        body.sections.setCurrentIndex(0)
        window.page.set_bottom_collapsed(True)
        shoot("03c-binary-judge-criteria")
        window.page.discard()  # the example was for the picture: nothing to save
        window.open_grader("rag-answer-checklist")
        window.page.body.refresh_preview()
        shoot("03d-criteria-judge")
        window.open_grader("answer-quality-1to5")
        window.page.body.sections.setCurrentIndex(1)  # Subranges
        window.page.body.refresh_preview()
        shoot("03e-range-judge-subranges")
        # 3g. a subrange typed backwards (5 to 4): the designer names it, Save refuses it
        subranges = window.page.body.subranges
        kept = subranges.rows()
        subranges.set_rows([*kept[:-1], [5, 4, kept[-1][2]]])
        subranges.changed.emit()
        shoot("03g-range-judge-backwards-subrange")
        subranges.set_rows(kept)
        subranges.changed.emit()
        window.page.discard()
        window.page.body.sections.setCurrentIndex(0)
        window.page.set_bottom_collapsed(False)

        # 4. a generated form (built-in grader)
        window.open_grader("qa-token-f1")
        shoot("04-builtin-form")

        # 5. a locked grader
        ctx.library.graders.set_locked("json-is-valid", True)
        ctx.graders_changed.emit()
        window.open_grader("json-is-valid")
        shoot("05-locked-grader")
        ctx.library.graders.set_locked("json-is-valid", False)
        ctx.graders_changed.emit()

        # 6. datasets
        window.tabs.setCurrentIndex(TAB_DATASETS)
        shoot("06-datasets")

        # 7. a run streaming into the results grid
        window.tabs.setCurrentIndex(TAB_RUN)
        panel = window.run_panel
        if hasattr(panel, "select") and hasattr(panel, "start"):
            panel.select(grader="qa-correctness-judge", dataset="qa")
            panel.start()
            wait(app, 60, lambda: not panel.is_running())
            wait(app, 1.0)
            panel.results.select_row(1)  # a result's rationale in the detail pane
            wait(app, 1.0)
        shoot("07-run-and-results")

        # 12-13. the judge against the demo's human labels; a second grader compared with it
        window.tabs.setCurrentWidget(window.agreement_tab)
        wait(app, 30, lambda: window.agreement_view.report is not None)
        judge_run = window.agreement_view.report["run_id"] if window.agreement_view.report else None
        shoot("12-agreement")
        view = window.agreement_view
        view.key.setEditText("second-opinion")  # a label set nobody has filled: the page says how to
        view.compute()
        wait(app, 30, lambda: view.report is not None and view.report["labels"] == "second-opinion")
        shoot("14-agreement-no-labels")
        view.key.setEditText("human")
        view.compute()
        window.tabs.setCurrentIndex(TAB_RUN)
        panel.select(grader="qa-token-f1", dataset="qa")
        panel.start()
        wait(app, 60, lambda: not panel.is_running())
        other = ctx.library.runs.list(grader_key="qa-token-f1", limit=1)
        if judge_run is not None and other:
            window.tabs.setCurrentWidget(window.compare_tab)
            window.compare_view.compare_runs(judge_run, other[0].id)
            wait(app, 30, lambda: window.compare_view.report is not None)
            shoot("13-compare")
        # 14-15. a suite: its editor, and a suite run's grid (a score column per grader)
        ctx.library.suites.create(SuiteDefinition(key="qa-suite", name="QA checks and judge", overall="mean", graders=[
            SuiteMember(grader="qa-exact-builtin", threshold=1.0), SuiteMember(grader="qa-token-f1"),
            SuiteMember(grader="qa-exact-match"), SuiteMember(grader="qa-contains-expected"),
            SuiteMember(grader="qa-correctness-judge", weight=2.0)]))
        window.suites_page.reload(select="qa-suite")
        window.suites_page.suites_changed.emit()
        window.tabs.setCurrentWidget(window.suites_page)
        shoot("16-suite-editor")
        window.tabs.setCurrentIndex(TAB_RUN)
        panel.select(grader="qa-suite", dataset="qa")
        panel.start()
        wait(app, 90, lambda: not panel.is_running())
        wait(app, 1.0)
        panel.results.select_row(2)
        wait(app, 1.0)
        shoot("17-suite-run")
        # 19. the Agreement page on the suite run: it names the grader it measures
        suite_run = panel.results.run_id
        window.tabs.setCurrentWidget(window.agreement_tab)
        view.show_run(suite_run)
        view.grader.refresh(ctx.library, [suite_run])
        view.grader.setCurrentIndex(view.grader.findData("qa-correctness-judge"))
        view.compute()
        wait(app, 30, lambda: view.report is not None and view.report.get("grader") == "qa-correctness-judge")
        shoot("19-suite-agreement")
        window.tabs.setCurrentIndex(TAB_GRADER)

        # 8. dialogs (a long line that differs wraps in its row, both sides aligned)
        window.open_grader("qa-exact-match")
        ctx.library.graders.save(ctx.library.graders.get("qa-exact-match").definition.model_copy(
            update={"description": "Exact match after lower-casing and removing articles and punctuation; "
                                   "a trailing full stop, surrounding quotes and repeated spaces are ignored too, "
                                   "so 'The Eiffel Tower.' matches 'eiffel tower'."}),
            message="a longer description")
        ctx.graders_changed.emit()
        dialog = window.grader_actions.show_versions("qa-exact-match")
        if dialog is not None:
            shoot("08-versions-diff", dialog)
            dialog.close()
        window.export()
        export = window.export_dialog
        wait(app, 10, lambda: export.file_list.count() > 0)
        shoot("09-export", export)
        export.close()
        # 9b. a judge with its dataset as one eval: the scripted judge's model id is a warning
        window.open_grader("qa-correctness-judge")
        window.export()
        export = window.export_dialog
        export.platform.setCurrentIndex(export.platform.findData("openai"))
        export.dataset.setCurrentIndex(export.dataset.findData("qa"))
        wait(app, 10, lambda: "qa.items.jsonl" in export.files)
        shoot("09b-export-judge-with-dataset", export)
        export.close()
        settings_dialog = window.settings()
        shoot("10-settings", settings_dialog)
        settings_dialog.close()

        # 20. Ctrl+S on a syntax error: the quick checks fail, the user is asked before a version is made
        window.open_grader("qa-exact-match")
        editor = window.page.body.editor
        editor.setPlainText(editor.toPlainText().replace("return 1.0", "return 1.0 +", 1))
        wait(app, 3, lambda: any(c.status == "failed" for c in window.page.checks.checks))

        def answer_save_question() -> None:
            box = QtWidgets.QApplication.activeModalWidget()
            if box is None:
                QtCore.QTimer.singleShot(100, answer_save_question)
                return
            wait(app, 0.3)
            save_png(box.grab(), out / "20b-save-with-a-failing-check.png")
            shots.append(out / "20b-save-with-a-failing-check.png")
            box.reject()  # Cancel: the text stays in the editor, unsaved

        QtCore.QTimer.singleShot(300, answer_save_question)
        window.page.save()
        shoot("20-editor-checks-follow-the-text")
        window.page.discard()

        # 21. Generate outputs: a dataset name that does not exist yet, resumed here when unfinished
        window.tabs.setCurrentIndex(TAB_DATASETS)
        generate_dialog = window.datasets_view.open_generate()
        shoot("21-generate-dialog", generate_dialog)
        generate_dialog.close()
        window.tabs.setCurrentIndex(TAB_GRADER)

        # 22. five graders whose names differ only at the end: the sidebar elides their middle
        from studio.core.models import parse_grader

        for n, tail in enumerate(("strict", "lenient", "v2", "v3", "final")):
            ctx.library.graders.create(parse_grader({
                "kind": "builtin", "key": f"short-answer-{n}", "function": "exact_match",
                "name": f"Short answer (unit conversions, rounding to two places) {tail}"}))
        ctx.graders_changed.emit()
        window.open_grader("short-answer-4")
        window.library.search.setText("short answer")  # the five together
        shoot("22-library-similar-names")
        window.library.search.clear()

        # 11. dark theme
        window.set_theme("dark")
        window.open_grader("answer-quality-1to5")
        window.page.body.refresh_preview()
        shoot("11-dark-judge-designer")
        window.set_theme("light")
    finally:
        ctx.tasks.wait_idle()
        window.page.discard()
        window.close()
        shut_down(ctx, servers)
    for path in shots:
        print(path)
    for problem in wrong_size:
        print("error: the window is not the size asked for:", problem, file=sys.stderr)
    return 1 if wrong_size else 0


if __name__ == "__main__":
    sys.exit(main())
