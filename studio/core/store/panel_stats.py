"""Run aggregates of the judges that compare or combine judges: pairwise judges and juries.

Why from stored results: a run is resumable and may be graded in several processes, so the
numbers are computed from what every sample's details say (both orders of a pairwise judge; each
juror's verdict, score and tokens), never from one scorer's memory. Every share carries a 95%
interval; a number that cannot be computed is ``None`` with the reason, never 0. ``stats`` (numpy,
scipy) is imported only when a run of these kinds asks: opening a library must not pay for it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text

from studio.core.json_types import JsonObject

if TYPE_CHECKING:
    from studio.core.stats import Stat

PAIRWISE_KEYS = ("win_a", "win_b", "tie", "inconsistent", "position_consistency", "first_position_rate")
_VERDICT_KEY = {"A": "win_a", "B": "win_b", "TIE": "tie", "inconsistent": "inconsistent"}


def panel_aggregates(conn: Connection, run_id: int) -> JsonObject:
    """``pairwise`` / ``jury`` entries for a run whose results carry a pairwise or a jury panel in
    their details; {} for every other run. Read from the details, not from a list of kinds: a new
    kind that writes the same details is aggregated the same way."""
    rows = conn.execute(text(
        """SELECT json_extract(details, '$.pairwise.verdict'), json_extract(details, '$.pairwise.first_picks'),
                  json_extract(details, '$.pairwise.decisive')
           FROM results WHERE run_id = :r AND json_extract(details, '$.pairwise.verdict') IS NOT NULL"""),
        {"r": run_id}).all()
    if rows:
        return pairwise_summary([(v, int(fp or 0), int(d or 0)) for v, fp, d in rows])
    panels = conn.execute(text(
        """SELECT json_extract(details, '$.jury') FROM results
           WHERE run_id = :r AND json_extract(details, '$.jury') IS NOT NULL ORDER BY sample_idx"""),
        {"r": run_id}).scalars().all()
    # a panel is a JSON object (checked here, not with SQLite's json_type, which PostgreSQL lacks)
    juries = [panel for panel in (json.loads(p) for p in panels if p.lstrip().startswith("{"))
              if isinstance(panel, dict)]
    if juries:
        return {"jury": jury_summary(juries)}
    return {}


def pairwise_summary(rows: list[tuple[str, int, int]]) -> JsonObject:
    """(sample verdict, picks of the first-shown answer, decisive order verdicts) per sample."""
    from studio.core import stats

    n = len(rows)
    counts = {key: 0 for key in _VERDICT_KEY.values()}
    for verdict, _, _ in rows:
        counts[_VERDICT_KEY.get(verdict, "inconsistent")] += 1
    shares = {key: stats.proportion(count, n) for key, count in counts.items()}
    shares["position_consistency"] = stats.proportion(n - counts["inconsistent"], n)
    shares["first_position_rate"] = first_position_rate(rows)
    return {
        "pairwise": {key: shares[key].value for key in PAIRWISE_KEYS},
        "pairwise_ci": {key: shares[key].ci_list() for key in PAIRWISE_KEYS},
        "pairwise_n": n,
        "pairwise_undefined": {key: s.reason for key, s in shares.items() if s.value is None},
    }


def first_position_rate(rows: list[tuple[str, int, int]]) -> Stat:
    """Share of decisive order verdicts that picked the answer shown first; the interval resamples
    samples (a sample's two orders are not independent), vectorised for large runs."""
    import numpy as np

    from studio.core import stats

    picks = np.array([fp for _, fp, _ in rows], dtype=float)
    decisive = np.array([d for _, _, d in rows], dtype=float)
    if not decisive.sum():
        return stats.Stat(None, "no order verdict picked an answer (every one was a tie)")
    result = stats.Stat(float(picks.sum() / decisive.sum()))
    if len(rows) < 2:
        return result
    values = []
    for chosen in stats.resample_chunks(len(rows), 500, stats.DEFAULT_SEED):
        total = decisive[chosen].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            values.append(np.where(total > 0, picks[chosen].sum(axis=1) / total, np.nan))
    return stats.with_interval(result, np.concatenate(values))


def jury_summary(panels: list[JsonObject]) -> JsonObject:
    """Inter-judge agreement (Fleiss κ on verdicts, Krippendorff α on scores) and each juror's
    answers, failures and tokens."""
    from studio.core import stats

    names: list[str] = []
    for panel in panels:
        for juror in panel.get("jurors", []):
            if juror["name"] not in names:
                names.append(juror["name"])
    per: dict[str, JsonObject] = {n: {"answered": 0, "failed": 0, "abstained": 0, "prompt_tokens": 0,
                                          "completion_tokens": 0, "passed": 0, "model": None, "endpoint": None}
                                      for n in names}
    verdict_rows: list[list[str]] = []
    score_units: list[list[float | None]] = []
    ties = 0
    for panel in panels:
        by_name = {j["name"]: j for j in panel.get("jurors", [])}
        ties += bool(panel.get("tie"))
        for name, juror in by_name.items():
            entry = per[name]
            entry["prompt_tokens"] += int(juror.get("prompt_tokens") or 0)
            entry["completion_tokens"] += int(juror.get("completion_tokens") or 0)
            entry["model"] = entry["model"] or juror.get("model")
            entry["endpoint"] = entry["endpoint"] or juror.get("endpoint")
            if juror.get("status") == "ok":
                entry["answered"] += 1
                entry["passed"] += juror.get("verdict") == "PASS"  # graders/jury.juror_verdict: the pass rule
            elif juror.get("status") == "skipped":
                entry["abstained"] += 1
            else:
                entry["failed"] += 1
        verdicts = [by_name.get(n, {}).get("verdict") for n in names]
        if all(v is not None for v in verdicts):
            verdict_rows.append(verdicts)
        score_units.append([by_name.get(n, {}).get("score") if by_name.get(n, {}).get("status") == "ok" else None
                            for n in names])
    kappa = stats.fleiss_kappa_interval(verdict_rows)
    alpha = stats.krippendorff_alpha_with_interval(score_units)
    return {
        "jurors": names,
        "samples": len(panels),
        "ties": ties,
        "fleiss_kappa": kappa.value, "fleiss_kappa_ci": kappa.ci_list(), "fleiss_kappa_n": len(verdict_rows),
        "krippendorff_alpha": alpha.value, "krippendorff_alpha_ci": alpha.ci_list(),
        "undefined": {k: s.reason for k, s in (("fleiss_kappa", kappa), ("krippendorff_alpha", alpha))
                      if s.value is None},
        "per_juror": per,
    }
