"""The command line as a CI tool: every refusal says why, and says it before doing anything."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from studio.core.models import BinaryJudge, BuiltinGrader, CompositeGrader
from studio.core.models import files as definition_files


def _dataset(cli, tmp_path: Path, name: str = "d") -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / f"{name}.jsonl"
    data.write_text("".join(json.dumps({"question": f"q{i}", "target": "4", "output_text": out}) + "\n"
                            for i, out in enumerate(["4", "4", "5", "6"])))
    assert cli("datasets", "import", str(data), "--name", name).returncode == 0


def test_a_syntax_error_names_its_line_and_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "broken.py"
    source.write_text("import re\n\n\ndef grade(sample, item):\n    return len(re.findall('x', item['a'])\n")
    for args in (("validate", str(source)), ("graders", "create", str(source))):
        result = cli(*args)
        assert result.returncode == 1, result
        assert "line 5" in result.stderr and "was never closed" in result.stderr, result.stderr
        assert "entry point" not in result.stderr and "Traceback" not in result.stderr
    checks = json.loads(cli("validate", "--json", str(source)).stdout)["checks"]
    assert checks[0]["status"] == "failed" and checks[0]["line"] == 5
    assert json.loads(cli("graders", "list", "--json").stdout) == []

    latin = tmp_path / "latin.py"
    latin.write_bytes("def grade(sample, item):\n    return 1.0\n# caf\xe9\n".encode("latin-1"))
    result = cli("validate", str(latin))
    assert result.returncode == 1 and "line 3" in result.stderr and "UTF-8" in result.stderr
    assert "Traceback" not in result.stderr


def test_create_names_the_grader_from_its_docstring_and_warns_on_failure(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "answer_check.py"
    source.write_text('"""Checks the final answer.\n\nLonger notes."""\n\n\n'
                      "def grade(sample, item):\n    return 1 / 0\n")
    result = cli("graders", "create", "--strict", str(source))
    assert result.returncode == 1 and "ZeroDivisionError" in result.stderr and "not stored" in result.stderr
    assert "line 7" in result.stderr
    assert json.loads(cli("graders", "list", "--json").stdout) == []

    result = cli("graders", "create", str(source))
    assert result.returncode == 0 and "warning: answer-check fails validation" in result.stderr
    listed = json.loads(cli("graders", "list", "--json").stdout)
    assert [(g["key"], g["name"]) for g in listed] == [("answer-check", "Checks the final answer")]

    plain = tmp_path / "plain_one.py"
    plain.write_text("def grade(sample, item):\n    return 1.0\n")
    result = cli("graders", "create", "--strict", str(plain))
    assert result.returncode == 0 and "warning" not in result.stderr, result.stderr
    shown = json.loads(cli("graders", "show", "plain-one", "--json").stdout)
    assert shown["name"] == "plain_one"


def test_fail_under_says_the_mean_the_threshold_and_the_verdict(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _dataset(cli, tmp_path)
    grader = definition_files.save(BuiltinGrader(key="exact", function="exact_match"), tmp_path / "g.grader.yaml")
    assert cli("graders", "create", str(grader)).returncode == 0
    failed = cli("run", "exact", "d", "--fail-under", "0.9")
    assert failed.returncode == 1
    assert "mean 0.5000" in failed.stderr and "0.9" in failed.stderr and "FAIL" in failed.stderr
    assert "below" in failed.stderr
    passed = cli("run", "exact", "d", "--fail-under", "0.25")
    assert passed.returncode == 0 and "mean 0.5000, threshold 0.25: PASS" in passed.stderr
    as_json = cli("run", "exact", "d", "--fail-under", "0.9", "--json")
    verdict = json.loads(as_json.stdout)["verdict"]
    assert as_json.returncode == 1
    assert verdict["passed"] is False and verdict["mean"] == 0.5 and verdict["fail_under"] == 0.9
    assert any("below" in reason for reason in verdict["reasons"])


def test_dry_run_import_reports_the_refusals_the_import_meets(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("demo").returncode == 0
    out = tmp_path / "exact.json"
    assert cli("export", "qa-contains-expected", "--to", "openai", "-o", str(out)).returncode == 3  # written, lossy

    dry = cli("import", str(out), "--dry-run")
    real = cli("import", str(out))
    assert dry.returncode == real.returncode == 1
    assert "would refuse qa-contains-expected" in dry.stdout and "refused qa-contains-expected" in real.stdout
    assert "already exists" in dry.stderr and "already exists" in real.stderr
    dry_json = json.loads(cli("import", str(out), "--dry-run", "--json").stdout)
    assert dry_json["would_create"] == [] and "qa-contains-expected" in dry_json["refused"]

    assert cli("graders", "delete", "qa-contains-expected").returncode == 0
    dry = cli("import", str(out), "--dry-run")
    assert dry.returncode == 0 and "would recreate qa-contains-expected" in dry.stdout
    versions_before = json.loads(cli("graders", "versions", "qa-contains-expected", "--json").stdout)
    real = cli("import", str(out))
    assert real.returncode == 0 and "recreated qa-contains-expected" in real.stdout
    versions_after = json.loads(cli("graders", "versions", "qa-contains-expected", "--json").stdout)
    assert len(versions_after) == len(versions_before) + 1


def test_csv_metric_columns_never_collide_with_fixed_ones(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _dataset(cli, tmp_path)
    composite = CompositeGrader(key="both", components=[
        {"name": "exact", "grader": BuiltinGrader(key="e", function="exact_match")},
        {"name": "error", "grader": BuiltinGrader(key="c", function="contains")},
    ])
    path = definition_files.save(composite, tmp_path / "both.grader.yaml")
    assert cli("graders", "create", str(path)).returncode == 0
    run = json.loads(cli("run", "both", "d", "--json").stdout)
    table = list(csv.reader(io.StringIO(cli("runs", "export", str(run["id"]), "--format", "csv").stdout)))
    header = table[0]
    assert len(header) == len(set(header)), header
    assert {"score", "error", "metric.score", "metric.exact", "metric.error"} <= set(header)
    row = dict(zip(header, table[1], strict=True))
    assert row["metric.exact"] == "1.0" and row["error"] == ""


def test_jsonl_error_names_the_real_column(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "bad.jsonl"
    data.write_text('{"question": "ok", "target": "4", "output_text": "4"}\n'
                    '{"question": "2+2?", "target" "4"}\n'
                    '{"question": "x", "target": 1\n')
    result = cli("datasets", "import", str(data), "--name", "bad")
    assert result.returncode == 1 and "bad.jsonl:2" in result.stderr
    assert "column 31" in result.stderr, result.stderr  # the '"4"' where ':' was expected
    data.write_text('{"question": "x", "target": 1\n')
    result = cli("datasets", "import", str(data), "--name", "bad")
    assert "bad.jsonl:1" in result.stderr and "end of the line" in result.stderr, result.stderr


def test_a_run_refused_for_its_configuration_leaves_no_run(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _dataset(cli, tmp_path)
    judge = BinaryJudge(key="judge", criteria="Is the answer right?", endpoint="nowhere")
    path = definition_files.save(judge, tmp_path / "judge.grader.yaml")
    assert cli("graders", "create", str(path)).returncode == 0
    for extra in ((), ("--progress-jsonl",), ("--endpoint", "also-missing")):
        result = cli("run", "judge", "d", *extra)
        assert result.returncode == 2 and "Traceback" not in result.stderr  # 2: the run could not be done
        assert "endpoint" in (result.stderr + result.stdout)
    assert json.loads(cli("runs", "list", "--json").stdout) == []
    unnamed = BinaryJudge(key="unnamed", criteria="Is the answer right?")
    path = definition_files.save(unnamed, tmp_path / "unnamed.grader.yaml")
    assert cli("graders", "create", str(path)).returncode == 0
    result = cli("run", "unnamed", "d")
    assert result.returncode == 2 and "endpoints add" in result.stderr
    assert json.loads(cli("runs", "list", "--json").stdout) == []


def test_a_negative_number_in_any_spelling_is_a_value_not_an_option(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """argparse reads '-1e-3' (no digit run alone) as an unknown option: the run was refused with
    "expected one argument". Every spelling float() reads is a value, so a negative threshold runs
    and a non-finite one gets the request's own sentence."""
    _dataset(cli, tmp_path)
    grader = definition_files.save(BuiltinGrader(key="exact", function="exact_match"), tmp_path / "g.grader.yaml")
    assert cli("graders", "create", str(grader)).returncode == 0
    for spelled, value in (("-1e-3", -0.001), ("-2.5E-1", -0.25), ("-.5", -0.5), ("-3", -3.0)):
        done = cli("run", "exact", "d", "--pass-threshold", spelled, "--fail-under", spelled, "--json")
        assert done.returncode == 0, (spelled, done.stderr)
        out = json.loads(done.stdout)
        assert out["aggregates"]["pass_threshold"] == value and out["verdict"]["fail_under"] == value
        assert out["aggregates"]["pass_rate"] == 1.0  # every 0/1 score reaches a negative threshold
    for spelled in ("-inf", "-Infinity", "-nan"):
        refused = cli("run", "exact", "d", "--pass-threshold", spelled)
        assert refused.returncode == 2 and f"--pass-threshold must be a finite number, not {float(spelled)!r}" in \
            refused.stderr, refused.stderr
    word = cli("run", "exact", "d", "--pass-threshold", "-x")  # a real option-like word is still refused
    assert word.returncode == 2 and "--pass-threshold: expected one argument" in word.stderr
