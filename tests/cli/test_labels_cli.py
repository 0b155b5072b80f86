"""``labels import`` never replaces another person's label unasked (issue 43): refused in one
sentence with exit 2 and nothing written, unless ``--replace``; the replaced versions stay in
``labels history``. The console entry point, in-process (``run_main``: exit code and streams as a child's)."""

from __future__ import annotations

import json
from pathlib import Path

from studio.core.models import Sample
from studio.core.store import Library
from tests.conftest import run_main


def _as(db: Path, user: str, *args: str):  # type: ignore[no-untyped-def]
    return run_main(*args, db=db, env={"GRADER_STUDIO_USER": user})


def _file(tmp_path: Path, name: str, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _history(db: Path, sample: str) -> list[tuple[str, str]]:
    shown = json.loads(run_main("labels", "history", sample, "--dataset", "qa", "--json", db=db).stdout)
    return [(v["label"], v["labeler"]) for v in shown]


def test_import_refuses_to_replace_another_persons_label_without_replace(db_path: Path, tmp_path: Path) -> None:
    with Library.open(db_path) as lib:
        lib.datasets.create("qa", [Sample(id=f"q{i}", completion=str(i)) for i in range(4)])
    bens = _file(tmp_path, "ben.jsonl", [{"sample_id": "q0", "label": "FAIL"}, {"sample_id": "q1", "label": "PASS"}])
    assert _as(db_path, "ben", "labels", "import", str(bens), "--dataset", "qa").returncode == 0
    mine = _file(tmp_path, "mine.jsonl", [{"sample_id": "q0", "label": "PASS"},   # ben's FAIL: replaced
                                          {"sample_id": "q1", "label": "PASS"},   # the same: no change
                                          {"sample_id": "q2", "label": "FAIL"}])  # new
    refused = _as(db_path, "me", "labels", "import", str(mine), "--dataset", "qa")
    assert refused.returncode == 2, refused.stderr
    assert "'q0' (ben's FAIL, v1)" in refused.stderr and "--replace" in refused.stderr
    assert "Traceback" not in refused.stderr and refused.stderr.count("\n") == 1  # one sentence
    assert _history(db_path, "q0") == [("FAIL", "ben")] and _history(db_path, "q2") == []  # nothing written
    # a file's own labeller is the author: ben correcting ben's label needs no --replace
    again = _file(tmp_path, "ben2.jsonl", [{"sample_id": "q1", "label": "NA", "labeler": "ben"}])
    assert _as(db_path, "me", "labels", "import", str(again), "--dataset", "qa").returncode == 0
    refused = _as(db_path, "me", "labels", "import", str(mine), "--dataset", "qa")
    assert refused.returncode == 2 and "'q1' (ben's NA, v2)" in refused.stderr  # q1 differs now: named too
    done = _as(db_path, "me", "labels", "import", str(mine), "--dataset", "qa", "--replace", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["versions_written"] == 3
    assert _history(db_path, "q0") == [("FAIL", "ben"), ("PASS", "me")]  # ben's kept in the history
    assert _history(db_path, "q1") == [("PASS", "ben"), ("NA", "ben"), ("PASS", "me")]


def test_the_help_says_what_replace_does() -> None:
    shown = run_main("labels", "import", "--help")
    assert shown.returncode == 0 and "--replace" in shown.stdout and "another person" in shown.stdout
