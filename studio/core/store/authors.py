"""Who is writing: every write to a library records its author (docs/team.md).

``GRADER_STUDIO_USER`` names the analyst; without it, the operating system's login name. A name,
not an identity: the studio is not an access-control system (database roles are).
"""

from __future__ import annotations

import getpass
import os

USER_ENV = "GRADER_STUDIO_USER"


def current_user() -> str:
    name = os.environ.get(USER_ENV, "").strip()
    if name:
        return name
    try:
        return getpass.getuser() or "unknown"
    except (KeyError, OSError):  # no login name (a container's uid without a passwd entry)
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"
