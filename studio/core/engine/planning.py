"""From what a person names (a grader key, a suite key, or several grader keys) to a run's plan.

``named_graders`` answers which graders (with their definitions) a name, a list of keys or a resumed
run grades, read once for a request's checks and the dry run; ``one_off_suite`` turns a list of
grader keys into a checked ``SuiteDefinition``;
``record_suite_run`` writes the run with one ``run_graders`` row per slot (each grader's version
fixed at the start, so a resume grades with the same ones); ``plan_of`` reads a stored run back into
the ``RunPlan`` the executors grade.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from studio.core.json_types import JsonObject
from studio.core.models import CompositeGrader, GraderDefinition, RunInfo, parse_grader
from studio.core.models.run_size import samples_to_grade
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.datasets import DatasetRecord
from studio.core.store.run_graders import run_graders
from studio.core.store.suites import InvalidSuite
from studio.core.store.targets import targets

__all__ = ["NamedGrader", "named_graders", "one_off_suite", "plan_of", "record_suite_run", "run_total"]

from .plan import PlannedGrader, RunPlan
from .preflight import check_run_configuration
from .run_settings import RequestRefused

ONE_OFF_KEY = "graders"  # the key a ``run --graders a,b,c`` suite is checked under (never stored)


def one_off_suite(keys: list[str], overall: str = "none", overall_grader: str | None = None) -> SuiteDefinition:
    """``run --graders a,b,c``: a suite that is not saved (duplicates refused like a saved one's)."""
    keys = [k.strip() for k in keys if k.strip()]
    if not keys:
        raise InvalidSuite("--graders needs at least one grader key")
    try:
        return SuiteDefinition(key=ONE_OFF_KEY, graders=[SuiteMember(grader=k) for k in keys],
                               overall=overall, overall_grader=overall_grader)
    except ValueError as exc:
        raise InvalidSuite(_first_error(exc)) from None


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        return str(first.get("msg", exc)).removeprefix("Value error, ")
    return str(exc)


def record_suite_run(library: Library, suite: SuiteDefinition, dataset_name: str, options: _SuiteRunOptions, *,
                     suite_version: int | None = None, saved: bool = True) -> RunInfo:
    """Record a suite run (status pending): every grader resolved to a version and checked first."""
    library.suites.check(suite, own_key=False)  # graders missing or trashed since, thresholds, composite
    dataset = library.datasets.get(dataset_name)
    slots: list[dict[str, object]] = []
    first: tuple[int, int] | None = None
    for member in suite.graders:
        record = library.graders.get(member.grader)  # NotFound (a sentence): missing or in the trash
        version = member.version or record.current_version
        definition = library.graders.version(member.grader, version).definition
        check_run_configuration(library, definition, options.endpoint)
        slots.append({"grader_id": record.id, "grader_key": record.key, "grader_version": version,
                      "weight": member.weight, "threshold": member.threshold})
        first = first or (record.id, version)
    composite = None
    if suite.overall == "composite" and suite.overall_grader:
        composite = library.graders.get(suite.overall_grader).definition.model_dump(mode="json")
    total = run_total(dataset, options)
    plan = {"key": suite.key if saved else None, "version": suite_version, "overall": suite.overall,
            "overall_grader": suite.overall_grader, "composite": composite, "graders": suite.grader_keys()}
    assert first is not None
    return library.runs.create(first[0], first[1], dataset.id, total, endpoint=options.endpoint,
                               settings=options.model_dump(mode="json", exclude_none=True), slots=slots, suite=plan)


@dataclass(frozen=True)
class NamedGrader:
    """A grader a run grades, at its version, with that version's definition."""

    key: str
    version: int
    definition: GraderDefinition


def named_graders(library: Library, name: str | None, version: int | None = None,
                  graders: list[str] | None = None, *, resume: int | None = None) -> list[NamedGrader]:
    """The graders a run would grade, each with its definition, as the library answers it: those of
    the run ``resume`` (``store.run_graders``), else of ``name`` (a grader or a suite key) or
    ``graders`` (``store.targets``, or its sentence saying what the name is not). Read once, for a
    request's checks and the dry run alike (``NotFound``: a version that is not there)."""
    if resume is not None:
        graded = [(g.key, g.version) for g in run_graders(library, resume)]
    else:
        graded = targets(library, name, version, graders)
    return [NamedGrader(key, number, library.graders.version(key, number).definition) for key, number in graded]


class _Samples(Protocol):
    """What ``run_total`` reads of a run's options (``runner.RunOptions``)."""

    limit: int | None
    samples: list[int] | None


class _SuiteRunOptions(_Samples, Protocol):
    """What ``record_suite_run`` reads of a new run's options (``runner.RunOptions``, which imports
    this module): the run's endpoint and its settings as they are stored."""

    endpoint: str | None

    def model_dump(self, *, mode: str, exclude_none: bool) -> JsonObject: ...


def run_total(dataset: DatasetRecord, options: _Samples) -> int:
    """How many samples a new run grades (``models.run_size``); a run that would grade none is
    refused before it is recorded (``runs list`` would show a run "completed" with nothing graded,
    and CI would read it as a pass)."""
    count = dataset.sample_count
    total = samples_to_grade(count, options.limit, options.samples)
    if total > 0:
        return total
    if count == 0:
        raise RequestRefused(f"dataset {dataset.name!r} has no samples: there is nothing to grade "
                             "(import rows into it, or pick another dataset); no run was recorded")
    raise RequestRefused(f"none of the samples asked for is in dataset {dataset.name!r} "
                         f"({count} samples): there is nothing to grade; no run was recorded")


def plan_of(library: Library, info: RunInfo, pass_threshold: float) -> RunPlan:
    """The stored run's plan: its graders at the versions it started with."""
    graders = [
        PlannedGrader(slot=row.slot, key=row.grader_key, version=row.grader_version,
                      definition=library.graders.version(row.grader_key, row.grader_version).definition,
                      weight=row.weight, threshold=row.threshold)
        for row in library.runs.slots(info.id)
    ]
    if not graders:  # a run recorded before run_graders existed and missing from the backfill
        graders = [PlannedGrader(0, info.grader_key, info.grader_version,
                                 library.graders.version(info.grader_key, info.grader_version).definition)]
    suite = info.suite
    if suite is None:
        return RunPlan(graders[:1], pass_threshold=pass_threshold)
    composite = suite.get("composite")
    parsed = parse_grader(composite) if composite else None
    return RunPlan(graders, overall=str(suite.get("overall") or "none"),
                   # a stored suite's overall composite, narrowed where it is read back (a boundary, not a kind ladder)
                   composite=parsed if isinstance(parsed, CompositeGrader) else None, pass_threshold=pass_threshold)
