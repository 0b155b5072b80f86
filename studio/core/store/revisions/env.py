"""Alembic's environment for the library: always run on the connection ``database.migrate`` hands
over (inside its transaction), never from an ini file or URL of its own."""

from __future__ import annotations

from alembic import context

from studio.core.store.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
