"""Whether a run passes: the verdict under its thresholds (``--fail-under``) and the exit status CI reads.

Exit status: 0 the run passed, 1 a threshold was missed (or samples errored), 2 the run could not be
done (it did not complete: cancelled, stopped at its budget, failed, interrupted). Bad input is
refused before a run exists, by the caller, with the same 2. ``--fail-under 0.9`` is the run's
overall score (one grader's mean; a suite's overall score by its rule); ``--fail-under KEY=0.9`` one
grader's mean. NO_OVERALL says what a bare ``--fail-under`` compares in a suite without an overall
rule. The CLI and the window only print a verdict; the reasons are worded here, once.

Why in models: the verdict is a pure rule over what a run's sections state (its status, its
counts, each grader's mean and the overall score), beside the pass rule whose at-least clause it
applies (``reaches``). The engine reads the run once (engine/sections.py ``load_run``) and the
verdict is made from that answer, asking nothing more; reading ``--fail-under`` as a request is
checked is the engine's (engine/verdict.py ``parse_thresholds``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from studio.core.json_types import JsonObject

from .pass_rule import reaches

if TYPE_CHECKING:
    from .result import RunInfo

EXIT_PASS, EXIT_FAIL, EXIT_NOT_DONE = 0, 1, 2

#: a suite without an overall rule has no one score to compare: the one sentence the help and the
#: docs give for what a bare --fail-under means there
NO_OVERALL = ("a suite with no overall rule has no overall score, so --fail-under SCORE applies to each "
              "of its graders: every grader's mean must reach SCORE (a --fail-under KEY=SCORE for a "
              "grader takes precedence)")


class Thresholds(BaseModel):
    model_config = ConfigDict(defer_build=True)

    overall: float | None = None
    graders: dict[str, float] = Field(default_factory=dict)

    @property
    def any(self) -> bool:
        return self.overall is not None or bool(self.graders)


class JudgedGrader(Protocol):
    """One grader of a run as the verdict reads it (engine/sections.py ``Section``)."""

    @property
    def key(self) -> str: ...

    @property
    def version(self) -> int: ...

    @property
    def mean(self) -> float | None: ...

    @property
    def counts(self) -> dict[str, int]: ...


class Judged(Protocol):
    """A run as the verdict reads it (engine/sections.py ``RunSections``): the stored run, its
    graders, and its one score when it has one."""

    @property
    def info(self) -> RunInfo: ...

    @property
    def sections(self) -> Sequence[JudgedGrader]: ...

    @property
    def suite(self) -> bool: ...

    @property
    def has_overall_score(self) -> bool: ...

    @property
    def overall_mean(self) -> float | None: ...

    @property
    def stopped(self) -> str | None: ...


class GraderCheck(BaseModel):
    model_config = ConfigDict(defer_build=True)

    key: str
    version: int
    mean: float | None
    fail_under: float | None
    passed: bool


class Verdict(BaseModel):
    """What ``--json`` shows under "verdict" (the first four fields kept from before suites)."""

    model_config = ConfigDict(defer_build=True)

    passed: bool
    mean: float | None
    fail_under: float | None
    reasons: list[str]
    outcome: Literal["pass", "fail", "not done"]
    exit_code: int
    #: one sentence for stderr: why the step passed or failed
    sentence: str
    graders: list[GraderCheck] = Field(default_factory=list)
    grader_thresholds: dict[str, float] = Field(default_factory=dict)
    #: what ``fail_under`` was compared with: the run's overall score, or each grader's mean (a
    #: suite without an overall rule, NO_OVERALL)
    fail_under_applies_to: Literal["overall", "each grader"] = "overall"


def judge(run: Judged, thresholds: Thresholds | None = None) -> Verdict:
    """The run's verdict under ``thresholds`` (None: only completion and errors count)."""
    thresholds = thresholds or Thresholds()
    info = run.info
    not_done: list[str] = []
    failed: list[str] = []
    if info.status != "completed":
        stopped = run.stopped
        not_done.append(f"the run ended {info.status}" + (f" ({stopped})" if stopped else ""))
    errored = info.counts.get("error", 0) + info.counts.get("invalid", 0)
    if errored:
        by_grader = [f"{s.key} {n}" for s in run.sections if run.suite
                     and (n := s.counts.get("error", 0) + s.counts.get("invalid", 0))]
        failed.append(f"{errored} sample(s) errored or were invalid"
                      + (f" (by grader: {', '.join(by_grader)})" if by_grader else ""))
    mean = run.overall_mean
    head = _head(run, mean, thresholds)  # what the verdict states: the figures and their thresholds
    # a suite without an overall rule: a bare --fail-under is every grader's (NO_OVERALL)
    each = thresholds.overall if not run.has_overall_score else None
    if thresholds.overall is not None and each is None:
        if mean is None:
            failed.append(f"no mean score to compare with --fail-under {thresholds.overall:g}")
        elif not reaches(mean, thresholds.overall):
            what = "overall score" if run.suite else "mean"
            failed.append(f"{what} {mean:.4f} is below --fail-under {thresholds.overall:g}")
    checks = []
    for section in run.sections:
        own = thresholds.graders.get(section.key)
        limit = own if own is not None else each
        ok = True
        if limit is not None:
            option = f"--fail-under {section.key}={limit:g}" if own is not None else f"--fail-under {limit:g}"
            if section.mean is None:
                ok = False
                failed.append(f"{section.key} has no mean score to compare with {option}")
            elif not reaches(section.mean, limit):
                ok = False
                failed.append(f"{section.key} mean {section.mean:.4f} is below {option}")
        checks.append(GraderCheck(key=section.key, version=section.version, mean=section.mean,
                                  fail_under=limit, passed=ok))
    reasons = not_done + failed
    code = EXIT_NOT_DONE if not_done else EXIT_FAIL if failed else EXIT_PASS
    outcome: Literal["pass", "fail", "not done"] = ("not done" if not_done else "fail" if failed else "pass")
    sentence = (f"{head}: PASS" if code == EXIT_PASS else
                f"{head}: {'NOT DONE' if code == EXIT_NOT_DONE else 'FAIL'}: " + "; ".join(reasons))
    return Verdict(passed=not reasons, mean=mean, fail_under=thresholds.overall, reasons=reasons,
                   outcome=outcome, exit_code=code, sentence=sentence,
                   graders=checks, grader_thresholds=dict(thresholds.graders),
                   fail_under_applies_to="overall" if run.has_overall_score else "each grader")


def _head(run: Judged, mean: float | None, thresholds: Thresholds) -> str:
    """The verdict sentence's head: the run's score (or its graders' means) and the thresholds asked."""
    limits = []
    if run.has_overall_score:
        head = f"verdict: {'overall score' if run.suite else 'mean'} {'none' if mean is None else f'{mean:.4f}'}"
        if thresholds.overall is not None:
            limits.append(f"threshold {thresholds.overall:g}")
    else:  # a suite without an overall rule: its graders' means
        head = "verdict: " + ", ".join(f"{s.key} mean {'none' if s.mean is None else f'{s.mean:.4f}'}"
                                       for s in run.sections)
        if thresholds.overall is not None:
            limits.append(f"threshold {thresholds.overall:g} for each grader")
    limits += [f"{k} threshold {v:g}" for k, v in thresholds.graders.items()]
    return head + "".join(f", {x}" for x in limits)


def verdict_line(verdict: Verdict | JsonObject) -> str | None:
    """The line a terminal prints on stderr, or None when nothing was asked and all is well; a
    verdict read back from JSON (a stored run's) is checked by ``Verdict`` first."""
    v = verdict if isinstance(verdict, Verdict) else Verdict.model_validate(verdict)
    if v.passed and v.fail_under is None and not v.grader_thresholds:
        return None
    return v.sentence
