"""A team's library (docs/team.md): authors, locks that name their owner, stale saves refused,
labels of two reviewers, a library copied between backends. Each test runs on SQLite and on a
real PostgreSQL server (this folder's conftest)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import select

from studio.core.models import BuiltinGrader, Sample
from studio.core.models.labels import LabelInput
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Conflict, Library, Locked, StaleVersion
from studio.core.store.copy import copy_library
from studio.core.store.database import stored_revision
from studio.core.store.labels import ReplaceRefused
from studio.core.store.schema import HEAD_REVISION, SCHEMA_VERSION
from studio.core.store.tables import metadata

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def grader(function: str = "exact_match", key: str = "exact") -> BuiltinGrader:
    return BuiltinGrader(key=key, name="Exact", function=function)


def as_user(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("GRADER_STUDIO_USER", name)


def test_versions_name_their_author(library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    as_user(monkeypatch, "alice")
    library.graders.create(grader())
    as_user(monkeypatch, "bob")
    library.graders.save(grader("contains"))
    assert [(v.version, v.author) for v in library.graders.versions("exact")] == [(1, "alice"), (2, "bob")]


def test_a_lock_refuses_another_user_by_the_owners_name(library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    as_user(monkeypatch, "alice")
    library.graders.create(grader())
    locked = library.graders.set_locked("exact", True)
    assert locked.locked_by == "alice" and locked.locked_at is not None
    since = locked.locked_at.strftime("%Y-%m-%d %H:%M UTC")
    as_user(monkeypatch, "bob")
    for attempt in (lambda: library.graders.save(grader("contains")), lambda: library.graders.delete("exact"),
                    lambda: library.graders.set_locked("exact", False)):
        with pytest.raises(Locked, match=f"locked by alice since {since}"):
            attempt()
    assert library.graders.get("exact").definition.function == "exact_match"
    # the owner unlocks their own lock without force
    as_user(monkeypatch, "alice")
    assert not library.graders.set_locked("exact", False).locked


def test_force_unlock_is_recorded_in_the_history(library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    as_user(monkeypatch, "alice")
    library.graders.create(grader())
    library.graders.set_locked("exact", True)
    as_user(monkeypatch, "bob")
    record = library.graders.set_locked("exact", False, force=True)
    assert not record.locked and record.locked_by is None and record.current_version == 2
    last = library.graders.versions("exact")[-1]
    assert (last.action, last.author) == ("force-unlock", "bob")
    assert "by alice since" in last.message
    assert last.definition == library.graders.version("exact", 1).definition


def test_a_suite_lock_names_its_owner(library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    as_user(monkeypatch, "alice")
    library.graders.create(grader())
    library.suites.create(SuiteDefinition(key="s", graders=[SuiteMember(grader="exact")]))
    library.suites.set_locked("s", True)
    as_user(monkeypatch, "bob")
    with pytest.raises(Locked, match="suite 's' is locked by alice since"):
        library.suites.delete("s")
    library.suites.set_locked("s", False, force=True)
    assert [(v.action, v.author) for v in library.suites.versions("s")] == [("create", "alice"),
                                                                           ("force-unlock", "bob")]


def test_a_stale_save_is_refused_naming_the_other_version_and_nothing_is_lost(
        library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    as_user(monkeypatch, "alice")
    library.graders.create(grader())
    opened = library.graders.get("exact").current_version  # both open v1
    as_user(monkeypatch, "bob")
    library.graders.save(grader("contains"), base_version=opened)
    as_user(monkeypatch, "alice")
    with pytest.raises(StaleVersion, match=r"changed since you opened v1: v2 by bob") as refused:
        library.graders.save(grader("starts_with"), base_version=opened)
    assert (refused.value.base, refused.value.head, refused.value.author) == (1, 2, "bob")
    versions = library.graders.versions("exact")
    assert [v.definition.function for v in versions] == ["exact_match", "contains"]
    assert "contains" in library.graders.diff("exact", 1, 2)  # the side-by-side the window offers
    # saved again from the head, alice's edit lands
    assert library.graders.save(grader("starts_with"), base_version=2).current_version == 3


def test_two_reviewers_labels_are_both_kept_and_attributed(library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    library.datasets.create("qa", [Sample(id="q0", completion="4")])
    as_user(monkeypatch, "alice")
    library.labels.put("qa", LabelInput(sample_id="q0", verdict="PASS"))
    as_user(monkeypatch, "bob")
    with pytest.raises(ReplaceRefused, match="alice's PASS"):  # never over alice's unasked (issue 43)
        library.labels.put("qa", LabelInput(sample_id="q0", verdict="FAIL"))
    library.labels.put("qa", LabelInput(sample_id="q0", verdict="FAIL"), replace=True)
    history = library.labels.history("qa", "q0")
    assert [(h.verdict, h.labeler) for h in history] == [("PASS", "alice"), ("FAIL", "bob")]


def test_runs_datasets_and_endpoints_record_their_author(library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    as_user(monkeypatch, "carol")
    library.graders.create(grader())
    dataset = library.datasets.create("qa", [Sample(id="q0", completion="x")])
    record = library.graders.get("exact")
    run = library.runs.create(record.id, 1, dataset.id, 1)
    tables = metadata.tables
    with library.engine.connect() as conn:
        assert conn.execute(select(tables["runs"].c.author).where(tables["runs"].c.id == run.id)).scalar() == "carol"
        assert conn.execute(select(tables["datasets"].c.author)).scalar() == "carol"


def _rows(library: Library) -> dict[str, list[tuple[object, ...]]]:
    out = {}
    with library.engine.connect() as conn:
        for table in metadata.sorted_tables:
            order = list(table.primary_key.columns) or list(table.columns)
            out[table.name] = [tuple(row) for row in conn.execute(select(table).order_by(*order))]
    return out


def test_a_library_from_the_last_release_upgrades_in_place(tmp_path: Path) -> None:
    """tests/fixtures/library-0.1.0.sqlite: the demo library as release 0.1.0 wrote it (its
    hand-written migrations, user_version 7), plus a locked grader and a locked suite."""
    path = tmp_path / "old.sqlite"
    shutil.copy(FIXTURES / "library-0.1.0.sqlite", path)
    with Library.open(path) as lib:
        graders = lib.graders.list()
        assert len(graders) == 32
        judge = lib.graders.get("qa-correctness-judge")
        assert judge.locked and judge.locked_by is None  # a lock from before owners: anyone's
        assert lib.graders.versions("qa-correctness-judge")[0].author == ""
        assert lib.suites.get("qa-suite").locked
        assert lib.runs.get(1).done == 60 and len(lib.labels.current("qa")) == 60
        with lib.engine.connect() as conn:
            assert stored_revision(conn) == HEAD_REVISION
        # it keeps working: a new version records its author
        assert not lib.graders.set_locked("qa-correctness-judge", False).locked
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    con.close()


def test_library_copy_round_trip_is_equal(tmp_path: Path, pg_url: str) -> None:
    """SQLite -> PostgreSQL -> SQLite: every table row for row (the release's demo library)."""
    source = tmp_path / "source.sqlite"
    shutil.copy(FIXTURES / "library-0.1.0.sqlite", source)
    back = tmp_path / "back.sqlite"
    with Library.open(source) as a, Library.open(pg_url) as b:
        report = copy_library(a, b)
        assert report.counts["graders"] == 32 and report.counts["results"] == 60
        assert _rows(a) == _rows(b)
        with Library.open(back) as c:
            copy_library(b, c)
            assert _rows(c) == _rows(a)
        # the server's ids continue after the copied ones
        created = b.graders.create(grader(key="after-copy"))
        assert created.id > max(g.id for g in a.graders.list(include_deleted=True))


def test_a_run_graded_elsewhere_is_refused_and_a_dead_grader_reads_interrupted(pg_url: str) -> None:
    """On a server a process id says nothing about another machine: the run's advisory lock,
    held by the grading process's session, says who grades it, and goes when that process dies."""
    with Library.open(pg_url) as here, Library.open(pg_url) as there:
        here.graders.create(grader())
        dataset = here.datasets.create("qa", [Sample(id="q0", completion="x")])
        run = here.runs.create(here.graders.get("exact").id, 1, dataset.id, 1)
        here.runs.claim(run.id)
        with pytest.raises(Conflict, match="being graded by another process"):
            there.runs.claim(run.id)
        assert there.runs.get(run.id).status == "running"
        here.runs._run_locks.pop(run.id).invalidate()  # the grading process dies: its session ends
        assert there.runs.get(run.id).status == "interrupted"
        there.runs.claim(run.id)  # a resume elsewhere takes it over
        there.runs.set_status(run.id, "completed")
        assert there.runs.get(run.id).status == "completed" and not there.runs._run_locks
