"""Which endpoints may receive this user's key: the user's approvals, kept outside the library.

An endpoint row in a shared library is data another analyst can rewrite. If the studio sent the
user's key wherever the row points, a teammate (or anyone with the database role) could point
``gpt`` at their own server and collect everyone's OpenAI key. So a key goes only where *this user*
approved on this machine: for each library (``library_identity``) and endpoint name, the file
``endpoint-approvals.json`` in the user's config directory keeps the settings that decide where the
key goes (``destination``: base URL, kind, Azure deployment and api-version, key variable, proxy,
CA bundle and its contents) as they were approved. When the row differs, the key is not sent and
the sentence says what changed, who last wrote the row and when, and how to approve
(``grader-studio endpoints trust NAME`` or the window's dialog).

First use, decided so a single analyst is never asked: an endpoint the user adds or edits here
(``endpoints add``, the window's endpoint page) is approved as it is saved; an unapproved endpoint of
a local SQLite library whose row this user wrote last is approved when first used. Every other
unapproved endpoint (a PostgreSQL library's, where the author is a name anyone can claim, or a row
another name wrote) is refused until approved.

Key variables are never arbitrary either: a stored endpoint may name only environment variables the
user allows (``GRADER_STUDIO_KEY_VARIABLES``: comma-separated shell patterns, by default
``*_API_KEY,*_TOKEN``), so a row cannot ask for ``AWS_SECRET_ACCESS_KEY``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import platformdirs
from sqlalchemy import Engine

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject
from studio.core.models.endpoints import EndpointConfig
from studio.core.safe_files import NotAFile, read_regular, write_text

from .authors import current_user

#: where the approvals file lives, when set (tests; a user who keeps config elsewhere)
CONFIG_DIR_ENV = "GRADER_STUDIO_CONFIG_DIR"
APPROVALS_FILE = "endpoint-approvals.json"
#: the environment variables a stored endpoint may name for its key (shell patterns, comma-separated)
KEY_VARIABLES_ENV = "GRADER_STUDIO_KEY_VARIABLES"
DEFAULT_KEY_VARIABLES = ("*_API_KEY", "*_TOKEN")

#: the settings that decide where a key goes, as a person reads them
FIELDS = {
    "kind": "kind",
    "base_url": "base URL",
    "deployment": "Azure deployment",
    "api_version": "api-version",
    "api_key_env": "key variable",
    "proxy": "proxy",
    "ca_bundle": "CA bundle",
    "ca_contents": "CA bundle's contents",
}


class EndpointNotApproved(StudioError):
    """A key would go where this user has not approved; nothing was sent. ``pending`` is what the
    window's approval dialog lists."""

    exit_code = 2

    def __init__(self, held: Pending) -> None:
        super().__init__(held.sentence())
        self.pending = held


class KeyVariableRefused(StudioError):
    """An endpoint names an environment variable for its key that the user does not allow."""

    exit_code = 2


def config_dir() -> Path:
    explicit = os.environ.get(CONFIG_DIR_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    return Path(platformdirs.user_config_dir("grader-studio", appauthor=False))


def library_identity(engine: Engine) -> tuple[str, bool]:
    """(the library's name in the approvals file, whether it is shared): a SQLite file's real path,
    or a server's host, port and database (no login, no password)."""
    url = engine.url
    if url.get_backend_name() == "sqlite":
        database = url.database or ""
        if database in ("", ":memory:"):
            return "sqlite::memory:", False
        return f"sqlite:{os.path.realpath(database)}", False
    return f"{url.get_backend_name()}://{url.host or 'localhost'}:{url.port or 5432}/{url.database or ''}", True


def shown_url(value: str | None) -> str:
    """A URL as a sentence shows it: never a login or a query's values (they may hold secrets)."""
    if not value:
        return "none"
    parts = urlsplit(value)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        netloc = host + (f":{parts.port}" if parts.port else "")
    except ValueError:
        netloc = host
    query = "&".join(f"{pair.split('=', 1)[0]}=..." for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _file_digest(path: str | None) -> str | None:
    if not path:
        return None
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return "unreadable"


def destination(config: EndpointConfig) -> dict[str, str | None]:
    """Exactly what decides where the key goes (and through whom)."""
    return {
        "kind": config.kind,
        "base_url": config.base_url,
        "deployment": config.model if config.rules.model_word == "deployment" else None,
        "api_version": config.api_version,
        "api_key_env": config.api_key_env,
        "proxy": config.proxy,
        "ca_bundle": config.ca_bundle,
        "ca_contents": _file_digest(config.ca_bundle),
    }


def plain(text: str, limit: int = 200) -> str:
    """A teammate's text (an author, a URL, a path) fit for one line of a sentence: no control or
    invisible character reaches a terminal or a dialog as itself, and no line is endless."""
    out = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return out if len(out) <= limit else out[:limit] + "…"


def _shown(field: str, value: str | None) -> str:
    if field in ("base_url", "proxy"):
        return plain(shown_url(value))
    if field == "api_key_env":
        return f"${plain(value)}" if value else "none"
    return plain(value) if value else "none"


# --- the key variables a user allows ------------------------------------------------------------

def allowed_key_variables() -> tuple[str, ...]:
    said = os.environ.get(KEY_VARIABLES_ENV)
    if said is None or not said.strip():
        return DEFAULT_KEY_VARIABLES
    return tuple(p.strip() for p in said.split(",") if p.strip())


def key_variable_problem(name: str) -> str | None:
    """Why an endpoint may not read its key from ``$name``, or None when it may."""
    patterns = allowed_key_variables()
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
        return None
    return (f"the key variable ${name} is not one you allow (allowed: {', '.join(patterns)}); an "
            "endpoint names only a variable meant for an API key, so a library row cannot ask for "
            f"another secret: rename the variable, or allow it in {KEY_VARIABLES_ENV} "
            f"(e.g. {KEY_VARIABLES_ENV}='*_API_KEY,*_TOKEN,{name}')")


def check_key_variable(config: EndpointConfig) -> None:
    if config.api_key_env and (problem := key_variable_problem(config.api_key_env)):
        raise KeyVariableRefused(f"endpoint {config.name}: {problem}")


# --- the approvals file ------------------------------------------------------------------------

def _path() -> Path:
    return config_dir() / APPROVALS_FILE


def _load() -> JsonObject:
    """The approvals file's contents; an absent or unreadable one approves nothing. A symbolic
    link there is refused (the studio never follows one for your approvals)."""
    try:
        text = read_regular(_path(), follow=False)
    except FileNotFoundError:
        return {}
    except NotAFile as exc:
        raise StudioError(f"{_path()} is not a plain file ({exc.strerror}); the studio does not follow it for "
                          "your endpoint approvals: remove it") from None
    except OSError as exc:
        raise StudioError(f"cannot read your endpoint approvals in {_path()} ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("libraries"), dict) else {}


def _write(data: JsonObject) -> None:
    """Written 0600 as a new file renamed over the old one, never through a link (safe_files)."""
    folder = config_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_text(folder / APPROVALS_FILE, json.dumps(data, indent=1, sort_keys=True), mode=0o600)
    except OSError as exc:
        raise StudioError(f"cannot write your endpoint approvals in {folder} ({exc.strerror or exc})") from None


def _approved(library: str, name: str) -> dict[str, str | None] | None:
    entry = _load().get("libraries", {}).get(library, {}).get(name)
    settings = entry.get("settings") if isinstance(entry, dict) else None
    return settings if isinstance(settings, dict) else None


def approve(config: EndpointConfig, library: str) -> None:
    """Record ``config``'s destination as approved by this user for ``library``."""
    data = _load() or {"version": 1, "libraries": {}}
    data.setdefault("libraries", {}).setdefault(library, {})[config.name] = {
        "settings": destination(config),
        "approved_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    _write(data)


def forget(name: str, library: str) -> None:
    """A removed endpoint's approval goes with it (a new one of that name is asked for again)."""
    data = _load()
    if data.get("libraries", {}).get(library, {}).pop(name, None) is not None:
        _write(data)


@dataclass(frozen=True)
class Change:
    field: str
    before: str | None
    after: str | None

    def sentence(self) -> str:
        label = FIELDS[self.field]
        if self.field == "ca_contents":
            return f"its {label} changed"
        return f"its {label} was changed from {_shown(self.field, self.before)} to {_shown(self.field, self.after)}"


@dataclass(frozen=True)
class Pending:
    """An endpoint whose key is held back, and why (what the window's dialog lists)."""

    config: EndpointConfig
    library: str
    #: None: never approved here; else what differs from the approval
    changes: tuple[Change, ...] | None
    author: str
    at: datetime | None

    def who(self) -> str:
        when = f" on {self.at.strftime('%Y-%m-%d %H:%M')} UTC" if self.at else ""
        return f"by {plain(self.author, 80) or 'an unknown author'}{when}"

    def lines(self) -> list[str]:
        """One line per setting the user is asked to approve."""
        if self.changes is not None:
            return [change.sentence() for change in self.changes]
        now = destination(self.config)
        return [f"{FIELDS[f]}: {_shown(f, v)}" for f, v in now.items()
                if v is not None and f != "ca_contents"]

    def sentence(self) -> str:
        name = self.config.name
        ask = f"your key is not sent until you approve: grader-studio endpoints trust {name}"
        if self.changes is None:
            return (f"endpoint {name} was last written {self.who()} and you have not approved it on "
                    f"this machine ({'; '.join(self.lines())}); {ask}")
        return f"endpoint {name}: {' and '.join(self.lines())} {self.who()}; {ask}"


def pending(config: EndpointConfig) -> Pending | None:
    """Why ``config``'s key may not be sent yet, or None when it may (approved, or not read from a
    library). A local library's endpoint this user wrote last is approved here on first use."""
    origin = config.origin
    if origin is None:
        return None
    approved = _approved(origin.library, config.name)
    now = destination(config)
    if approved is None:
        if not origin.shared and origin.updated_by == current_user():
            # approved by the rule itself; recorded so a later change is compared against it (a
            # config directory that cannot be written only loses that record)
            with contextlib.suppress(StudioError):
                approve(config, origin.library)
            return None
        return Pending(config, origin.library, None, origin.updated_by, origin.updated_at)
    changes = tuple(Change(field, approved.get(field), value) for field, value in now.items()
                    if approved.get(field) != value)
    if not changes:
        return None
    return Pending(config, origin.library, changes, origin.updated_by, origin.updated_at)


def check_approved(config: EndpointConfig) -> None:
    """Raise ``EndpointNotApproved`` unless this user approved where ``config`` sends the key."""
    held = pending(config)
    if held is not None:
        raise EndpointNotApproved(held)
