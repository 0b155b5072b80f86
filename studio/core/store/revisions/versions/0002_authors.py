"""Who did what (docs/team.md): versions, runs, datasets, endpoints and probe reports name their
author; a lock names its owner and since when. PostgreSQL also announces every change of the
library's lists (``NOTIFY grader_studio``) so open windows refresh without polling the tables.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_authors"
down_revision = "0001_baseline"
branch_labels = None
depends_on = None

#: the tables an open window lists: a change to any of them is announced on PostgreSQL
WATCHED = ("graders", "suites", "runs", "datasets", "label_sets", "labels", "endpoints")


def upgrade() -> None:
    for table in ("graders", "suites"):
        op.add_column(table, sa.Column("locked_by", sa.String(), nullable=True))
        op.add_column(table, sa.Column("locked_at", sa.DateTime(), nullable=True))
    for table in ("grader_versions", "suite_versions", "runs", "datasets", "probe_reports"):
        op.add_column(table, sa.Column("author", sa.String(), nullable=False, server_default=""))
    op.add_column("endpoints", sa.Column("updated_by", sa.String(), nullable=False, server_default=""))
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        bind.exec_driver_sql("PRAGMA user_version = 9")
        return
    cursor = bind.connection.dbapi_connection.cursor()
    cursor.execute("""CREATE FUNCTION studio_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_notify('grader_studio', TG_TABLE_NAME); RETURN NULL; END $$""")
    for table in WATCHED:
        cursor.execute(f"""CREATE TRIGGER {table}_notify AFTER INSERT OR UPDATE OR DELETE ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION studio_notify()""")
