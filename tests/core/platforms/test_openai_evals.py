"""Reading an OpenAI eval (issue 46): the five shapes, one grader per criterion, the first malformed
field named by its path, what has no effect here named by its path, items with a stored output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from studio.core.models.openai_grader import OpenAIGrader
from studio.core.platforms import get_platform
from studio.core.platforms.openai_evals import MalformedEval, item_row, read_eval, read_items

CHECK = {"type": "string_check", "name": "Exact", "input": "{{ sample.output_text }}",
         "reference": "{{ item.answer }}", "operation": "eq"}
SIM = {"type": "text_similarity", "name": "Close", "input": "{{ sample.output_text }}",
       "reference": "{{ item.answer }}", "evaluation_metric": "bleu", "pass_threshold": 0.4}
SCORE = {"type": "score_model", "name": "Judge", "model": "gpt-4o", "range": [0, 10],
         "input": [{"role": "system", "content": "Rate."}, {"role": "user", "content": "{{ sample.output_text }}"}]}
CRITERIA = [CHECK, SIM, SCORE]


def shapes() -> dict[str, Any]:
    return {
        "an eval object": {"object": "eval", "id": "eval_1", "name": "QA eval", "created_at": 1,
                           "data_source_config": {"type": "custom", "schema": {}}, "testing_criteria": CRITERIA},
        "a create-eval request": {"name": "QA eval", "data_source_config": {"type": "custom", "item_schema": {}},
                                  "testing_criteria": CRITERIA},
        "a list of testing criteria": CRITERIA,
        "a single grader": SIM,
        "a fine-tuning grader config": {"method": {"type": "reinforcement",
                                                   "reinforcement": {"grader": SIM}}},
    }


@pytest.mark.parametrize("shape", list(shapes()))
def test_every_shape_reads_one_grader_per_criterion(shape: str, tmp_path: Path) -> None:
    data = shapes()[shape]
    path = tmp_path / "qa.eval.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    read = read_eval(data, "qa")
    assert read.shape == shape
    assert read.name == ("QA eval" if isinstance(data, dict) and "testing_criteria" in data else "qa")
    platform = get_platform("openai")
    assert platform.detect(path)
    result = platform.import_file(path)
    expected = CRITERIA if isinstance(data, list) or "testing_criteria" in data else [SIM]
    assert [g.criterion for g in result.graders if isinstance(g, OpenAIGrader)] == expected
    assert [g.key for g in result.graders] == [c["name"].lower() for c in expected]


def test_fine_tuning_configs_of_the_graders_calls() -> None:
    run = read_eval({"grader": SCORE, "model_sample": "Paris", "item": {"answer": "Paris"}}, "ft")
    assert run.criteria == [("grader", SCORE)] and run.shape == "a fine-tuning grader config"
    assert run.not_carried == ["item: part of the fine-tuning config, not of the grader; not imported",
                               "model_sample: part of the fine-tuning config, not of the grader; not imported"]
    method = read_eval({"type": "reinforcement", "reinforcement": {"grader": CHECK, "hyperparameters": {}}}, "ft")
    assert method.criteria == [("reinforcement.grader", CHECK)]


@pytest.mark.parametrize(("data", "message"), [
    ({"name": "e", "data_source_config": {}, "testing_criteria": [CHECK, SIM, {**SCORE, "input": [
        {"role": "user", "content": 42}]}]}, r"^testing_criteria\[2\]\.input\[0\]\.content: must be text"),
    ([CHECK, {**CHECK, "operation": "contains"}], r"^testing_criteria\[1\]\.operation: 'contains' is not one of"),
    ([{**SIM, "evaluation_metric": "rouge_6"}], r"^testing_criteria\[0\]\.evaluation_metric"),
    ([{k: v for k, v in CHECK.items() if k != "reference"}], r"^testing_criteria\[0\]\.reference: missing"),
    ([{**SCORE, "range": [5, 1]}], r"^testing_criteria\[0\]\.range: must be two numbers"),
    ([{**SCORE, "input": [{"role": "judge", "content": "x"}]}], r"^testing_criteria\[0\]\.input\[0\]\.role"),
    ([{"type": "label_model", "name": "l", "model": "m", "input": [{"role": "user", "content": "x"}],
       "labels": ["a", "b"], "passing_labels": ["c"]}], r"passing_labels: \['c'\] are not among"),
    ([{"type": "multi", "name": "m", "graders": {"x": CHECK}, "calculate_output": "x +* 2"}],
     r"^testing_criteria\[0\]\.calculate_output: .*column 4"),
    ([{"type": "multi", "name": "m", "graders": {"x": {**CHECK, "input": 3}}, "calculate_output": "x"}],
     r"^testing_criteria\[0\]\.graders\.x\.input: must be a string"),
    ([{"type": "python", "name": "p", "source": "x" * (256 * 1024)}], r"source: is 262,144 bytes; OpenAI's limit"),
    ([{**CHECK, "type": "regex"}], r"^testing_criteria\[0\]\.type: 'regex' is not an OpenAI grader type"),
    ({"name": "e", "testing_criteria": "x", "data_source_config": {}}, r"^testing_criteria: must be a list"),
    ([], r"^testing_criteria: holds no grader"),
])
def test_a_malformed_eval_names_its_first_bad_field(data: Any, message: str) -> None:
    with pytest.raises(MalformedEval, match=message):
        read_eval(data, "e")


def test_what_has_no_effect_here_is_named_by_its_path_and_kept() -> None:
    criterion = {**SCORE, "sampling_params": {"temperature": 0, "top_p": 0.9, "reasoning_effort": "low", "foo": 1},
                 "extra": True, "input": [{"role": "user", "content": [
                     {"type": "input_text", "text": "x"}, {"type": "input_image", "image_url": "u"}]}]}
    read = read_eval({"name": "e", "data_source_config": {"type": "stored_completions"}, "metadata": {"team": "a"},
                      "testing_criteria": [CHECK, criterion]}, "e")
    assert read.not_carried == [
        "metadata: the eval's metadata has no effect here (kept for the export)",
        "data_source_config.type: 'stored_completions' reads OpenAI's stored logs; give the rows with --items",
        "testing_criteria[1].extra: not a field of OpenAI's score_model grader; kept, but it has no effect here",
        "testing_criteria[1].input[0].content[1]: input_image is kept, but the studio's endpoints take text only: "
        "this grader is refused when it runs",
        "testing_criteria[1].sampling_params.foo: not one of OpenAI's sampling parameters; no effect here",
    ]


def test_a_criterion_the_studio_kinds_hold_exactly_comes_back_as_that_kind(tmp_path: Path) -> None:
    """An eval the studio exported imports back as the graders it was; anything else runs as OpenAI's."""
    studio_form = {"type": "string_check", "name": "exact", "input": "{{ sample.output_text }}",
                   "reference": "{{ item.reference }}", "operation": "eq"}
    path = tmp_path / "g.json"
    path.write_text(json.dumps([studio_form, CHECK]), encoding="utf-8")
    graders = get_platform("openai").import_file(path).graders
    assert [g.kind for g in graders] == ["builtin", "openai_grader"]


def test_items_keep_every_field_and_read_a_stored_output(tmp_path: Path) -> None:
    assert item_row({"item": {"q": 1}, "sample": {"output_text": "a"}}, "x") == {
        "item": {"q": 1}, "sample": {"output_text": "a"}}
    assert item_row({"q": 1, "output": {"answer": 2}}, "x") == {
        "item": {"q": 1, "output": {"answer": 2}}, "sample": {"output_text": '{"answer": 2}', "output_json": {"answer": 2}}}
    assert item_row({"q": 1}, "x") == {"item": {"q": 1}}
    with pytest.raises(MalformedEval, match=r"items.jsonl:3\.item: must be an object"):
        item_row({"item": "x"}, "items.jsonl:3")
    path = tmp_path / "items.jsonl"
    path.write_text('{"question": "capital?", "answer": "Paris", "completion": "Paris.", "n": [1, 2]}\n\n'
                    '{"item": {"question": "q2"}, "sample": {"output_text": "x"}}\n', encoding="utf-8")
    first, second = read_items(path)
    assert first.completion == "Paris." and first.fields["item"]["n"] == [1, 2]
    assert second.completion == "x" and second.fields["item"] == {"question": "q2"}


def test_an_endpoint_criterion_is_named_and_left_out() -> None:
    read = read_eval([CHECK, {"type": "endpoint", "name": "svc", "url": "https://x"}], "e")
    assert [p for p, _ in read.criteria] == ["testing_criteria[0]"]
    assert read.not_carried[0].startswith("testing_criteria[1]: an endpoint grader")
    with pytest.raises(MalformedEval, match="holds no grader the studio can run"):
        read_eval([{"type": "endpoint", "name": "svc"}], "e")
