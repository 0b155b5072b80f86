"""docs/team.md's set-up, run for real: its SQL blocks (taken from the doc itself, so the doc stays
true) on a real PostgreSQL server, then the owner role creating the tables and two analysts, each
with a role of their own, working in the library through the console entry point: graders,
datasets, a run, labels, each seeing the other's work, each write under its own role. An upgrade
an analyst's role may not make, and a role without the grants, are one sentence and exit 2."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg import PgServer

from studio.core.models import BuiltinGrader
from studio.core.models import files as definition_files
from tests.conftest import REPO, run_main

DOC = REPO / "docs" / "team.md"
DATABASE = "graders"
ROLES = ("alice", "bob", "studio_analysts", "studio_owner")


def doc_sql_blocks() -> list[list[str]]:
    """The doc's ```sql blocks, each as its statements (comment lines dropped)."""
    blocks = re.findall(r"```sql\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    statements = []
    for block in blocks:
        text = "\n".join(line for line in block.splitlines() if not line.strip().startswith("--"))
        statements.append([s.strip() for s in text.split(";") if s.strip()])
    return statements


def admin_run(server: PgServer, database: str, statements: list[str]) -> None:
    import psycopg

    url = server.url(database)
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)  # type: ignore[arg-type]


@pytest.fixture
def team(pg_server: PgServer) -> Iterator[PgServer]:
    """The server after docs/team.md's two SQL blocks; roles and database dropped afterwards."""
    blocks = doc_sql_blocks()
    assert len(blocks) == 2, "docs/team.md has the administrator's two SQL blocks"
    assert any(s.startswith("CREATE DATABASE graders") for s in blocks[0])
    try:
        admin_run(pg_server, "postgres", blocks[0])
        admin_run(pg_server, DATABASE, blocks[1])
        yield pg_server
    finally:
        pg_server.admin(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        for role in ROLES:
            pg_server.admin(f"DROP ROLE IF EXISTS {role}")


def as_role(server: PgServer, role: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The CLI as an analyst logged in as ``role`` (a password in the URL, as a user may type it;
    this test server trusts 127.0.0.1, so it is never checked), with no GRADER_STUDIO_USER."""
    url = f"postgresql://{role}:{role}-pw%40x@127.0.0.1:{server.port}/{DATABASE}"
    done = run_main("--db", url, *args, env={"GRADER_STUDIO_USER": None, "GRADER_STUDIO_DB": None}, cwd=cwd,
                    timeout=180)  # in-process, as a child started without those two variables
    assert f"{role}-pw" not in done.stdout + done.stderr
    return done


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def one_sentence(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def authors(server: PgServer, sql: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(server.url(DATABASE)) as conn:
        return [tuple(row) for row in conn.execute(sql)]  # type: ignore[arg-type]


def write_samples(path: Path, prefix: str) -> Path:
    rows = [{"id": f"{prefix}{i}", "input": f"Capital of France? ({i})", "output": "Paris" if i % 2 else "Lyon",
             "expected": "Paris"} for i in range(6)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_docs_set_up_lets_two_analysts_work_together_each_under_their_role(team: PgServer,
                                                                                tmp_path: Path) -> None:
    # before the owner has created the tables, an analyst is told who must (nothing is created)
    early = one_sentence(as_role(team, "alice", "graders", "list"))
    assert early.startswith(f"error: the library at postgresql://alice@127.0.0.1:{team.port}/{DATABASE} needs its "
                            "tables created")
    assert "'alice'" in early and "'studio_owner'" in early
    assert authors(team, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == [(0,)]
    # the owner opens it once: the tables are made, owned by the owner role
    ok(as_role(team, "studio_owner", "library", "info"))
    assert authors(team, "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'") == [("studio_owner",)]

    info = ok(as_role(team, "alice", "library", "info"))
    assert info.strip() == (f"PostgreSQL library at postgresql://alice@127.0.0.1:{team.port}/{DATABASE}; "
                            "writing as alice")
    exact = definition_files.save(BuiltinGrader(key="exact", function="exact_match"), tmp_path / "e.grader.yaml")
    ok(as_role(team, "alice", "graders", "create", str(exact)))
    ok(as_role(team, "alice", "datasets", "import", str(write_samples(tmp_path / "qa.jsonl", "q")), "--name", "qa"))
    first = json.loads(ok(as_role(team, "alice", "run", "exact", "qa", "--json")))
    assert first["status"] == "completed" and first["done"] == 6

    # bob sees alice's grader, dataset and run, and adds his own
    listed = json.loads(ok(as_role(team, "bob", "graders", "list", "--json")))
    assert [g["key"] for g in listed] == ["exact"]
    shown = json.loads(ok(as_role(team, "bob", "runs", "show", str(first["id"]), "--json")))
    assert len(shown["results"]) == 6
    contains = definition_files.save(BuiltinGrader(key="contains", function="contains"), tmp_path / "c.grader.yaml")
    ok(as_role(team, "bob", "graders", "create", str(contains)))
    ok(as_role(team, "bob", "datasets", "import", str(write_samples(tmp_path / "more.jsonl", "m")), "--name", "more"))
    second = json.loads(ok(as_role(team, "bob", "run", "exact", "qa", "--json")))
    assert second["status"] == "completed" and second["id"] != first["id"]

    # both label the same sample: bob's replaces alice's only with --replace (issue 43), and both
    # versions are kept, each with its labeler
    for role, verdict in (("alice", "PASS"), ("bob", "FAIL")):
        labels = tmp_path / f"{role}.jsonl"
        labels.write_text(json.dumps({"sample_id": "q1", "label": verdict}) + "\n")
        replace = ["--replace"] if role == "bob" else []
        ok(as_role(team, role, "labels", "import", str(labels), "--dataset", "qa", *replace))
    history = json.loads(ok(as_role(team, "alice", "labels", "history", "q1", "--dataset", "qa", "--json")))
    entries = history["versions"] if isinstance(history, dict) else history
    assert [(e["labeler"], e["label"]) for e in entries] == [("alice", "PASS"), ("bob", "FAIL")]

    # alice sees bob's work
    assert sorted(g["key"] for g in json.loads(ok(as_role(team, "alice", "graders", "list", "--json")))) == \
        ["contains", "exact"]
    datasets = ok(as_role(team, "alice", "datasets", "list"))
    assert "qa" in datasets and "more" in datasets

    # every write names the role that made it
    assert authors(team, "SELECT key, author FROM grader_versions v JOIN graders g ON g.id = v.grader_id "
                         "ORDER BY key") == [("contains", "bob"), ("exact", "alice")]
    assert authors(team, "SELECT name, author FROM datasets ORDER BY name") == [("more", "bob"), ("qa", "alice")]
    assert authors(team, "SELECT author FROM runs ORDER BY id") == [("alice",), ("bob",)]


def test_an_upgrade_the_analysts_role_may_not_make_is_one_sentence_naming_the_owner(team: PgServer) -> None:
    ok(as_role(team, "studio_owner", "library", "info"))
    ok(as_role(team, "alice", "graders", "list"))
    # the library as an older release left it: this release's last revision is due
    from studio.core.store.schema import HEAD_REVISION, REVISIONS

    previous = REVISIONS[-2]
    admin_run(team, DATABASE, [  # what the last revision made, taken away (it adds the review queues' tables)
        "DROP TABLE IF EXISTS queue_settlements, queue_labels, queue_samples, review_queues CASCADE",
        f"UPDATE alembic_version SET version_num = '{previous}'"])
    refused = one_sentence(as_role(team, "alice", "graders", "list"))
    assert f"needs an upgrade of its schema ({previous} to {HEAD_REVISION})" in refused
    assert "'alice' may not make" in refused and "owner role 'studio_owner'" in refused
    assert authors(team, "SELECT version_num FROM alembic_version") == [(previous,)]
    # the owner upgrades it by opening it; then the analyst opens it again
    ok(as_role(team, "studio_owner", "library", "info"))
    assert authors(team, "SELECT version_num FROM alembic_version") == [(HEAD_REVISION,)]
    ok(as_role(team, "alice", "graders", "list"))


def test_a_role_without_the_grants_is_told_what_to_grant(team: PgServer) -> None:
    ok(as_role(team, "studio_owner", "library", "info"))
    team.admin("CREATE ROLE carol LOGIN")  # not in the analysts' group
    try:
        refused = one_sentence(as_role(team, "carol", "graders", "list"))
    finally:
        team.admin("DROP ROLE carol")
    assert "the database role 'carol' may not read the library" in refused
    assert "permission denied for table alembic_version" in refused and "GRANT" in refused


def test_opening_needs_only_read_access_a_reviewer_with_select_reads_and_is_refused_writes(team: PgServer,
                                                                                           tmp_path: Path) -> None:
    ok(as_role(team, "studio_owner", "library", "info"))
    exact = definition_files.save(BuiltinGrader(key="exact", function="exact_match"), tmp_path / "e.grader.yaml")
    ok(as_role(team, "alice", "graders", "create", str(exact)))
    team.admin("CREATE ROLE rita LOGIN")
    try:
        admin_run(team, DATABASE, ["GRANT USAGE ON SCHEMA public TO rita",
                                   "GRANT SELECT ON ALL TABLES IN SCHEMA public TO rita"])
        listed = json.loads(ok(as_role(team, "rita", "graders", "list", "--json")))
        assert [g["key"] for g in listed] == ["exact"]
        again = definition_files.save(BuiltinGrader(key="mine", function="contains"), tmp_path / "m.grader.yaml")
        write = as_role(team, "rita", "graders", "create", str(again))
        assert write.returncode == 1 and "permission denied for table" in write.stderr
        assert "Traceback" not in write.stderr and len(write.stderr.strip().splitlines()) == 1
    finally:
        admin_run(team, DATABASE, ["DROP OWNED BY rita"])
        team.admin("DROP ROLE rita")
