"""Checks of a whole grader definition, whatever its kind: what ``validate`` and the window show.

Function graders get the platform's checks from the sandbox; other kinds get the structural checks
a platform would make on upload (a range judge's subranges, a composite's weights, a template that
renders). Each check is data: name, status, message, line.
"""

from __future__ import annotations

import re
import string

from studio.core.kinds import ByKind
from studio.core.models import (
    BuiltinGrader,
    CompositeGrader,
    FunctionGrader,
    GraderDefinition,
    JavascriptGrader,
    LetterJudge,
    RangeJudge,
)
from studio.core.sandbox.node import check_javascript
from studio.core.sandbox.validation import NOT_RUN, Check, validate

__all__ = ["NOT_RUN", "Check", "check_definition", "quick_checks"]


def quick_checks(definition: GraderDefinition) -> list[Check]:
    """``check_definition`` without the checks that execute the grader (the sandbox, Node): what the
    editor checks before a save becomes a version and after each pause in typing. One set of rules:
    these are the same checks Validate shows, not a second copy of them."""
    return check_definition(definition, execute=False)


def check_definition(definition: GraderDefinition, *, execute: bool = True) -> list[Check]:
    problems = definition.problems()  # a stored definition from before a rule (models/common.STORED)
    checks = [Check(name="definition", status="failed", message=problem) for problem in problems] or [
        Check(name="definition", status="passed", message=f"{definition.kind} grader {definition.key!r}")]
    own = _CHECKS.of(definition)
    if own is not None:
        checks.extend(own(definition, execute))
    return checks


#: the checks of each kind beyond its definition's own rules, keyed by kind (``kinds.ByKind``)
_CHECKS: ByKind[list[Check]] = ByKind("definition checks")


@_CHECKS.on(FunctionGrader)
def _function_checks(definition: FunctionGrader, execute: bool) -> list[Check]:
    return list(validate(definition.source, definition.contract, function_name=definition.function_name,
                         execute=execute))


@_CHECKS.on(JavascriptGrader)
def _javascript_checks(definition: JavascriptGrader, execute: bool) -> list[Check]:
    if not execute:
        return []
    return list(check_javascript(definition.source, definition.form, definition.function_name, definition.origin))


@_CHECKS.on(RangeJudge)
def _range_checks(definition: RangeJudge, execute: bool) -> list[Check]:
    gaps = definition.subrange_gaps()
    if definition.subrange_expectations and gaps:
        return [Check(name="subranges", status="warning", message=f"no subrange expectation describes score(s) {gaps}")]
    if definition.subrange_expectations:
        return [Check(name="subranges", status="passed", message="the subranges cover the range")]
    return []


@_CHECKS.on(BuiltinGrader)
def _builtin_checks(definition: BuiltinGrader, execute: bool) -> list[Check]:
    if definition.function not in ("regex_match", "regex_extract"):
        return []
    extract = definition.function == "regex_extract"
    pattern = definition.options.pattern if extract else definition.options.reference
    if extract and not pattern:
        return [Check(name="pattern", status="failed", message="regex_extract needs options.pattern")]
    if pattern is None:
        return []
    try:
        re.compile(pattern)
    except re.error as exc:
        return [Check(name="pattern", status="failed", message=f"invalid regular expression: {exc}")]
    return [Check(name="pattern", status="passed", message="the pattern compiles")]


@_CHECKS.on(CompositeGrader)
def _composite_checks(definition: CompositeGrader, execute: bool) -> list[Check]:
    checks = []
    if not any(c.weight > 0 for c in definition.components) and definition.mode == "weighted":
        checks.append(Check(name="weights", status="failed", message="a weighted composite needs at least one positive weight"))
    for component in definition.components:
        for sub in check_definition(component.grader, execute=execute):
            if sub.name != "definition":
                checks.append(sub.model_copy(update={"name": f"{component.label}: {sub.name}"}))
    return checks


@_CHECKS.on(LetterJudge)
def _letter_checks(definition: LetterJudge, execute: bool) -> list[Check]:
    return [_letter_template(definition)]


def _letter_template(judge: LetterJudge) -> Check:
    """The letter-grade judge's prompt is a format string: its fields must parse and show the answer."""
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(judge.template) if name}
    except ValueError as exc:
        return Check(name="template", status="failed", message=f"the template is not a format string: {exc}")
    if "answer" not in fields:
        return Check(name="template", status="warning", message="the template never shows {answer}")
    return Check(name="template", status="passed", message="the template shows {answer}")
