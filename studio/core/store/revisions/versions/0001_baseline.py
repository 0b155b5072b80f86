"""Baseline: the schema the hand-written migrations (1-8, SQLite's ``user_version``) had reached.

SQLite: a library from an older release continues from its ``user_version`` with the same steps it
would have taken then (a new file takes them all), so today's files upgrade in place. PostgreSQL:
the same schema created in one go, with the database's own types (identity keys, booleans,
timestamps), the immutability triggers, and the SQLite functions the library's queries call
(``store/postgres.py``). Never edit a released revision; append a new one.
"""

from __future__ import annotations

from alembic import op

revision = "0001_baseline"
down_revision = None
branch_labels = None
depends_on = None

#: the hand-written migrations as released, SQLite only (each entry one ``user_version`` step)
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

def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite()
    else:
        # the driver's own cursor, without parameters: the bodies' % and : are PostgreSQL's
        cursor = op.get_bind().connection.dbapi_connection.cursor()
        for statement in POSTGRES:
            cursor.execute(statement)


def _sqlite() -> None:
    conn = op.get_bind()
    version = int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)
    for number in range(version + 1, len(MIGRATIONS) + 1):
        for statement in MIGRATIONS[number - 1]:
            conn.exec_driver_sql(statement)
        conn.exec_driver_sql(f"PRAGMA user_version = {number}")


POSTGRES: list[str] = [
    """CREATE TABLE graders (
        id SERIAL PRIMARY KEY,
        key VARCHAR NOT NULL UNIQUE,
        kind VARCHAR NOT NULL,
        name VARCHAR NOT NULL DEFAULT '',
        locked BOOLEAN NOT NULL DEFAULT false,
        deleted_at TIMESTAMP,
        current_version INTEGER NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE grader_versions (
        id SERIAL PRIMARY KEY,
        grader_id INTEGER NOT NULL REFERENCES graders(id),
        version INTEGER NOT NULL,
        action VARCHAR NOT NULL,
        definition TEXT NOT NULL,
        message TEXT NOT NULL DEFAULT '',
        created_at TIMESTAMP NOT NULL,
        UNIQUE (grader_id, version)
    )""",
    """CREATE TABLE datasets (
        id SERIAL PRIMARY KEY,
        name VARCHAR NOT NULL UNIQUE,
        format VARCHAR NOT NULL,
        source TEXT NOT NULL DEFAULT '',
        sample_count INTEGER NOT NULL DEFAULT 0,
        deleted_at TIMESTAMP,
        created_at TIMESTAMP NOT NULL,
        provenance TEXT
    )""",
    """CREATE TABLE samples (
        id BIGSERIAL PRIMARY KEY,
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
        id SERIAL PRIMARY KEY,
        grader_id INTEGER NOT NULL REFERENCES graders(id),
        grader_version INTEGER NOT NULL,
        dataset_id INTEGER NOT NULL REFERENCES datasets(id),
        status VARCHAR NOT NULL,
        endpoint VARCHAR,
        total INTEGER NOT NULL DEFAULT 0,
        settings TEXT NOT NULL DEFAULT '{}',
        aggregates TEXT NOT NULL DEFAULT '{}',
        error TEXT,
        created_at TIMESTAMP NOT NULL,
        finished_at TIMESTAMP,
        owner_pid INTEGER,
        suite TEXT
    )""",
    # ``cached`` is an integer 0/1 as SQLite stores it: the write path binds ints and sums them
    """CREATE TABLE results (
        id BIGSERIAL PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id),
        sample_idx INTEGER NOT NULL,
        sample_id VARCHAR NOT NULL,
        status VARCHAR NOT NULL,
        score DOUBLE PRECISION,
        scores TEXT,
        rationale TEXT,
        details TEXT,
        error TEXT,
        raw TEXT,
        duration_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        cached INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        UNIQUE (run_id, sample_idx)
    )""",
    "CREATE INDEX ix_results_run_score ON results (run_id, score)",
    "CREATE INDEX ix_results_run_status ON results (run_id, status)",
    "CREATE INDEX ix_results_run_duration ON results (run_id, duration_ms)",
    "CREATE INDEX ix_results_run_sample ON results (run_id, sample_id)",
    """CREATE TABLE endpoints (
        name VARCHAR PRIMARY KEY,
        config TEXT NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE judge_cache (
        key VARCHAR PRIMARY KEY,
        response TEXT NOT NULL,
        created_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE label_sets (
        id SERIAL PRIMARY KEY,
        dataset_id INTEGER NOT NULL REFERENCES datasets(id),
        key VARCHAR NOT NULL,
        scale_min DOUBLE PRECISION,
        scale_max DOUBLE PRECISION,
        created_at TIMESTAMP NOT NULL,
        UNIQUE (dataset_id, key)
    )""",
    """CREATE TABLE labels (
        id SERIAL PRIMARY KEY,
        label_set_id INTEGER NOT NULL REFERENCES label_sets(id),
        sample_id VARCHAR NOT NULL,
        version INTEGER NOT NULL,
        verdict VARCHAR,
        score DOUBLE PRECISION,
        note TEXT NOT NULL DEFAULT '',
        labeler VARCHAR NOT NULL DEFAULT '',
        created_at TIMESTAMP NOT NULL,
        UNIQUE (label_set_id, sample_id, version)
    )""",
    """CREATE TABLE probe_reports (
        id SERIAL PRIMARY KEY,
        grader_key VARCHAR NOT NULL,
        grader_version INTEGER NOT NULL,
        dataset VARCHAR NOT NULL,
        endpoint VARCHAR,
        report TEXT NOT NULL,
        created_at TIMESTAMP NOT NULL
    )""",
    "CREATE INDEX ix_probe_reports_grader ON probe_reports (grader_key, id)",
    """CREATE TABLE suites (
        id SERIAL PRIMARY KEY,
        key VARCHAR NOT NULL UNIQUE,
        name VARCHAR NOT NULL DEFAULT '',
        locked BOOLEAN NOT NULL DEFAULT false,
        deleted_at TIMESTAMP,
        current_version INTEGER NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE suite_versions (
        id SERIAL PRIMARY KEY,
        suite_id INTEGER NOT NULL REFERENCES suites(id),
        version INTEGER NOT NULL,
        action VARCHAR NOT NULL,
        definition TEXT NOT NULL,
        message TEXT NOT NULL DEFAULT '',
        created_at TIMESTAMP NOT NULL,
        UNIQUE (suite_id, version)
    )""",
    """CREATE TABLE run_graders (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        slot INTEGER NOT NULL,
        grader_id INTEGER NOT NULL REFERENCES graders(id),
        grader_key VARCHAR NOT NULL,
        grader_version INTEGER NOT NULL,
        weight DOUBLE PRECISION NOT NULL DEFAULT 1.0,
        threshold DOUBLE PRECISION,
        PRIMARY KEY (run_id, slot)
    )""",
    """CREATE TABLE grader_results (
        run_id INTEGER NOT NULL,
        slot INTEGER NOT NULL,
        sample_idx INTEGER NOT NULL,
        status VARCHAR NOT NULL,
        score DOUBLE PRECISION,
        scores TEXT,
        rationale TEXT,
        details TEXT,
        error TEXT,
        raw TEXT,
        duration_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        cached INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, slot, sample_idx)
    )""",
    # versions and labels are immutable: the database itself refuses edits and deletes
    """CREATE FUNCTION studio_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION '% are immutable', TG_ARGV[0]; END $$""",
    """CREATE TRIGGER grader_versions_immutable BEFORE UPDATE OR DELETE ON grader_versions
       FOR EACH ROW EXECUTE FUNCTION studio_immutable('grader versions')""",
    """CREATE TRIGGER suite_versions_immutable BEFORE UPDATE OR DELETE ON suite_versions
       FOR EACH ROW EXECUTE FUNCTION studio_immutable('suite versions')""",
    """CREATE TRIGGER labels_immutable BEFORE UPDATE OR DELETE ON labels
       FOR EACH ROW EXECUTE FUNCTION studio_immutable('label versions')""",
    # SQLite's functions as the library's queries use them. json_extract: a SQLite JSON path
    # ('$.a.b', '$."a key"', '$.list[0]') read as text, true/false as 1/0 (SQLite's numbers);
    # numeric uses CAST it (CAST(... AS DOUBLE PRECISION) reads the same on both)
    r"""CREATE FUNCTION studio_json_path(path text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
       SELECT coalesce(array_agg(coalesce(m[1], m[2], m[3]) ORDER BY n), '{}')
       FROM regexp_matches(path, '\.(?:"((?:[^"]|"")*)"|([^."\[]+))|\[([0-9]+)\]', 'g')
            WITH ORDINALITY AS t(m, n) $$""",
    """CREATE FUNCTION json_extract(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
       SELECT CASE jsonb_typeof(v) WHEN 'boolean' THEN (CASE WHEN v = 'true'::jsonb THEN '1' ELSE '0' END)
                                   WHEN 'null' THEN NULL ELSE v #>> '{}' END
       FROM (SELECT doc::jsonb #> studio_json_path(path) AS v) AS x $$""",
    # json_each: key and value as text (a string unquoted, a number or an object as JSON text)
    """CREATE FUNCTION json_each(doc text) RETURNS TABLE(key text, value text) LANGUAGE sql IMMUTABLE AS $$
       SELECT e.key, CASE jsonb_typeof(e.value) WHEN 'boolean'
                          THEN (CASE WHEN e.value = 'true'::jsonb THEN '1' ELSE '0' END)
                          WHEN 'null' THEN NULL ELSE e.value #>> '{}' END
       FROM jsonb_each(CASE WHEN jsonb_typeof(doc::jsonb) = 'object' THEN doc::jsonb ELSE '{}'::jsonb END) AS e $$""",
    """CREATE FUNCTION json_each(doc text, path text) RETURNS TABLE(key text, value text) LANGUAGE sql IMMUTABLE AS $$
       SELECT (e.n - 1)::text, e.v #>> '{}'
       FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc::jsonb #> studio_json_path(path)) = 'array'
                                      THEN doc::jsonb #> studio_json_path(path) ELSE '[]'::jsonb END)
            WITH ORDINALITY AS e(v, n)
       UNION ALL
       SELECT o.key, o.value #>> '{}'
       FROM jsonb_each(CASE WHEN jsonb_typeof(doc::jsonb #> studio_json_path(path)) = 'object'
                            THEN doc::jsonb #> studio_json_path(path) ELSE '{}'::jsonb END) AS o $$""",
    # SQLite's two-argument min and max are scalar
    "CREATE FUNCTION min(a bigint, b bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$ SELECT least(a, b) $$",
    "CREATE FUNCTION max(a bigint, b bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$ SELECT greatest(a, b) $$",
    "CREATE FUNCTION instr(haystack text, needle text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT strpos(haystack, needle) $$",
    # printf('%g', x): the label grid's number as text (1.0 as '1', 0.25 as '0.25')
    """CREATE FUNCTION printf(fmt text, x double precision) RETURNS text LANGUAGE sql IMMUTABLE AS $$
       SELECT CASE WHEN x IS NULL THEN NULL WHEN x = trunc(x) AND abs(x) < 1e15 THEN trunc(x)::bigint::text
                   ELSE x::text END $$""",
    # json_group_array(x): the values as one JSON array text
    """CREATE FUNCTION studio_json_array(items anycompatiblearray) RETURNS text LANGUAGE sql IMMUTABLE AS $$
       SELECT coalesce(array_to_json(items)::text, '[]') $$""",
    """CREATE AGGREGATE json_group_array(anycompatible) (
       SFUNC = array_append, STYPE = anycompatiblearray, FINALFUNC = studio_json_array, INITCOND = '{}')""",
]
