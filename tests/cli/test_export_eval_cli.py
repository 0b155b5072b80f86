"""``export A B C --to T --dataset D -o DIR``: several graders and a dataset as one runnable eval (issue 22)."""

from __future__ import annotations

import json
from pathlib import Path

JUDGES = ["qa-correctness-judge", "answer-quality-1to5", "qa-rubric-letta"]


def test_three_judges_and_a_dataset_become_one_eval(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("demo").returncode == 0
    out = tmp_path / "inspect"
    done = cli("export", *JUDGES, "--to", "inspect", "--dataset", "qa", "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr  # each scorer module carries its definition: it imports back the same
    report = json.loads(done.stdout)
    assert not report["refused"] and report["not_carried"] == {}
    names = sorted(p.name for p in out.iterdir())
    assert "qa_task.py" in names and "qa_dataset.jsonl" in names
    rows = (out / "qa_dataset.jsonl").read_text().splitlines()
    assert len(rows) == 60 and "conversation" in json.loads(rows[0])["metadata"]
    # the demo endpoint's model id is what the judges name, never the endpoint's name
    scorer, _, carried = (out / "qa_correctness_judge_inspect.py").read_text().partition("\nGRADER_STUDIO = ")
    assert "MODEL = 'openai-api/studio/fake-judge'" in scorer and "demo-scripted-judge" not in scorer
    assert "'endpoint': 'demo-scripted-judge'" in carried  # the studio definition it was exported from

    openai = tmp_path / "openai"
    done = cli("export", *JUDGES, "--to", "openai", "--dataset", "qa", "--model", "gpt-4o-mini", "-o", str(openai))
    assert done.returncode == 3 and "not carried: qa-correctness-judge: " in done.stderr, done.stderr
    definition = json.loads((openai / "qa.eval.json").read_text())
    assert [c["model"] for c in definition["testing_criteria"]] == ["gpt-4o-mini"] * 3
    assert "approximated" in done.stderr  # what OpenAI cannot carry is said

    several = cli("export", *JUDGES, "--to", "inspect")
    assert several.returncode == 2 and "-o DIR" in several.stderr
    missing = cli("export", *JUDGES, "--to", "promptfoo", "--dataset", "no-such-set", "-o", str(tmp_path / "x"))
    assert missing.returncode != 0 and "Traceback" not in missing.stderr and missing.stderr.strip()


def test_a_suite_exports_as_one_eval_with_its_dataset(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A suite key stands for its graders (at the versions it pins) wherever export takes grader keys."""
    assert cli("demo").returncode == 0
    assert cli("suites", "create", "qa-checks", "qa-exact-builtin", *JUDGES[:2]).returncode == 0
    by_keys, by_suite = tmp_path / "keys", tmp_path / "suite"
    done = cli("export", "qa-exact-builtin", *JUDGES[:2], "--to", "promptfoo", "--dataset", "qa", "-o", str(by_keys))
    assert done.returncode == 0, done.stderr  # the judges import back the same; the built-in is refused
    done = cli("export", "qa-checks", "--to", "promptfoo", "--dataset", "qa", "-o", str(by_suite), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["not_carried"] == {} and "qa-exact-builtin" in json.loads(done.stdout)["refused"]
    assert sorted(p.name for p in by_suite.rglob("*")) == sorted(p.name for p in by_keys.rglob("*"))
    for path in by_keys.rglob("*"):
        if path.is_file():
            assert (by_suite / path.relative_to(by_keys)).read_bytes() == path.read_bytes()
    alone = cli("export", "qa-checks", "--to", "promptfoo")
    assert alone.returncode == 2 and "-o DIR" in alone.stderr
