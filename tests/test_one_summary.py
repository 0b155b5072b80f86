"""Every surface reads a run's figures from its one typed summary, never by string key.

Why: ``run``, ``runs show``, ``run --json``, the window's band and lists, the verdict and the jury's
card each read the run's stored ``aggregates`` dict by its keys (about fifty reads in a dozen files),
so a renamed or a new figure was found by each surface on its own, or not at all. The figures are
now engine/summary.py's ``RunAggregates`` (attributes mypy checks); its JSON is made in one place
(``as_json``) and read in one place (``RunAggregates.read``). A read by key fails here."""

from __future__ import annotations

import re
from pathlib import Path

from studio.core.engine.summary import RunAggregates

STUDIO = Path(__file__).resolve().parent.parent / "studio"

#: a figure read from the aggregates dict (or the dict's copies, ``agg``) by its key
KEY_READS = [
    re.compile(r"""\baggregates\s*(\[|\.get\(|\.items\(|\.keys\(|\.values\()"""),
    re.compile(r"""\bagg\s*(\[|\.get\(|\.items\(|\.keys\(|\.values\()"""),
    re.compile(r"""\.aggregates\(\)"""),
]

ALLOWED = {
    "core/store/runs.py": "the store's reader of the stored JSON (takes the stored tallies out of it)",
}


def test_no_surface_reads_the_run_figures_by_key() -> None:
    found = []
    for path in sorted(STUDIO.rglob("*.py")):
        name = path.relative_to(STUDIO).as_posix()
        if name in ALLOWED:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if any(pattern.search(line) for pattern in KEY_READS):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == [], "read the run's figures from engine/summary.py RunAggregates:\n" + "\n".join(found)


def test_the_summary_is_no_dict() -> None:
    """A read by key is a TypeError (and a mypy error), not a silent None."""
    figures = RunAggregates.read({"mean": 0.5, "pass_threshold": 0.7})
    assert not hasattr(figures, "__getitem__") and not hasattr(figures, "get")
    assert figures.mean == 0.5 and figures.pass_threshold == 0.7 and figures.pass_rate is None


def test_its_json_keeps_the_stored_keys_in_their_order() -> None:
    """``run --json`` prints what was stored, byte for byte: the keys as they came, a figure set
    again in its place, a new one after them, a key the studio does not know kept."""
    stored = {"count": 4, "mean": 0.25, "min": 0.0, "max": 1.0, "graders": [1], "future": {"x": 1}}
    figures = RunAggregates.read(stored)
    assert list(figures.as_json()) == list(stored) and figures.as_json() == stored
    assert figures.score_min == 0.0 and figures.score_max == 1.0
    again = figures.without("graders").updated(mean=0.5, stopped="why", score_max=2.0)
    assert list(again.as_json()) == ["count", "mean", "min", "max", "future", "stopped"]
    assert again.mean == 0.5 and again.stopped == "why" and again.score_max == 2.0
    assert figures.as_json() == stored  # (the summary is frozen: a change is a new summary)


def test_an_absent_figure_is_none_not_zero() -> None:
    """Undefined is not 0: a run that stored no mean has none; counts and tokens start at 0."""
    figures = RunAggregates.read({})
    assert figures.mean is None and figures.mean_ci is None and figures.n is None and figures.count is None
    assert figures.tokens == 0 and figures.statuses == {} and figures.stopped is None
    assert RunAggregates.read({"mean_ci": [None, None]}).mean_ci is None
    assert RunAggregates.read({"mean_ci": [0.1, 0.9]}).mean_ci == (0.1, 0.9)
