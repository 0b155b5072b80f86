"""Placeholders between the studio's rubric prompts and template-based platforms.

Letta-style prompts use Python format fields (``{submission}``, ``{input}``, ``{ground_truth}``, rubric
variables); OpenAI graders and promptfoo use Nunjucks/Jinja ``{{ ... }}``. The mapping is one to one
so a prompt converts back to exactly what it was.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping

from ._base import PlatformError


def to_jinja(prompt: str, fields: Mapping[str, str], other: str) -> str:
    """``{name}`` -> ``{{ fields[name] }}`` (or ``other.format(name)``); refuses what cannot map back."""
    out: list[str] = []
    try:
        parsed = list(string.Formatter().parse(prompt))
    except ValueError as exc:
        raise PlatformError(f"the prompt is not a valid format string: {exc}") from exc
    for literal, name, spec, conversion in parsed:
        if "{{" in literal or "}}" in literal or "{%" in literal:
            raise PlatformError("the prompt contains literal '{{', '}}' or '{%', which the target reads as a template")
        out.append(literal)
        if name is None:
            continue
        if spec or conversion or not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise PlatformError(f"placeholder {{{name}}} has no template equivalent")
        out.append("{{ " + fields.get(name, other.format(name)) + " }}")
    return "".join(out)


def from_jinja(template: str, fields: Mapping[str, str], other: str) -> str:
    """Inverse of ``to_jinja``: ``{{ expr }}`` back to ``{name}``, literal braces doubled."""
    reverse = {v: k for k, v in fields.items()}
    other_re = re.compile(re.escape(other).replace(re.escape("{}"), r"([A-Za-z_]\w*)") + "$")
    out: list[str] = []
    pos = 0
    for match in re.finditer(r"\{\{\s*(.*?)\s*\}\}", template):
        out.append(template[pos : match.start()].replace("{", "{{").replace("}", "}}"))
        expr = match.group(1)
        if expr in reverse:
            out.append("{" + reverse[expr] + "}")
        elif m := other_re.match(expr):
            out.append("{" + m.group(1) + "}")
        else:
            raise PlatformError(f"template variable {{{{ {expr} }}}} has no studio placeholder")
        pos = match.end()
    out.append(template[pos:].replace("{", "{{").replace("}", "}}"))
    return "".join(out)
