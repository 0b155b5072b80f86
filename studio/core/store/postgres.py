"""A library on a shared PostgreSQL server (docs/team.md), through psycopg 3 and SQLAlchemy.

The library's SQL is written once, in SQLite's dialect with ``?`` placeholders (the driver-level
hot paths and the grid's queries); on PostgreSQL the driver's cursor translates the placeholders
(``?`` and ``?N`` to ``%s``) and SQLite's case-blind ``LIKE`` to ``ILIKE``, and the migration
creates the few SQLite functions those queries call (``json_extract``, ``json_each``, two-argument
``min``, ``printf('%g')``, ``json_group_array``). Passwords come from the URL, the environment
(``PGPASSWORD``) or ``~/.pgpass``; the studio never stores or prints them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # psycopg is imported when a server library is opened
    import psycopg
    from psycopg.abc import Buffer
    from psycopg.rows import TupleRow

from sqlalchemy import URL, Engine, create_engine, event
from sqlalchemy.pool import ConnectionPoolEntry

from studio.core.urls import UrlProblem, parse_server_url, scrub

from .errors import LibraryUnreachable
from .location import display

__all__ = ["LibraryUnreachable", "create_server_engine", "translate"]


@lru_cache(maxsize=512)
def translate(sql: str) -> tuple[str, tuple[int, ...] | None]:
    """``sql`` with ``?``/``?N`` as ``%s`` (and ``%`` doubled), plus the parameter order for ``?N``
    (None when the placeholders are plain ``?``); unchanged (order None) when it has none."""
    out: list[str] = []
    order: list[int] = []
    numbered = False
    found = False
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in "'\"":  # a literal or quoted identifier: copied as is (only % doubled)
            end = i + 1
            while end < n:
                if sql[end] == ch:
                    if end + 1 < n and sql[end + 1] == ch:
                        end += 2
                        continue
                    break
                end += 1
            out.append(sql[i:end + 1].replace("%", "%%"))
            i = end + 1
            continue
        if ch == "?":
            found = True
            j = i + 1
            while j < n and sql[j].isdigit():
                j += 1
            if j > i + 1:
                numbered = True
                order.append(int(sql[i + 1:j]) - 1)
            else:
                order.append(len(order))
            out.append("%s")
            i = j
            continue
        if ch == "%":
            out.append("%%")
        elif ch in "lL" and sql[i:i + 4].upper() == "LIKE" and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")) \
                and (i + 4 >= n or not (sql[i + 4].isalnum() or sql[i + 4] == "_")):
            out.append("ILIKE")  # SQLite's LIKE ignores ASCII case; PostgreSQL's ILIKE does too
            i += 4
            continue
        else:
            out.append(ch)
        i += 1
    if not found:
        return sql, None
    return "".join(out), tuple(order) if numbered else None


def _bind(params: Any, order: tuple[int, ...] | None) -> Any:
    if order is None or params is None:
        return params
    return tuple(params[k] for k in order)


def _cursor_class() -> type:
    import psycopg

    class QmarkCursor(psycopg.Cursor):
        """A cursor that reads the library's ``?`` placeholders (see the module's docstring)."""

        def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
            if isinstance(query, str) and "?" in query:
                query, order = translate(query)
                params = _bind(params, order)
            return super().execute(query, params, **kwargs)

        def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> Any:
            if isinstance(query, str) and "?" in query:
                query, order = translate(query)
                if order is not None:
                    params_seq = [_bind(p, order) for p in params_seq]
            return super().executemany(query, params_seq, **kwargs)

    return QmarkCursor


def _numeric_loader() -> type:
    from psycopg.adapt import Loader

    class NumberLoader(Loader):
        """PostgreSQL's ``numeric`` (what sum() of integers and avg() give) read as SQLite gives
        it: an int when whole, else a float (never a Decimal the JSON encoders refuse)."""

        def load(self, data: Buffer) -> int | float:
            text = bytes(data)
            if b"." in text or b"e" in text or b"E" in text or b"N" in text or b"I" in text:
                return float(text)
            return int(text)

    return NumberLoader


def sqlalchemy_url(url: str) -> URL:
    """The URL SQLAlchemy connects to, built from the studio's own reading of ``url``
    (``studio.core.urls.parse_server_url``): SQLAlchemy's parser and urllib disagree on a raw ``@``
    in a password, and what is shown must mask exactly what is sent."""
    parts = parse_server_url(url)
    query: dict[str, str | tuple[str, ...]] = {}
    for key, value in parts.query:
        previous = query.get(key)
        query[key] = value if previous is None else (*((previous,) if isinstance(previous, str) else previous), value)
    return URL.create("postgresql+psycopg", username=parts.username, password=parts.password, host=parts.host,
                      port=parts.port, database=parts.database, query=query)


def create_server_engine(url: str) -> Engine:
    """An engine on ``url``, checked by connecting once: a bad URL, a missing driver or a server
    that is down or refuses us is one sentence (``LibraryUnreachable``), and nothing is created.
    Every sentence shows the URL masked, and the driver's own text with the URL's secrets masked."""
    where = display(url)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise LibraryUnreachable(
            f"cannot open {where}: PostgreSQL libraries need the postgres extra "
            "(pip install 'grader-studio[postgres]')") from None
    try:
        target = sqlalchemy_url(url)
    except UrlProblem as exc:
        raise LibraryUnreachable(str(exc)) from None
    try:
        engine = create_engine(target, pool_pre_ping=True, connect_args={
            "cursor_factory": _cursor_class(), "connect_timeout": 10, "application_name": "grader-studio"})
    except Exception as exc:  # noqa: BLE001 (SQLAlchemy's argument checks: ValueError, ArgumentError)
        raise LibraryUnreachable(f"{where} is not a PostgreSQL URL the studio can read "
                                 f"(postgresql://USER@HOST:PORT/DATABASE): "
                                 f"{scrub(first_line(exc), url)}") from None
    loader = _numeric_loader()

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: psycopg.Connection[TupleRow], _record: ConnectionPoolEntry) -> None:
        dbapi_connection.adapters.register_loader("numeric", loader)
    try:
        with engine.connect():
            pass
    except Exception as exc:  # noqa: BLE001 (psycopg.OperationalError and what SQLAlchemy wraps it in)
        engine.dispose()
        raise LibraryUnreachable(f"cannot reach the library at {where}: "
                                 f"{scrub(_reason(exc), url)}") from None
    return engine


def first_line(exc: BaseException) -> str:
    """A driver error's first line (what the server said), without its final period."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0].rstrip(".") if text else type(exc).__name__


def _reason(exc: BaseException) -> str:
    """The server's own reason, on one line (psycopg puts one attempt per line: the last says most)."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    reason = lines[-1] if len(lines) > 1 and lines[0].startswith("connection failed") else lines[0]
    return reason.removeprefix("connection failed: ").rstrip(".")
