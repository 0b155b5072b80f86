"""Data shown in the window is plain text, everywhere (studio.ui.plain).

A library whose grader names and descriptions, dataset name, sample ids, inputs, outputs,
rationales, errors and label notes are HTML (an ``<img>`` pointing at a local file, a 3,000-row
``<table>``): every page is visited, and the test fails on any label that would read that data as
HTML, any tooltip Qt would render as HTML, and any label the table blew up.
"""

from __future__ import annotations

from typing import Any

from studio.core.engine.runner import start_run
from studio.core.engine.summary import run_aggregates
from studio.core.models import BinaryJudge, BuiltinGrader, Outcome, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.labels import LabelInput
from studio.ui.main_window import TAB_DATASETS, TAB_GRADER, TAB_RUN
from studio.ui.plain import as_tooltip, message_box, plain_label
from studio.ui.qt import Qt, QtCore, QtGui, QtWidgets

IMG = "<img src='file:///etc/hostname' width=400 height=400>"
TABLE = "<table>" + "<tr><td>row</td></tr>" * 3000 + "</table>"
MARKERS = ("<img", "<table")


def _hostile_library(ctx: Any) -> tuple[str, str, int]:
    library = ctx.library
    name = f"{IMG}{TABLE}"
    library.graders.create(BuiltinGrader(key="html-grader", name=name, description=TABLE, function="exact_match"))
    library.endpoints.save(EndpointConfig(name="judge", base_url="http://127.0.0.1:9/v1", model="m"))
    library.graders.create(BinaryJudge(key="html-judge", name=name, criteria=TABLE, endpoint="judge"))
    dataset = f"{IMG}{TABLE}"
    samples = [Sample(id=f"{IMG}{i}", messages=[Turn(role="user", content=f"{TABLE}{IMG}")], completion=IMG,
                      expected=TABLE, metadata={"note": IMG}) for i in range(4)]
    library.datasets.create(dataset, samples)
    run = start_run(library, "html-grader", dataset)
    outcomes = [Outcome.scored(1.0, {f"{IMG}metric": 1.0}, rationale=f"{IMG}{TABLE}",
                               details={"verdicts": [{"claim": IMG, "verdict": IMG, "reasoning": TABLE}]}),
                Outcome.failure(f"{IMG}{TABLE}"),
                Outcome.scored(0.0, {f"{IMG}metric": 0.0}, rationale=IMG),
                Outcome.failure(IMG)]
    library.runs.write_results(run.id, [(i, s.id, o) for i, (s, o) in enumerate(zip(samples, outcomes, strict=True))])
    library.runs.set_status(run.id, "completed", aggregates=run_aggregates(library, run.id, 0.5))
    library.labels.put_many(dataset, [LabelInput(sample_id=s.id, verdict="PASS", note=f"{IMG}{TABLE}",
                                                 labeler=IMG) for s in samples])
    return dataset, samples[0].id, run.id


def _settle(qtbot: Any, window: Any) -> None:
    qtbot.wait(150)
    assert window.ctx.tasks.wait_idle()
    QtWidgets.QApplication.processEvents()


def _labels_reading_data_as_html(window: Any) -> list[str]:
    bad = []
    for label in window.findChildren(QtWidgets.QLabel):
        text = label.text()
        if not any(m in text for m in MARKERS):
            continue
        if label.textFormat() != Qt.TextFormat.PlainText:
            bad.append(f"{label.objectName() or type(label.parent()).__name__}: {label.textFormat()} {text[:80]!r}")
    return bad


def _huge_labels(window: Any) -> list[str]:
    return [f"{type(label.parent()).__name__}: {label.sizeHint().height()} px"
            for label in window.findChildren(QtWidgets.QLabel)
            if label.isVisible() and label.sizeHint().height() > 2000]


def _shown_tooltip(widget: QtWidgets.QWidget, pos: QtCore.QPoint) -> str:
    QtWidgets.QToolTip.hideText()
    event = QtGui.QHelpEvent(QtCore.QEvent.Type.ToolTip, pos, widget.mapToGlobal(pos))
    QtWidgets.QApplication.sendEvent(widget, event)
    return QtWidgets.QToolTip.text()


def _columns(model: QtCore.QAbstractItemModel) -> int:
    try:
        return model.columnCount(QtCore.QModelIndex())
    except TypeError:  # a list model keeps columnCount private: one column
        return 1


def _tooltips_shown_as_html(window: Any) -> list[str]:
    bad = []
    for widget in window.findChildren(QtWidgets.QWidget):
        if widget.isVisible() and any(m in widget.toolTip() for m in MARKERS):
            shown = _shown_tooltip(widget, QtCore.QPoint(1, 1))
            if any(m in shown for m in MARKERS):
                bad.append(f"{type(widget).__name__} tooltip {shown[:80]!r}")
    for view in window.findChildren(QtWidgets.QAbstractItemView):
        model = view.model()
        if not view.isVisible() or model is None or isinstance(view, QtWidgets.QHeaderView):
            continue
        for row in range(min(model.rowCount(QtCore.QModelIndex()), 10)):
            for col in range(_columns(model)):
                index = model.index(row, col)
                tip = index.data(Qt.ItemDataRole.ToolTipRole)
                rect = view.visualRect(index)
                if not isinstance(tip, str) or not any(m in tip for m in MARKERS) or rect.isEmpty():
                    continue
                shown = _shown_tooltip(view.viewport(), rect.center())
                if not shown or any(m in shown for m in MARKERS):
                    bad.append(f"{type(view).__name__} row {row} col {col} tooltip {shown[:80]!r}")
    return bad


def _check(window: Any, where: str, problems: list[str]) -> None:
    problems += [f"{where}: {p}" for p in _labels_reading_data_as_html(window)]
    problems += [f"{where}: {p}" for p in _huge_labels(window)]
    problems += [f"{where}: {p}" for p in _tooltips_shown_as_html(window)]


def test_every_page_shows_html_bearing_data_as_plain_text(qtbot: Any, window: Any, ctx: Any) -> None:
    dataset, sample_id, run_id = _hostile_library(ctx)
    window._library_changed()
    problems: list[str] = []

    for key in ("html-grader", "html-judge"):
        assert window.open_grader(key)
        window.tabs.setCurrentIndex(TAB_GRADER)
        _settle(qtbot, window)
        picker = window.page.try_panel.picker
        picker.dataset.setCurrentIndex(picker.dataset.findData(dataset))
        _settle(qtbot, window)
        _check(window, f"grader page {key}", problems)

    window.tabs.setCurrentIndex(TAB_DATASETS)
    window.datasets_view.select_dataset(dataset)
    _settle(qtbot, window)
    window.datasets_view.select_sample(0)
    _settle(qtbot, window)
    _check(window, "datasets", problems)

    window.show_sample(run_id, sample_id)
    _settle(qtbot, window)
    for row in range(2):
        window.run_panel.results.select_row(row)
        _settle(qtbot, window)
        _check(window, f"results row {row}", problems)

    window.tabs.setCurrentWidget(window.agreement_tab)
    _settle(qtbot, window)
    window.agreement_view.show_run(run_id)
    _settle(qtbot, window)
    _check(window, "agreement", problems)
    window.tabs.setCurrentWidget(window.compare_tab)
    _settle(qtbot, window)
    _check(window, "compare", problems)
    window.tabs.setCurrentIndex(TAB_RUN)
    _settle(qtbot, window)

    assert problems == [], "\n".join(problems)
    assert any(IMG in label.text() for label in window.findChildren(QtWidgets.QLabel)), "the data was shown somewhere"


def test_the_helpers_are_plain(qapp: Any) -> None:
    assert plain_label(IMG).textFormat() == Qt.TextFormat.PlainText
    box = message_box(QtWidgets.QMessageBox.Icon.Warning, "t", IMG, QtWidgets.QMessageBox.StandardButton.Ok, None)
    assert box.textFormat() == Qt.TextFormat.PlainText
    shown = as_tooltip(f"{IMG}\nsecond line")
    assert "&lt;img" in shown and "<img" not in shown and "<br" in shown
