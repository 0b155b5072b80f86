"""``grader-studio import EVAL.json --items ITEMS.jsonl`` then ``run SUITE DATASET`` (issue 46): the demo's
OpenAI eval with one grader of every type imports as a suite and a dataset and runs against our
scripted judge; a malformed eval names its first bad field (exit 1, nothing created); what has no effect
here is named with its path (exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

from studio.core.demo.fake_server import FakeJudgeServer

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "openai"


def test_the_demo_eval_imports_and_runs_every_grader_type(cli, fake_judge: FakeJudgeServer) -> None:  # type: ignore[no-untyped-def]
    added = cli("endpoints", "add", "judge", "--base-url", fake_judge.base_url, "--model", "fake-judge")
    assert added.returncode == 0, added.stderr
    done = cli("import", str(DEMO / "support.eval.json"), "--items", str(DEMO / "support.items.jsonl"), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["openai_eval"]["suite"] == "support-answers" and report["openai_eval"]["dataset"] == "support-answers"
    assert len(report["created"]) == 6
    criteria = json.loads((DEMO / "support.eval.json").read_text(encoding="utf-8"))["testing_criteria"]
    assert sorted(c["type"] for c in criteria) == sorted(
        ["string_check", "text_similarity", "score_model", "label_model", "python", "multi"])
    suite = json.loads(cli("suites", "show", "support-answers", "--json").stdout)
    thresholds = {m["grader"]: m.get("threshold") for m in suite["graders"]}
    assert thresholds["mentions-the-reference"] == 1.0 and thresholds["close-to-the-reference"] == 0.3
    run = cli("run", "support-answers", "support-answers", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    graded = json.loads(run.stdout)
    assert graded["status"] == "completed" and graded["counts"] == {"ok": 8}
    means = {g["key"]: g["aggregates"]["mean"] for g in graded["graders"]}
    assert set(means) == set(thresholds) and all(m is not None for m in means.values())
    assert means["mentions-the-reference"] == 0.75  # 6 of the 8 stored outputs hold the reference (ilike)
    helpful = next(g["aggregates"] for g in graded["graders"] if g["key"] == "helpfulness")
    assert 1.0 <= helpful["mean_ci"][0] <= helpful["mean_ci"][1] <= 5.0  # the interval stays in range [1, 5]


def test_a_malformed_eval_creates_nothing_and_names_the_field(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((DEMO / "support.eval.json").read_text(encoding="utf-8"))
    data["testing_criteria"][2]["input"][0]["content"] = 7
    path = tmp_path / "bad.eval.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = cli("import", str(path), "--items", str(DEMO / "support.items.jsonl"))
    assert done.returncode == 1, (done.returncode, done.stderr)  # as every importer refuses a bad file
    assert "bad.eval.json: testing_criteria[2].input[0].content: must be text or a content object, not int" in done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(cli("graders", "list", "--json").stdout) == []


def test_fields_with_no_effect_are_named_and_exit_3(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((DEMO / "support.eval.json").read_text(encoding="utf-8"))
    data["testing_criteria"][2]["sampling_params"]["logit_bias"] = {"50256": -100}
    data["testing_criteria"][0]["weight"] = 2
    path = tmp_path / "eval.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = cli("import", str(path))
    assert done.returncode == 3, done.stderr
    assert "testing_criteria[0].weight: not a field of OpenAI's string_check grader" in done.stderr
    assert ("testing_criteria[2].sampling_params.logit_bias: not one of OpenAI's sampling parameters; no effect "
            "here") in done.stderr
    shown = json.loads(cli("graders", "show", "mentions-the-reference", "--json").stdout)
    assert shown["definition"]["criterion"]["weight"] == 2  # kept, never dropped


def test_runs_report_and_compare_external_per_criterion(cli, fake_judge: FakeJudgeServer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("endpoints", "add", "judge", "--base-url", fake_judge.base_url, "--model", "fake-judge").returncode == 0
    assert cli("import", str(DEMO / "support.eval.json"), "--items", str(DEMO / "support.items.jsonl")).returncode == 0
    run = cli("run", "support-answers", "support-answers", "--json")
    run_id = json.loads(run.stdout)["id"]
    report = cli("runs", "report", str(run_id))
    table = report.stdout[report.stdout.index("criterion"):].splitlines()
    assert table[0].split() == ["criterion", "passed", "failed", "errored", "pass", "rate"]
    assert table[1].split() == ["mentions-the-reference", "6", "2", "0", "75.0%"]
    items = [json.loads(line) for line in (DEMO / "support.items.jsonl").read_text(encoding="utf-8").splitlines()]
    theirs = tmp_path / "output_items.jsonl"
    lines = [{"object": "eval.run.output_item", "datasource_item_id": n, "datasource_item": item,
              "results": [{"name": "Mentions the reference", "passed": True, "score": 1.0},
                          {"name": "Tone", "passed": n != 0, "score": float(n != 0)},
                          {"name": "Not in the eval", "passed": True, "score": 1.0}]}
             for n, item in enumerate(items)]
    lines.append({"datasource_item_id": 99, "datasource_item": {"question": "elsewhere"}, "results": []})
    theirs.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    compared = cli("runs", "compare-external", str(run_id), str(theirs), "--json")
    assert compared.returncode == 0, compared.stderr
    found = {c["criterion"]: c for c in json.loads(compared.stdout)["criteria"]}
    assert found["mentions-the-reference"]["studio"] == {"pass": 6, "fail": 2, "error": 0}
    assert found["mentions-the-reference"]["openai"] == {"pass": 8, "fail": 0, "error": 0}
    assert found["mentions-the-reference"]["agree"] == 6 and found["mentions-the-reference"]["compared"] == 8
    assert found["tone"]["agree"] == 7 and found["helpfulness"]["compared"] == 0
    plain = cli("runs", "compare-external", str(run_id), str(theirs))
    assert "sample 1 tone: studio pass (1) " in plain.stdout and "openai fail (0)" in plain.stdout
    assert "criteria not in the run: Not in the eval" in plain.stderr
    assert "1 output item(s) match no sample" in plain.stderr


def test_an_imported_eval_exports_back_byte_for_byte(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 46: the demo eval is written canonically (two-space JSON); suite and single grader come back
    as the same bytes."""
    source = DEMO / "support.eval.json"
    assert cli("import", str(source)).returncode == 0
    back = cli("export", "support-answers", "--to", "openai")
    assert back.returncode == 0, back.stderr
    assert back.stdout == source.read_text(encoding="utf-8")
    criteria = json.loads(source.read_text(encoding="utf-8"))["testing_criteria"]
    listed = tmp_path / "criteria.json"  # a bare list of criteria: its suite is named after the file
    listed.write_text(json.dumps(criteria, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for key in json.loads(cli("graders", "list", "--json").stdout):
        assert cli("graders", "delete", key["key"]).returncode == 0
    assert cli("import", str(listed)).returncode == 0
    from_list = cli("export", "criteria", "--to", "openai")
    assert from_list.returncode == 0 and from_list.stdout == listed.read_text(encoding="utf-8")
    criterion = criteria[5]
    single = tmp_path / "multi.json"
    single.write_text(json.dumps(criterion, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert cli("graders", "delete", "correct-and-close").returncode == 0
    assert cli("import", str(single)).returncode == 0
    again = cli("export", "correct-and-close", "--to", "openai")
    assert again.returncode == 0 and again.stdout == single.read_text(encoding="utf-8")


def test_an_eval_never_overwrites_a_suite_of_the_same_name_it_did_not_make(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"type": "string_check", "name": "mine", "input": "{{ sample.output_text }}",
                               "reference": "x", "operation": "eq"}), encoding="utf-8")
    assert cli("import", str(one)).returncode == 0
    assert cli("suites", "create", "support-answers", "mine").returncode == 0  # the user's own suite
    done = cli("import", str(DEMO / "support.eval.json"))
    assert done.returncode == 1, done.stderr
    assert "a suite 'support-answers' that was not imported from an OpenAI eval" in done.stderr
    shown = json.loads(cli("suites", "show", "support-answers", "--json").stdout)
    assert [m["grader"] for m in shown["graders"]] == ["mine"] and shown["version"] == 1


def test_demo_points_at_its_openai_eval(cli) -> None:  # type: ignore[no-untyped-def]
    shown = cli("demo")
    line = next(x for x in shown.stdout.splitlines() if "OpenAI eval:" in x)
    assert str(DEMO / "support.eval.json") in line and str(DEMO / "support.items.jsonl") in line
