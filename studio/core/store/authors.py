"""Who is writing: every write to a library records its author (docs/team.md).

``GRADER_STUDIO_USER`` names the analyst; without it, on a team's PostgreSQL library, the database
role the process connects as (one role per analyst: docs/team.md), else the operating system's
login name. A name, not an identity: the studio is not an access-control system (database roles are).
"""

from __future__ import annotations

import getpass
import os

USER_ENV = "GRADER_STUDIO_USER"

#: the database role of the server library this process has open (``Library.open`` sets it)
_server_role: str | None = None


def use_server_role(role: str | None, *, closing: str | None = None) -> None:
    """The role a server library connected as: the author when ``GRADER_STUDIO_USER`` is unset.
    ``closing``: the role of a library being closed, forgotten unless another library's replaced it."""
    global _server_role
    if closing is None or _server_role == closing:
        _server_role = role


def current_user() -> str:
    name = os.environ.get(USER_ENV, "").strip()
    if name:
        return name
    if _server_role:
        return _server_role
    try:
        return getpass.getuser() or "unknown"
    except (KeyError, OSError):  # no login name (a container's uid without a passwd entry)
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"
