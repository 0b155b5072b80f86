"""The grader repository: live graders unique by key, immutable versions, locks and tombstones.

One row per key for its whole life: deleting sets a tombstone, creating the key again (Adaptive's
"delete and recreate") clears it and appends a version, so the history of a key is never split or lost.
"""

from __future__ import annotations

import builtins
import json

from sqlalchemy import Connection, Engine, func, select

from studio.core.models import GraderBase, GraderDefinition, dump_grader, parse_grader
from studio.core.models.broken import BrokenRow, BrokenRowError
from studio.core.outside import loads_outside

from .errors import NotFound
from .tables import TableRow, grader_versions, graders
from .versioned import HeadRecord, Validated, Versioned, VersionEntry


class GraderRecord(HeadRecord[GraderDefinition]):
    kind: str


class VersionRecord(VersionEntry[GraderDefinition]):
    pass


def _serialise(definition: GraderDefinition) -> str:
    return json.dumps(dump_grader(definition), sort_keys=True, ensure_ascii=False)


#: the grader's stored rows read as outside values (store/versioned.py ``Validated``)
#: (``stored=True``: a row an older release wrote that breaks a newer rule loads, its ``problems()``
#: saying what, instead of being broken)
_READ: Validated[GraderDefinition] = Validated("grader", "graders",
                                               lambda text: parse_grader(loads_outside(text), stored=True))


class GraderRepository:
    """Definitions are read back with ``stored=True``: a row an older release wrote that breaks a newer
    rule loads (its ``problems()`` say what) instead of making the whole library unreadable."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        #: the versioning pattern suites share (store/versioned.py)
        self._v: Versioned[GraderBase] = Versioned(engine, graders, grader_versions, "grader_id", "grader",
                                                   lambda d: {"kind": d.kind, "name": d.name})

    # -- reading -------------------------------------------------------------------------------
    def _row(self, conn: Connection, key: str) -> TableRow | None:
        return self._v.row(conn, key)

    def _record(self, conn: Connection, row: TableRow) -> GraderRecord:
        version = conn.execute(select(grader_versions.c.definition, grader_versions.c.author).where(
            grader_versions.c.grader_id == row.id, grader_versions.c.version == row.current_version)).first()
        entry = _READ.head(GraderRecord, row._asdict(), version.definition if version else None,
                            version.author if version else "")
        if isinstance(entry, BrokenRow):
            raise BrokenRowError(entry)
        return entry

    def list(self, *, include_deleted: bool = False, deleted_only: bool = False) -> list[GraderRecord]:
        """The graders whose current version validates (``listing`` shows the others as broken)."""
        return [entry for entry in self.listing(include_deleted=include_deleted, deleted_only=deleted_only)
                if isinstance(entry, GraderRecord)]

    def listing(self, *, include_deleted: bool = False,
                deleted_only: bool = False) -> builtins.list[GraderRecord | BrokenRow]:
        """One query, each grader joined with its current version (the sidebar refreshes often),
        each validated on read: a grader whose stored row or definition does not validate (a
        teammate's write) is a ``BrokenRow`` naming it, and the others still list."""
        query = (
            select(graders, grader_versions.c.definition, grader_versions.c.author)
            .join(grader_versions, (grader_versions.c.grader_id == graders.c.id)
                  & (grader_versions.c.version == graders.c.current_version), isouter=True)
            .order_by(graders.c.kind, graders.c.key)
        )
        if deleted_only:
            query = query.where(graders.c.deleted_at.is_not(None))
        elif not include_deleted:
            query = query.where(graders.c.deleted_at.is_(None))
        with self._engine.connect() as conn:
            rows = conn.execute(query).all()
        records: builtins.list[GraderRecord | BrokenRow] = []
        for row in rows:
            fields = row._asdict()
            text, author = fields.pop("definition"), fields.pop("author")
            records.append(_READ.head(GraderRecord, fields, text, author))
        return records

    def broken(self) -> builtins.list[BrokenRow]:
        return [entry for entry in self.listing() if isinstance(entry, BrokenRow)]

    def get(self, key: str, *, include_deleted: bool = False) -> GraderRecord:
        with self._engine.connect() as conn:
            return self._record(conn, self._v.get_row(conn, key, include_deleted))

    def versions(self, key: str) -> builtins.list[VersionRecord]:
        """Every version of ``key``; a ``BrokenRowError`` naming the first that does not validate."""
        return [_READ.version(VersionRecord, key, r) for r in self._v.version_rows(key)]

    def version(self, key: str, number: int) -> VersionRecord:
        """Version ``number`` of ``key`` (only that one is read: a broken other version does not
        stop ``graders restore KEY --version N`` of a good one)."""
        for row in self._v.version_rows(key):
            if row.version == number:
                return _READ.version(VersionRecord, key, row)
        raise NotFound(f"grader {key!r} has no version {number}")

    def diff(self, key: str, old: int, new: int) -> str:
        """Unified diff of two versions' YAML files: what a person reviews."""
        import difflib  # the YAML writer and difflib: only a diff pays for them (not a run's start-up)

        from studio.core.models.files import to_yaml

        a, b = self.version(key, old), self.version(key, new)
        return "".join(
            difflib.unified_diff(
                to_yaml(a.definition).splitlines(keepends=True),
                to_yaml(b.definition).splitlines(keepends=True),
                fromfile=f"{key} v{old}",
                tofile=f"{key} v{new}",
            )
        )

    # -- writing -------------------------------------------------------------------------------
    def plan_create(self, key: str) -> tuple[str, str | None]:
        """What ``create`` would do with ``key``: ("create" | "recreate" | "refuse", the refusal)."""
        return self._v.plan_create(key)

    def create(self, definition: GraderDefinition, message: str = "") -> GraderRecord:
        """Create a grader; a key in the trash is recreated (its history continues)."""
        self._v.create(definition.key, definition, _serialise(definition), message)
        return self.get(definition.key)

    def save(self, definition: GraderDefinition, message: str = "", *,
             base_version: int | None = None) -> GraderRecord:
        """Store an edit as a new version; an unchanged definition adds nothing. ``base_version``,
        the version the edit began from: a head moved since (another analyst saved) is refused."""
        text = _serialise(definition)
        self._v.save(definition.key, definition, text, message,
                     same=lambda stored: _READ.same(_serialise, stored, text),
                     base_version=base_version)
        return self.get(definition.key)

    def restore_version(self, key: str, number: int) -> GraderRecord:
        """Make an old version current again, as a new version (history only grows)."""
        old = self.version(key, number)
        return self.save(old.definition, message=f"restored from v{number}")

    def delete(self, key: str) -> None:
        self._v.delete(key)

    def restore(self, key: str) -> GraderRecord:
        self._v.restore(key)
        return self.get(key)

    def set_locked(self, key: str, locked: bool, *, force: bool = False) -> GraderRecord:
        """Lock (owned by this user) or unlock; another user's lock needs ``force`` (recorded)."""
        self._v.set_locked(key, locked, force=force)
        return self.get(key)

    def count(self) -> int:
        with self._engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(graders).where(graders.c.deleted_at.is_(None))).scalar_one()
