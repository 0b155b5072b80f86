"""Suites in the library: versioned, lockable, trashable and restorable like graders, and refused
(one sentence, nothing stored) when they name something the library cannot run."""

from __future__ import annotations

import sqlite3

import pytest
from legacy import MIGRATIONS
from sqlalchemy.exc import DBAPIError

from studio.core.models import (
    BinaryJudge,
    BuiltinGrader,
    Component,
    CompositeGrader,
    FunctionGrader,
)
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Conflict, Library, Locked, NotFound


@pytest.fixture
def lib(library: Library) -> Library:
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.graders.create(BuiltinGrader(key="has", function="contains"))
    library.graders.create(BinaryJudge(key="judge", criteria="Is it right?", endpoint="fake"))
    library.graders.create(FunctionGrader(key="fn", source="def grade(sample, item):\n    return 7.5\n",
                                          contract="mka1_sample"))
    return library


def suite(*members: SuiteMember, key: str = "qa-suite", **fields: object) -> SuiteDefinition:
    return SuiteDefinition(key=key, graders=list(members), **fields)  # type: ignore[arg-type]


def test_versions_lock_trash_restore(lib: Library) -> None:
    record = lib.suites.create(suite(SuiteMember(grader="exact"), SuiteMember(grader="judge", weight=2.0)))
    assert record.current_version == 1 and record.definition.grader_keys() == ["exact", "judge"]
    same = lib.suites.save(record.definition)
    assert same.current_version == 1  # unchanged: nothing appended
    changed = lib.suites.save(suite(SuiteMember(grader="judge"), SuiteMember(grader="exact"), overall="mean"))
    assert changed.current_version == 2 and changed.definition.grader_keys() == ["judge", "exact"]
    assert [v.version for v in lib.suites.versions("qa-suite")] == [1, 2]

    lib.suites.set_locked("qa-suite", True)
    with pytest.raises(Locked, match="locked"):
        lib.suites.save(suite(SuiteMember(grader="exact")))
    with pytest.raises(Locked):
        lib.suites.delete("qa-suite")
    lib.suites.set_locked("qa-suite", False)

    lib.suites.delete("qa-suite")
    assert [s.key for s in lib.suites.list()] == [] and [s.key for s in lib.suites.list(deleted_only=True)] == ["qa-suite"]
    with pytest.raises(NotFound, match="trash"):
        lib.suites.get("qa-suite")
    assert lib.suites.restore("qa-suite").current_version == 2
    restored = lib.suites.restore_version("qa-suite", 1)
    assert restored.current_version == 3 and restored.definition.grader_keys() == ["exact", "judge"]


def test_versions_are_immutable_in_the_database(lib: Library) -> None:
    lib.suites.create(suite(SuiteMember(grader="exact")))
    for statement in ("UPDATE suite_versions SET definition = '{}'", "DELETE FROM suite_versions"):
        with pytest.raises(DBAPIError, match="immutable"), lib.engine.begin() as conn:
            conn.exec_driver_sql(statement)


@pytest.mark.parametrize(("make", "sentence"), [
    (lambda: suite(SuiteMember(grader="nope")), "no grader with key 'nope'"),
    (lambda: suite(SuiteMember(grader="exact", threshold=1.5)), "threshold 1.5 for 'exact' is outside its scores"),
    (lambda: suite(SuiteMember(grader="judge", threshold=-0.1)), "outside its scores"),
    (lambda: suite(SuiteMember(grader="exact", version=4)), "no version 4"),
    (lambda: suite(SuiteMember(grader="exact"), key="has"), "already a grader's key"),
    (lambda: suite(SuiteMember(grader="exact"), overall="composite", overall_grader="judge"), "not a composite"),
])
def test_a_suite_that_cannot_run_is_refused_and_nothing_is_stored(lib: Library, make, sentence) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((NotFound, Conflict), match=sentence):
        lib.suites.create(make())
    assert lib.suites.list(include_deleted=True) == []


def test_a_trashed_grader_is_refused(lib: Library) -> None:
    lib.graders.delete("has")
    with pytest.raises(NotFound, match="trash"):
        lib.suites.create(suite(SuiteMember(grader="exact"), SuiteMember(grader="has")))
    assert lib.suites.list(include_deleted=True) == []


def test_duplicates_and_bad_numbers_fail_validation() -> None:
    with pytest.raises(ValueError, match="twice"):
        suite(SuiteMember(grader="exact"), SuiteMember(grader="exact"))
    with pytest.raises(ValueError):
        SuiteMember(grader="exact", weight="heavy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        SuiteMember(grader="exact", weight=float("nan"))


def test_an_unbounded_grader_takes_any_finite_threshold_and_a_composite_must_cover_its_parts(lib: Library) -> None:
    lib.suites.create(suite(SuiteMember(grader="fn", threshold=5.0)))  # a function grader may score 7.5
    lib.graders.create(CompositeGrader(key="both", components=[
        Component(grader=BuiltinGrader(key="exact", function="exact_match")),
        Component(grader=BuiltinGrader(key="has", function="contains"))]))
    with pytest.raises(Conflict, match="combines 'has'"):
        lib.suites.create(suite(SuiteMember(grader="exact"), key="s2", overall="composite", overall_grader="both"))
    ok = lib.suites.create(suite(SuiteMember(grader="exact"), SuiteMember(grader="has"), key="s3",
                                 overall="composite", overall_grader="both"))
    assert ok.definition.overall_grader == "both"


def test_the_migration_gives_every_earlier_run_its_grader_slot(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A library written before suites: each run gets run_graders slot 0 (its grader and version), and
    reads as before (no suite)."""
    from studio.core.store.run_graders import run_graders

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    before = next(n for n, m in enumerate(MIGRATIONS) if any("CREATE TABLE suites" in s for s in m))
    for number, statements in enumerate(MIGRATIONS[:before], 1):
        for statement in statements:
            con.execute(statement)
        con.execute(f"PRAGMA user_version = {number}")
    now = "2026-01-01 00:00:00"
    con.execute("INSERT INTO graders (key, kind, name, current_version, created_at, updated_at) "
                "VALUES ('exact', 'builtin', '', 2, ?, ?)", (now, now))
    for version in (1, 2):
        con.execute("INSERT INTO grader_versions (grader_id, version, action, definition, created_at) VALUES "
                    "(1, ?, 'create', '{\"kind\": \"builtin\", \"key\": \"exact\", \"function\": \"exact_match\"}', ?)",
                    (version, now))
    con.execute("INSERT INTO datasets (name, format, created_at) VALUES ('d', 'flat', ?)", (now,))
    con.execute("INSERT INTO runs (grader_id, grader_version, dataset_id, status, created_at, settings) "
                "VALUES (1, 1, 1, 'completed', ?, '{\"pass_threshold\": 0.7}')", (now,))
    con.commit()
    con.close()
    with Library.open(path) as lib:
        [grader] = run_graders(lib, 1)
        assert (grader.slot, grader.key, grader.version, grader.threshold) == (0, "exact", 1, 0.7)
        assert lib.runs.get(1).suite is None and lib.runs.get(1).label == "exact v1"


def test_grader_rows_keep_their_cached_tokens_and_an_older_library_gains_the_column(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The migration adds grader_results.cached_tokens (0 for rows written before it); a suite's
    per-grader row written now keeps the tokens the endpoint served from its prompt cache."""
    from studio.core.models import Outcome
    from studio.core.store.runs import grader_values

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    added = next(n for n, m in enumerate(MIGRATIONS)
                 if any("ALTER TABLE grader_results ADD COLUMN cached_tokens" in s for s in m))
    for number, statements in enumerate(MIGRATIONS[:added], 1):
        for statement in statements:
            con.execute(statement)
        con.execute(f"PRAGMA user_version = {number}")
    con.execute("INSERT INTO grader_results (run_id, slot, sample_idx, status, score, prompt_tokens)"
                " VALUES (99, 0, 0, 'ok', 1.0, 50)")
    con.commit()
    con.close()
    with Library.open(path) as lib:
        with lib.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT prompt_tokens, cached_tokens FROM grader_results").one() == (50, 0)
        lib.graders.create(BinaryJudge(key="judge", criteria="Is it right?", endpoint="fake"))
        lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
        dataset = lib.datasets.create("d", [])
        run = lib.runs.create(lib.graders.get("judge").id, 1, dataset.id, 1, slots=[
            {"grader_id": lib.graders.get("judge").id, "grader_key": "judge", "grader_version": 1},
            {"grader_id": lib.graders.get("exact").id, "grader_key": "exact", "grader_version": 1}],
            suite={"key": None, "overall": "mean", "graders": ["judge", "exact"]})
        outcome = Outcome(score=1.0, rationale="PASS", prompt_tokens=300, completion_tokens=20, cached_tokens=256)
        lib.runs.write_rows([], [grader_values(run.id, 0, 0, outcome)])
        assert lib.runs.partial(run.id)[0][0].cached_tokens == 256  # a resume reads it back
        with lib.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT cached_tokens FROM grader_results WHERE run_id = ?",
                                        (run.id,)).scalar() == 256
