"""Review queues (issue 48): named sets of a dataset's samples to be labelled by a team, each
reviewer's labels kept apart (blind labelling, reviewer agreement), and a lead's settlements.

Labels and settlements are append-only, as the dataset's labels are: a change is a new version and
the database refuses edits and deletes, so nothing a reviewer wrote is lost when two write at once
(each reviewer writes rows of their own; a unique key keeps one version number once). On
PostgreSQL the queue tables announce their changes (``NOTIFY grader_studio``) so an open window
shows other reviewers' progress.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_queues"
down_revision = "0003_score_order"
branch_labels = None
depends_on = None

WATCHED = ("review_queues", "queue_labels", "queue_settlements")


def upgrade() -> None:
    op.create_table(
        "review_queues",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(), nullable=False, unique=True),
        sa.Column("dataset_id", sa.Integer(), sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("runs", sa.Text(), nullable=False, server_default="[]"),
        sa.Column("rule", sa.Text(), nullable=False, server_default="{}"),
        sa.Column("labels_wanted", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("assignees", sa.Text(), nullable=False, server_default="[]"),
        sa.Column("leads", sa.Text(), nullable=False, server_default="[]"),
        sa.Column("derived", sa.Text(), nullable=False, server_default="[]"),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("author", sa.String(), nullable=False, server_default=""),
    )
    op.create_table(
        "queue_samples",
        sa.Column("queue_id", sa.Integer(), sa.ForeignKey("review_queues.id"), primary_key=True),
        sa.Column("sample_id", sa.String(), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False, server_default=""),
    )
    for table, who in (("queue_labels", "reviewer"), ("queue_settlements", "author")):
        op.create_table(
            table,
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("queue_id", sa.Integer(), sa.ForeignKey("review_queues.id"), nullable=False),
            sa.Column("sample_id", sa.String(), nullable=False),
            sa.Column(who, sa.String(), nullable=False),
            sa.Column("version", sa.Integer(), nullable=False),
            sa.Column("verdict", sa.String(), nullable=True),
            sa.Column("note", sa.Text(), nullable=False, server_default=""),
            sa.Column("created_at", sa.DateTime(), nullable=False),
            sa.UniqueConstraint("queue_id", "sample_id", *((who,) if who == "reviewer" else ()), "version",
                                name=f"uq_{table}_version"),
        )
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for table in ("queue_labels", "queue_settlements"):
            for verb in ("UPDATE", "DELETE"):
                bind.exec_driver_sql(f"""CREATE TRIGGER {table}_no_{verb.lower()} BEFORE {verb} ON {table}
                    BEGIN SELECT RAISE(ABORT, 'review labels are immutable'); END""")
        bind.exec_driver_sql("PRAGMA user_version = 11")
        return
    for table in ("queue_labels", "queue_settlements"):
        bind.exec_driver_sql(f"""CREATE TRIGGER {table}_immutable BEFORE UPDATE OR DELETE ON {table}
            FOR EACH ROW EXECUTE FUNCTION studio_immutable('review labels')""")
    for table in WATCHED:
        bind.exec_driver_sql(f"""CREATE TRIGGER {table}_notify AFTER INSERT OR UPDATE OR DELETE ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION studio_notify()""")
