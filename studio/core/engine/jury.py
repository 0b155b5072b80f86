"""Each juror of a jury run against the human labels of its dataset, and the juror's cost.

Why separate from the jury's run aggregates: labels change after a run (a person keeps labelling),
so this is computed when asked, from the stored results (every juror's verdict is in the details)
and the current labels; the inter-judge agreement, which cannot change, is in the run aggregates.
"""

from __future__ import annotations

from studio.core import stats
from studio.core.json_types import JsonObject
from studio.core.models.labels import DEFAULT_KEY
from studio.core.models.pass_rule import decide, word
from studio.core.store.library import Library

from .summary import stored_summary

CLASSES = ("PASS", "FAIL")


def juror_agreement(library: Library, run_id: int, key: str = DEFAULT_KEY) -> JsonObject:
    """Per juror: n labelled samples it answered, accuracy and Cohen's κ (with intervals) against
    the human PASS/FAIL labels, and its tokens. ``{}`` for a run that is not a jury's."""
    info = library.runs.get(run_id)
    jury = stored_summary(info).jury
    if not jury:
        return {}
    labels = {sid: lab.verdict for sid, lab in library.labels.current(info.dataset, key).items()
              if lab.verdict in CLASSES}
    pairs: dict[str, list[tuple[str, str]]] = {name: [] for name in jury["jurors"]}
    for row in library.runs.results(run_id):
        human = labels.get(row["sample_id"])
        panel = (row["details"] or {}).get("jury") or {}
        if human is None:
            continue
        for juror in panel.get("jurors", []):
            verdict = juror.get("verdict")
            if juror.get("status") == "ok" and juror["name"] in pairs:
                if verdict not in CLASSES:  # by the pass rule at the run's threshold
                    verdict = word("ok", decide("ok", juror.get("score"), verdict, info.pass_threshold))
                if verdict not in CLASSES:
                    continue
                pairs[juror["name"]].append((human, verdict))
    out: JsonObject = {}
    for name, items in pairs.items():
        cost = jury["per_juror"].get(name, {})
        entry: JsonObject = {"n": len(items), "prompt_tokens": cost.get("prompt_tokens", 0),
                                 "completion_tokens": cost.get("completion_tokens", 0),
                                 "model": cost.get("model"), "endpoint": cost.get("endpoint")}
        if items:
            accuracy = stats.proportion(sum(h == j for h, j in items), len(items))
            kappa = stats.cohen_kappa([h for h, _ in items], [j for _, j in items], CLASSES)
            entry.update(accuracy=accuracy.value, accuracy_ci=accuracy.ci_list(),
                         cohen_kappa=kappa.value, cohen_kappa_ci=kappa.ci_list())
            if kappa.value is None:
                entry["cohen_kappa_reason"] = kappa.reason
        else:
            entry.update(accuracy=None, cohen_kappa=None,
                         reason=f"no sample labelled in {key!r} was answered by this juror")
        out[name] = entry
    return out
