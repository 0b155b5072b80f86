"""The hand-written SQLite migrations (1-7) as released, read from the Alembic baseline revision
that keeps them: tests build libraries as older releases wrote them."""

from __future__ import annotations

import importlib

BASELINE = importlib.import_module("studio.core.store.revisions.versions.0001_baseline")

#: one list of SQL statements per ``user_version`` step
MIGRATIONS: list[list[str]] = BASELINE.MIGRATIONS
