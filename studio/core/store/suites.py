"""The suite repository: suites versioned, lockable and trashable exactly like graders.

A suite names graders by key; every write checks them against the library first, so a suite that
would not run is never stored: a missing or trashed grader, a pinned version that does not exist,
a threshold outside the grader's score range, an overall composite that is not a composite or names
a grader outside the suite. Each refusal is one sentence.
"""

from __future__ import annotations

import builtins
import json

from sqlalchemy import Engine, select

from studio.core.models import CompositeGrader, GraderDefinition
from studio.core.models.broken import BrokenRow, BrokenRowError
from studio.core.models.suite import SuiteDefinition

from .errors import Conflict, NotFound
from .graders import GraderRepository
from .tables import TableRow, suite_versions, suites
from .versioned import HeadRecord, Validated, Versioned, VersionEntry


class SuiteRecord(HeadRecord[SuiteDefinition]):
    pass


class SuiteVersionRecord(VersionEntry[SuiteDefinition]):
    pass


class InvalidSuite(Conflict):
    """A suite that names something the library cannot run (the sentence says what)."""


def score_range(definition: GraderDefinition) -> tuple[float, float] | None:
    """The scores a grader can give, when its kind bounds them (None: any finite number): its kind's
    ``SCORE_BOUNDS`` (models/common.py, which the kind descriptor reads too), except a composite's,
    which its parts decide: ``any``/``all`` stay within its parts, a weighted one reaches its
    penalties' sum below 0."""
    return definition.score_bounds()


def _serialise(definition: SuiteDefinition) -> str:
    return json.dumps(definition.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)


#: a suite's stored rows read as outside values (store/versioned.py ``Validated``)
_READ: Validated[SuiteDefinition] = Validated("suite", "suites", SuiteDefinition.model_validate_json)


class SuiteRepository:
    def __init__(self, engine: Engine, graders: GraderRepository) -> None:
        self._engine = engine
        self._graders = graders
        self._v: Versioned[SuiteDefinition] = Versioned(engine, suites, suite_versions, "suite_id", "suite",
                                                        lambda d: {"name": d.name})

    # -- reading -------------------------------------------------------------------------------
    def _record(self, row: TableRow, text: str | None, author: str = "") -> SuiteRecord:
        entry = _READ.head(SuiteRecord, row._asdict(), text, author)
        if isinstance(entry, BrokenRow):
            raise BrokenRowError(entry)
        return entry

    def list(self, *, include_deleted: bool = False, deleted_only: bool = False) -> list[SuiteRecord]:
        """The suites whose current version validates (``listing`` shows the others as broken)."""
        return [e for e in self.listing(include_deleted=include_deleted, deleted_only=deleted_only)
                if isinstance(e, SuiteRecord)]

    def listing(self, *, include_deleted: bool = False,
                deleted_only: bool = False) -> builtins.list[SuiteRecord | BrokenRow]:
        """Every suite, each validated on read: one whose stored row does not validate (a
        teammate's write) is a ``BrokenRow`` naming it, and the others still list."""
        query = (select(suites, suite_versions.c.definition, suite_versions.c.author)
                 .join(suite_versions, (suite_versions.c.suite_id == suites.c.id)
                       & (suite_versions.c.version == suites.c.current_version), isouter=True)
                 .order_by(suites.c.key))
        if deleted_only:
            query = query.where(suites.c.deleted_at.is_not(None))
        elif not include_deleted:
            query = query.where(suites.c.deleted_at.is_(None))
        with self._engine.connect() as conn:
            rows = conn.execute(query).all()
        out: builtins.list[SuiteRecord | BrokenRow] = []
        for row in rows:
            fields = row._asdict()
            text, author = fields.pop("definition"), fields.pop("author")
            out.append(_READ.head(SuiteRecord, fields, text, author))
        return out

    def exists(self, key: str) -> bool:
        """Is ``key`` a live suite (``run KEY`` takes a suite key wherever it takes a grader's)?"""
        with self._engine.connect() as conn:
            row = self._v.row(conn, key)
        return row is not None and row.deleted_at is None

    def get(self, key: str, *, include_deleted: bool = False) -> SuiteRecord:
        with self._engine.connect() as conn:
            row = self._v.get_row(conn, key, include_deleted)
            version = conn.execute(select(suite_versions.c.definition, suite_versions.c.author).where(
                suite_versions.c.suite_id == row.id, suite_versions.c.version == row.current_version)).first()
            return self._record(row, version.definition if version else None, version.author if version else "")

    def versions(self, key: str) -> builtins.list[SuiteVersionRecord]:
        return [_READ.version(SuiteVersionRecord, key, r) for r in self._v.version_rows(key)]

    def version(self, key: str, number: int) -> SuiteVersionRecord:
        for row in self._v.version_rows(key):
            if row.version == number:
                return _READ.version(SuiteVersionRecord, key, row)
        raise NotFound(f"suite {key!r} has no version {number}")

    # -- checks --------------------------------------------------------------------------------
    def check(self, definition: SuiteDefinition, *, own_key: bool = True) -> None:
        """Refuse (one sentence) a suite the library could not run (``own_key``: also a key a
        grader already has, which ``run KEY`` could not tell apart)."""
        if own_key and self._graders_has(definition.key):
            raise InvalidSuite(f"{definition.key!r} is already a grader's key: a suite needs a key of its own "
                               "(`run KEY` takes either)")
        for member in definition.graders:
            record = self._graders.get(member.grader)  # NotFound: missing, or in the trash
            grader = record.definition
            if member.version is not None:
                grader = self._graders.version(member.grader, member.version).definition
            bounds = score_range(grader)
            if member.threshold is not None and bounds is not None and not bounds[0] <= member.threshold <= bounds[1]:
                raise InvalidSuite(f"the threshold {member.threshold:g} for {member.grader!r} is outside its scores "
                                   f"({bounds[0]:g} to {bounds[1]:g})")
        if definition.overall == "composite":
            key = definition.overall_grader or ""
            composite = self._graders.get(key).definition
            if not isinstance(composite, CompositeGrader):  # a real check of the user's suite, not a kind ladder
                raise InvalidSuite(f"the overall grader {key!r} is a {composite.kind} grader, not a composite")
            outside = [c.grader.key for c in composite.components if c.grader.key not in definition.grader_keys()]
            if outside:
                raise InvalidSuite(f"the composite {key!r} combines {', '.join(map(repr, outside))}, which the suite "
                                   "does not run: add them to the suite or pick another overall rule")

    def _graders_has(self, key: str) -> bool:
        try:
            self._graders.get(key, include_deleted=True)
        except NotFound:
            return False
        return True

    # -- writing -------------------------------------------------------------------------------
    def create(self, definition: SuiteDefinition, message: str = "") -> SuiteRecord:
        self.check(definition)
        self._v.create(definition.key, definition, _serialise(definition), message)
        return self.get(definition.key)

    def save(self, definition: SuiteDefinition, message: str = "", *, base_version: int | None = None) -> SuiteRecord:
        """A new version; ``base_version`` (the version the edit began from) refuses a stale save."""
        self.check(definition)
        self._v.save(definition.key, definition, _serialise(definition), message, base_version=base_version)
        return self.get(definition.key)

    def restore_version(self, key: str, number: int) -> SuiteRecord:
        return self.save(self.version(key, number).definition, message=f"restored from v{number}")

    def delete(self, key: str) -> None:
        self._v.delete(key)

    def restore(self, key: str) -> SuiteRecord:
        self._v.restore(key)
        return self.get(key)

    def set_locked(self, key: str, locked: bool, *, force: bool = False) -> SuiteRecord:
        self._v.set_locked(key, locked, force=force)
        return self.get(key)
