"""The library's schema version, readable without SQLAlchemy or Alembic (the lean ``graders list``).

Migrations are Alembic revisions in ``store/revisions/versions`` (one chain for SQLite and
PostgreSQL). On SQLite each revision also sets ``PRAGMA user_version`` to its number, so a library's
schema can be told with ``sqlite3`` alone and older releases (which read only ``user_version``)
refuse a newer library instead of misreading it.
"""

from __future__ import annotations

#: SQLite's ``user_version`` once every revision has run (1-8 were the hand-written migrations)
SCHEMA_VERSION = 11

#: the newest Alembic revision; ``tests/core/store/test_migrations.py`` checks it is the chain's head
HEAD_REVISION = "0004_queues"

#: every revision this release knows, oldest first (a library stamped with another is newer)
REVISIONS = ("0001_baseline", "0002_authors", "0003_score_order", "0004_queues")
