"""Rows a teammate (or a hand edit, or another studio's release) writes straight into a shared library
with SQL, which this studio's models do not accept: shared by the tests of rows read from a library
(importable because pytest puts this folder on sys.path)."""

from __future__ import annotations

import json

from sqlalchemy import text

from studio.core.models import BuiltinGrader
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

AUTHOR = "mallory"
#: endpoint name -> the config text stored for it
BAD_ENDPOINTS = {
    "bad-url": json.dumps({"name": "bad-url", "base_url": 5, "model": "m"}),
    "not-json": "not json at all \x1b[2J",
    "renamed": json.dumps({"name": "someone-else", "base_url": "http://127.0.0.1:9/v1", "model": "m"}),
    "deep": "[" * 5000 + "]" * 5000,
}
#: grader key -> the definition text of its broken current version (v2; v1 is good)
BAD_GRADERS = {
    "bad-function": json.dumps({"kind": "builtin", "key": "bad-function", "function": 12}),
    "unknown-kind": json.dumps({"kind": "from-the-future", "key": "unknown-kind"}),
    "not-json": "{{{\x00",
}


#: a suite whose current version (v2) names no graders at all
BAD_SUITE = "bad-suite"


def break_rows(library: Library) -> None:
    """A library with one good endpoint, grader and suite, and the broken rows above written by SQL."""
    EndpointRepository.of(library).save(EndpointConfig(name="good", base_url="http://127.0.0.1:9/v1", model="m"))
    library.graders.create(BuiltinGrader(key="good", function="exact_match"))
    for key in ("good-suite", BAD_SUITE):
        library.suites.create(SuiteDefinition(key=key, graders=[SuiteMember(grader="good")]))
    with library.engine.begin() as conn:
        suite_id = conn.execute(text("SELECT id FROM suites WHERE key = :k"), {"k": BAD_SUITE}).scalar_one()
        conn.execute(text("INSERT INTO suite_versions (suite_id, version, action, definition, message, created_at,"
                          " author) VALUES (:s, 2, 'save', :d, '', CURRENT_TIMESTAMP, :a)"),
                     {"s": suite_id, "d": json.dumps({"key": BAD_SUITE, "graders": []}), "a": AUTHOR})
        conn.execute(text("UPDATE suites SET current_version = 2 WHERE id = :s"), {"s": suite_id})
    for key in BAD_GRADERS:
        library.graders.create(BuiltinGrader(key=key, function="exact_match"))
    with library.engine.begin() as conn:
        for name, config in BAD_ENDPOINTS.items():
            conn.execute(text("INSERT INTO endpoints (name, config, created_at, updated_at, updated_by)"
                              " VALUES (:n, :c, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, :a)"),
                         {"n": name, "c": config.replace("\x00", "") if library.engine.dialect.name != "sqlite"
                          else config, "a": AUTHOR})
        for key, definition in BAD_GRADERS.items():
            if library.engine.dialect.name != "sqlite":
                definition = definition.replace("\x00", "")  # PostgreSQL's text refuses NUL itself
            grader_id = conn.execute(text("SELECT id FROM graders WHERE key = :k"), {"k": key}).scalar_one()
            conn.execute(text("INSERT INTO grader_versions (grader_id, version, action, definition, message,"
                              " created_at, author) VALUES (:g, 2, 'save', :d, '', CURRENT_TIMESTAMP, :a)"),
                         {"g": grader_id, "d": definition, "a": AUTHOR})
            conn.execute(text("UPDATE graders SET current_version = 2 WHERE id = :g"), {"g": grader_id})


def break_times(library: Library) -> None:
    """SQLite only (PostgreSQL's timestamp refuses it): a grader ``timeless`` whose times are no times."""
    library.graders.create(BuiltinGrader(key="timeless", function="exact_match"))
    with library.engine.begin() as conn:
        conn.execute(text("UPDATE graders SET updated_at = 'yesterday', created_at = 'a while ago'"
                          " WHERE key = 'timeless'"))


def break_run(library: Library) -> int:
    """A finished run of the good grader whose stored settings and aggregates are not JSON; its id."""
    from studio.core.engine.runner import run_grader
    from studio.core.models.thread import Sample

    library.datasets.create("for-runs", [Sample(id="s", messages=[], completion="a", expected="a")])
    run = run_grader(library, "good", "for-runs")
    with library.engine.begin() as conn:
        conn.execute(text("UPDATE runs SET settings = 'not json', aggregates = '[1' WHERE id = :r"), {"r": run.id})
    return run.id


#: a sample's stored JSON a teammate wrote that is no sample, by what is wrong with it
BAD_SAMPLES = {
    "wrong-type": json.dumps({"id": "s2", "messages": 5, "completion": "Paris"}),
    "not-json": "not json at all \x1b[2J",
    "deep": "[" * 5000 + "]" * 5000,
    "not-an-object": json.dumps(["s2", "Paris"]),
}


def break_sample(library: Library, dataset: str, sample_id: str, data: str) -> None:
    """The sample ``sample_id`` of ``dataset`` rewritten by SQL into ``data`` (its completion and
    expected columns cleared, as a teammate rewriting the row would), the dataset written by ``AUTHOR``."""
    with library.engine.begin() as conn:
        dataset_id = conn.execute(text("SELECT id FROM datasets WHERE name = :n"), {"n": dataset}).scalar_one()
        conn.execute(text("UPDATE samples SET data = :d, completion = NULL, expected = NULL"
                          " WHERE dataset_id = :i AND sample_id = :s"), {"d": data, "i": dataset_id, "s": sample_id})
        conn.execute(text("UPDATE datasets SET author = :a WHERE id = :i"), {"a": AUTHOR, "i": dataset_id})
