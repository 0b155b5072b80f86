"""HUD: a Python module whose ``grade(answer, expected, question)`` combines ``hud.graders`` scores.

Bash graders become ``BashGrader``, criteria judges ``LLMJudgeGrader``, built-ins HUD's answer
comparisons, composites ``combine`` (weighted) / ``combine_any`` / ``combine_all``. HUD has no
grader file format: import reads back only a module this export wrote, unchanged (``_carried``).
"""

from __future__ import annotations

from pathlib import Path

from studio.core.kinds import ByKind, GraderKind, get_kind
from studio.core.models import (
    BashGrader,
    BuiltinGrader,
    CompositeGrader,
    CriteriaJudge,
    FunctionGrader,
    GraderDefinition,
    JuryGrader,
)
from studio.core.safe_files import read_regular_text

from ._adapters import adapter_module, function_grader, refusal
from ._base import ExportResult, ImportResult, Platform, PlatformError, Support
from ._carried import carried, with_definitions
from ._fields import docstring, inspect_options, judge_model, read_text, unexported
from ._jury import hud_composite
from ._syntax import parse_python
from .openai import plain_extractor

LABEL = "HUD"
HUD_FUNCTIONS = {
    "exact_match": "exact_match",
    "contains": "contains",
    "contains_any": "contains_any",
    "contains_all": "contains_all",
    "numeric_match": "numeric_match",
    "token_f1": "f1_score",
}


def builtin_problem(grader: BuiltinGrader) -> str | None:
    """Why HUD's comparison would score this built-in differently, or None."""
    o = grader.options
    if grader.function not in HUD_FUNCTIONS:
        return f"HUD has no {grader.function} comparison"
    problem = inspect_options(o, "HUD")
    if problem:
        return problem
    if o.empty_reference_error:
        return "HUD compares an empty reference as text; promptfoo's rule (an empty value is an error) has no HUD form"
    if o.reference_field:
        return "HUD's grade(answer, expected) has no dataset row field (OpenAI graders read item fields)"
    if o.regex_dialect != "python":
        return "HUD has no regex comparison"
    if grader.function == "exact_match":
        if not o.normalize and not (grader.strips and o.case_sensitive is False):
            return "HUD's exact_match either normalises or compares stripped and case-insensitive"
    elif o.normalize and grader.function != "token_f1":
        return f"HUD's {grader.function} does not normalise text"
    elif grader.strips and grader.function.startswith("contains"):
        return f"HUD's {grader.function} does not strip whitespace (set strip off)"
    if grader.function == "numeric_match" and o.thousands_separators:
        return "HUD's numeric_match reads 1,000 as 1: thousands_separators cannot be exported"
    if grader.function in ("contains_any", "contains_all") and not o.values:
        return f"HUD's {grader.function} needs the list of values"
    if grader.function == "numeric_match" and o.reference is not None:
        try:
            float(o.reference)
        except ValueError:
            return f"numeric_match reference {o.reference!r} is not a number"
    return None


# ---- what HUD does with each kind it carries (keyed by kind: ``kinds.ByKind``) ------------------

#: a kind HUD carries as the composite it amounts to (a jury: HUD's combine of its jurors), or why not
_AS_COMPOSITE: ByKind[CompositeGrader | str] = ByKind("hud as composite")
_SUPPORT: ByKind[Support] = ByKind("hud support")
#: each kind's SubScore expression
_EXPR: ByKind[str] = ByKind("hud expression")
#: a grader whose parts are the module's own items ([] when it is one item)
_ITEMS: ByKind[list[str]] = ByKind("hud module items")


@_AS_COMPOSITE.on(JuryGrader)
def _jury_composite(grader: JuryGrader) -> CompositeGrader | str:
    return hud_composite(grader)


_COMBINED_NOTE: ByKind[str] = ByKind("hud combined note")
#: a grader whose result is final in HUD (a weighted composite's ``combine``), so it cannot nest
_FINAL: ByKind[bool] = ByKind("hud final result")


@_COMBINED_NOTE.on(JuryGrader)
def _jury_note(grader: JuryGrader) -> str:
    return (f"{grader.key}: the jury is HUD's combine of its {len(grader.jurors)} jurors "
            f"({'combine_all: the lowest' if grader.aggregation == 'min' else 'weighted'})")


@_FINAL.on(CompositeGrader)
def _composite_final(grader: CompositeGrader) -> bool:
    return grader.mode == "weighted"


@_SUPPORT.on(BuiltinGrader)
def _builtin_support(platform: HudPlatform, grader: BuiltinGrader) -> Support:
    problem = builtin_problem(grader)
    return Support.no(problem) if problem else Support.yes()


@_SUPPORT.on(BashGrader, CriteriaJudge)
def _plain_support(platform: HudPlatform, grader: BashGrader | CriteriaJudge) -> Support:
    return Support.yes()


@_SUPPORT.on(FunctionGrader)
def _function_support(platform: HudPlatform, grader: FunctionGrader) -> Support:
    problem = refusal(grader, LABEL)  # carried by a generated async grade(answer, ...) adapter
    return Support.no(problem) if problem else Support.yes()


@_SUPPORT.on(CompositeGrader)
def _composite_support(platform: HudPlatform, grader: CompositeGrader) -> Support:
    for c in grader.components:
        if (final := _FINAL.of(c.grader)) is not None and final(c.grader):
            return Support.no("HUD's combine gives a final result, so a weighted composite cannot nest")
        sub = platform.can_export(c.grader)
        if not sub.ok:
            return Support.no(f"component {c.grader.key!r}: {sub.reason}")
    return Support.yes()


@_ITEMS.on(CompositeGrader)
def _composite_items(platform: HudPlatform, grader: CompositeGrader, warnings: list[str]) -> list[str]:
    if grader.mode != "weighted":
        return []
    warnings += unexported(grader, {"mode", "components", "extractor", "metric", "name"}, LABEL)
    return [platform.expr(c.grader, c.weight, c.label, warnings) for c in grader.components]


@_EXPR.on(BuiltinGrader)
def _builtin_expr(platform: HudPlatform, grader: BuiltinGrader, weight: float, name: str, warnings: list[str]) -> str:
    o = grader.options
    fn = HUD_FUNCTIONS[grader.function]
    ref = repr(o.reference) if o.reference is not None else "expected"
    if grader.function == "exact_match":
        call = f"exact_match(answer, {ref}, normalize_text={o.normalize!r})"
    elif grader.function in ("contains_any", "contains_all"):
        call = f"{fn}(answer, {list(o.values)!r}, case_sensitive={bool(o.case_sensitive)!r})"
    elif grader.function == "numeric_match":
        # the studio compares the first number of each side, as HUD does for the answer
        call = (
            f"(numeric_match(answer, n, tolerance={o.tolerance!r}) "
            f"if (n := first_number({ref})) is not None else 0.0)"
        )
    elif grader.function == "token_f1":
        call = f"f1_score(answer, {ref})"
    else:
        call = f"contains(answer, {ref}, case_sensitive={bool(o.case_sensitive)!r})"
    if o.negate:
        call = f"1.0 - {call}"
    empty = []  # the studio's (Letta's) early zeros on an empty answer or reference
    if o.empty_submission_zero:
        empty.append("not answer")
    if o.empty_reference_zero and grader.function not in ("contains_any", "contains_all"):
        empty.append(f"not {ref}")
    if empty:
        call = f"(0.0 if {' or '.join(empty)} else {call})"
    warnings += unexported(grader, {"function", "options", "extractor", "metric", "name"}, LABEL)
    return f"SubScore(name={name!r}, value={call}, weight={weight!r})"


@_EXPR.on(BashGrader)
def _bash_expr(platform: HudPlatform, grader: BashGrader, weight: float, name: str, warnings: list[str]) -> str:
    if grader.cwd:
        warnings.append(f"{grader.key}: cwd {grader.cwd!r} is a local path and is not exported")
    warnings += unexported(grader, {"command", "timeout_seconds", "cwd", "extractor", "metric", "name"}, LABEL)
    return (
        f"BashGrader.grade(weight={weight!r}, name={name!r}, command={grader.command!r}, "
        f"timeout_seconds={grader.timeout_seconds!r})"
    )


@_EXPR.on(CriteriaJudge)
def _criteria_expr(platform: HudPlatform, grader: CriteriaJudge, weight: float, name: str, warnings: list[str]) -> str:
    criteria = [(c.text, c.weight) for c in grader.criteria]
    model = judge_model(grader, LABEL, warnings)
    model_arg = f", model={model!r}" if model else ""
    keep = {"criteria", "model", "endpoint", "extractor", "metric", "name"}
    warnings += unexported(grader, keep, LABEL)
    warnings.append(f"{grader.key}: approximated: LLMJudgeGrader asks with HUD's own prompt (the rubric "
                    "package), not the studio's; the criteria, weights and scoring rule are the same")
    return (
        f"LLMJudgeGrader.grade(weight={weight!r}, name={name!r}, answer=answer, "
        f"criteria={criteria!r}, question=question{model_arg})"
    )


@_EXPR.on(CompositeGrader)
def _composite_expr(platform: HudPlatform, grader: CompositeGrader, weight: float, name: str, warnings: list[str]) -> str:
    warnings += unexported(grader, {"mode", "components", "extractor", "metric", "name"}, LABEL)
    parts = [platform.expr(c.grader, 1.0, c.label, warnings) for c in grader.components]
    combinator = "combine_any" if grader.mode == "any" else "combine_all"
    awaited = ", ".join(p if p.startswith("SubScore(") else f"await {p}" for p in parts)
    return f"{combinator}({weight!r}, [{awaited}], name={name!r})"


class HudPlatform(Platform):
    name = "hud"
    label = LABEL
    imports = True  # back only the modules it wrote (``_carried``)

    def _can_export(self, grader: GraderDefinition) -> Support:
        if (combined := _AS_COMPOSITE.of(grader)) is not None:  # a jury is HUD's combine of its jurors
            composite = combined(grader)
            return Support.no(composite) if isinstance(composite, str) else self.can_export(composite)
        if not plain_extractor(grader):
            return Support.no("HUD graders receive the answer text; they have no extractors")
        check = _SUPPORT.of(grader)
        return check(self, grader) if check is not None else Support.no(self.no_form(get_kind(grader.kind)))

    def no_form(self, kind: GraderKind) -> str:
        if kind.is_judge:
            return (
                f"HUD's only model judge, LLMJudgeGrader, sends its own prompt (the rubric package) and reads "
                f"MET/UNMET per criterion: a {kind.kind.replace('_', ' ')}'s messages and answer cannot travel "
                "(a criteria judge exports to it; Inspect, promptfoo and MKA1 carry this judge exactly)"
            )
        return (f"HUD graders are bash commands, criteria judges and answer comparisons; a "
                f"{kind.kind.replace('_', ' ')} has no HUD equivalent")

    def expr(self, grader: GraderDefinition, weight: float, name: str, warnings: list[str]) -> str:
        """An expression giving a SubScore (or an awaitable of one)."""
        write = _EXPR.of(grader)
        if write is None:  # pragma: no cover
            raise PlatformError(f"{LABEL} cannot express {grader.kind}")
        return write(self, grader, weight, name, warnings)

    def _export(self, grader: GraderDefinition) -> ExportResult:
        """The HUD module, ending with the definition it came from (``_carried``: import gives it back)."""
        result = self._module(grader)
        name = f"{grader.key.replace('-', '_').replace('.', '_')}_hud.py"
        result.files[name] = with_definitions(self.name, result.files[name], [grader])
        return result

    # ---- import: HUD has no grader format of its own; a module this export wrote reads back -----

    def detect(self, path: Path) -> bool:
        if path.suffix != ".py":
            return False
        try:
            definitions, _ = carried(read_regular_text(path), self.name)
        except (OSError, UnicodeDecodeError):
            return False
        return bool(definitions)

    def import_(self, path: Path, key: str | None = None) -> ImportResult:
        text = read_text(path)
        definitions, why = carried(text, self.name)
        if not definitions:
            parse_python(text, path)  # a module cut short is named by the line it breaks on
            raise PlatformError(f"{path.name}: HUD graders are Python code the studio does not read; only a module "
                                f"Grader Studio exported, unchanged, imports back ({why or 'this one has no definition'})")
        return ImportResult(graders=definitions)

    def _module(self, grader: GraderDefinition) -> ExportResult:
        if (combined := _AS_COMPOSITE.of(grader)) is not None:
            composite = combined(grader)
            assert not isinstance(composite, str)  # can_export refused it otherwise
            result = self._module(composite)
            note = _COMBINED_NOTE.of(grader)
            if note is not None:
                result.notes.append(note(grader))
            return result
        warnings: list[str] = []
        module_name = grader.key.replace("-", "_").replace(".", "_")
        if (function := function_grader(grader)) is not None:
            warnings.append(f"{grader.key}: its {function.contract} source runs inside a generated "
                            "grade(answer, expected, question, row) adapter")
            return ExportResult(files={f"{module_name}_hud.py": adapter_module(function, "hud")}, warnings=warnings)
        spread = _ITEMS.of(grader)
        items = spread(self, grader, warnings) if spread is not None else []
        if not items:
            items = [self.expr(grader, 1.0, grader.metric.key if grader.metric.key != "score" else grader.key, warnings)]
        body = ",\n        ".join(items)
        title = grader.name or grader.key
        doc = (f"{title}: HUD grader exported by Grader Studio (grader {grader.key!r}).\n\n"
               "Call ``await grade(answer, expected, question)`` from a HUD task and yield the result.\n")
        module = (
            f"{docstring(doc)}\n\n"
            "from __future__ import annotations\n\n"
            "import re\n\n"
            "from hud.graders import (  # noqa: F401 - the set every export may use\n"
            "    BashGrader,\n    EvaluationResult,\n    LLMJudgeGrader,\n    SubScore,\n    combine,\n"
            "    combine_all,\n    combine_any,\n    contains,\n    contains_all,\n    contains_any,\n"
            "    exact_match,\n    f1_score,\n    numeric_match,\n)\n\n\n"
            "def first_number(text: str) -> float | None:\n"
            "    found = re.search(r\"[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?\", text)\n"
            "    return float(found.group()) if found else None\n\n\n"
            'async def grade(answer: str, expected: str = "", question: str = "") -> EvaluationResult:\n'
            f"    return await combine(\n        {body},\n    )\n"
        )
        return ExportResult(files={f"{module_name}_hud.py": module}, warnings=warnings)


PLATFORM = HudPlatform()
