"""A renderer for the Handlebars subset the built-in judge prompts use, rendering exactly as pybars.

Why: importing pybars builds its template grammar (0.5-1.7 s of CPU, bench/README.md section 1)
before a run's first judge call can leave, and every render goes through generated code and
``Scope`` objects. The built-in prompts need little: ``{{var}}`` (HTML-escaped), ``{{{var}}}``,
dotted paths, ``{{@index}}``-style data, comments, ``#if``/``#unless``/``#each`` with ``{{else}}``.

The contract is pybars 0.9.7's output, byte for byte (tests/core/judges/test_handlebars_subset.py
checks it against pybars on every built-in template and generated values). Anything outside the
subset makes ``compile_subset`` return None, and anything unusual met while rendering (a callable
value, a list walked by a path, an exception other than an unknown variable) raises
``Unsupported``: the caller then renders with pybars, so odd templates and odd data keep pybars'
behaviour, including its errors. The pieces below mirror pybars' runtime (``pick``, ``Scope.get``,
``resolve``, ``prepare``, the ``if``/``unless``/``each`` helpers and its whitespace control).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from studio.core.json_types import JsonValue


class Unsupported(Exception):
    """The template or a value is outside the subset: render this call with pybars instead."""


#: names pybars resolves to a helper before a variable (the project's helpers and pybars' own)
HELPER_NAMES = frozenset({"json", "eq", "each", "if", "unless", "with", "log", "lookup",
                          "blockHelperMissing", "helperMissing"})

_ESCAPES = str.maketrans({"&": "&amp;", '"': "&quot;", "'": "&#x27;", "`": "&#x60;",
                          "<": "&lt;", ">": "&gt;"})

# pybars' Compiler.whitespace_control: "~" marks, and block tags standing alone on a line. pybars
# writes a run of such tags as ``([ \t]*{{...}}[ \t]*)+``, where the blanks between two tags can be
# split between one tag's trailing and the next one's leading ``[ \t]*`` in every way: a line of
# thirty tags without its newline takes minutes to fail. ``[ \t]*({{...}}[ \t]*)+`` matches the same
# text with one way to match it (tests/core/judges/test_handlebars_subset.py compares the two).
_CLEANUP = re.compile(r"(?<={{)~|~(?=}})|(?<=}})[ \t]+(?={{)").sub
_STANDALONE = re.compile(
    r"~}}\s*|\s*{{~|"
    r"(?<=\n)[ \t]*(?:{{(?:#[^{}]+|/[^{}]+|![^{}]+|else|else if [^{}]+)}}[ \t]*)+\r?\n|"
    r"^[ \t]*(?:{{(?:#[^{}]+|![^{}]+)}}[ \t]*)+\r?\n|"
    r"\r?\n[ \t]*(?:{{(?:/[^{}]+|![^{}]+)}}[ \t]*)+$"
)


def whitespace_control(source: str) -> str:
    """pybars' whitespace pass, giving its text (pybars' own compiler is given this one too)."""
    return _STANDALONE.sub(lambda match: _CLEANUP("", match.group(0).strip()), source)


_SEGMENT = r"(?:@?[A-Za-z0-9_-]+)"
_PATH = rf"{_SEGMENT}(?:[./]{_SEGMENT})*"
_SPACE = r"[ \t\r\n]"
_TRIPLE = re.compile(rf"\{{\{{\{{{_SPACE}*({_PATH}){_SPACE}*\}}\}}\}}")
_DOUBLE = re.compile(rf"\{{\{{{_SPACE}*({_PATH}){_SPACE}*\}}\}}")
_OPEN = re.compile(rf"\{{\{{#{_SPACE}*(if|unless|each){_SPACE}+({_PATH}){_SPACE}*\}}\}}")
_CLOSE = re.compile(r"\{\{/(if|unless|each)\}\}")
_ELSE = re.compile(rf"\{{\{{{_SPACE}*else{_SPACE}*\}}\}}")
_COMMENT = re.compile(r"\{\{!.*?\}\}", re.DOTALL)
#: how a helper argument that pybars reads as a literal (true, 0, -1, null) starts
_LITERAL_START = re.compile(r"-?[0-9]|true|false|null|undefined")

# node kinds
_TEXT, _VAR, _RAW, _IF, _UNLESS, _EACH = range(6)
Node = tuple[Any, ...]


def _segments(path: str) -> tuple[str, ...]:
    """pybars' path segments: ``a.b`` is ('a', '', 'b'); ``this`` is ''."""
    parts: list[str] = []
    for piece in re.split(r"([./])", path):
        parts.append("" if piece in (".", "/", "this") else piece)
    return tuple(parts)


_LEADING_BLANKS = re.compile(r"(?:[ \t]+|\r?\n)*")


def _literal(text: str) -> str:
    """Text between tags as pybars emits it: its grammar reads the blanks and line ends that
    open a run of text one by one and keeps only the "\n" of a "\r\n" there; the rest of the
    run is kept as it is."""
    match = _LEADING_BLANKS.match(text)  # the pattern matches the empty string: never None
    blanks = match.end() if match is not None else 0
    return text[:blanks].replace("\r\n", "\n") + text[blanks:] if blanks else text


@dataclass(slots=True)
class _OpenBlock:
    """A block tag met and not yet closed: its helper, path, body and (after an else) else-body."""

    name: str
    segments: tuple[str, ...]
    body: list[Node] = field(default_factory=list)
    alternative: list[Node] | None = None


def compile_subset(source: str) -> list[Node] | None:
    """The template as nodes, or None when it uses anything outside the subset."""
    text = whitespace_control(source)
    root: list[Node] = []
    # open blocks, innermost last; ``out`` is the list being filled
    stack: list[_OpenBlock] = []
    out = root
    position = 0
    while True:
        start = text.find("{{", position)
        if start < 0:
            if text[position:]:
                out.append((_TEXT, _literal(text[position:])))
            break
        if start > position:
            out.append((_TEXT, _literal(text[position:start])))
        for pattern in (_TRIPLE, _COMMENT, _OPEN, _CLOSE, _ELSE, _DOUBLE):
            match = pattern.match(text, start)
            if match is not None:
                break
        else:
            return None
        position = match.end()
        if pattern is _COMMENT:
            continue
        if pattern is _TRIPLE or pattern is _DOUBLE:
            path = match.group(1)
            segments = _segments(path)
            if "else" in segments:
                return None  # pybars' grammar refuses a segment named else
            if len(segments) == 1 and path in HELPER_NAMES:
                return None  # pybars would call the helper
            out.append((_RAW if pattern is _TRIPLE else _VAR, segments, len(segments) == 1))
        elif pattern is _OPEN:
            segments = _segments(match.group(2))
            if _LITERAL_START.match(match.group(2)) or "else" in segments:
                return None  # pybars reads a literal there first (true, 0, null)
            block = _OpenBlock(match.group(1), segments)
            stack.append(block)
            out = block.body
        elif pattern is _ELSE:
            if not stack or stack[-1].alternative is not None:
                return None
            stack[-1].alternative = out = []
        else:  # a closing tag
            if not stack or stack[-1].name != match.group(1):
                return None
            closed = stack.pop()
            kind = {"if": _IF, "unless": _UNLESS, "each": _EACH}[closed.name]
            if not stack:
                out = root
            else:
                alternative = stack[-1].alternative
                out = alternative if alternative is not None else stack[-1].body
            out.append((kind, closed.segments, tuple(closed.body), tuple(closed.alternative or ())))
    return None if stack else root


class _Scope:
    """pybars' Scope: a context, its parent, the root, and the data of an ``#each`` step."""

    __slots__ = ("context", "parent", "root", "index", "key", "first", "last")

    def __init__(self, context: JsonValue, parent: _Scope | None, root: JsonValue, index: int | None = None,
                 key: JsonValue = None, first: bool | None = None, last: bool | None = None) -> None:
        self.context, self.parent, self.root = context, parent, root
        self.index, self.key, self.first, self.last = index, key, first, last

    def get(self, name: str) -> JsonValue:
        if name[:1] == "@" or name == "this":
            if name == "@root":
                return self.root
            if name == "@_parent":
                raise Unsupported
            if name == "@index" and self.index is not None:
                return self.index
            if name == "@key" and self.key is not None:
                return self.key
            if name == "@first" and self.first is not None:
                return self.first
            if name == "@last" and self.last is not None:
                return self.last
            if name == "this":
                return self.context
        return _pick(self.context, name)


def _pick(context: JsonValue, name: str) -> JsonValue:
    try:
        return context[name]  # the root (StrictVars) raises UnknownVariable here, as in pybars
    except (KeyError, TypeError, AttributeError):
        if hasattr(context, name):
            return getattr(context, name)
        if hasattr(context, "get"):
            return context.get(name)
        return None


def _resolve(scope: _Scope, segments: tuple[str, ...]) -> JsonValue:
    if segments == ("",):
        return scope.context
    value: JsonValue = scope
    for segment in segments:
        if value is None:
            return None
        if not segment:
            continue
        if type(value) in (list, tuple):
            raise Unsupported  # pybars indexes lists (items.0, items.length)
        value = value.get(segment) if value is scope else _pick(value, segment)
    return value


def _text(value: object, escape: bool) -> str:
    """pybars' ``prepare``: None is empty, booleans are true/false, the rest is ``str()``."""
    if value is None:
        return ""
    if type(value) is str:
        text = value
    else:
        if callable(value) or isinstance(value, _Scope):
            raise Unsupported
        text = ("true" if value else "false") if type(value) is bool else str(value)
    return text.translate(_ESCAPES) if escape else text


def _render(nodes: tuple[Node, ...] | list[Node], scope: _Scope, out: list[str]) -> None:
    append = out.append
    for node in nodes:
        kind = node[0]
        if kind == _TEXT:
            append(node[1])
        elif kind in (_VAR, _RAW):
            segments = node[1]
            value = scope.get(segments[0]) if node[2] and segments[0] else _resolve(scope, segments)
            append(_text(value, kind == _VAR))
        else:
            value = _resolve(scope, node[1])
            if callable(value) or isinstance(value, _Scope):
                raise Unsupported
            if kind == _IF:
                _render(node[2] if value else node[3], scope, out)
            elif kind == _UNLESS:
                if not value:  # pybars' unless never renders its {{else}}
                    _render(node[2], scope, out)
            else:
                _each(node, value, scope, out)


def _each(node: Node, value: JsonValue, scope: _Scope, out: list[str]) -> None:
    try:
        last = len(value) - 1
    except TypeError:
        last = -1
    if last < 0:
        _render(node[3], scope, out)
        return
    keyed = hasattr(value, "keys")
    for index, item in enumerate(value):
        key = None
        if keyed:
            key, item = item, value[item]
        step = _Scope(item, scope, scope.root, index, key, index == 0, index == last)
        _render(node[2], step, out)


def render_subset(nodes: list[Node], root: JsonValue) -> str:
    """Render compiled nodes with ``root`` (the strict variables); ``Unsupported`` (and any
    error but the root's unknown-variable one) means: render with pybars instead."""
    out: list[str] = []
    _render(nodes, _Scope(root, root, root), out)
    return "".join(out)
