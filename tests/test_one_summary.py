"""Every surface reads a run's figures from its one typed summary, never by string key.

Why: ``run``, ``runs show``, ``run --json``, the window's band and lists, the verdict and the jury's
card each read the run's stored ``aggregates`` dict by its keys (about fifty reads in a dozen files),
so a renamed or a new figure was found by each surface on its own, or not at all. The figures are
now engine/summary.py's ``RunAggregates`` (attributes mypy checks); its JSON is made in one place
(``as_json``) and read in one place (``RunAggregates.read``). A read by key fails here."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from studio.core.engine.summary import RunAggregates, summarize
from studio.core.store.ledger import Tally

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


# ---- the pass rate's 95% interval ------------------------------------------------------------------------
def _wilson(passes: int, graded: int) -> tuple[float, float]:
    """Wilson's score interval worked out by hand: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    z = 1.959963984540054
    p = passes / graded
    centre = p + z * z / (2 * graded)
    half = z * math.sqrt(p * (1 - p) / graded + z * z / (4 * graded * graded))
    return (centre - half) / (1 + z * z / graded), (centre + half) / (1 + z * z / graded)


def _tally(passes: int, fails: int, na: int = 0, errors: int = 0) -> Tally:
    graded = passes + fails
    return Tally(total=graded + na + errors, statuses={"ok": graded, "skipped": na, "error": errors},
                 decisions={"pass": passes, "fail": fails, "na": na, "error": errors}, n=graded,
                 score_sum=float(passes), score_sumsq=float(passes), score_min=0.0 if fails else 1.0,
                 score_max=1.0 if passes else 0.0)


@pytest.mark.parametrize(("passes", "fails", "expected"), [  # (scipy's binomtest(...).proportion_ci("wilson"))
    (3, 1, (0.30064184258240184, 0.9544127391902995)),  # 3 of 4
    (0, 10, (0.0, 0.27753279986288926)),  # 0/n: not [0, 0]
    (10, 0, (0.7224672001371109, 1.0)),  # n/n: not [1, 1]
    (1, 0, (0.20654931437723745, 1.0)),  # one graded result is enough for an interval
    (24, 36, (0.2856949053488255, 0.5263394650795924)),
])
def test_the_pass_rate_carries_its_wilson_interval(passes: int, fails: int, expected: tuple[float, float]) -> None:
    found = summarize("g", 1, 0.5, _tally(passes, fails, na=2, errors=1))  # NA and errors: out of both
    assert found.pass_rate == passes / (passes + fails)
    assert found.pass_rate_ci == pytest.approx(expected, abs=1e-12)
    assert found.pass_rate_ci == pytest.approx(_wilson(passes, passes + fails), abs=1e-12)
    low, high = found.pass_rate_ci
    assert found.aggregates_json()["pass_rate_ci"] == [low, high]
    assert found.pass_rate_text() == f"{passes / (passes + fails):.1%} [{low:.1%}, {high:.1%}]"
    assert found.pass_rate_text("words") == f"{passes / (passes + fails):.1%} ({low:.1%} to {high:.1%})"
    # stored in runs.aggregates and read back typed
    read = RunAggregates.read(json.loads(json.dumps(found.aggregates_json())))
    assert read.pass_rate_ci == (low, high) and read.pass_rate_text() == found.pass_rate_text()


def test_no_graded_result_has_no_rate_and_no_interval() -> None:
    """NA is not zero: only NA and errors give no rate, no interval, and nothing printed as 0%."""
    found = summarize("g", 1, 0.5, _tally(0, 0, na=3, errors=2))
    assert found.pass_rate is None and found.pass_rate_ci is None and found.pass_rate_text() == ""
    assert found.aggregates_json()["pass_rate_ci"] is None
    assert RunAggregates.read(found.aggregates_json()).pass_rate_ci is None


def test_a_run_stored_before_the_rate_had_its_interval_reads_none() -> None:
    older = RunAggregates.read({"count": 4, "mean": 0.75, "pass_rate": 0.75, "pass_threshold": 0.5})
    assert older.pass_rate == 0.75 and older.pass_rate_ci is None and older.pass_rate_text() == "75.0%"
    assert not older.has("pass_rate_ci")
