"""Versioned schema migrations, recorded in SQLite's ``PRAGMA user_version``.

Why not alembic: the library is one embedded SQLite file opened by a desktop app (also frozen by
PyInstaller), where alembic's ini file and script directory are extra moving parts; SQLite's
``user_version`` is read and written in the same transaction as the DDL, so a migration is atomic.
Each migration is a list of SQL statements; never edit a released one, append a new one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import LibraryError

if TYPE_CHECKING:
    from sqlalchemy import Connection

MIGRATIONS: list[list[str]] = [
    # 1: graders with immutable versions, datasets, runs, results, endpoints, judge cache
    [
        """CREATE TABLE graders (
            id INTEGER PRIMARY KEY,
            key VARCHAR NOT NULL UNIQUE,
            kind VARCHAR NOT NULL,
            name VARCHAR NOT NULL DEFAULT '',
            locked BOOLEAN NOT NULL DEFAULT 0,
            deleted_at DATETIME,
            current_version INTEGER NOT NULL,
            created_at DATETIME NOT NULL,
            updated_at DATETIME NOT NULL
        )""",
        """CREATE TABLE grader_versions (
            id INTEGER PRIMARY KEY,
            grader_id INTEGER NOT NULL REFERENCES graders(id),
            version INTEGER NOT NULL,
            action VARCHAR NOT NULL,
            definition TEXT NOT NULL,
            message TEXT NOT NULL DEFAULT '',
            created_at DATETIME NOT NULL,
            UNIQUE (grader_id, version)
        )""",
        # versions are immutable: the database itself refuses edits and deletes
        """CREATE TRIGGER grader_versions_no_update BEFORE UPDATE ON grader_versions
           BEGIN SELECT RAISE(ABORT, 'grader versions are immutable'); END""",
        """CREATE TRIGGER grader_versions_no_delete BEFORE DELETE ON grader_versions
           BEGIN SELECT RAISE(ABORT, 'grader versions are immutable'); END""",
        """CREATE TABLE datasets (
            id INTEGER PRIMARY KEY,
            name VARCHAR NOT NULL UNIQUE,
            format VARCHAR NOT NULL,
            source TEXT NOT NULL DEFAULT '',
            sample_count INTEGER NOT NULL DEFAULT 0,
            deleted_at DATETIME,
            created_at DATETIME NOT NULL
        )""",
        """CREATE TABLE samples (
            id INTEGER PRIMARY KEY,
            dataset_id INTEGER NOT NULL REFERENCES datasets(id),
            idx INTEGER NOT NULL,
            sample_id VARCHAR NOT NULL,
            input_text TEXT NOT NULL DEFAULT '',
            completion TEXT,
            expected TEXT,
            data TEXT NOT NULL,
            UNIQUE (dataset_id, idx)
        )""",
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            grader_id INTEGER NOT NULL REFERENCES graders(id),
            grader_version INTEGER NOT NULL,
            dataset_id INTEGER NOT NULL REFERENCES datasets(id),
            status VARCHAR NOT NULL,
            endpoint VARCHAR,
            total INTEGER NOT NULL DEFAULT 0,
            settings TEXT NOT NULL DEFAULT '{}',
            aggregates TEXT NOT NULL DEFAULT '{}',
            error TEXT,
            created_at DATETIME NOT NULL,
            finished_at DATETIME
        )""",
        """CREATE TABLE results (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id),
            sample_idx INTEGER NOT NULL,
            sample_id VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            score FLOAT,
            scores TEXT,
            rationale TEXT,
            details TEXT,
            error TEXT,
            raw TEXT,
            duration_ms FLOAT NOT NULL DEFAULT 0,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            cached BOOLEAN NOT NULL DEFAULT 0,
            UNIQUE (run_id, sample_idx)
        )""",
        "CREATE INDEX ix_results_run_score ON results (run_id, score)",
        "CREATE INDEX ix_results_run_status ON results (run_id, status)",
        """CREATE TABLE endpoints (
            name VARCHAR PRIMARY KEY,
            config TEXT NOT NULL,
            created_at DATETIME NOT NULL,
            updated_at DATETIME NOT NULL
        )""",
        """CREATE TABLE judge_cache (
            key VARCHAR PRIMARY KEY,
            response TEXT NOT NULL,
            created_at DATETIME NOT NULL
        )""",
    ],
    # 2: which process is grading a run (a dead owner means the run was interrupted), and indexes
    #    for the results grid's sorts by latency and sample id
    [
        "ALTER TABLE runs ADD COLUMN owner_pid INTEGER",
        "CREATE INDEX ix_results_run_duration ON results (run_id, duration_ms)",
        "CREATE INDEX ix_results_run_sample ON results (run_id, sample_id)",
    ],
    # 3: human labels of a dataset's samples, by label-set key; every change appends a version
    #    (the database refuses edits and deletes, like grader versions); a set may declare its
    #    score scale so a judge's normalised score maps back onto it
    [
        """CREATE TABLE label_sets (
            id INTEGER PRIMARY KEY,
            dataset_id INTEGER NOT NULL REFERENCES datasets(id),
            key VARCHAR NOT NULL,
            scale_min FLOAT,
            scale_max FLOAT,
            created_at DATETIME NOT NULL,
            UNIQUE (dataset_id, key)
        )""",
        """CREATE TABLE labels (
            id INTEGER PRIMARY KEY,
            label_set_id INTEGER NOT NULL REFERENCES label_sets(id),
            sample_id VARCHAR NOT NULL,
            version INTEGER NOT NULL,
            verdict VARCHAR,
            score FLOAT,
            note TEXT NOT NULL DEFAULT '',
            labeler VARCHAR NOT NULL DEFAULT '',
            created_at DATETIME NOT NULL,
            UNIQUE (label_set_id, sample_id, version)
        )""",
        """CREATE TRIGGER labels_no_update BEFORE UPDATE ON labels
           BEGIN SELECT RAISE(ABORT, 'label versions are immutable'); END""",
        """CREATE TRIGGER labels_no_delete BEFORE DELETE ON labels
           BEGIN SELECT RAISE(ABORT, 'label versions are immutable'); END""",
    ],
    # bias probe reports of a judge on a dataset (`grader-studio probe`, the report card): each
    # probe run appends one; the report card shows the newest
    [
        """CREATE TABLE probe_reports (
            id INTEGER PRIMARY KEY,
            grader_key VARCHAR NOT NULL,
            grader_version INTEGER NOT NULL,
            dataset VARCHAR NOT NULL,
            endpoint VARCHAR,
            report TEXT NOT NULL,
            created_at DATETIME NOT NULL
        )""",
        "CREATE INDEX ix_probe_reports_grader ON probe_reports (grader_key, id)",
    ],
    # per result, the prompt tokens the endpoint served from its own prompt cache (OpenAI's
    # usage.prompt_tokens_details.cached_tokens, Anthropic's cache_read_input_tokens): part of
    # prompt_tokens, billed cheaper; engine/usage.py totals them per grader and per endpoint
    [
        "ALTER TABLE results ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0",
    ],
    # suites: several graders over one dataset in one run. A suite is versioned, lockable and
    #    trashable like a grader (suite_versions are immutable); run_graders says which grader (key and
    #    version, weight, threshold) fills each slot of a run; a suite run's per-sample row in
    #    ``results`` holds the overall score and every grader's score (``scores``: {key: score}), and
    #    grader_results keeps the per-grader rows that say more than a plain score (a rationale, an
    #    error, NA, tokens...) or belong to a sample not every grader has finished (resume). A narrow
    #    WITHOUT ROWID table with one key: five graders must not cost five indexed rows a sample.
    [
        """CREATE TABLE suites (
            id INTEGER PRIMARY KEY,
            key VARCHAR NOT NULL UNIQUE,
            name VARCHAR NOT NULL DEFAULT '',
            locked BOOLEAN NOT NULL DEFAULT 0,
            deleted_at DATETIME,
            current_version INTEGER NOT NULL,
            created_at DATETIME NOT NULL,
            updated_at DATETIME NOT NULL
        )""",
        """CREATE TABLE suite_versions (
            id INTEGER PRIMARY KEY,
            suite_id INTEGER NOT NULL REFERENCES suites(id),
            version INTEGER NOT NULL,
            action VARCHAR NOT NULL,
            definition TEXT NOT NULL,
            message TEXT NOT NULL DEFAULT '',
            created_at DATETIME NOT NULL,
            UNIQUE (suite_id, version)
        )""",
        """CREATE TRIGGER suite_versions_no_update BEFORE UPDATE ON suite_versions
           BEGIN SELECT RAISE(ABORT, 'suite versions are immutable'); END""",
        """CREATE TRIGGER suite_versions_no_delete BEFORE DELETE ON suite_versions
           BEGIN SELECT RAISE(ABORT, 'suite versions are immutable'); END""",
        "ALTER TABLE runs ADD COLUMN suite TEXT",
        """CREATE TABLE run_graders (
            run_id INTEGER NOT NULL REFERENCES runs(id),
            slot INTEGER NOT NULL,
            grader_id INTEGER NOT NULL REFERENCES graders(id),
            grader_key VARCHAR NOT NULL,
            grader_version INTEGER NOT NULL,
            weight FLOAT NOT NULL DEFAULT 1.0,
            threshold FLOAT,
            PRIMARY KEY (run_id, slot)
        )""",
        """INSERT INTO run_graders (run_id, slot, grader_id, grader_key, grader_version)
           SELECT runs.id, 0, runs.grader_id, graders.key, runs.grader_version
           FROM runs JOIN graders ON graders.id = runs.grader_id""",
        """CREATE TABLE grader_results (
            run_id INTEGER NOT NULL,
            slot INTEGER NOT NULL,
            sample_idx INTEGER NOT NULL,
            status VARCHAR NOT NULL,
            score FLOAT,
            scores TEXT,
            rationale TEXT,
            details TEXT,
            error TEXT,
            raw TEXT,
            duration_ms FLOAT NOT NULL DEFAULT 0,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            cached BOOLEAN NOT NULL DEFAULT 0,
            PRIMARY KEY (run_id, slot, sample_idx)
        ) WITHOUT ROWID""",
    ],
    # a suite run's per-grader rows keep the prompt tokens the endpoint served from its prompt cache,
    # as ``results.cached_tokens`` does for a run of one grader: usage per grader and per endpoint
    # (engine/usage.py) reads them from here for a suite
    [
        "ALTER TABLE grader_results ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0",
    ],
    # a dataset made by `grader-studio generate` says where its completions came from (source
    # dataset, endpoint, model, parameters, time, tokens, cost) as JSON; NULL for an imported one
    [
        "ALTER TABLE datasets ADD COLUMN provenance TEXT",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(LibraryError):
    pass


def current_version(conn: Connection) -> int:
    return int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)


def migrate(conn: Connection) -> list[int]:
    """Apply the pending migrations inside the caller's transaction; returns those applied."""
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"this library was written by a newer Grader Studio (schema {version}, "
            f"this one knows up to {SCHEMA_VERSION}); upgrade to open it"
        )
    from sqlalchemy import text  # here: the schema version above is read without SQLAlchemy

    applied = []
    for number in range(version + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[number - 1]:
            conn.execute(text(statement))
        conn.exec_driver_sql(f"PRAGMA user_version = {number}")
        applied.append(number)
    return applied
