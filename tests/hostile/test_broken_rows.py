"""Rows a teammate writes straight into a shared library that do not validate (tests/hostile_rows.py),
on SQLite and PostgreSQL: every listing keeps working and names each broken row with its author and a
way to repair it, using one is a sentence (exit 2), deleting or repairing it works, and ``library
copy`` carries the library over. Never a traceback (exit 70)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_rows import (
    AUTHOR,
    BAD_ENDPOINTS,
    BAD_GRADERS,
    BAD_SUITE,
    break_rows,
    break_run,
    break_times,
)
from sqlalchemy import text

from studio.core.engine.runner import run_grader
from studio.core.models import BuiltinGrader
from studio.core.models.broken import BrokenRow, BrokenRowError
from studio.core.models.thread import Sample
from studio.core.store import Library


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


def _no_bug(result) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode != 70 and "Traceback" not in result.stderr and "hit a bug" not in result.stderr, \
        result.stderr


def test_the_store_lists_broken_rows_apart(library: Library) -> None:
    break_rows(library)
    endpoints = library.endpoints.listing()
    broken = {e.ident: e for e in endpoints if isinstance(e, BrokenRow)}
    assert set(broken) == set(BAD_ENDPOINTS)
    assert all(b.author == AUTHOR and b.reason for b in broken.values())
    assert [c.name for c in library.endpoints.list()] == ["good"]
    with pytest.raises(BrokenRowError, match="bad-url"):
        library.endpoints.get("bad-url")
    graders = {e.handle: e for e in library.graders.listing() if isinstance(e, BrokenRow)}
    assert set(graders) == set(BAD_GRADERS)
    assert {g.ident for g in graders.values()} == {f"{k} v2" for k in BAD_GRADERS}
    assert [g.key for g in library.graders.list()] == ["good"]
    with pytest.raises(BrokenRowError, match="bad-function v2"):
        library.graders.get("bad-function")
    assert library.graders.version("bad-function", 1).version == 1  # a good version still reads
    suites = library.suites.listing()
    assert [s.key for s in suites if not isinstance(s, BrokenRow)] == ["good-suite"]
    assert [(s.ident, s.handle, s.author) for s in suites if isinstance(s, BrokenRow)] == [
        (f"{BAD_SUITE} v2", BAD_SUITE, AUTHOR)]
    with pytest.raises(BrokenRowError, match=f"{BAD_SUITE} v2"):
        library.suites.get(BAD_SUITE)


def test_the_cli_names_broken_rows_and_repairs_them(library: Library, cli) -> None:  # type: ignore[no-untyped-def]
    break_rows(library)
    run_id = break_run(library)
    library.engine.dispose()
    runs = cli("runs", "list")
    _no_bug(runs)
    assert runs.returncode == 0 and f"the run “{run_id}”" in runs.stderr
    shown_run = cli("runs", "show", str(run_id))
    _no_bug(shown_run)
    assert shown_run.returncode == 2 and "is broken" in shown_run.stderr
    listed = cli("endpoints", "list")
    _no_bug(listed)
    assert listed.returncode == 0 and "good" in listed.stdout
    for name in BAD_ENDPOINTS:
        assert name in listed.stdout and f"“{name}” (written by {AUTHOR})" in listed.stderr
    assert "\x1b" not in listed.stdout + listed.stderr
    records = json.loads(cli("endpoints", "list", "--json").stdout)
    assert {r["name"] for r in records if r.get("broken")} == set(BAD_ENDPOINTS)

    used = cli("endpoints", "test", "bad-url")
    _no_bug(used)
    assert used.returncode == 2 and "bad-url" in used.stderr and "endpoints remove" in used.stderr
    for name in BAD_ENDPOINTS:
        removed = cli("endpoints", "remove", name)
        _no_bug(removed)
        assert removed.returncode == 0
    assert json.loads(cli("endpoints", "list", "--json").stdout)[0]["name"] == "good"

    graders = cli("graders", "list", "--json")
    _no_bug(graders)
    assert {r["key"] for r in json.loads(graders.stdout)} >= set(BAD_GRADERS) | {"good"}
    for key in BAD_GRADERS:
        shown = cli("graders", "show", key)
        _no_bug(shown)
        assert shown.returncode == 2 and f"{key} v2" in shown.stderr and AUTHOR in shown.stderr
        versions = cli("graders", "versions", key)
        _no_bug(versions)
    restored = cli("graders", "restore", "bad-function", "--version", "1")
    _no_bug(restored)
    assert restored.returncode == 0 and cli("graders", "show", "bad-function").returncode == 0
    deleted = cli("graders", "delete", "unknown-kind")
    _no_bug(deleted)
    assert deleted.returncode == 0

    suites = cli("suites", "list")
    _no_bug(suites)
    assert suites.returncode == 0 and "good-suite" in suites.stdout and BAD_SUITE in suites.stdout
    assert f"“{BAD_SUITE} v2” (written by {AUTHOR})" in suites.stderr
    shown = cli("suites", "show", BAD_SUITE)
    _no_bug(shown)
    assert shown.returncode == 2 and f"{BAD_SUITE} v2" in shown.stderr
    assert cli("suites", "restore", BAD_SUITE, "--version", "1").returncode == 0
    assert cli("suites", "show", BAD_SUITE).returncode == 0


def test_library_copy_carries_a_library_with_broken_rows(library: Library, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    break_rows(library)
    if library.engine.dialect.name == "sqlite":
        break_times(library)
    source = str(library.engine.url) if library.engine.dialect.name != "sqlite" else library.engine.url.database
    library.engine.dispose()
    target = tmp_path / "copy.sqlite"
    copied = cli("library", "copy", str(source), str(target))
    _no_bug(copied)
    assert copied.returncode == 0, copied.stderr
    again = Library.open(target)
    try:
        assert {e.ident for e in again.endpoints.broken()} == set(BAD_ENDPOINTS)  # carried, still named broken
        assert {g.handle for g in again.graders.broken()} == set(BAD_GRADERS)
        if library.engine.dialect.name == "sqlite":  # carried with the copy's time, and said so
            assert "graders row" in copied.stderr and "created_at is not a time" in copied.stderr
            assert [g.key for g in again.graders.list()] == ["good", "timeless"]
            # the not-json definition's NUL: stored as U+FFFD, and the copy said so
            assert "grader_versions row" in copied.stderr and "NUL" in copied.stderr
        else:
            assert [g.key for g in again.graders.list()] == ["good"]
    finally:
        again.close()


def test_times_that_are_no_times_show_the_grader_broken(tmp_path: Path) -> None:
    """SQLite only: PostgreSQL's timestamp type refuses a time that is no time when it is written."""
    from tests.conftest import run_main  # in-process: exit code and streams as a child's

    db = tmp_path / "times.sqlite"
    library = Library.open(db)
    try:
        break_rows(library)
        break_times(library)
        broken = {e.handle: e for e in library.graders.listing() if isinstance(e, BrokenRow)}
        assert "timeless" in broken and "created_at" in broken["timeless"].reason
        library.datasets.create("d", [Sample(id="s", messages=[], completion="a", expected="a")])
        run = run_grader(library, "good", "d")
        with library.engine.begin() as conn:  # a run and a dataset whose times are no times
            conn.execute(text("UPDATE runs SET created_at = 'never', finished_at = 'later'"))
            conn.execute(text("UPDATE datasets SET created_at = 'long ago'"))
        assert library.runs.get(run.id).created_at is None  # unknown, not a ValueError
    finally:
        library.close()
    for args in (("graders", "show", "timeless"), ("graders", "versions", "timeless")):
        _no_bug(run_main(*args, db=db))
    for args in (("runs", "list"), ("runs", "show", str(run.id)), ("runs", "report", str(run.id)),
                 ("datasets", "list"), ("runs", "list", "--json")):
        shown = run_main(*args, db=db)
        _no_bug(shown)
        assert shown.returncode == 0, (args, shown.stderr)
    assert "unknown time" in run_main("runs", "list", db=db).stdout.splitlines()[-1]  # the unknown time shown as unknown
    assert run_main("graders", "delete", "timeless", db=db).returncode == 0


def test_a_sqlite_library_holding_nul_copies_to_postgresql(tmp_path: Path, pg_url: str) -> None:
    """SQLite's TEXT holds NUL, PostgreSQL's cannot (nor ``\\u0000`` in JSON its functions read): a
    library written by an earlier studio or by hand copies over with U+FFFD in their place, each
    change named, and the copy's run reads back."""
    from tests.conftest import run_main  # in-process: exit code and streams as a child's

    db = tmp_path / "nul.sqlite"
    library = Library.open(db)
    try:
        break_rows(library)
        run_id = break_run(library)
        with library.engine.begin() as conn:  # a result row as a judge's reply left it before the boundary
            conn.execute(text("UPDATE runs SET settings = '{}', aggregates = '{}' WHERE id = :r"), {"r": run_id})
            conn.execute(text("UPDATE results SET rationale = :t, details = :d WHERE run_id = :r"),
                         {"t": "before\x00after", "d": '{"note": "x\\u0000y"}', "r": run_id})
    finally:
        library.close()
    copied = run_main("library", "copy", str(db), pg_url)
    _no_bug(copied)
    assert copied.returncode == 0, copied.stderr
    assert "results row" in copied.stderr and "rationale held characters" in copied.stderr
    target = Library.open(pg_url)
    try:
        (row,) = target.runs.results(run_id)
        assert row["rationale"] == "before\ufffdafter" and row["details"] == {"note": "x\ufffdy"}
    finally:
        target.close()
    _no_bug(run_main("runs", "show", str(run_id), env={"GRADER_STUDIO_DB": pg_url}))


def test_versions_and_labels_whose_times_are_no_times_show_unknown_time(tmp_path: Path) -> None:
    """SQLite only: a grader version, a suite version and a label whose stored time is no time list
    with "unknown time" (the time was read as None), in tables and JSON: never a traceback."""
    from studio.core.models import BuiltinGrader
    from studio.core.models.labels import LabelInput
    from studio.core.models.suite import SuiteDefinition, SuiteMember
    from tests.conftest import run_main  # in-process: exit code and streams as a child's

    db = tmp_path / "times.sqlite"
    library = Library.open(db)
    try:
        library.graders.create(BuiltinGrader(key="g", function="exact_match"))
        library.suites.create(SuiteDefinition(key="s", graders=[SuiteMember(grader="g")]))
        library.datasets.create("d", [Sample(id="s1", messages=[], completion="a", expected="a")])
        library.labels.put("d", LabelInput(sample_id="s1", verdict="PASS"))
        with library.engine.begin() as conn:
            for table, owner in (("grader_versions", "grader_id"), ("suite_versions", "suite_id")):
                conn.execute(text(f"INSERT INTO {table} ({owner}, version, action, definition, message, created_at,"
                                  f" author) SELECT {owner}, 2, action, definition, '', 'yesterday', :a FROM {table}"),
                             {"a": AUTHOR})
            conn.execute(text("UPDATE graders SET current_version = 2"))
            conn.execute(text("UPDATE suites SET current_version = 2"))
            conn.execute(text("INSERT INTO labels (label_set_id, sample_id, version, verdict, note, labeler,"
                              " created_at) SELECT label_set_id, sample_id, 2, 'FAIL', '', :a, 'some day'"
                              " FROM labels"), {"a": AUTHOR})
        assert library.graders.versions("g")[1].created_at is None
        assert library.labels.history("d", "s1")[1].created_at is None
    finally:
        library.close()
    for args in (("graders", "versions", "g"), ("suites", "versions", "s"), ("labels", "history", "s1", "--dataset", "d")):
        shown = run_main(*args, db=db)
        _no_bug(shown)
        assert shown.returncode == 0 and "unknown time" in shown.stdout, (args, shown.stderr)
        as_json = run_main(*args, "--json", db=db)
        _no_bug(as_json)
        assert as_json.returncode == 0 and None in [v["created_at"] for v in json.loads(as_json.stdout)]
    exported = run_main("labels", "export", "--dataset", "d", "--format", "jsonl", db=db)
    _no_bug(exported)
    assert exported.returncode == 0 and json.loads(exported.stdout.splitlines()[0])["created_at"] is None


def test_a_label_that_does_not_validate_is_named_and_relabelling_repairs_it(  # type: ignore[no-untyped-def]
        library: Library, cli) -> None:
    """A teammate's label with a verdict this studio does not know is listed BROKEN with its labeller; the other labels,
    the label history, the export and relabelling the sample keep working."""
    from studio.core.models.labels import LabelInput

    library.datasets.create("d", [Sample(id=f"s{i}", messages=[], completion="a", expected="a") for i in (1, 2)])
    library.labels.put_many("d", [LabelInput(sample_id="s1", verdict="PASS"), LabelInput(sample_id="s2", verdict="FAIL")])
    with library.engine.begin() as conn:
        conn.execute(text("INSERT INTO labels (label_set_id, sample_id, version, verdict, score, note, labeler,"
                          " created_at) SELECT label_set_id, sample_id, 2, :v, :s, '', :a, created_at FROM labels"
                          " WHERE sample_id = 's2'"), {"v": "MAYBE", "s": None, "a": AUTHOR})
    assert list(library.labels.current("d")) == ["s1"]
    (broken,) = library.labels.broken("d")
    assert broken.ident == "s2 v2" and broken.author == AUTHOR and broken.reason
    listed = cli("labels", "list", "--dataset", "d")
    _no_bug(listed)
    assert listed.returncode == 0 and "s1" in listed.stdout and "BROKEN" in listed.stdout
    assert f"“s2 v2” (written by {AUTHOR})" in listed.stderr and "again" in listed.stderr
    history = cli("labels", "history", "s2", "--dataset", "d", "--json")
    _no_bug(history)
    assert [entry.get("broken", False) for entry in json.loads(history.stdout)] == [False, True]
    exported = cli("labels", "export", "--dataset", "d")
    _no_bug(exported)
    assert exported.returncode == 0 and [json.loads(line)["sample_id"] for line in exported.stdout.splitlines()] == ["s1"]
    library.graders.create(BuiltinGrader(key="g", function="exact_match"))
    run = run_grader(library, "g", "d")
    agreed = cli("agreement", str(run.id), "--json")
    _no_bug(agreed)
    assert agreed.returncode == 0 and json.loads(agreed.stdout)["n"] == 1 and "“s2 v2”" in agreed.stderr
    library.labels.put("d", LabelInput(sample_id="s2", verdict="PASS"), replace=True)  # the repair
    assert library.labels.current("d")["s2"].version == 3 and library.labels.broken("d") == []


def test_a_dataset_sample_or_provenance_that_does_not_validate_is_a_sentence(library: Library, cli) -> None:  # type: ignore[no-untyped-def]
    """A teammate's sample JSON that is no sample is named (dataset, sample, author, repair) when it
    is read, exit 2, never a traceback; a provenance that is no JSON object leaves the listing working."""
    library.datasets.create("d", [Sample(id=f"s{i}", messages=[], completion="a", expected="a") for i in range(3)])
    library.datasets.create("other", [Sample(id="s", messages=[], completion="a", expected="a")])
    with library.engine.begin() as conn:
        conn.execute(text("UPDATE samples SET data = :d WHERE sample_id = 's1'"), {"d": json.dumps({"id": 5})})
        conn.execute(text("UPDATE datasets SET provenance = 'not json', author = :a"), {"a": AUTHOR})
    library.engine.dispose()
    listed = cli("datasets", "list")
    _no_bug(listed)
    assert listed.returncode == 0 and "other" in listed.stdout and "d" in listed.stdout
    shown = cli("datasets", "show", "d")
    _no_bug(shown)
    assert shown.returncode == 2 and "“d #1”" in shown.stderr and f"(written by {AUTHOR})" in shown.stderr
    assert "datasets delete d" in shown.stderr
    assert cli("datasets", "show", "other").returncode == 0  # the rest keeps working


def test_a_label_whose_score_is_no_number_is_broken(tmp_path: Path) -> None:
    """SQLite only (PostgreSQL's double precision refuses it when it is written): a stored score
    that is no number is a broken label, named in the listing, the others still read."""
    from studio.core.models.labels import LabelInput
    from tests.conftest import run_main  # in-process: exit code and streams as a child's

    db = tmp_path / "scores.sqlite"
    with Library.open(db) as library:
        library.datasets.create("d", [Sample(id=f"s{i}", messages=[], completion="a") for i in (1, 2)])
        library.labels.put_many("d", [LabelInput(sample_id="s1", score=0.5), LabelInput(sample_id="s2", score=1.0)])
        with library.engine.begin() as conn:
            conn.execute(text("INSERT INTO labels (label_set_id, sample_id, version, score, note, labeler, created_at)"
                              " SELECT label_set_id, sample_id, 2, 'many', '', :a, created_at FROM labels"
                              " WHERE sample_id = 's1'"), {"a": AUTHOR})
        assert list(library.labels.current("d")) == ["s2"]
        assert [b.ident for b in library.labels.broken("d")] == ["s1 v2"]
    listed = run_main("labels", "list", "--dataset", "d", "--json", db=db)
    _no_bug(listed)
    records = json.loads(listed.stdout)["labels"]
    assert [(r.get("sample_id"), r.get("broken", False)) for r in records] == [("s2", False), (None, True)]
