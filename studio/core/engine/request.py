"""A run as one request: what to grade, on what, with which thresholds, caps, reports and executor.

Why: the options of one ``run`` used to climb from the engine back up to the CLI and down again (the
CLI checked thresholds, report paths, caps, the executor and the baseline itself, then built the
engine's options, then wrote the reports). Now the CLI (``run``, ``runs report``, ``run --dry-run``)
and the window build a ``RunRequest``; the engine checks it before any run exists (``check``: every
refusal a ``RequestRefused``, exit status 2), records or resumes the run (``start``) and concludes it
(``conclude``: the run's sections with their one summary, the verdict, the usage, the report files).
The CLI only parses arguments into the request and prints what comes back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from studio.core.json_types import JsonObject
from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD
from studio.core.safe_files import write_text

from .reports import Generated
from .run_settings import RequestRefused, RunSettings

if TYPE_CHECKING:
    from studio.core.models import RunInfo
    from studio.core.store import Library
    from studio.core.store.datasets import DatasetRecord

    from .budget import Caps
    from .planning import NamedGrader
    from .runner import RunOptions
    from .sections import RunSections
    from .usage import Usage
    from .verdict import Thresholds, Verdict


class Reports(BaseModel):
    """The report files and annotations asked for (``--junit``, ``--markdown``, ``--github``, ``--baseline``)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    junit: Path | None = None
    markdown: Path | None = None
    github: bool = False
    baseline: int | None = None
    #: the generation the run's outputs came from (``run --generate-with``): said in the reports
    generated: Generated | None = None


class RunRequest(RunSettings):
    """One run as asked: a grader or a suite (``grader``), or a one-off suite (``graders``), on a
    dataset; or ``resume`` an existing run. Caps and the executor may change on a resume; the rest
    is the run's own from then on."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    grader: str | None = None
    #: a version number counts from 1 (a stored run's options keep whatever they were started with)
    version: int | None = Field(default=None, ge=1)
    graders: list[str] | None = None
    #: a one-off suite's overall rule: none, mean, all-pass, or composite with ``overall_grader``
    overall: str | None = None
    overall_grader: str | None = None
    dataset: str | None = None
    resume: int | None = None
    #: with ``resume``: grade the samples whose result is an error again (``--retry-errors``)
    retry_errors: bool = False
    #: finite: it is the line every result is judged against (and is written into SQL)
    pass_threshold: float = Field(default=DEFAULT_PASS_THRESHOLD, allow_inf_nan=False)
    #: None: this machine for a new run, the run's own for a resume
    executor: Literal["local", "ray"] | None = None
    ray_address: str | None = None
    max_cost: Decimal | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    #: ``--fail-under`` values as typed: ``0.9`` (the overall score) or ``KEY=0.9``
    fail_under: list[str] = Field(default_factory=list)
    reports: Reports = Field(default_factory=Reports)

    @field_validator("max_cost", mode="before")
    @classmethod
    def _money(cls, value: object) -> object:
        """``--max-cost`` as typed: an exact amount of US dollars (budget.parse_money's sentence when not)."""
        if not isinstance(value, str):
            return value
        from .budget import BudgetError, parse_money

        try:
            return parse_money(value, "--max-cost")
        except BudgetError as exc:  # (a ValueError: pydantic would restate it)
            raise RequestRefused(str(exc)) from None

    @classmethod
    def asked(cls, **fields: object) -> RunRequest:
        """The request from what the CLI or the window was given: a value out of its range (a limit
        or concurrency under 1, a threshold that is not a finite number) is refused with a sentence
        naming the option, as every other refusal (exit 2), never a traceback."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise RequestRefused(option_problem(exc)) from None

    # -- what the request asks -------------------------------------------------------------------
    def shape_problem(self) -> str | None:
        """What is wrong with the request's shape (before the library is read), or None."""
        if self.retry_errors and self.resume is None:
            return "--retry-errors goes with --resume RUN_ID (it grades a run's errored samples again)"
        if self.resume is not None:
            if self.grader or self.dataset or self.graders:
                return "--resume takes a run id alone"
            return None
        if self.graders is not None:
            if self.grader is not None:
                return "run --graders a,b,c takes DATASET alone (no GRADER)"
            if not self.dataset:
                return "run --graders a,b,c needs DATASET"
        elif not (self.grader and self.dataset):
            return "run needs GRADER (or a suite) and DATASET (or --resume RUN_ID)"
        if self.overall is not None and self.graders is None:
            return "--overall goes with --graders (a saved suite has its own rule)"
        return None

    def executor_name(self, info: RunInfo | None = None) -> str:
        """Where the run grades: as asked, else the resumed run's own, else this machine."""
        if self.executor is not None:
            return self.executor
        if self.ray_address:
            return "ray"
        return str((info.settings if info is not None else {}).get("executor", "local"))

    def options(self) -> RunOptions:
        """The engine's options of a new run (runner.RunOptions, stored as the run's settings)."""
        from .runner import RunOptions

        shared = self.model_dump(include=set(RunSettings.model_fields))
        return RunOptions(**shared, executor=self.executor_name(),
                          ray_address=self.ray_address, max_cost=self.max_cost, max_tokens=self.max_tokens,
                          graders=self.graders, overall=self.overall, overall_grader=self.overall_grader)

    # -- checked before any run exists -----------------------------------------------------------
    def check(self, library: Library) -> Checked:
        """Every refusal before a run exists (``RequestRefused``, or the library's own ``NotFound``),
        in three steps: what needs no library (the shape, thresholds, report paths and the executor
        asked, so a bad ``--fail-under`` or ``--junit`` is refused before the library is read), the
        library read once (``named_in``: the graders with their definitions, the dataset, a resumed
        run, the baseline), then the rules over what it answered (a run of nothing, the thresholds'
        grader keys, caps, approved endpoints)."""
        from .budget import Caps
        from .planning import run_total
        from .reports import check_report_path
        from .verdict import check_keys, parse_thresholds

        problem = self.shape_problem()
        if problem is not None:
            raise RequestRefused(problem)
        thresholds = parse_thresholds(self.fail_under)
        junit = check_report_path(self.reports.junit, "--junit") if self.reports.junit else None
        markdown = check_report_path(self.reports.markdown, "--markdown") if self.reports.markdown else None
        if self.resume is None or self.executor is not None or self.ray_address is not None:
            _check_executor(self.executor_name())  # as asked (a resumed run's own was checked as it started)
        named = named_in(library, self)
        if named.dataset is not None:  # a new run of nothing is refused
            run_total(named.dataset, self.options())
        check_keys(thresholds, [g.key for g in named.graders])
        executor = self.executor_name(named.previous)
        _check_caps(library, Caps(max_cost=self.max_cost, max_tokens=self.max_tokens), executor, named)
        _check_approvals(library, named)
        return Checked(request=self, thresholds=thresholds, junit=junit, markdown=markdown,
                       baseline=self.reports.baseline, executor=executor, named=named)

    # -- the run ---------------------------------------------------------------------------------
    def start(self, library: Library, checked: Checked | None = None) -> RunInfo:
        """Record the new run (status pending), or move a resumed one to the caps and executor asked;
        checked first unless ``checked`` is given."""
        from .runner import start_run

        checked = checked or self.check(library)
        if self.resume is None:
            return start_run(library, self.grader, str(self.dataset), self.options())
        from .preflight import check_keys

        for grader in checked.named.graders:  # its endpoints' key variables, before its first call
            check_keys(library, grader.definition, checked.named.endpoint,
                       f"run {self.resume} was not resumed and nothing was graded")
        changes: JsonObject = {}  # merged into the run's stored settings (a JSON column)
        if self.executor is not None or self.ray_address is not None:
            changes.update(executor=checked.executor, ray_address=self.ray_address)
        if self.max_cost is not None:
            changes["max_cost"] = str(self.max_cost)
        if self.max_tokens is not None:
            changes["max_tokens"] = self.max_tokens
        if changes:
            return library.runs.update_settings(self.resume, changes)
        return library.runs.get(self.resume)


def named_in(library: Library, request: RunRequest) -> Named:
    """What the library answers for ``request``, read once: the graders it names (a grader's, a
    suite's or ``--graders``'; a resumed run's own) with their definitions, a new run's dataset,
    a resumed run, and that ``--baseline`` is a run of the same dataset (read whole as the run
    concludes). A name that names nothing is the library's sentence (``targets``)."""
    from studio.core.store import LibraryError

    from .planning import named_graders

    previous = None
    if request.resume is not None:
        previous = library.runs.get(request.resume)
        if request.retry_errors and previous.status == "completed" and not previous.counts.get("error"):
            raise RequestRefused(f"run {request.resume} is already complete and has no errored samples to retry")
        dataset, endpoint = previous.dataset, previous.settings.get("endpoint")
    else:
        dataset, endpoint = str(request.dataset), request.endpoint
    graders = named_graders(library, request.grader, request.version, request.graders, resume=request.resume)
    if request.reports.baseline is not None:
        try:
            compared = library.runs.get(request.reports.baseline).dataset
        except LibraryError as exc:
            raise RequestRefused(f"--baseline: {exc}") from None
        if compared != dataset:
            raise RequestRefused(f"--baseline: --baseline run {request.reports.baseline} graded dataset "
                                 f"{compared!r}, not {dataset!r}: a baseline must be a run of the same dataset")
    record = library.datasets.get(dataset) if previous is None else None
    return Named(graders=graders, endpoint=endpoint, dataset=record, previous=previous)


@dataclass
class Named:
    """What the library answered for a request (``named_in``): its graders, the endpoint
    its judges call unless they name their own, a new run's dataset, or the run it resumes."""

    graders: list[NamedGrader] = field(default_factory=list)
    endpoint: str | None = None
    dataset: DatasetRecord | None = None
    previous: RunInfo | None = None


@dataclass
class Checked:
    """A request that passed ``check``: its thresholds and report files, read once, and its baseline
    run (one of the same dataset, read whole as the run concludes)."""

    request: RunRequest
    thresholds: Thresholds
    junit: Path | None = None
    markdown: Path | None = None
    baseline: int | None = None
    executor: str = "local"
    #: what the library answered for it: its graders (a resume's keys are checked from these)
    named: Named = field(default_factory=Named)


@dataclass
class Finished:
    """A concluded run: its sections (each with its one summary), verdict and usage."""

    run: RunSections
    verdict: Verdict
    usage: Usage


def conclude(library: Library, run_id: int, checked: Checked, github: TextIO | None = None) -> Finished:
    """The verdict and usage of a finished run, and its report files written; ``--github``'s
    workflow commands go to ``github`` (the CLI picks stdout or stderr)."""
    from studio.core.models.verdict import judge

    from .sections import load_run

    run = load_run(library, run_id)
    verdict = judge(run, checked.thresholds)
    usage = run.usage
    generated = checked.request.reports.generated  # the reports say where the outputs came from
    texts: list[tuple[Path, str]] = []  # every report made before any file is written
    if checked.junit is not None:
        from .reports.junit import junit_xml

        texts.append((checked.junit, junit_xml(library, run, generated)))
    if checked.markdown is not None:
        from .reports.markdown import markdown_report

        baseline = None if checked.baseline is None else load_run(library, checked.baseline)  # the markdown's alone
        texts.append((checked.markdown, markdown_report(library, run, verdict, baseline=baseline, usage=usage,
                                                        generated=generated)))
    try:
        for path, text in texts:
            write_text(path, text)  # never through a planted link
        if checked.markdown is not None:
            from .reports.markdown import append_step_summary

            append_step_summary(texts[-1][1])  # GitHub Actions shows it on the run's page
    except OSError as exc:
        raise RequestRefused(f"the report could not be written: {exc.strerror or exc} ({exc.filename})") from None
    if checked.request.reports.github and github is not None:
        from .reports.github import workflow_commands

        # the studio's own annotations are the only lines written past the CLI's output guard
        # (cli/output.py ``CommandGuard.unguarded``), which defuses every other line starting '::'
        real = getattr(github, "unguarded", github)
        github.flush()
        for line in workflow_commands(library, run, verdict):
            real.write(line.replace("\r", "%0D").replace("\n", "%0A") + "\n")
        real.flush()
    return Finished(run=run, verdict=verdict, usage=usage)


def option_problem(exc: ValidationError) -> str:
    """The first invalid value as the option a person typed: ``--limit must be 1 or more, not 0``."""
    first = exc.errors()[0]
    loc = [str(part) for part in first.get("loc", ()) if not isinstance(part, int)]
    option = "--" + (loc[-1] if loc else "value").replace("_", "-")
    ctx = first.get("ctx") or {}
    kind = first.get("type", "")
    given = first.get("input")
    if kind == "greater_than_equal":
        said = "must be zero or more" if ctx.get("ge") == 0 else f"must be {ctx.get('ge')} or more"
    elif kind == "greater_than":
        said = f"must be more than {ctx.get('gt')}"
    elif kind == "less_than_equal":
        said = f"must be {ctx.get('le')} or less"
    elif kind == "finite_number":
        said = "must be a finite number"
    else:
        said = str(first.get("msg", "is not valid")).removeprefix("Value error, ").lower()
        return f"{option}: {said}" + ("" if isinstance(given, dict | list) else f" (not {given!r})")
    return f"{option} {said}, not {given!r}"


def _check_executor(name: str) -> None:
    """``--executor ray`` without Ray installed: the sentence saying how to get it."""
    from .executors import RAY_HINT, ExecutorError, ray_available

    if name == "ray" and not ray_available():
        raise ExecutorError(RAY_HINT)


def _check_approvals(library: Library, named: Named) -> None:
    """Before a run exists: every endpoint its judges would send the user's key to is one the user
    approved (store/endpoint_trust.py), so a refused run is one sentence (and the window's dialog),
    not a run of failed samples. The judges' own client checks again as it opens."""
    from studio.core.judges.http.credentials import resolve_api_key
    from studio.core.store.errors import LibraryError

    from .preflight import needed_endpoints

    checked: set[str] = set()
    for grader in named.graders:
        for name in needed_endpoints(grader.definition):
            try:
                config = library.endpoints.resolve(named.endpoint, name)
            except LibraryError:  # no endpoint, or a broken row: the run's judges say it
                continue
            if config.name not in checked:
                checked.add(config.name)
                resolve_api_key(config)  # raises when the key may not go there


def _check_caps(library: Library, caps: Caps, executor: str, named: Named) -> None:
    """A spend cap grades on this machine (one budget for every call) and prices every endpoint."""
    from .budget import BudgetError, check_priced

    if not caps.any or not named.graders:
        return
    if executor != "local":
        raise BudgetError("--max-cost and --max-tokens grade on this machine only (not with --executor ray)")
    from .preflight import endpoint_configs

    for grader in named.graders:
        check_priced(caps, endpoint_configs(library, grader.definition, named.endpoint))
