"""``grader-studio suites ...`` and suite runs from the command line: the lifecycle, bad input refused
with one sentence and nothing created, ``run --json`` per grader, ``runs show|export|compare``."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.models import BinaryJudge, BuiltinGrader
from studio.core.store import Library


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """These tests run on SQLite and on a real PostgreSQL server (tests/pg.py)."""
    return any_db



@pytest.fixture
def prepared(library: Library, fake_judge) -> Library:  # type: ignore[no-untyped-def]
    add_endpoint(library, fake_judge)
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.graders.create(BuiltinGrader(key="has", function="contains"))
    library.graders.create(BuiltinGrader(key="gone", function="contains"))
    library.graders.delete("gone")
    library.graders.create(BinaryJudge(key="judge", criteria="Names the right capital.", endpoint="fake"))
    samples = [qa(f"s{i}", "Capital of France?", "Paris" if i % 2 else "It is Paris", "Paris") for i in range(8)]
    samples[3] = qa("s3", "A joke?", "A joke [[judge:NA]]", "x")
    library.datasets.create("geo", samples)
    return library


def suites_json(cli) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    return json.loads(cli("suites", "list", "--all", "--json").stdout)


def test_lifecycle(cli, prepared: Library) -> None:  # type: ignore[no-untyped-def]
    made = cli("suites", "create", "geo", "exact", "judge", "--weight", "judge=2", "--threshold", "exact=1",
               "--overall", "mean")
    assert made.returncode == 0, made.stderr
    shown = json.loads(cli("suites", "show", "geo", "--json").stdout)
    assert [(g["grader"], g["weight"], g["threshold"]) for g in shown["graders"]] == [("exact", 1.0, 1.0),
                                                                                     ("judge", 2.0, None)]
    assert cli("suites", "add", "geo", "has", "--version", "1").returncode == 0
    assert cli("suites", "remove", "geo", "exact").returncode == 0
    assert [g["grader"] for g in json.loads(cli("suites", "show", "geo", "--json").stdout)["graders"]] == ["judge", "has"]
    assert cli("suites", "lock", "geo").returncode == 0
    refused = cli("suites", "trash", "geo")
    assert refused.returncode == 1 and "locked" in refused.stderr and "Traceback" not in refused.stderr
    assert cli("suites", "unlock", "geo").returncode == 0
    assert cli("suites", "trash", "geo").returncode == 0
    assert suites_json(cli)[0]["deleted"] is True
    trashed = cli("run", "geo", "geo")  # a suite in the trash does not run: bad input, exit 2 (issue 28)
    assert trashed.returncode == 2 and "suite 'geo' is in the trash" in trashed.stderr
    assert cli("suites", "restore", "geo").returncode == 0
    assert cli("suites", "restore", "geo", "--version", "1").returncode == 0
    versions = json.loads(cli("suites", "versions", "geo", "--json").stdout)
    assert [v["version"] for v in versions] == [1, 2, 3, 4] and versions[-1]["message"] == "restored from v1"
    graders = prepared.graders.list()
    assert {g.key for g in graders} == {"exact", "has", "judge"}  # `graders` commands and objects unchanged


@pytest.mark.parametrize(("args", "sentence"), [
    (("bad", "exact", "nope"), "no grader with key 'nope'"),
    (("bad", "exact", "gone"), "'gone' (it is in the trash"),
    (("bad", "exact", "exact"), "'exact' is named twice"),
    (("bad", "exact", "--weight", "exact=heavy"), "'heavy' is not a number"),
    (("bad", "exact", "--threshold", "exact=1.5"), "threshold 1.5 for 'exact' is outside its scores (0 to 1)"),
    (("bad", "exact", "--weight", "has=2"), "'has' is not one of the suite's graders"),
    (("bad", "exact", "--overall", "judge"), "not a composite"),
])
def test_bad_input_is_one_sentence_and_nothing_is_created(cli, prepared: Library, args, sentence) -> None:  # type: ignore[no-untyped-def]
    result = cli("suites", "create", *args)
    assert result.returncode in (1, 2)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and sentence in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert suites_json(cli) == []


def test_one_off_suites_refuse_bad_input_before_a_run_exists(cli, prepared: Library) -> None:  # type: ignore[no-untyped-def]
    # bad input: exit 2, the run could not be done (issue 28)
    for graders, sentence in (("exact,exact", "twice"), ("exact,nope", "no grader with key 'nope'"),
                              ("exact,gone", "in the trash")):
        result = cli("run", "--graders", graders, "geo")
        assert result.returncode == 2 and sentence in result.stderr and "Traceback" not in result.stderr
    assert json.loads(cli("runs", "list", "--json").stdout) == []


def test_a_suite_run_from_the_command_line(cli, prepared: Library, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("suites", "create", "geo", "exact", "judge", "--overall", "mean").returncode == 0
    ran = cli("run", "geo", "geo", "--json")
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["suite"] == "geo" and [g["key"] for g in out["graders"]] == ["exact", "judge"]
    exact, judge = out["graders"]
    assert exact["version"] == 1 and exact["counts"] == {"ok": 8, "error": 0, "invalid": 0, "na": 0}
    assert exact["aggregates"]["n"] == 8 and exact["aggregates"]["mean"] == 0.375  # s1, s5, s7 (s3 is the NA joke)
    assert {"mean", "mean_ci", "pass_rate", "n"} <= set(exact["aggregates"])  # and its interval method, range
    assert judge["counts"]["na"] == 1 and judge["aggregates"]["n"] == 7
    assert out["overall"]["rule"] == "mean" and out["overall"]["aggregates"]["n"] == 8
    run_id = out["id"]

    shown = json.loads(cli("runs", "show", str(run_id), "--json").stdout)
    pairs = {(r["index"], r["grader"]): r["score"] for r in shown["results"]}
    assert len(pairs) == 16 and pairs[(0, "exact")] == 0.0 and pairs[(1, "exact")] == 1.0
    assert pairs[(3, "judge")] is None

    lines = [json.loads(line) for line in cli("runs", "export", str(run_id), "--format", "jsonl").stdout.splitlines()]
    assert len(lines) == 8 and lines[3]["scores"] == {"exact": 0.0, "judge": None}
    rows = list(csv.DictReader(io.StringIO(cli("runs", "export", str(run_id), "--format", "csv").stdout)))
    assert rows[1]["grader.exact"] == "1.0" and rows[1]["grader.judge"] == "1.0" and rows[3]["grader.judge"] == ""

    single = json.loads(cli("run", "exact", "geo", "--json").stdout)
    assert single["grader"] == "exact"  # a run of one grader reads as before
    one_off = json.loads(cli("run", "--graders", "exact,judge", "geo", "--overall", "all-pass", "--json").stdout)
    assert one_off["suite"] is None and one_off["overall"]["rule"] == "all-pass"
    compared = json.loads(cli("runs", "compare", str(run_id), str(one_off["id"]), "--json").stdout)
    assert set(compared["graders"]) == {"exact", "judge"}
    assert compared["graders"]["exact"]["n_common"] == 8 and compared["graders"]["exact"]["mean_delta"] == 0.0
    assert compared["graders"]["judge"]["run_a"]["grader"] == "judge"
    agreement = json.loads(cli("agreement", str(run_id), "--json").stdout)
    assert set(agreement["graders"]) == {"exact", "judge"}


def test_export_and_import_one_file(cli, prepared: Library, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("suites", "create", "geo", "exact", "judge", "--threshold", "exact=1").returncode == 0
    path = tmp_path / "geo.suite.yaml"
    assert cli("suites", "export", "geo", "-o", str(path)).returncode == 0
    text = path.read_text()
    assert "kind: binary_judge" in text and "kind: builtin" in text
    other = tmp_path / "other.sqlite"

    def in_other(*args: str) -> subprocess.CompletedProcess[str]:
        """The command line on a second library (the ``cli`` fixture's, with another file)."""
        env = {**os.environ, "GRADER_STUDIO_DB": str(other)}
        return subprocess.run([sys.executable, "-m", "studio", *args], capture_output=True, text=True, env=env,
                              timeout=120, cwd=Path(__file__).resolve().parents[2])

    imported = in_other("suites", "import", str(path))
    assert imported.returncode == 0, imported.stderr
    shown = json.loads(in_other("suites", "show", "geo", "--json").stdout)
    assert [g["grader"] for g in shown["graders"]] == ["exact", "judge"] and shown["graders"][0]["threshold"] == 1.0
    assert json.loads(in_other("graders", "show", "judge", "--json").stdout)["kind"] == "binary_judge"
    again = in_other("suites", "import", str(path))
    assert again.returncode == 1 and "already exists" in again.stderr
