"""The headless face of labels, agreement, compare, run --repeat and align: real processes, the
scripted judge over real HTTP, and exactly the JSON field names the window and scripts rely on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import BinaryJudge, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

AGREEMENT_FIELDS = {"n", "accuracy", "cohen_kappa", "kappa_ci", "confusion", "spearman", "kendall", "pearson",
                    "mae", "excluded", "disagreements"}
COMPARE_FIELDS = {"n_common", "mean_a", "mean_b", "mean_delta", "flips"}


@pytest.fixture
def setup(db_path: Path, fake_judge: FakeJudgeServer, tmp_path: Path) -> Path:
    with Library.open(db_path) as lib:
        EndpointRepository.of(lib).save(EndpointConfig(name="fake", base_url=fake_judge.base_url,
                                                       model="fake-judge", retry_backoff=0.01, timeout=5.0))
        lib.graders.create(BinaryJudge(key="judge", criteria="The answer is correct.", endpoint="fake"))
        lib.datasets.create("qa", [
            Sample(id=f"q{i}", messages=[Turn(role="user", content=f"Capital of France? ({i})")],
                   completion=("Paris" if i % 3 else "Lyon") + (" [[case:odd]]" if i % 5 == 0 else ""),
                   expected="Paris") for i in range(20)])
    labels = tmp_path / "labels.jsonl"
    # humans pass the [[case:odd]] samples the rule fails (q0, q15), and NA one
    rows = [{"sample_id": f"q{i}", "label": "PASS" if (i % 3 or i % 5 == 0) else "FAIL", "labeler": "ana"}
            for i in range(20)]
    rows[7] = {"sample_id": "q7", "label": "NA"}
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return labels


def test_labels_import_list_export_and_a_bad_file(cli, setup: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("labels", "import", str(setup), "--dataset", "qa", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["versions_written"] == 20
    listed = json.loads(cli("labels", "list", "--dataset", "qa", "--json").stdout)
    assert listed["labelled"] == 20 and listed["counts"]["NA"] == 1 and listed["keys"] == ["human"]
    bad = tmp_path / "bad.csv"
    bad.write_text("sample_id,label\nq1,FAIL\nq99,PASS\n")
    refused = cli("labels", "import", str(bad), "--dataset", "qa")
    assert refused.returncode == 1 and "bad.csv:3" in refused.stderr and "q99" in refused.stderr
    assert "Traceback" not in refused.stderr
    # all or nothing: q1 kept its first label
    listed = json.loads(cli("labels", "list", "--dataset", "qa", "--json").stdout)
    assert next(x for x in listed["labels"] if x["sample_id"] == "q1")["label"] == "PASS"
    out = tmp_path / "out.csv"
    assert cli("labels", "export", "--dataset", "qa", "-o", str(out)).returncode == 0
    assert out.read_text().splitlines()[0].startswith("sample_id,label,score")
    assert len(out.read_text().splitlines()) == 21


def test_agreement_compare_repeat_and_align(cli, setup: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("labels", "import", str(setup), "--dataset", "qa").returncode == 0
    first = cli("run", "judge", "qa", "--json")
    run_a = json.loads(first.stdout)["id"]
    report = json.loads(cli("agreement", str(run_a), "--json").stdout)
    assert set(report) >= AGREEMENT_FIELDS
    assert report["n"] == 19 and report["excluded"] == {"human_na": 1}
    assert {d["sample_id"] for d in report["disagreements"]} == {"q0", "q15"}
    text = cli("agreement", str(run_a))
    assert text.returncode == 0 and "Cohen's κ" in text.stdout and "disagreements" in text.stdout

    aligned = cli("align", "judge", "--dataset", "qa", "--holdout", "0.4", "--seed", "1", "--json")
    assert aligned.returncode == 0, aligned.stderr
    result = json.loads(aligned.stdout)
    assert result["new_version"] == 2 and result["measured_on"] == "held-out samples only"
    assert {"before", "after", "change", "holdout_ids"} <= set(result)

    second = json.loads(cli("run", "judge", "qa", "--json").stdout)["id"]
    compared = json.loads(cli("compare", str(run_a), str(second), "--json").stdout)
    assert set(compared) >= COMPARE_FIELDS
    assert compared["n_common"] == 20 and compared["mean_delta"] == pytest.approx(
        compared["mean_b"] - compared["mean_a"], abs=1e-5)
    assert all("sample_id" in f and "rationale" in f["a"] and "rationale" in f["b"] for f in compared["flips"])
    assert compared["labels"]["n"] == 19

    repeated = cli("run", "judge", "qa", "--repeat", "2", "--json")
    assert repeated.returncode == 0, repeated.stderr
    data = json.loads(repeated.stdout)
    assert len(data["runs"]) == 2 and data["consistency"]["fleiss_kappa"] == pytest.approx(1.0)
    assert data["consistency"]["krippendorff_alpha"] == pytest.approx(1.0)


def test_agreement_of_an_unknown_run_is_one_sentence(cli) -> None:  # type: ignore[no-untyped-def]
    done = cli("agreement", "42")
    assert done.returncode == 1 and done.stderr.strip() == "error: no run with id 42"


def test_the_demo_opens_with_a_judged_labelled_dataset(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("demo").returncode == 0
    listed = json.loads(cli("labels", "list", "--dataset", "qa", "--json").stdout)
    assert listed["labelled"] == 60 and listed["counts"] == {"PASS": 43, "FAIL": 16, "NA": 1}
    run = json.loads(cli("runs", "list", "--json").stdout)[0]
    assert run["grader"] == "qa-correctness-judge" and run["counts"] == {"ok": 60}
    report = json.loads(cli("agreement", str(run["id"]), "--json").stdout)
    # the scripted judge disagrees with the demo's humans on a few samples, on purpose
    assert report["n"] == 59 and report["excluded"] == {"human_na": 1}
    assert 0 < len(report["disagreements"]) <= 10 and 0.4 < report["cohen_kappa"] < 0.9
    assert cli("demo").returncode == 0  # a second time: no second run, labels unchanged
    assert len(json.loads(cli("runs", "list", "--json").stdout)) == 1
