"""The versioning pattern graders and suites share: one head row per key, immutable versions.

A key has one head row for its whole life (``current_version``, ``locked``, ``deleted_at``) and a
versions table whose rows the database refuses to alter. Deleting sets a tombstone; creating the key
again clears it and appends a version, so a key's history is never split. The grader and suite
repositories hold one ``Versioned`` each and add what is their own (parsing, listing, diffs).

Several analysts may share a library (docs/team.md): every version names its author, a lock names
its owner and since when, and only the owner (or ``unlock --force``, recorded as a version) lifts
it. A save names the version it was based on: one whose stored head has moved since is refused
(``StaleVersion``), never written over another analyst's version.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from datetime import datetime
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Connection, Engine, Table, insert, select, update

from studio.core.json_types import JsonObject
from studio.core.models.broken import BrokenRow, BrokenRowError, reason_of
from studio.core.near_names import did_you_mean
from studio.core.outside import printable

from .authors import current_user
from .database import inserted_id, take_turns, utcnow
from .errors import Conflict, Locked, NotFound, StaleVersion
from .tables import TableRow

D = TypeVar("D")
R = TypeVar("R")
V = TypeVar("V")


class HeadRecord(BaseModel, Generic[D]):
    """A key's head row with its current definition (a grader's, a suite's)."""

    model_config = ConfigDict(defer_build=True, arbitrary_types_allowed=True)

    id: int
    key: str
    name: str
    locked: bool
    #: who locked it and when (None: unlocked, or locked by a release that did not record it)
    locked_by: str | None = None
    locked_at: datetime | None = None
    deleted_at: datetime | None
    current_version: int
    created_at: datetime
    updated_at: datetime
    definition: D

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None


class VersionEntry(BaseModel, Generic[D]):
    """One immutable version of a key: what was done, why, and the definition it left."""

    model_config = ConfigDict(defer_build=True)

    version: int
    action: str
    message: str
    #: None: a time the library could not read (a hand edit): shown "unknown time"
    created_at: datetime | None
    definition: D
    #: who wrote it ("" for versions written before authors were recorded)
    author: str = ""


class Versioned(Generic[D]):
    def __init__(self, engine: Engine, head: Table, versions: Table, owner: str, noun: str,
                 head_values: Callable[[D], JsonObject]) -> None:
        self.engine = engine
        self.head = head
        self.versions = versions
        self.owner = versions.c[owner]  # the versions table's column naming the head row
        self.noun = noun
        #: the head row's columns that follow the current definition (a grader's kind and name)
        self.head_values = head_values

    # -- reading -------------------------------------------------------------------------------
    def row(self, conn: Connection, key: str) -> TableRow | None:
        return conn.execute(select(self.head).where(self.head.c.key == key)).first()

    def missing(self, conn: Connection, key: str, hint: str = "", *, trashed: bool = False) -> NotFound:
        """"no grader with key 'exactt'; did you mean 'exact'?" (live keys are offered, or with
        ``trashed`` those in the trash)."""
        where = self.head.c.deleted_at.is_not(None) if trashed else self.head.c.deleted_at.is_(None)
        keys = conn.execute(select(self.head.c.key).where(where).order_by(self.head.c.key)).scalars()
        return NotFound(f"no {self.noun} with key {key!r}{hint}{did_you_mean(key, keys) if not hint else ''}")

    def live_row(self, conn: Connection, key: str) -> TableRow:
        row = self.row(conn, key)
        if row is None:
            raise self.missing(conn, key)
        if row.deleted_at is not None:
            raise NotFound(f"{self.noun} {key!r} is in the trash: restore it first")
        return row

    def get_row(self, conn: Connection, key: str, include_deleted: bool) -> TableRow:
        row = self.row(conn, key)
        if row is None or (row.deleted_at is not None and not include_deleted):
            hint = " (it is in the trash: restore it first)" if row is not None else ""
            raise self.missing(conn, key, hint)
        return row

    def text(self, conn: Connection, head_id: int, version: int) -> str | None:
        return conn.execute(select(self.versions.c.definition).where(
            self.owner == head_id, self.versions.c.version == version)).scalar()

    def version_rows(self, key: str) -> list[TableRow]:
        with self.engine.connect() as conn:
            row = self.row(conn, key)
            if row is None:
                raise self.missing(conn, key)
            return list(conn.execute(select(self.versions).where(self.owner == row.id)
                                     .order_by(self.versions.c.version)))

    # -- writing -------------------------------------------------------------------------------
    def _append(self, conn: Connection, head_id: int, version: int, action: str, text: str, message: str) -> None:
        conn.execute(insert(self.versions).values(
            {self.owner.name: head_id, "version": version, "action": action, "definition": text,
             "message": message, "created_at": utcnow(), "author": current_user()}))

    def _head_for_update(self, conn: Connection, key: str) -> TableRow:
        """The live head row, locked for this transaction (two analysts saving at once queue here:
        on SQLite by taking the write lock before the first read, database.take_turns)."""
        if conn.dialect.name == "sqlite":
            take_turns(conn, key)
            return self.live_row(conn, key)
        row = conn.execute(select(self.head).where(self.head.c.key == key).with_for_update()).first()
        if row is None:
            raise NotFound(f"no {self.noun} with key {key!r}")
        if row.deleted_at is not None:
            raise NotFound(f"{self.noun} {key!r} is in the trash: restore it first")
        return row

    def _refuse_locked(self, row: TableRow, doing: str) -> None:
        """A locked key refuses edits and deletes; the sentence names the lock's owner."""
        if not row.locked:
            return
        if row.locked_by and row.locked_by != current_user():
            raise Locked(f"{self.noun} {row.key!r} is {lock_sentence(row)}: ask them to unlock it, "
                         f"or unlock it with --force")
        raise Locked(f"{self.noun} {row.key!r} is locked: unlock it {doing}")

    def exists_sentence(self, key: str) -> str:
        return (f"a {self.noun} with key {key!r} already exists; save a new version of it, or delete it "
                "first to recreate it")

    def plan_create(self, key: str) -> tuple[str, str | None]:
        """What ``create`` would do with ``key``: ("create" | "recreate" | "refuse", the refusal)."""
        with self.engine.connect() as conn:
            row = self.row(conn, key)
        if row is None:
            return "create", None
        if row.deleted_at is not None:
            return "recreate", None
        return "refuse", self.exists_sentence(key)

    def create(self, key: str, definition: D, text: str, message: str = "") -> None:
        """Create ``key``; a key in the trash is recreated (its history continues)."""
        now = utcnow()
        values = self.head_values(definition)
        with self.engine.begin() as conn:
            take_turns(conn, f"{self.noun} {key}")  # two analysts creating at once take turns
            row = self.row(conn, key)
            if row is not None and row.deleted_at is None:
                raise Conflict(self.exists_sentence(key))
            if row is None:
                head_id = inserted_id(conn.execute(insert(self.head).values(
                    key=key, locked=False, deleted_at=None, current_version=1, created_at=now,
                    updated_at=now, **values)))
                self._append(conn, head_id, 1, "create", text, message)
            else:
                version = row.current_version + 1
                conn.execute(update(self.head).where(self.head.c.id == row.id).values(
                    locked=False, deleted_at=None, current_version=version, updated_at=now, **values))
                self._append(conn, row.id, version, "recreate", text, message)

    def save(self, key: str, definition: D, text: str, message: str = "",
             same: Callable[[str], bool] | None = None, base_version: int | None = None) -> bool:
        """Store an edit as a new version; False when it equals the current one (nothing added).
        ``same(stored text)`` compares beyond the text (a definition stored by an older release).
        ``base_version``: the version the edit started from; a head moved since is refused."""
        with self.engine.begin() as conn:
            row = self._head_for_update(conn, key)
            self._refuse_locked(row, "to edit")
            if base_version is not None and row.current_version != base_version:
                entry = conn.execute(select(self.versions).where(
                    self.owner == row.id, self.versions.c.version == row.current_version)).first()
                raise StaleVersion(self.noun, key, base_version, row.current_version,
                                   entry.author if entry is not None else "", row.updated_at)
            current = self.text(conn, row.id, row.current_version) or ""
            if current == text or (same is not None and same(current)):
                return False
            version = row.current_version + 1
            conn.execute(update(self.head).where(self.head.c.id == row.id).values(
                current_version=version, updated_at=utcnow(), **self.head_values(definition)))
            self._append(conn, row.id, version, "save", text, message)
        return True

    def delete(self, key: str) -> None:
        with self.engine.begin() as conn:
            row = self._head_for_update(conn, key)
            self._refuse_locked(row, "before deleting it")
            now = utcnow()
            conn.execute(update(self.head).where(self.head.c.id == row.id).values(deleted_at=now, updated_at=now))

    def restore(self, key: str) -> None:
        with self.engine.begin() as conn:
            take_turns(conn, f"{self.noun} {key}")
            row = self.row(conn, key)
            if row is None:
                raise self.missing(conn, key, trashed=True)
            if row.deleted_at is None:
                raise Conflict(f"{self.noun} {key!r} is not deleted")
            conn.execute(update(self.head).where(self.head.c.id == row.id).values(deleted_at=None, updated_at=utcnow()))

    def set_locked(self, key: str, locked: bool, *, force: bool = False) -> None:
        """Lock (owned by this user, from now) or unlock. Another user's lock is lifted only with
        ``force``, which appends a version (the same definition) saying whose lock was broken."""
        user = current_user()
        with self.engine.begin() as conn:
            row = self._head_for_update(conn, key)
            now = utcnow()
            if locked:
                if row.locked and row.locked_by and row.locked_by != user:
                    raise Locked(f"{self.noun} {key!r} is already {lock_sentence(row)}")
                if not row.locked:
                    conn.execute(update(self.head).where(self.head.c.id == row.id).values(
                        locked=True, locked_by=user, locked_at=now, updated_at=now))
                return
            if not row.locked:
                return
            others = bool(row.locked_by) and row.locked_by != user
            if others and not force:
                raise Locked(f"{self.noun} {key!r} is {lock_sentence(row)}: only they can unlock it "
                             "(or unlock it with --force, which is recorded in its history)")
            version = row.current_version
            if others:
                version += 1
                self._append(conn, row.id, version, "force-unlock",
                             self.text(conn, row.id, row.current_version) or "",
                             f"unlocked with --force: the lock was {lock_sentence(row).removeprefix('locked ')}")
            conn.execute(update(self.head).where(self.head.c.id == row.id).values(
                locked=False, locked_by=None, locked_at=None, current_version=version, updated_at=now))


def when(moment: datetime | None) -> str:
    """A stored (UTC) time as a person reads it in a sentence."""
    return "an unknown time" if moment is None else moment.strftime("%Y-%m-%d %H:%M UTC")


class _Locked(Protocol):
    """A head row or its record: who holds the lock and since when."""

    @property
    def locked_by(self) -> str | None: ...
    @property
    def locked_at(self) -> datetime | None: ...


def lock_sentence(row: _Locked | TableRow) -> str:
    """"locked by alice since 2026-11-27 09:14 UTC" (the lock's owner by name, and since when)."""
    if not row.locked_by:
        return "locked"
    return f"locked by {row.locked_by} since {when(row.locked_at)}"


class Validated(Generic[D]):
    """Reading a versioned key's stored rows as outside values (a teammate may have written them):
    each definition and head row validated, one that does not validate a ``BrokenRow`` naming the
    key or version, its author and how to repair it (docs/security.md, "Rows read from a library")."""

    def __init__(self, noun: str, command: str, parse: Callable[[str], D]) -> None:
        self.noun = noun  # "grader", "suite"
        self.command = command  # the CLI's group: "graders", "suites"
        self.parse = parse  # a definition from its stored JSON text (may raise ValueError/TypeError)

    def repair(self, key: str) -> str:
        word = shlex.quote(printable(key))
        return (f"restore a good version with `grader-studio {self.command} restore {word} --version N`"
                f" (`{self.command} versions {word}` lists them) or save a new one, or delete the {self.noun} with"
                f" `grader-studio {self.command} delete {word}` (in the window: Delete)")

    def broken(self, what: str, ident: str, author: object, exc: Exception, key: str) -> BrokenRow:
        return BrokenRow(what, ident, str(author or ""), reason_of(exc), self.repair(key), "" if ident == key else key)

    def definition(self, key: str, version: object, author: object, text: object) -> D:
        """A stored definition validated on read; a ``BrokenRowError`` naming the version."""
        try:
            return self.parse(text if isinstance(text, str) else "null")
        except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
            raise BrokenRowError(self.broken(f"{self.noun} version", f"{key} v{version}", author, exc, key)) from None

    def head(self, record: Callable[..., R], fields: JsonObject, text: object, author: object) -> R | BrokenRow:
        """A head row and its current definition validated: its record, or what is broken."""
        key = str(fields.get("key"))
        try:
            return record(**fields, definition=self.definition(key, fields.get("current_version"), author, text))
        except BrokenRowError as exc:
            return exc.row
        except ValueError as exc:  # the head row itself (a time that is no time)
            return self.broken(self.noun, key, author, exc, key)

    def version(self, record: Callable[..., V], key: str, row: TableRow) -> V:
        """One stored version validated; a ``BrokenRowError`` naming it."""
        definition = self.definition(key, row.version, row.author, row.definition)
        try:
            return record(version=row.version, action=row.action, message=row.message, created_at=row.created_at,
                          author=row.author, definition=definition)
        except ValueError as exc:
            raise BrokenRowError(self.broken(f"{self.noun} version", f"{key} v{row.version}", row.author, exc,
                                             key)) from None

    def same(self, serialise: Callable[[D], str], stored: str, text: str) -> bool:
        """Whether the stored head is the definition ``text`` (a broken head is not: saving over
        it is how it is repaired)."""
        try:
            return serialise(self.parse(stored)) == text
        except (ValueError, TypeError):
            return False
