"""Imports drop nothing silently (issue 26): a promptfoo javascript assertion becomes a javascript
grader run by Node, or, without Node, is named by its test and index; every other entry or field the
import cannot carry is reported; the CLI's exit status says the import was partial and ``--strict``
refuses; the window lists the same entries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from platforms_env import needs_node

from studio.core.graders.javascript import JavascriptScorer
from studio.core.models import JavascriptGrader, Sample
from studio.core.platforms import get_platform
from studio.core.scoring import GradingContext

CONFIG = """\
prompts: ['{{input}}']
providers: [echo]
defaultTest:
  assert:
    - type: contains
      value: Paris
    - type: javascript
      value: output.length < 9
tests:
  - description: capital
    vars: {expected: Paris}
    assert:
      - type: javascript
        value: file://check.js:named
        threshold: 0.5
      - type: levenshtein
        value: Paris
"""
CHECK = "module.exports = { named: (output, context) => output.includes(context.vars.expected) ? 0.75 : 0.25 };\n"


def write(tmp_path: Path, text: str = CONFIG) -> Path:
    (tmp_path / "check.js").write_text(CHECK, encoding="utf-8")
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_without_node_each_javascript_assert_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_STUDIO_NODE", "")
    result = get_platform("promptfoo").import_(write(tmp_path))
    assert [g.key for g in result.graders] == ["contains-1"]
    assert result.partial
    places = [(s.where, s.kind, s.line) for s in result.skipped]
    assert places == [("defaultTest assert 2", "javascript", 7), ("tests[1] 'capital' assert 1", "javascript", 13),
                      ("tests[1] 'capital' assert 2", "levenshtein", 16)]
    assert all("Node.js" in s.reason for s in result.skipped[:2])
    assert "levenshtein" in result.skipped[2].reason
    report = result.report()
    assert report[0].startswith("defaultTest assert 2 (line 7): javascript not imported")


def test_with_node_javascript_asserts_become_graders_that_run(tmp_path: Path) -> None:
    needs_node()
    result = get_platform("promptfoo").import_(write(tmp_path))
    inline, module = (g for g in result.graders if isinstance(g, JavascriptGrader))
    assert inline.form == "inline" and inline.source == "output.length < 9"
    assert module.form == "module" and module.function_name == "named" and module.threshold == 0.5
    assert module.origin == "file://check.js:named" and "named" in module.source
    assert [s.kind for s in result.skipped] == ["levenshtein"]
    samples = [Sample(id="a", completion="Paris", expected="Paris"), Sample(id="b", completion="Lyon is big", expected="Paris")]
    scorer = JavascriptScorer(module, GradingContext(concurrency=1))
    try:
        out = scorer.score_sync(samples)
    finally:
        scorer.close()
    assert [(o.score, o.details["pass"]) for o in out] == [(0.75, True), (0.25, False)]


def test_unmapped_fields_transforms_and_duplicate_keys_are_reported(tmp_path: Path) -> None:
    text = """\
prompts: ['{{input}}']
providers: [echo]
defaultTest:
  assert:
    - type: contains
      value: Paris
      metric: city
      threshold: 0.5
      weight: 2
    - type: icontains
      value: paris
      metric: city
    - type: equals
      value: Paris
      transform: output.trim()
    - type: contains-any
      value: ""
"""
    result = get_platform("promptfoo").import_(write(tmp_path, text))
    assert [g.key for g in result.graders] == ["city"]
    reasons = {s.where: s.reason for s in result.skipped}
    assert "already taken by defaultTest assert 1" in reasons["defaultTest assert 2"]
    assert "transform" in reasons["defaultTest assert 3"]
    assert "no value" in reasons["defaultTest assert 4"]
    assert any("'threshold' is not mapped" in w for w in result.warnings)
    assert any("weight 2" in w for w in result.warnings)


def test_cli_import_exit_status_is_partial_and_strict_refuses(tmp_path: Path, cli: Any) -> None:
    path = write(tmp_path)
    no_node = {"GRADER_STUDIO_NODE": ""}
    strict = cli("import", str(path), "--strict", env=no_node)
    assert strict.returncode == 1 and "Traceback" not in strict.stderr
    assert "--strict: 3 entries" in strict.stderr and "tests[1] 'capital' assert 1 (line 13)" in strict.stderr
    listed = cli("graders", "list", "--json")
    assert "contains-1" not in listed.stdout, "--strict created nothing"
    partial = cli("import", str(path), "--json", env=no_node)
    assert partial.returncode == 3, partial.stderr
    out = json.loads(partial.stdout)
    assert out["partial"] is True and out["created"] == ["contains-1"]
    assert [s["where"] for s in out["skipped"]] == ["defaultTest assert 2", "tests[1] 'capital' assert 1",
                                                     "tests[1] 'capital' assert 2"]
    assert "not imported: defaultTest assert 2 (line 7): javascript not imported" in partial.stderr


def test_every_importer_reports_what_it_does_not_map(tmp_path: Path) -> None:
    """Letta, OpenAI, Adaptive, MKA1 and Inspect name each entry they skip and each field they drop."""
    suite = tmp_path / "suite.yaml"
    suite.write_text("name: s\ndataset: d.jsonl\ngraders:\n  exact:\n    kind: tool\n    function: exact_match\n"
                     "    weight: 3\n  agent:\n    kind: model_judge\n    agent_file: a.af\n", encoding="utf-8")
    letta = get_platform("letta").import_(suite)
    assert [s.where for s in letta.skipped] == ["graders.agent"]
    assert letta.warnings == ["graders.exact (tool): field 'weight' is not mapped to the studio grader (ignored)"]
    graders = tmp_path / "graders.json"
    graders.write_text(json.dumps([
        {"type": "string_check", "name": "eq", "input": "{{ sample.output_text }}", "reference": "x",
         "operation": "eq", "extra": 1},
        {"type": "text_similarity", "name": "sim", "input": "a", "reference": "b", "evaluation_metric": "bleu"},
    ]), encoding="utf-8")
    openai = get_platform("openai").import_(graders)
    # issue 46: text_similarity runs as an OpenAI grader now; the unknown field is named by its path
    assert openai.skipped == [] and [g.kind for g in openai.graders] == ["openai_grader", "openai_grader"]
    assert openai.warnings == ["testing_criteria[0].extra: not a field of OpenAI's string_check grader; kept, "
                               "but it has no effect here"]
    task = tmp_path / "task.py"
    task.write_text("from inspect_ai import Task\nfrom inspect_ai.scorer import includes\nfrom mine import judge\n"
                    "T = Task(dataset=[], scorer=[includes(), judge()])\n", encoding="utf-8")
    inspect = get_platform("inspect").import_(task)
    assert [(s.where, s.line) for s in inspect.skipped] == [("judge()", 4)]
    manifest = tmp_path / "suite.json"
    manifest.write_text(json.dumps({"schema_version": 1, "tasks": [
        {"id": "ok", "grader": {"type": "python", "source": "def grade(sample, item):\n    return 1.0\n"}},
        {"id": "judge", "grader": {"type": "model"}}]}), encoding="utf-8")
    mka1 = get_platform("mka1").import_(manifest)
    assert [s.where for s in mka1.skipped] == ["tasks[2] 'judge'"]
    adaptive_file = tmp_path / "adaptive.json"
    adaptive_file.write_text(json.dumps([
        {"name": "r", "key": "r", "graderType": "REMOTE", "graderConfig": {"remote": {"url": "http://x"}},
         "tags": ["a"]},
        {"name": "c", "key": "c", "graderType": "CUSTOM", "graderConfig": {}}]), encoding="utf-8")
    adaptive = get_platform("adaptive").import_(adaptive_file)
    assert [(s.where, s.kind) for s in adaptive.skipped] == [("item 2", "CUSTOM")]
    assert adaptive.warnings == ["item 1 (REMOTE): field 'tags' is not mapped to the studio grader (ignored)"]
