"""Where the library file lives: --db, then $GRADER_STUDIO_DB, then the user data directory."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV_VAR = "GRADER_STUDIO_DB"


def resolve_db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("grader-studio", appauthor=False)) / "library.sqlite"
