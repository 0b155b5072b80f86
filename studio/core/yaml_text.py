"""The one reader of every YAML (and JSON-as-YAML) text the studio reads: grader and suite files,
platform configs (promptfoo, Letta), whatever a person imports, drops or opens.

YAML can describe far more than it spells: an alias (``*name``) repeats a whole anchored subtree,
so nine nested nine-fold anchors in one kilobyte stand for 387 million nodes (the "billion laughs").
Every text is therefore checked on ruamel's event stream before a single object is built: nesting is
bounded, integers longer than Python's own bound are refused, and aliases are either refused
outright (grader and suite files: no grader needs them) or allowed only while everything they
repeat adds up to at most ``MAX_ALIASED_NODES`` nodes (platform configs, where ``&defaults`` is
common). An alias to its own enclosing node (a cycle) is always refused. Every refusal is a
``YamlRefused``: one sentence with the line.
"""

from __future__ import annotations

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    ScalarEvent,
)
from ruamel.yaml.nodes import ScalarNode

from studio.core.errors import StudioError
from studio.core.json_types import JsonValue

#: nesting far beyond any real file (a composite of composites is ~20 deep)
MAX_DEPTH = 200

#: Python's bound on reading a decimal integer (``sys.get_int_max_str_digits()``); a longer one
#: raises ValueError deep in the YAML constructor (and costs quadratic time)
MAX_DIGITS = 4300

#: every node aliases may repeat in one text, counted expanded: far above any shared default block,
#: far below what makes walking the result cost memory or minutes
MAX_ALIASED_NODES = 100_000


class YamlRefused(StudioError, ValueError):
    """A YAML text the studio will not read: ``line`` (1-based, or None) and ``reason`` (a clause)."""

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {reason}")


def _line(event: object) -> int | None:
    mark = getattr(event, "start_mark", None)
    return mark.line + 1 if mark is not None else None


def _refuse_long_integer(yaml: YAML, event: ScalarEvent, source: str) -> None:
    if len(event.value) <= MAX_DIGITS or event.style is not None:  # quoted scalars stay text
        return
    tag = yaml.resolver.resolve(ScalarNode, event.value, (True, False))
    if tag is not None and str(tag).endswith(":int"):
        digits = sum(c.isdigit() for c in event.value)
        raise YamlRefused(source, _line(event), f"a number has {digits:,} digits (the studio reads integers of at "
                                                f"most {MAX_DIGITS:,} digits; quote it to keep it as text)")


def check(text: str, source: str, *, aliases: bool, what: str = "this file") -> None:
    """Walk ``text``'s events and refuse what no reader should build (see the module docstring)."""
    yaml = YAML(typ="safe", pure=True)
    depth = 0
    # per open collection: (its anchor, the expanded node count when it opened)
    opened: list[tuple[str | None, int]] = []
    sizes: dict[str, int] = {}  # anchor -> expanded nodes under it
    nodes = 0  # expanded nodes so far in this document
    aliased = 0  # nodes repeated by aliases so far in the whole text
    for event in yaml.parse(text):
        if isinstance(event, DocumentStartEvent):
            sizes.clear()
            nodes = 0
        elif isinstance(event, ScalarEvent):
            _refuse_long_integer(yaml, event, source)
            nodes += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, AliasEvent):
            if not aliases:
                raise YamlRefused(source, _line(event), f"YAML aliases (*{event.anchor}) are not allowed in {what}")
            if event.anchor not in sizes:
                raise YamlRefused(source, _line(event), f"the alias *{event.anchor} refers to a node that contains it")
            nodes += sizes[event.anchor]
            aliased += sizes[event.anchor]
            if aliased > MAX_ALIASED_NODES:
                raise YamlRefused(source, _line(event), f"its aliases repeat more than {MAX_ALIASED_NODES:,} nodes "
                                                        f"(a YAML \"billion laughs\"); write the values out instead")
        elif isinstance(event, CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlRefused(source, _line(event), f"nested more than {MAX_DEPTH} levels deep")
            opened.append((event.anchor, nodes))
            nodes += 1
        elif isinstance(event, CollectionEndEvent):
            depth -= 1
            anchor, start = opened.pop()
            if anchor:
                sizes[anchor] = nodes - start


def read_yaml(text: str, source: str, *, aliases: bool = False, lines: bool = False,
              what: str = "this file") -> JsonValue:

    """``text`` as Python data after ``check``: ruamel's round-trip tree (``lines=True``: dict and
    list subclasses that remember each key's line) or plain dicts, lists and scalars."""
    try:
        check(text, source, aliases=aliases, what=what)
        yaml = YAML(typ="rt") if lines else YAML(typ="safe", pure=True)
        return yaml.load(text)
    except RecursionError:
        raise YamlRefused(source, None, "nested too deeply to read") from None
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise YamlRefused(source, line, f"not valid YAML/JSON: {getattr(exc, 'problem', None) or exc}") from None
