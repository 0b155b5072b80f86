"""Composite graders: HUD's ``combine`` rules over sub-graders of any kind.

weighted: positive weights are divided by their sum, negative weights stay as penalties, the reward
is sum(value * weight) (not clamped); ``any`` is the max, ``all`` the min. Repeated names all become
``name-1``, ``name-2`` (HUD's rule). A component that errors makes the sample an error (a missing part is not a
zero); a skipped (NA) component is left out and the other weights renormalised.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the judges load when a prompt is rendered
    from studio.core.judges.render import RenderedPrompt

from studio.core.graders.registry import make_scorer as make_sub_scorer
from studio.core.json_types import JsonObject
from studio.core.kinds import NATIVE, Kind, refused
from studio.core.models import CompositeGrader, GraderDefinition, Outcome, Sample
from studio.core.scoring import GradingContext, Scorer, ScorerBase


def unique_names(names: Sequence[str]) -> list[str]:
    """HUD's de-duplication: a name used once stays; every copy of a repeated name gets ``-1``,
    ``-2`` ... in order, skipping a suffixed name that is already taken or written elsewhere."""
    counts = Counter(names)
    reserved = set(names)
    used: set[str] = set()
    last_suffix: dict[str, int] = {}
    out: list[str] = []
    for name in names:
        if counts[name] == 1 and name not in used:
            final = name
        else:
            suffix = last_suffix.get(name, 0) + 1
            while f"{name}-{suffix}" in used or f"{name}-{suffix}" in reserved:
                suffix += 1
            last_suffix[name] = suffix
            final = f"{name}-{suffix}"
        used.add(final)
        out.append(final)
    return out


def combine(mode: str, parts: list[tuple[str, float, float]]) -> tuple[float, dict[str, float]]:
    """(name, weight, value) triples -> (reward, effective weights)."""
    if mode == "any":
        return max(v for _, _, v in parts), {n: w for n, w, _ in parts}
    if mode == "all":
        return min(v for _, _, v in parts), {n: w for n, w, _ in parts}
    positive = sum(w for _, w, _ in parts if w > 0)
    weights = {n: (w / positive if w > 0 and positive else w) for n, w, _ in parts}
    return sum(weights[n] * v for n, _, v in parts), weights


class PanelScorer(ScorerBase):
    """A grader made of sub-graders (a composite's components, a jury's jurors): each grades the
    whole batch at once, concurrently, and ``combine`` turns one sample's outcomes into its own.
    Batches are as small as the smallest part's, and calls in flight are the parts' sum."""

    def __init__(self, parts: Sequence[GraderDefinition], ctx: GradingContext) -> None:
        self.scorers: list[Scorer] = [make_sub_scorer(g, ctx) for g in parts]
        sizes = [s.batch_size for s in self.scorers]
        self.batch_size = None if None in sizes else min(s for s in sizes if s is not None)
        self.parallel_batches = min(s.parallel_batches for s in self.scorers)
        self.io_bound = any(s.io_bound for s in self.scorers)
        #: a panel of per-sample parts grades each sample on its own too (a jury of judges)
        self.per_sample = all(s.per_sample for s in self.scorers)

    def calls_in_flight(self) -> int | None:
        counts = [n for s in self.scorers if (n := s.calls_in_flight()) is not None]
        return sum(counts) if counts else None

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        per_part = await asyncio.gather(*(s.score_batch(samples) for s in self.scorers))
        return [self.combine([outs[i] for outs in per_part]) for i in range(len(samples))]

    def combine(self, outcomes: list[Outcome]) -> Outcome:
        raise NotImplementedError

    async def aclose(self) -> None:
        for scorer in self.scorers:
            await scorer.aclose()


class CompositeScorer(PanelScorer):
    def __init__(self, grader: CompositeGrader, ctx: GradingContext) -> None:
        super().__init__(grader.parts(), ctx)
        self.grader = grader
        self.names = unique_names([c.label for c in grader.components])

    def combine(self, outcomes: list[Outcome]) -> Outcome:
        details: list[JsonObject] = []
        parts: list[tuple[str, float, float]] = []
        errors = []
        for name, component, outcome in zip(self.names, self.grader.components, outcomes, strict=True):
            details.append({"name": name, "weight": component.weight, "status": outcome.status,
                            "score": outcome.score, "error": outcome.error, "rationale": outcome.rationale,
                            **_usage_of(outcome)})
            if outcome.status == "error" or (outcome.status != "skipped" and outcome.score is None):
                errors.append(f"{name}: {outcome.error or 'no score'}")
            elif outcome.status != "skipped" and outcome.score is not None:  # (a missing score errored above)
                parts.append((name, component.weight, float(outcome.score)))
        tokens = {"prompt_tokens": sum(o.prompt_tokens for o in outcomes),
                  "completion_tokens": sum(o.completion_tokens for o in outcomes),
                  "cached_tokens": sum(o.cached_tokens for o in outcomes),
                  "duration_ms": max((o.duration_ms for o in outcomes), default=0.0),
                  "cached": all(o.cached for o in outcomes)}
        if errors:
            return Outcome(status="error", error="; ".join(errors), details={"components": details}, **tokens)
        if not parts or (self.grader.mode == "weighted" and not any(w > 0 for _, w, _ in parts)):
            return Outcome(status="skipped", rationale="every component was skipped",
                           details={"components": details}, **tokens)
        reward, weights = combine(self.grader.mode, parts)
        for entry in details:
            entry["effective_weight"] = weights.get(entry["name"])
        scores = {name: value for name, _, value in parts}
        scores[self.grader.metric.key] = reward
        return Outcome(score=reward, scores=scores, details={"components": details, "mode": self.grader.mode},
                       rationale="\n".join(f"{d['name']}: {d['rationale']}" for d in details if d.get("rationale")) or None,
                       **tokens)

    def run_metrics(self) -> dict[str, float]:
        merged: dict[str, float] = {}
        for name, scorer in zip(self.names, self.scorers, strict=True):
            merged.update({f"{name}.{k}": v for k, v in scorer.run_metrics().items()})
        return merged

def _usage_of(outcome: Outcome) -> JsonObject:
    """A judge component's endpoint and tokens, kept in the composite's details: the run's usage
    and cost are totalled per endpoint (engine/usage.py), and the components may use different ones."""
    endpoint = outcome.details.get("endpoint")
    if endpoint is None and not (outcome.prompt_tokens or outcome.completion_tokens):
        return {}
    calls = outcome.details.get("calls") or []
    return {"endpoint": endpoint, "prompt_tokens": outcome.prompt_tokens,
            "completion_tokens": outcome.completion_tokens, "cached_tokens": outcome.cached_tokens,
            "judge_calls": sum(1 for c in calls if isinstance(c, dict) and not c.get("cached") and not c.get("failed"))}


def make_scorer(grader: CompositeGrader, ctx: GradingContext) -> CompositeScorer:
    return CompositeScorer(grader, ctx)


def render_composite(grader: CompositeGrader, sample: Sample) -> RenderedPrompt:
    """Every call inside a composite, each labelled with its component (``render_parts``)."""
    from studio.core.judges.render import render_parts

    return render_parts(grader, [c.label for c in grader.components], sample)


KIND = Kind(kind="composite", render=render_composite, cluster=True, model=CompositeGrader, family="combine", rank=10, icon=("mdi6.layers-triple-outline", "#0f7c8c"),
    platforms={name: NATIVE for name in ("hud", "openai", "promptfoo")} | {
        "adaptive": refused("an Adaptive grader holds one scoring rule; combine graders in a recipe instead")}, label="Composite", scorer=f"{__name__}:make_scorer", starter={"components": [
    {"name": "exact", "weight": 1.0,
     "grader": {"kind": "builtin", "key": "part-exact", "function": "exact_match"}},
]})
