"""Library locations that are URLs: which strings are URLs at all, how a server URL is read, and the
one way any of them is shown to a person (its password masked, whatever form it takes).

Low in the core (below ``errors``) because a bug report masks the URLs in the command line and the
traceback it writes, and the library's store reads its server URLs here. docs/security.md.

The studio reads a server URL itself, strictly, and hands SQLAlchemy the parts (``URL.create``):
libpq, SQLAlchemy's ``make_url`` and ``urllib`` disagree on a raw ``@``, ``/``, ``?`` or ``#``
inside a password (``postgresql://u:p@ss@host/db`` is password ``p`` and host ``ss@host`` to
SQLAlchemy, password ``p@ss`` to urllib), so such a URL is refused with a sentence asking for the
character percent-encoded, and what is shown always masks the password that would be sent.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote

#: the schemes that name a PostgreSQL server (psycopg 3 through SQLAlchemy), lower case
SERVER_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")

#: the accepted forms, as every refusal names them
ACCEPTED = "a library file's path, or postgresql://USER@HOST:PORT/DATABASE"

#: what a secret is shown as
MASK = "***"

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
#: a URL inside free text (an exception's message, a traceback): scheme:// to the next blank (a
#: quote or bracket may be part of a password typed raw, so it does not end the URL)
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://\S*")
#: query keys whose values are secrets (``password``, ``sslpassword``, ``PassWord``, a token ...)
_SECRET_KEY = re.compile(r"pass|secret|token|key", re.IGNORECASE)


class UrlProblem(ValueError):
    """A string that is a URL the studio does not read; ``str()`` is the sentence (no secret in it)."""


def scheme_of(value: str) -> str | None:
    """The scheme of a string that is a URL (``scheme:`` before any ``/``), else None (a path).

    ``C:\\x`` is a drive's path on Windows only; elsewhere a one-letter scheme is as much a URL as
    ``file:`` or ``mysql:`` (and refused: it is no file the user meant to create)."""
    match = _SCHEME.match(value)
    if match is None:
        return None
    scheme = match.group()[:-1]
    if os.name == "nt" and len(scheme) == 1:
        return None
    return scheme


def is_url(value: object) -> bool:
    return isinstance(value, str) and scheme_of(value) is not None


def is_server_url(value: object) -> bool:
    """A string naming a PostgreSQL server (well formed or not: ``parse_server_url`` says)."""
    if not isinstance(value, str):
        return False
    scheme = scheme_of(value)
    return scheme is not None and scheme.lower() in SERVER_SCHEMES and value[len(scheme):].startswith("://")


@dataclass(frozen=True)
class ServerUrl:
    """A server URL read into its parts (each percent-decoded) and its masked form for people."""

    username: str | None
    password: str | None
    host: str | None
    port: int | None
    database: str | None
    query: tuple[tuple[str, str], ...]
    shown: str

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every secret the URL carries (its password, secret query values), for ``mask_secrets``."""
        found = [self.password] if self.password else []
        found += [value for key, value in self.query if value and _SECRET_KEY.search(key)]
        return tuple(found)


def _refuse(scheme: str, why: str) -> UrlProblem:
    return UrlProblem(f"cannot read the library URL {scheme}://…: {why}")


def parse_server_url(value: str) -> ServerUrl:
    """``value`` (``is_server_url``) read strictly: ``scheme://[USER[:PASSWORD]@][HOST][:PORT][/DB][?K=V&…]``
    with ``@ / ? #`` inside a part percent-encoded. Raises ``UrlProblem`` (whose sentence shows no
    part of the URL after its scheme)."""
    scheme = value.split("://", 1)[0]
    rest = value[len(scheme) + 3:]
    if "#" in rest:
        raise _refuse(scheme, "write a '#' as %23")
    before_query, _, raw_query = rest.partition("?")
    authority, slash, raw_db = before_query.partition("/")
    userinfo, at, hostport = authority.rpartition("@")
    if at and "@" in userinfo or "@" in raw_db or "@" in raw_query:
        raise _refuse(scheme, "write a '@' inside the user name, password, database or a parameter as %40 "
                              "(and '/', '?', '#' in a password as %2F, %3F, %23)")
    username = password = None
    if at:
        raw_user, colon, raw_password = userinfo.partition(":")
        username = unquote(raw_user) or None
        password = unquote(raw_password) if colon else None
    host, port = _host_port(scheme, hostport)
    query = tuple(parse_qsl(raw_query, keep_blank_values=True))
    database = unquote(raw_db) if slash and raw_db else None
    shown_query = "&".join(_shown_parameter(piece) for piece in raw_query.split("&") if piece)
    shown = (f"{scheme}://" + (f"{_quote_part(username or '')}@" if at else "") + hostport
             + (f"/{raw_db}" if slash else "") + (f"?{shown_query}" if shown_query else ""))
    return ServerUrl(username, password, host, port, database, query, shown)


def _shown_parameter(piece: str) -> str:
    """One ``KEY=VALUE`` of a query as typed, its value masked when the key names a secret (read
    as the driver reads it: ``pass%77ord`` is ``password``)."""
    from urllib.parse import unquote_plus

    key, equals, _value = piece.partition("=")
    return f"{key}={MASK}" if equals and _SECRET_KEY.search(unquote_plus(key)) else piece


def _host_port(scheme: str, hostport: str) -> tuple[str | None, int | None]:
    if hostport.startswith("["):
        host, bracket, tail = hostport[1:].partition("]")
        if not bracket or (tail and not tail.startswith(":")):
            raise _refuse(scheme, "an IPv6 address is written [ADDRESS]:PORT")
        port_text = tail[1:] if tail else ""
    else:
        host, _, port_text = hostport.partition(":")
    port = None
    if port_text:
        if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise _refuse(scheme, "the port must be a number from 1 to 65535")
        port = int(port_text)
    return (unquote(host) or None), port


def _quote_part(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="!$'()*+,;=-._~")


def masked(location: object) -> str:
    """THE way a library location is shown (every message, title, dialog, report, command line):
    a path as it is; a server URL without its password and with secret parameters as ``***``;
    any other URL, or one the studio cannot read, as its scheme alone (``mysql://…``)."""
    text = os.fspath(location) if isinstance(location, os.PathLike) else str(location)
    scheme = scheme_of(text)
    if scheme is None:
        return text
    if is_server_url(text):
        try:
            return parse_server_url(text).shown
        except UrlProblem:
            pass
    return f"{scheme}://…" if text[len(scheme):].startswith("://") else f"{scheme}:…"


def url_secrets(location: object) -> tuple[str, ...]:
    """The secrets of a server URL (none for a path or a URL the studio cannot read)."""
    if not is_server_url(location):
        return ()
    try:
        return parse_server_url(str(location)).secrets
    except UrlProblem:
        return ()


def mask_secrets(text: str, secrets: tuple[str, ...] | list[str]) -> str:
    """``text`` with every URL in it masked (``masked``) and each secret, raw or percent-encoded
    either way, replaced: for messages that may quote a connection string (a driver's error)."""
    from urllib.parse import quote, quote_plus

    text = mask_urls(text)
    forms = {form for secret in secrets if secret
             for form in (secret, quote(secret, safe=""), quote_plus(secret), quote(secret), unquote(secret))}
    for form in sorted(forms, key=len, reverse=True):
        if form:
            text = text.replace(form, MASK)
    return text


def scrub(text: str, location: object) -> str:
    """``text`` (a driver's or an exception's message about ``location``) as a person may read it:
    ``mask_secrets`` with the location's own secrets."""
    return mask_secrets(text, url_secrets(location))


def mask_urls(text: str) -> str:
    """``text`` with every URL in it shown as ``masked`` shows it (bug reports, command lines)."""
    return _URL_IN_TEXT.sub(lambda m: masked(m.group()), text)
