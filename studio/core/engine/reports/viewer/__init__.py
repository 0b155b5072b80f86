"""A run, or two runs compared, as one self-contained HTML file anyone can open (docs/viewer.md).

``run_page`` and ``compare_page`` gather what the page shows — each sample's result, thread, judge
calls and labels, packed in columns (``pack``), and the header the caller read from the run's one
summary (what ``runs show --json`` prints: the page never recomputes a run's figures) — and
``page.render`` wraps it with the viewer's script and style under a strict Content-Security-Policy.
"""

from __future__ import annotations

from datetime import UTC, datetime

from studio import __version__
from studio.core.json_types import JsonObject
from studio.core.store import Library
from studio.core.store.results_query import histogram

from .pack import MISSING, Cut, CutError, Packer
from .page import render
from .rows import RunRows, finite, read_run

__all__ = ["Cut", "CutError", "compare_page", "run_page"]

#: the data's layout, for a reader of the embedded JSON
SCHEMA = 1


def _frame(kind: str, packer: Packer) -> JsonObject:
    return {"kind": kind, "schema": SCHEMA, "studio": __version__,
            "made": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}


def _run_part(rows: RunRows) -> JsonObject:
    return {"n": len(rows.columns.idx), "cols": rows.columns.to_json(), "meta": rows.meta, "labels": rows.labels,
            "label": rows.label_column, "label_set": rows.label_set, "graders": rows.graders}


def run_page(library: Library, run_id: int, header: JsonObject, header_text: str, cut: Cut) -> str:
    """The page of one run. ``header``: ``runs show --json``'s "run" object; ``header_text``: the
    summary lines ``runs show`` prints (both from the caller, who reads the run's one summary)."""
    packer = Packer(cut)
    rows = read_run(library, run_id, packer)
    bins, low, high = histogram(library.engine, run_id)
    data = {**_frame("run", packer), "header": header, "header_text": header_text,
            "histogram": {"bins": bins, "low": low, "high": high}, **_run_part(rows),
            "cut": packer.cut_note(), "strings": packer.strings}
    return render(f"Run {run_id} · {header.get('dataset', '')} — Grader Studio", data)


def _change(report: JsonObject) -> dict[str, str]:
    """Sample id -> "regression" (A passed, B did not) or "improvement", from the report's flips."""
    return {str(f["sample_id"]): "regression" if f["a"]["verdict"] == "PASS" else "improvement"
            for f in report.get("flips") or []}


def _without_flips(report: JsonObject) -> JsonObject:
    """The report's statistics; its flips' texts are in the rows already."""
    return {k: v for k, v in report.items() if k != "flips"} | {"n_flips": len(report.get("flips") or [])}


CHANGE_RANK = {"regression": 0, "improvement": 1, "same": 2, "one side": 3}


def compare_page(library: Library, run_a: int, run_b: int, report: JsonObject,
                 headers: tuple[JsonObject, JsonObject], texts: tuple[str, str], cut: Cut) -> str:
    """Run B against run A. ``report``: ``compare``'s (or ``suite_compare``'s, per grader) — the
    paired statistics and the flips come from there (engine/agreement.py), the page only shows them."""
    packer = Packer(cut)
    a, b = read_run(library, run_a, packer), read_run(library, run_b, packer)
    union = list(a.by_sample) + [sid for sid in b.by_sample if sid not in a.by_sample]
    ra = [a.by_sample.get(sid, -1) for sid in union]
    rb = [b.by_sample.get(sid, -1) for sid in union]
    suite = "graders" in report and isinstance(report["graders"], dict)
    per_grader = report["graders"] if suite else {"": report}
    changes = {key: _change(r) for key, r in per_grader.items()}
    change = []
    for sid, i, j in zip(union, ra, rb, strict=True):
        found = {c.get(sid) for c in changes.values()}
        change.append("regression" if "regression" in found else "improvement" if "improvement" in found
                      else "same" if i >= 0 and j >= 0 else "one side")
    delta = [_delta(a.columns.score, b.columns.score, i, j) for i, j in zip(ra, rb, strict=True)]
    side_a = _by_grader(a, library.runs.get(run_a).grader_key)
    side_b = _by_grader(b, library.runs.get(run_b).grader_key)
    grader_deltas, grader_verdicts = {}, {}
    for key in (per_grader if suite else {}):  # the graders the report compared (both runs have them)
        (sa, va), (sb, vb) = side_a[key], side_b[key]
        grader_deltas[key] = [_delta(sa, sb, i, j) for i, j in zip(ra, rb, strict=True)]
        grader_verdicts[key] = [[va[i] if i >= 0 else MISSING for i in ra], [vb[j] if j >= 0 else MISSING for j in rb]]
    order = sorted(range(len(union)), key=lambda k: (CHANGE_RANK[change[k]],
                                                     delta[k] if delta[k] is not None else 0.0, k))
    data = {**_frame("compare", packer), "headers": list(headers), "header_texts": list(texts),
            "report": {"suite": suite, "graders": {k: _without_flips(r) for k, r in per_grader.items()},
                       **({"only_a": report.get("only_a"), "only_b": report.get("only_b")} if suite else {})},
            "a": _run_part(a), "b": _run_part(b), "ra": ra, "rb": rb, "change": change, "delta": delta,
            "grader_delta": grader_deltas, "grader_verdict": grader_verdicts, "order": order,
            "changes": {key: [c.get(sid, "") for sid in union] for key, c in changes.items()},
            "cut": packer.cut_note(), "strings": packer.strings}
    return render(f"Run {run_b} against run {run_a} — Grader Studio", data)


def _by_grader(rows: RunRows, key: str) -> dict[str, tuple[list[float | None], list[int]]]:
    """Each grader's (scores, verdicts) of a run: a suite's graders, or a run of one grader's own."""
    if rows.graders:
        return {g["key"]: (g["score"], g["verdict"]) for g in rows.graders}
    return {key: (rows.columns.score, rows.columns.verdict)}


def _delta(sa: list[float | None], sb: list[float | None], i: int, j: int) -> float | None:
    if i < 0 or j < 0 or sa[i] is None or sb[j] is None:
        return None
    return finite(round(sb[j] - sa[i], 12))  # type: ignore[operator]
