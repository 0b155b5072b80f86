"""``grader-studio queues``: real processes, the scripted judge over real HTTP. A reviewer works
blind from the CLI (the judge and the others hidden until they label), bad input is a sentence
(exit 2), a lead reads agreement, settles, and sees the run's numbers as judged and as adjudicated,
each saying which; few-shots and a curated dataset come from settled samples; a re-run of the new
judge version shows beside the old one's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from studio.cli import main
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import BinaryJudge, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository
from tests.conftest import run_cli


class Cli:
    """``grader-studio`` as each user: in this process (``studio.cli.main``, its exit status and
    streams as a person sees them), or in a real child process with ``real=True``."""

    def __init__(self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        self.capsys, self.monkeypatch = capsys, monkeypatch

    def __call__(self, db: Path, user: str, *args: str, real: bool = False) -> subprocess.CompletedProcess[str]:
        if real:
            return run_cli(*args, db=db, env={"GRADER_STUDIO_USER": user})
        self.monkeypatch.setenv("GRADER_STUDIO_USER", user)
        self.capsys.readouterr()
        code = main(["--db", str(db), *args])
        out, err = self.capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)


@pytest.fixture
def _as(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    return Cli(capsys, monkeypatch)


@pytest.fixture
def db(db_path: Path, fake_judge: FakeJudgeServer, _as: Cli) -> Path:
    with Library.open(db_path) as lib:
        EndpointRepository.of(lib).save(EndpointConfig(name="fake", base_url=fake_judge.base_url,
                                                       model="fake-judge", retry_backoff=0.01, timeout=5.0))
        lib.graders.create(BinaryJudge(key="judge", criteria="The answer names the right capital.", endpoint="fake"))
        lib.datasets.create("qa", [
            Sample(id=f"q{i}", messages=[Turn(role="user", content=f"Capital of France? ({i})")],
                   completion="Paris" if i % 3 else "Lyon", expected="Paris") for i in range(9)])
    done = _as(db_path, "lea", "run", "judge", "qa")
    assert done.returncode == 0, done.stderr
    return db_path


def test_a_reviewer_works_blind_and_a_lead_settles(db: Path, tmp_path: Path, _as: Cli) -> None:
    made = _as(db, "lea", "queues", "create", "q", "--run", "1", "--rule", "random", "--n", "4", "--seed", "3",
               "--labels-wanted", "2", "--assign", "ann,bob")
    assert made.returncode == 0, made.stderr
    assert "4 samples of qa" in made.stdout and "reviewers: ann, bob; leads: lea" in made.stdout
    nxt = _as(db, "ann", "queues", "next", "q", "--json")
    item = json.loads(nxt.stdout)
    sample = item["sample_id"]
    assert item["question"] == "The answer names the right capital."
    assert item["messages"][0]["content"].startswith("Capital of France?")
    assert item["revealed"] is False and item["judges"] is None and item["others"] is None
    text = _as(db, "ann", "queues", "next", "q", real=True).stdout
    assert "hidden until you label it" in text and "judge run" not in text
    labelled = _as(db, "ann", "queues", "label", "q", sample, "p", "--note", "right city")
    assert labelled.returncode == 0, labelled.stderr
    assert "judge run 1 (judge v1)" in labelled.stdout and "right city" in labelled.stdout
    bob = json.loads(_as(db, "bob", "queues", "item", "q", sample, "--json").stdout)
    assert bob["revealed"] is False and bob["others"] is None and bob["judges"] is None  # ann's label hidden
    bob = json.loads(_as(db, "bob", "queues", "label", "q", sample, "F", "--json").stdout)
    assert bob["revealed"] and [o["reviewer"] for o in bob["others"]] == ["ann"]
    assert bob["judges"][0]["verdict"] in ("PASS", "FAIL") and bob["progress"] == {"labelled": 1, "total": 4}

    bad = _as(db, "ann", "queues", "label", "q", sample, "maybe", real=True)
    assert bad.returncode == 2 and "a verdict is P, F or N" in bad.stderr and "Traceback" not in bad.stderr
    carl = _as(db, "carl", "queues", "label", "q", sample, "P")
    assert carl.returncode == 2 and "carl is not a reviewer of queue 'q'" in carl.stderr
    assert "assign q carl" in carl.stderr  # the sentence says how
    peek = _as(db, "ann", "queues", "agreement", "q")
    assert peek.returncode == 2 and "only a lead of queue 'q'" in peek.stderr
    not_lead = _as(db, "ann", "queues", "assign", "q", "carl")
    assert not_lead.returncode == 2 and "only a lead of queue 'q'" in not_lead.stderr
    assert _as(db, "lea", "queues", "assign", "q", "carl").returncode == 0
    missing = _as(db, "lea", "queues", "show", "qq")
    assert missing.returncode != 0 and "no review queue named 'qq'" in missing.stderr
    rule = _as(db, "lea", "queues", "create", "x", "--run", "1", "--rule", "disagreements")
    assert rule.returncode == 2 and "disagreements compare two runs" in rule.stderr

    shown = _as(db, "lea", "queues", "show", "q").stdout
    assert "ann" in shown and "1/4" in shown and "random 4 with seed 3" in shown
    agreement = _as(db, "lea", "queues", "agreement", "q", "--json")
    report = json.loads(agreement.stdout)
    assert report["humans"]["pairs"][0]["n"] == 1 and report["disagreements"][0]["sample_id"] == sample
    settle = _as(db, "lea", "queues", "settle", "q", sample, "PASS", "--note", "Paris is right")
    assert settle.returncode == 0 and "the judge's verdict is kept" in settle.stdout
    judged = _as(db, "lea", "runs", "show", "1", "--adjudicated")
    assert judged.returncode == 0, judged.stderr
    assert "figures below as judged" in judged.stdout
    assert "pass rate as judged:" in judged.stdout and "pass rate as adjudicated:" in judged.stdout
    assert "1 sample settled by a lead (queues: q)" in judged.stdout
    as_json = json.loads(_as(db, "lea", "runs", "show", "1", "--adjudicated", "--json").stdout)
    assert as_json["run"]["figures_basis"] == "as judged" and as_json["run"]["adjudicated"]["adjudicated"]["basis"] == "as adjudicated"

    out = tmp_path / "q.jsonl"
    assert _as(db, "lea", "queues", "export", "q", "-o", str(out)).returncode == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    row = next(line for line in lines if line["sample_id"] == sample)
    assert row["labels"]["ann"]["verdict"] == "PASS" and row["settled"]["by"] == "lea" and row["judges"]
    listed = _as(db, "bob", "queues", "list").stdout
    assert "q" in listed and "2/8" in listed and "ann, bob, carl" in listed


def test_settled_samples_make_a_judge_version_and_a_dataset_and_the_rerun_shows_beside(db: Path, _as: Cli) -> None:
    assert _as(db, "lea", "queues", "create", "q", "--run", "1", "--rule", "random", "--n", "9").returncode == 0
    for i in range(9):  # the lead labels and settles alone (one analyst on SQLite)
        verdict = "PASS" if i % 3 else "FAIL"
        assert _as(db, "lea", "queues", "label", "q", f"q{i}", verdict).returncode == 0
    assert _as(db, "lea", "queues", "settle", "q", "q0", "FAIL", "--note", "Lyon is not the capital").returncode == 0
    assert _as(db, "lea", "queues", "settle", "q", "q1", "PASS").returncode == 0
    shots = _as(db, "lea", "queues", "shots", "q", "--judge", "judge", "--samples", "q0")
    assert shots.returncode == 0, shots.stderr
    assert "saved judge v2 with 1 few-shot examples" in shots.stdout
    with Library.open(db) as lib:
        example = lib.graders.version("judge", 2).definition.examples[-1]  # type: ignore[attr-defined]
        assert (example.verdict, example.reasoning, example.completion) == ("FAIL", "Lyon is not the capital", "Lyon")
    refused = _as(db, "lea", "queues", "dataset", "q", "curated", "--samples", "q2")
    assert refused.returncode != 0 and "not settled in queue 'q': q2" in refused.stderr
    curated = _as(db, "lea", "queues", "dataset", "q", "curated")
    assert curated.returncode == 0, curated.stderr
    with Library.open(db) as lib:
        record = lib.datasets.get("curated")
        assert record.provenance == {"kind": "curated", "source_dataset": "qa", "queue": "q", "runs": [1],
                                     "samples": ["q0", "q1"]}
    shown = _as(db, "lea", "datasets", "show", "curated").stdout
    assert "curated from qa by review queue 'q' (runs 1)" in shown
    rerun = _as(db, "lea", "queues", "rerun", "q", "--judge", "judge")
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(_as(db, "lea", "queues", "agreement", "q", "--json").stdout)
    assert [(j["run_id"], j["grader_version"]) for j in report["judges"]] == [(1, 1), (2, 2)]
    assert report["judges"][0]["n"] == report["judges"][1]["n"] == 8  # q0 taught v2: left out of both
    table = _as(db, "lea", "queues", "agreement", "q").stdout
    assert "judge v1" in table and "judge v2" in table
    assert "run 2 against run 1: B " in table or "run 2 against run 1: κ" in table
    assert report["changes"][0]["n"] == 8
