"""A suite as one file (``*.suite.yaml``): the suite and every grader it uses, at the versions it runs.

Exporting pins nothing new: a member that follows the current version is written with the current
definition and stays unpinned. Importing creates the graders the library lacks, reuses a grader whose
definition is the same, and saves a differing one as a new version (a locked one is refused); a
pinned member is then pinned to the version that holds the file's definition. Everything is checked
before anything is written, so a refused file leaves the library as it was.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import ValidationError

from studio.core.json_types import JsonObject
from studio.core.models import CompositeGrader, GraderDefinition, dump_grader
from studio.core.models.files import (
    DefinitionError,
    dump_yaml,
    parse_document,
    plain,
    read_tree,
    to_document,
)
from studio.core.models.suite import SuiteDefinition

from .errors import Conflict, Locked, NotFound
from .suites import InvalidSuite, SuiteRecord, score_range

if TYPE_CHECKING:  # the library imports every repository; a suite file needs only its graders and suites
    from .library import Library

SCHEMA_VERSION = 1


def suite_document(library: Library, key: str) -> JsonObject:
    """The file's content: ``schema_version``, ``suite`` and ``graders`` (one document each)."""
    record = library.suites.get(key)
    graders = []
    for member in record.definition.graders:
        if member.version is None:
            definition = library.graders.get(member.grader).definition
        else:
            definition = library.graders.version(member.grader, member.version).definition
        graders.append(to_document(definition))
    suite = record.definition.model_dump(mode="json", exclude_defaults=True)
    suite["key"] = record.key
    return {"schema_version": SCHEMA_VERSION, "suite": suite, "graders": graders}


def export_suite(library: Library, key: str) -> str:
    return dump_yaml(suite_document(library, key))


def read_suite(text: str, source: str = "<suite>") -> tuple[SuiteDefinition, list[GraderDefinition]]:
    """Parse a suite file; every grader in it must be one the suite names, and vice versa."""
    tree = read_tree(text, source)
    data = plain(tree)
    if not isinstance(data, dict) or not isinstance(data.get("suite"), dict):
        raise DefinitionError(source, [(None, "", "a suite file needs a `suite:` mapping and a `graders:` list")])
    if data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
        raise DefinitionError(source, [(None, "schema_version", f"this Grader Studio reads suite files of schema "
                                                                   f"{SCHEMA_VERSION}")])
    try:
        suite = SuiteDefinition.model_validate(data["suite"])
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DefinitionError(source, [(None, f"suite.{where}", str(first["msg"]).removeprefix("Value error, "))]) from None
    raw_graders = data.get("graders") or []
    if not isinstance(raw_graders, list):
        raise DefinitionError(source, [(None, "graders", "must be a list of grader definitions")])
    graders = [parse_document(g, f"{source} graders[{n}]") for n, g in enumerate(raw_graders)]
    named, given = set(suite.grader_keys()), [g.key for g in graders]
    missing = sorted(named - set(given))
    if missing:
        raise DefinitionError(source, [(None, "graders", f"the suite uses {', '.join(missing)} but the file does not "
                                                          "hold their definitions")])
    extra = sorted(set(given) - named - ({suite.overall_grader} if suite.overall_grader else set()))
    if extra or len(given) != len(set(given)):
        raise DefinitionError(source, [(None, "graders", "each grader the suite uses, once (and nothing else)")])
    return suite, graders


def _same(a: GraderDefinition, b: GraderDefinition) -> bool:
    return json.dumps(dump_grader(a), sort_keys=True) == json.dumps(dump_grader(b), sort_keys=True)


def import_suite(library: Library, text: str, *, source: str = "<suite>", key: str | None = None) -> SuiteRecord:
    """Bring a suite file into the library (see the module's docstring); ``key`` renames the suite."""
    suite, graders = read_suite(text, source)
    if key is not None:
        suite = suite.model_copy(update={"key": key})
    plan: list[tuple[str, GraderDefinition]] = []  # ("create" | "save" | "keep", definition)
    for grader in graders:
        try:
            existing = library.graders.get(grader.key)
        except NotFound:
            plan.append(("create", grader))
            continue
        if _same(existing.definition, grader):
            plan.append(("keep", grader))
        elif existing.locked:
            raise Locked(f"grader {grader.key!r} is locked here and differs from the file's: unlock it to import")
        else:
            plan.append(("save", grader))
    if library.suites.exists(suite.key):
        raise Conflict(f"a suite with key {suite.key!r} already exists; import under another key")
    _precheck(suite, {g.key: g for g in graders})
    pins: dict[str, int] = {}
    for action, grader in plan:
        if action == "create":
            record = library.graders.create(grader, message=f"imported with suite {suite.key}")
        elif action == "save":
            record = library.graders.save(grader, message=f"imported with suite {suite.key}")
        else:
            record = library.graders.get(grader.key)
        pins[grader.key] = record.current_version
    members = [m.model_copy(update={"version": pins[m.grader]}) if m.version is not None else m
               for m in suite.graders]
    suite = suite.model_copy(update={"graders": members})
    return library.suites.create(suite, message="imported")


def _precheck(suite: SuiteDefinition, graders: dict[str, GraderDefinition]) -> None:
    """The suite's own checks on the file's definitions, before the library is touched."""
    for member in suite.graders:
        bounds = score_range(graders[member.grader])
        if member.threshold is not None and bounds is not None and not bounds[0] <= member.threshold <= bounds[1]:
            raise InvalidSuite(f"the threshold {member.threshold:g} for {member.grader!r} is outside its scores "
                               f"({bounds[0]:g} to {bounds[1]:g})")
    composite = graders.get(suite.overall_grader or "")
    if composite is not None:
        if not isinstance(composite, CompositeGrader):  # a real check of the suite file, not a kind ladder
            raise InvalidSuite(f"the overall grader {composite.key!r} is a {composite.kind} grader, not a composite")
        outside = [c.grader.key for c in composite.components if c.grader.key not in suite.grader_keys()]
        if outside:
            raise InvalidSuite(f"the composite {composite.key!r} combines {', '.join(map(repr, outside))}, which the "
                               "suite does not run")
