"""From what a person names (a grader key, a suite key, or several grader keys) to a run's plan.

``suite_for`` turns a suite key or a list of grader keys into a checked ``SuiteDefinition``;
``record_suite_run`` writes the run with one ``run_graders`` row per slot (each grader's version
fixed at the start, so a resume grades with the same ones); ``plan_of`` reads a stored run back into
the ``RunPlan`` the executors grade.
"""

from __future__ import annotations

from typing import Any

from studio.core.models import CompositeGrader, RunInfo, parse_grader
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.near_names import did_you_mean
from studio.core.store import Library, LibraryError, NotFound
from studio.core.store.suites import InvalidSuite

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


def targets(library: Library, name: str | None, version: int | None = None,
            graders: list[str] | None = None) -> list[tuple[str, int]]:
    """(key, version) of every grader a run would grade: ``graders`` (``run --graders a,b,c``), a
    suite's members (each at its pinned or current version; ``version`` is then the suite's), or the
    one grader ``name`` (a grader wins when a key is both, as ``start_run`` decides)."""
    if graders is not None:
        keys = [k.strip() for k in graders if k.strip()]
        return [(k, library.graders.get(k).current_version) for k in keys]
    if not name:
        raise InvalidSuite("name a grader or a suite to run")
    try:
        record = library.graders.get(name)
    except LibraryError as exc:
        if not library.suites.exists(name):
            _refuse_trashed_suite(library, name)
            raise unknown_target(library, name, exc) from None
        suite = library.suites.version(name, version or library.suites.get(name).current_version)
        return [(m.grader, m.version or library.graders.get(m.grader).current_version)
                for m in suite.definition.graders]
    return [(record.key, version or record.current_version)]


def unknown_target(library: Library, name: str, error: LibraryError) -> LibraryError:
    """What ``run NAME`` says when NAME is neither a grader nor a suite: near keys of both offered
    (a grader in the trash keeps its own sentence)."""
    if "in the trash" in str(error):
        return error
    keys = [r.key for r in library.graders.list()] + [r.key for r in library.suites.list()]
    return NotFound(f"no grader or suite with key {name!r}{did_you_mean(name, keys)}")


def _refuse_trashed_suite(library: Library, name: str) -> None:
    """A suite in the trash does not run: say so rather than that no grader has that key."""
    try:
        library.suites.get(name, include_deleted=True)
    except LibraryError:
        return
    raise InvalidSuite(f"suite {name!r} is in the trash; restore it first (grader-studio suites restore {name})")


def record_suite_run(library: Library, suite: SuiteDefinition, dataset_name: str, options: Any, *,
                     suite_version: int | None = None, saved: bool = True) -> RunInfo:
    """Record a suite run (status pending): every grader resolved to a version and checked first."""
    library.suites.check(suite, own_key=False)  # graders missing or trashed since, thresholds, composite
    dataset = library.datasets.get(dataset_name)
    slots: list[dict[str, Any]] = []
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


def run_total(dataset: Any, options: Any) -> int:
    """How many samples a new run grades (the dataset's, at most ``limit``, or the ``samples`` asked
    for that it has); a run that would grade none is refused before it is recorded (``runs list``
    would show a run "completed" with nothing graded, and CI would read it as a pass)."""
    count = dataset.sample_count
    total = count if options.limit is None else min(options.limit, count)
    if options.samples is not None:
        total = len({i for i in options.samples if 0 <= i < count})
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
