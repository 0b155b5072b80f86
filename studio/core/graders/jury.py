"""The jury: several judges grade each sample concurrently and their scores are aggregated.

Why a jury: a panel of smaller, different judges can beat one large judge on cost and variance
(Verga et al. 2024, "Replacing Judges with Juries"). Each juror keeps its own endpoint and model;
one juror failing marks that juror on the sample (``details.jury.jurors``), and the sample fails
only when fewer than the quorum answered. The stored details hold every juror's score, verdict and
tokens, from which the run's inter-judge agreement and each juror's cost are computed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the judges load when a prompt is rendered
    from studio.core.judges.render import RenderedPrompt

from studio.core.graders.composite import PanelScorer
from studio.core.json_types import JsonObject
from studio.core.kinds import NATIVE, Kind, approximated
from studio.core.models import JuryGrader, Outcome, Sample
from studio.core.models.pass_rule import decide, decide_outcome, verdict_in
from studio.core.scoring import GradingContext


def aggregate(grader: JuryGrader, answered: list[tuple[str, float, float]],
              passed: list[bool] | None = None) -> tuple[float, bool]:
    """(name, weight, score) of the jurors that answered -> (the sample's score, whether it tied).
    ``passed``: whether each passed by the pass rule (models/pass_rule, its own verdict first), for
    the majority; without it, by score against the jury's threshold."""
    scores = [s for _, _, s in answered]
    if grader.aggregation == "mean":
        return sum(scores) / len(scores), False
    if grader.aggregation == "min":
        return min(scores), False
    if grader.aggregation == "weighted":
        total = sum(w for _, w, _ in answered)
        return sum(w * s for _, w, s in answered) / total, False
    if passed is None:
        passed = [decide("ok", s, None, grader.threshold) == "pass" for s in scores]
    passes = sum(passed)
    fails = len(scores) - passes
    if passes == fails:
        return 0.5, True
    return (1.0 if passes > fails else 0.0), False


def juror_verdict(outcome: Outcome, threshold: float) -> str | None:
    """A juror's categorical verdict: its own (PASS/FAIL/...) when it gave one, else PASS or FAIL
    by the pass rule (None without a score)."""
    own = verdict_in(outcome.details)
    if isinstance(own, str):
        return own
    return {"pass": "PASS", "fail": "FAIL"}.get(decide_outcome(outcome, threshold))


class JuryScorer(PanelScorer):
    """Jurors grade each batch concurrently (``PanelScorer``), each within its own endpoint's
    concurrency limit; ``combine`` is the jury's verdict on one sample."""

    def __init__(self, grader: JuryGrader, ctx: GradingContext) -> None:
        super().__init__(grader.parts(), ctx)
        self.grader = grader
        self.names = grader.juror_names()
        self.io_bound = True  # jurors are judges: their calls wait on servers, not on a core

    def combine(self, outcomes: list[Outcome]) -> Outcome:
        jurors: list[JsonObject] = []
        answered: list[tuple[str, float, float]] = []
        passed: list[bool] = []
        failed: list[str] = []
        for name, juror, outcome in zip(self.names, self.grader.jurors, outcomes, strict=True):
            entry: JsonObject = {
                "name": name, "status": outcome.status, "score": outcome.score,
                "verdict": juror_verdict(outcome, self.grader.threshold) if outcome.status == "ok" else None,
                "prompt_tokens": outcome.prompt_tokens, "completion_tokens": outcome.completion_tokens,
                "model": outcome.details.get("model"), "endpoint": outcome.details.get("endpoint"),
            }
            if outcome.status == "skipped":
                entry["verdict"] = juror_verdict(outcome, self.grader.threshold) or "NA"
            if outcome.error:
                entry["error"] = outcome.error
            if outcome.rationale:
                entry["rationale"] = outcome.rationale
            jurors.append(entry)
            if outcome.status == "ok" and outcome.score is not None:
                answered.append((name, juror.weight, float(outcome.score)))
                passed.append(decide_outcome(outcome, self.grader.threshold) == "pass")
            elif outcome.status != "skipped":
                failed.append(f"{name}: {outcome.error or 'no score'}")
        tokens = {"prompt_tokens": sum(o.prompt_tokens for o in outcomes),
                  "completion_tokens": sum(o.completion_tokens for o in outcomes),
                  "duration_ms": max((o.duration_ms for o in outcomes), default=0.0),
                  "cached": all(o.cached for o in outcomes)}
        details = {"jury": {"aggregation": self.grader.aggregation, "jurors": jurors,
                            "answered": len(answered), "quorum": self.grader.needed}}
        if len(answered) < self.grader.needed:
            why = "; ".join(failed) if failed else "the jurors abstained (NA)"
            status = "error" if failed else "skipped"
            message = (f"only {len(answered)} of {len(self.names)} jurors answered, fewer than the quorum "
                       f"of {self.grader.needed} ({why})")
            if status == "skipped":
                return Outcome(status="skipped", rationale=message, details=details, **tokens)
            return Outcome(status="error", error=message, details=details, **tokens)
        value, tied = aggregate(self.grader, answered, passed)
        details["jury"]["tie"] = tied
        scores = {name: score for name, _, score in answered}
        scores[self.grader.metric.key] = value
        lines = [f"{e['name']}: {e['verdict'] or e['status']} ({e.get('rationale') or e.get('error') or ''})".rstrip(" ()")
                 for e in jurors]
        if tied:
            lines.insert(0, "the jurors are evenly split: scored 0.5")
        if failed:
            lines.append(f"jurors that failed: {'; '.join(failed)}")
        return Outcome(score=value, scores=scores, details=details, rationale="\n".join(lines), **tokens)

    def run_metrics(self) -> dict[str, float]:
        merged: dict[str, float] = {}
        for name, scorer in zip(self.names, self.scorers, strict=True):
            merged.update({f"{name}.{k}": v for k, v in scorer.run_metrics().items()})
        return merged

def make_scorer(grader: JuryGrader, ctx: GradingContext) -> JuryScorer:
    return JuryScorer(grader, ctx)


def jury_elsewhere(label: str) -> str:
    """Why a target that does not name the jury refuses it (no "export it to": whether HUD or Inspect can
    hold a jury depends on its jurors and aggregation)."""
    return (f"{label} holds one judge per grader; a jury (several judges and an aggregation) has no {label} "
            "form. HUD's combine holds a jury of criteria judges and Inspect AI's multi_scorer one of "
            "letter judges; otherwise export its jurors one by one")


def render_jury(grader: JuryGrader, sample: Sample) -> RenderedPrompt:
    """Every juror's calls, labelled with the juror (``render_parts``)."""
    from studio.core.judges.render import render_parts

    return render_parts(grader, grader.juror_names(), sample,
                        [f"the jurors are asked concurrently; {grader.aggregation} decides"])


KIND = Kind(kind="jury", render=render_jury, probes=True, model=JuryGrader, family="combine", rank=20, icon=("mdi6.account-group-outline", "#0f7c8c"),
    platforms={"hud": approximated("HUD's combine of the jurors' LLMJudgeGraders (weighted by the jurors' weights)"),
               "inspect": NATIVE}, elsewhere=jury_elsewhere, label="Jury", scorer=f"{__name__}:make_scorer", starter={
    "aggregation": "majority",
    "jurors": [
        {"name": "juror-1", "grader": {"kind": "binary_judge", "key": "juror-1",
                                       "criteria": "The response answers the user's question correctly."}},
        {"name": "juror-2", "grader": {"kind": "binary_judge", "key": "juror-2",
                                       "criteria": "The response is factually correct and agrees with the reference."}},
        {"name": "juror-3", "grader": {"kind": "binary_judge", "key": "juror-3",
                                       "criteria": "The response answers the question without errors."}},
    ]})
