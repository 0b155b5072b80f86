"""Checks of a whole grader definition, whatever its kind: what ``validate`` and the window show.

Function graders get the platform's checks from the sandbox; other kinds get the structural checks
a platform would make on upload (a range judge's subranges, a composite's weights, a template that
renders). Each check is data: name, status, message, line.
"""

from __future__ import annotations

import re
import string

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
    if isinstance(definition, FunctionGrader):
        checks.extend(validate(definition.source, definition.contract, function_name=definition.function_name,
                               execute=execute))
    elif isinstance(definition, JavascriptGrader) and execute:
        checks.extend(check_javascript(definition.source, definition.form, definition.function_name, definition.origin))
    elif isinstance(definition, RangeJudge):
        gaps = definition.subrange_gaps()
        if definition.subrange_expectations and gaps:
            checks.append(Check(name="subranges", status="warning",
                                message=f"no subrange expectation describes score(s) {gaps}"))
        elif definition.subrange_expectations:
            checks.append(Check(name="subranges", status="passed", message="the subranges cover the range"))
    elif isinstance(definition, BuiltinGrader) and definition.function in ("regex_match", "regex_extract"):
        extract = definition.function == "regex_extract"
        pattern = definition.options.pattern if extract else definition.options.reference
        if extract and not pattern:
            checks.append(Check(name="pattern", status="failed", message="regex_extract needs options.pattern"))
        elif pattern is not None:
            try:
                re.compile(pattern)
                checks.append(Check(name="pattern", status="passed", message="the pattern compiles"))
            except re.error as exc:
                checks.append(Check(name="pattern", status="failed", message=f"invalid regular expression: {exc}"))
    elif isinstance(definition, LetterJudge):
        checks.append(_letter_template(definition))
    elif isinstance(definition, CompositeGrader):
        if not any(c.weight > 0 for c in definition.components) and definition.mode == "weighted":
            checks.append(Check(name="weights", status="failed",
                                message="a weighted composite needs at least one positive weight"))
        for component in definition.components:
            for sub in check_definition(component.grader, execute=execute):
                if sub.name != "definition":
                    checks.append(sub.model_copy(update={"name": f"{component.label}: {sub.name}"}))
    return checks


def _letter_template(judge: LetterJudge) -> Check:
    """The letter-grade judge's prompt is a format string: its fields must parse and show the answer."""
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(judge.template) if name}
    except ValueError as exc:
        return Check(name="template", status="failed", message=f"the template is not a format string: {exc}")
    if "answer" not in fields:
        return Check(name="template", status="warning", message="the template never shows {answer}")
    return Check(name="template", status="passed", message="the template shows {answer}")
