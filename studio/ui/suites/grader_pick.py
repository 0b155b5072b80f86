"""The Agreement and Compare tabs' grader picker for suite runs: the overall score or one grader.

Hidden unless a chosen run is a suite run; lists the graders every chosen run has (Compare needs
the grader in both runs), and "Overall score" only when every chosen run has one (a suite without
an overall rule has no one score: its sample rows carry none, so "Overall score" compared nothing
and showed "n_common 0"). It starts on the overall score when there is one, else on the first
shared grader: the first grader ``compare`` prints for such runs (cli/agreement.py).
``currentData()`` is the grader key, or None for the run's own rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..eliding import ElidedCombo
from ..qt import QtWidgets

if TYPE_CHECKING:
    from studio.core.store.library import Library


class GraderPick(ElidedCombo):
    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(12, parent)
        self.set_base_tip("A suite run: compare or measure one grader, or the overall score")
        self.setVisible(False)
        self._runs: tuple[int, ...] = ()

    def refresh(self, library: Library, run_ids: list[int]) -> None:
        """Offer the graders of ``run_ids`` (kept when the runs did not change)."""
        runs = tuple(run_ids)
        if runs == self._runs:
            return
        self._runs = runs
        keep = self.currentData()
        self.blockSignals(True)
        self.clear()
        try:
            infos = [library.runs.get(r) for r in runs]
            suite = any(i.suite is not None for i in infos)
            overall = all(i.has_overall_score for i in infos)
            common: list[str] | None = None
            for run_id in runs:
                keys = [s.grader_key for s in library.runs.slots(run_id)]
                common = keys if common is None else [k for k in common if k in keys]
        except Exception:  # a run deleted under us: the report says so
            suite, common, overall = False, [], False
        if suite:
            if overall:
                self.addItem("Overall score", None)
            for key in common or []:
                self.addItem(key, key)
            index = self.findData(keep)
            self.setCurrentIndex(index if index >= 0 else 0)
        self.setVisible(suite)
        self.blockSignals(False)
