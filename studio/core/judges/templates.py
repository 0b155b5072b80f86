"""Three template dialects, each rendered strictly: an unknown variable is an error naming it.

* Handlebars (Adaptive judges): ``{{{completion}}}``, ``{{#each turns}}`` ... via pybars3.
* OpenAI graders: ``{{ sample.output_text }}`` / ``{{ item.field }}``, plain substitution.
* Letta model judges: ``{input}``, ``{submission}``, ``{ground_truth}``, rubric_vars keys, with
  Python ``str.format`` rules (literal braces doubled).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from functools import lru_cache
from types import ModuleType
from typing import Protocol

from studio.core.json_types import JsonObject, JsonValue
from studio.core.judges.handlebars import Node, compile_subset, render_subset, whitespace_control
from studio.core.judges.http.errors import TemplateError, UnknownVariable

#: the conversation, the response and the reference, as the binary and range judges show them
CONVERSATION_BLOCK = """<conversation>
{{{context_str}}}
</conversation>

<response>
{{{completion}}}
</response>
{{#if metadata.expected}}

<reference>
{{{metadata.expected}}}
</reference>
{{/if}}"""


_OPENAI_REF = re.compile(r"\{\{\s*((?:sample|item)(?:\.[A-Za-z0-9_\-]+)+)\s*\}\}")
_ANY_MUSTACHE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")



@lru_cache(maxsize=1)
def _pybars() -> ModuleType:
    """pybars on first use: importing it builds its grammar (~0.5 s), which the window's first
    paint and most CLI commands never need."""
    import pybars

    module: ModuleType = pybars  # pybars ships no types
    return module


class StrictVars(JsonObject):
    """Root scope for Handlebars: a missing name raises instead of rendering as empty text.

    pybars swallows KeyError/AttributeError, so the lookup raises ``UnknownVariable``, which it
    does not catch. Nested objects (metadata, turns) stay lenient so ``{{#if metadata.x}}`` works.
    """

    def __getitem__(self, name: str) -> JsonValue:
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        raise UnknownVariable(name, list(self.keys()))

    def get(self, name: str, default: JsonValue = None) -> JsonValue:
        return self[name]


_BLOCK_TAG = re.compile(r"\{\{~?\s*([#/^])\s*([A-Za-z_][\w.-]*)")


def _check_blocks(source: str) -> None:
    """pybars accepts an unclosed ``{{#each}}``; we want the author told."""
    stack: list[str] = []
    for sigil, name in _BLOCK_TAG.findall(source):
        if sigil in "#^":
            stack.append(name)
        elif not stack or stack.pop() != name:
            raise TemplateError(
                f"template syntax error: {{{{/{name}}}}} closes no open {{{{#{name}}}}} block"
            )
    if stack:
        raise TemplateError(
            f"template syntax error: {{{{#{stack[-1]}}}}} is never closed with {{{{/{stack[-1]}}}}}"
        )


class _Compiler(Protocol):
    """pybars' Compiler, as used here."""

    whitespace_control: Callable[[str], str]

    def compile(self, source: str) -> Callable[..., object]: ...


@lru_cache(maxsize=1)
def _compiler() -> _Compiler:
    compiler: _Compiler = _pybars().Compiler()
    # its own whitespace pass backtracks exponentially on a line of block tags (handlebars.py)
    compiler.whitespace_control = whitespace_control
    return compiler


@lru_cache(maxsize=512)
def _compile(source: str) -> Callable[..., object]:
    _check_blocks(source)
    pybars = _pybars()
    try:
        return _compiler().compile(source)
    except pybars.PybarsError as exc:
        raise TemplateError(f"template syntax error: {exc}") from exc


@lru_cache(maxsize=512)
def _compile_subset(source: str) -> list[Node] | None:
    """The template compiled by our own renderer (handlebars.py), None when it needs pybars."""
    _check_blocks(source)
    return compile_subset(source)


@lru_cache(maxsize=512)
def dialect_of(template: str) -> str:
    """``openai`` when the template only uses sample./item. references, else ``handlebars``."""
    refs = _ANY_MUSTACHE.findall(template)
    if refs and all(re.fullmatch(r"(sample|item)(\.[A-Za-z0-9_\-]+)+", r) for r in refs):
        return "openai"
    return "handlebars"


def render_handlebars(template: str, variables: JsonObject) -> str:
    """Our renderer for the subset the built-in prompts use (no pybars grammar to build), pybars
    for anything else; both give the same text and the same unknown-variable error."""
    nodes = _compile_subset(template)
    if nodes is not None:
        try:
            return render_subset(nodes, StrictVars(variables))
        except UnknownVariable:
            raise
        except Exception:  # Unsupported, or odd data: pybars says what happens
            pass
    return render_pybars(template, variables)


def render_pybars(template: str, variables: JsonObject) -> str:
    """Render with pybars itself: templates outside our subset, and the reference its tests
    compare our renderer with."""
    compiled = _compile(template)
    try:
        return str(compiled(StrictVars(variables), helpers=_HELPERS))
    except UnknownVariable:
        raise
    except _pybars().PybarsError as exc:
        raise TemplateError(f"template error: {exc}") from exc
    except Exception as exc:  # a helper or lookup failed on odd data
        raise TemplateError(f"template error: {exc.__class__.__name__}: {exc}") from exc


def render_openai(template: str, variables: JsonObject) -> str:
    """Substitute ``{{ sample.x }}`` / ``{{ item.x }}``; non-text values are written as JSON."""

    def lookup(match: re.Match[str]) -> str:
        path = match.group(1)
        value: JsonValue = variables
        for part in path.split("."):
            if isinstance(value, dict) and part in value:
                value = value[part]
            else:
                raise UnknownVariable(path)
        return value if isinstance(value, str) else _json(value)

    return _OPENAI_REF.sub(lookup, template)


def render_template(template: str, variables: JsonObject) -> str:
    """Render a judge template in whichever dialect it is written."""
    if dialect_of(template) == "openai":
        return render_openai(template, variables)
    return render_handlebars(template, variables)


class _StrictFormatMap(JsonObject):
    def __missing__(self, key: str) -> JsonValue:
        raise UnknownVariable(key, list(self.keys()))


def render_format(template: str, variables: JsonObject) -> str:
    """Python ``str.format`` rules (Letta): ``{name}``, ``{{`` for a literal brace."""
    try:
        return string.Formatter().vformat(template, (), _StrictFormatMap(variables))
    except UnknownVariable:
        raise
    except (ValueError, IndexError, AttributeError, KeyError) as exc:
        raise TemplateError(
            f"prompt placeholder error: {exc} (write literal braces as {{{{ and }}}})"
        ) from exc


def format_fields(template: str) -> list[str]:
    """Top-level placeholder names a Python-format template uses (``{submission}`` -> submission)."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise TemplateError(f"prompt placeholder error: {exc}") from exc
    names: list[str] = []
    for _, field, _, _ in parsed:
        if field:
            root = re.split(r"[.\[]", field, maxsplit=1)[0]
            if root and root not in names:
                names.append(root)
    return names


def _json(value: JsonValue) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def _helper_json(this: JsonValue, value: JsonValue) -> str:
    return _json(value)


def _helper_eq(this: JsonValue, left: JsonValue, right: JsonValue) -> bool:
    return bool(left == right)


_HELPERS = {"json": _helper_json, "eq": _helper_eq}
