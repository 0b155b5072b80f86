"""Opening a library: a SQLite file (WAL mode, real transactions) or a PostgreSQL database, with
the Alembic migrations applied on open (in one transaction, or not at all)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import Connection, CursorResult, Engine, create_engine, event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

from studio.core.safe_files import file_problem

from . import file_guard
from .errors import LibraryError, LibraryUnreachable, NotALibrary
from .location import Location, display, is_server_url
from .postgres import first_line
from .schema import HEAD_REVISION, REVISIONS, SCHEMA_VERSION

ALEMBIC_DIR = Path(__file__).with_name("revisions")

#: PostgreSQL advisory lock taken while migrating: two studios opening a new library at once
_MIGRATION_LOCK = 0x67726164  # "grad"


class SchemaTooNew(LibraryError):
    pass


class NotPermitted(LibraryError):
    """The server refused the database role what opening the library needs (reading its schema
    version, or upgrading it): a sentence naming what is needed and who can do it (docs/team.md)."""

    exit_code = 2


#: SQLSTATE of "permission denied" / "must be owner of" (PostgreSQL's insufficient_privilege)
_INSUFFICIENT_PRIVILEGE = "42501"


def _refused_privilege(exc: BaseException) -> bool:
    return getattr(getattr(exc, "orig", None), "sqlstate", None) == _INSUFFICIENT_PRIVILEGE


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


#: a row as a DB-API driver gives it (sqlite3's tuple, psycopg's): the drivers type its values as
#: Any, and the hot paths read them by position, each checked where it is read (like decoded JSON)
DriverRow = tuple[Any, ...]


class DriverConnection(Protocol):
    """What the hot paths use of a driver's own connection: sqlite3's, or psycopg's with the
    library's qmark cursor (``postgres.py``), so the same ``?`` SQL runs on both."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Any: ...

    def cursor(self) -> Any: ...


def driver_connection(pooled: PoolProxiedConnection) -> DriverConnection:
    """The driver's connection under a pooled one, for the hot paths that skip the SQL layer.

    The pool types it as optional (none once the connection is closed); a closed connection here
    is a bug worth a loud error rather than an AttributeError further on.
    """
    raw: DriverConnection | None = pooled.driver_connection  # sqlite3's or psycopg's (the docstring's two)
    if raw is None:
        raise LibraryError("the library's connection is closed")
    return raw


def sqlite_connection(pooled: PoolProxiedConnection) -> sqlite3.Connection:
    """``driver_connection`` on a SQLite library, where the caller uses sqlite3's own API."""
    raw = pooled.driver_connection
    if not isinstance(raw, sqlite3.Connection):
        raise TypeError(f"expected a sqlite3 connection under the pool, got {type(raw).__name__}")
    return raw


def inserted_id(result: CursorResult[*tuple[object, ...]]) -> int:
    """The integer primary key of the row an INSERT just made.

    SQLAlchemy types the key as optional (other statements have none); every table here has an
    integer ``id``, so a missing key means the statement was not a one-row INSERT: a bug.
    """
    key = result.inserted_primary_key
    if key is None:
        raise TypeError("the statement inserted no row with a primary key")
    return int(key[0])


def open_engine(location: Location) -> Engine:
    """An engine on a library file or server, migrated to this release's schema."""
    if is_server_url(location):
        from .postgres import create_server_engine

        engine = create_server_engine(str(location))
    else:
        engine = _sqlite_engine(location)
    try:
        with engine.begin() as conn:
            migrate(conn)
    except DBAPIError as exc:
        engine.dispose()
        if not is_server_url(location):
            if damaged(exc):
                raise NotALibrary(f"{location} is not a Grader Studio library: {first_line(exc)} (choose "
                                  "another file, or restore it from a backup)") from None
            raise
        from studio.core.urls import scrub

        raise LibraryUnreachable(f"cannot open the library at {display(location)}: "
                                 f"{scrub(first_line(exc), location)}") from None
    except BaseException:
        engine.dispose()
        raise
    return engine


def _sqlite_engine(path: Path | str) -> Engine:
    """An engine whose transactions are real SQLite transactions (DDL included).

    pysqlite's own transaction handling skips DDL and PRAGMAs; we turn it off and emit BEGIN
    ourselves, so a migration and its ``user_version`` bump commit together or not at all.
    """
    url = "sqlite://" if str(path) == ":memory:" else f"sqlite:///{Path(path)}"
    if str(path) != ":memory:" and os.path.lexists(path) and (problem := file_problem(path)) is not None:
        # a folder, a FIFO (SQLite's open would wait on it forever), a device: only looked at (stat)
        raise NotALibrary(f"the library {path} cannot be used: {problem}")
    if str(path) != ":memory:":
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a folder that cannot be made (no such parent, read-only, a file in the way)
            raise LibraryUnreachable(f"cannot create the library's folder {Path(path).parent}: "
                                     f"{exc.strerror or type(exc).__name__}") from None
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        if str(path) != ":memory:":
            _refuse_foreign(cursor, path)
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN")

    if str(path) != ":memory:":
        file_guard.track_engine(engine, path)  # nothing else in this process opens the file
    return engine


def take_turns(conn: Connection, key: str) -> None:
    """Writers of one thing (a label set, a queue) take turns, from the first statement of their
    transaction: on PostgreSQL by an advisory lock on ``key``, on SQLite by taking the write lock
    before the first read. A SQLite transaction that read first and then writes fails at once with
    "database is locked" when another writer committed in between (WAL cannot upgrade a stale
    snapshot, and the busy timeout does not wait for that); a write as the first statement waits
    its turn under the busy timeout instead. Two reviewers in two windows met it at once."""
    if conn.dialect.name == "sqlite":
        conn.execute(text("UPDATE datasets SET id = id WHERE id = -1"))
    else:
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": key})


def stored_revision(conn: Connection) -> str | None:
    """The Alembic revision a library is stamped with (None: none yet, or a SQLite file from before
    Alembic, told by its ``user_version``)."""
    if conn.dialect.name == "postgresql":
        exists = conn.exec_driver_sql("SELECT to_regclass('alembic_version')").scalar()
    else:
        exists = conn.exec_driver_sql(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'").scalar()
    if not exists:
        return None
    return conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()


def migrate(conn: Connection) -> bool:
    """Bring the library to this release's schema inside the caller's transaction; True when a
    revision ran. A library already there costs one or two reads (no Alembic import): on a server
    an analyst's role needs only to read ``alembic_version``; an upgrade is the owner role's."""
    sqlite = conn.dialect.name == "sqlite"
    if sqlite:
        version = int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"this library was written by a newer Grader Studio (schema {version}, "
                f"this one knows up to {SCHEMA_VERSION}); upgrade to open it")
        if version == SCHEMA_VERSION:
            return False
    role = ""
    if not sqlite:  # the role asked in the same round trip: a refusal below names it
        role = str(conn.exec_driver_sql(f"SELECT current_user, pg_advisory_xact_lock({_MIGRATION_LOCK})").scalar())
    try:
        revision = stored_revision(conn)
    except DBAPIError as exc:
        if not _refused_privilege(exc):
            raise
        raise NotPermitted(
            f"the database role {role!r} may not read the library at {_where(conn)} (the server said: "
            f"{first_line(exc)}): the library's owner grants the analysts' group role its privileges "
            "(the GRANT statements in docs/team.md, 'Setting it up') and makes this role a member") from None
    if revision is not None and revision not in REVISIONS:
        raise SchemaTooNew(f"the library at {_where(conn)} was written by a newer Grader "
                           f"Studio (schema {revision}); upgrade to open it")
    if revision == HEAD_REVISION:
        return False
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    config.attributes["connection"] = conn
    owner = None if sqlite else _owner(conn, revision)
    try:
        command.upgrade(config, "head")
    except DBAPIError as exc:
        if sqlite or not _refused_privilege(exc):
            raise
        what = "its tables created" if revision is None else f"an upgrade of its schema ({revision} to {HEAD_REVISION})"
        raise NotPermitted(
            f"the library at {_where(conn)} needs {what} for this release, which the database role "
            f"{role!r} may not make (the server said: {first_line(exc)}): the owner role {owner!r} "
            f"makes it by opening the library once with this release (`grader-studio --db "
            f"postgresql://{owner}@HOST:PORT/DATABASE library info`), then everyone can open it "
            "(docs/team.md)") from None
    return True


def damaged(exc: DBAPIError) -> bool:
    """SQLite's "file is not a database" and "database disk image is malformed" (a cut or damaged
    file): a ``DatabaseError`` of its own, not an ``OperationalError`` (locked, full, read-only)."""
    return type(exc.orig) is sqlite3.DatabaseError


def _refuse_foreign(cursor: sqlite3.Cursor, path: Path | str) -> None:
    """A SQLite file with tables but none of ours is another program's database: the studio's
    tables are never added to it (a library from before Alembic has ``graders``). Asked on the
    connection's first use, before anything (WAL mode included) writes to the file."""
    tables = [str(name) for (name,) in cursor.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    if tables and "graders" not in tables:
        shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
        raise NotALibrary(f"{path} is another program's SQLite database (its tables: {shown}), not a "
                          "Grader Studio library: nothing was changed; name a new file or a library")


def _owner(conn: Connection, revision: str | None) -> str:
    """Who may migrate a server library: the owner of its tables (``alembic_version``), or of the
    database while it has none. Read from the catalog, which every role may read."""
    if revision is not None:
        found = conn.exec_driver_sql(
            "SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = to_regclass('alembic_version')").scalar()
        if found:
            return str(found)
    return str(conn.exec_driver_sql(
        "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()").scalar())


def _where(conn: Connection) -> str:
    """The library as a person named it: the file, or the URL (as postgresql://, masked)."""
    url = conn.engine.url
    if url.get_backend_name() == "sqlite":
        return url.database or ":memory:"
    return display(url.set(drivername="postgresql").render_as_string(hide_password=True))
