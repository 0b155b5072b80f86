"""OpenAI graders import: item fields, the input, python graders' item (issue 12)."""

from __future__ import annotations

import pytest

from studio.core.graders.builtin import score_sample
from studio.core.models import Sample
from studio.core.platforms import PlatformError, get_platform
from studio.core.sandbox import payloads

OPENAI = get_platform("openai")


def row_sample(item: dict, output: str) -> Sample:
    from studio.core.datasets.shapes import row_to_sample

    return row_to_sample({"item": item, "sample": {"output_text": output}}, "openai", "1")


def test_string_check_reads_the_named_item_field() -> None:
    grader = OPENAI.from_json({"type": "string_check", "name": "city", "input": "{{ sample.output_text }}",
                               "reference": "{{ item.city }}", "operation": "eq"})
    sample = row_sample({"question": "capital?", "reference": "France", "city": "Paris"}, "Paris")
    assert grader.options.reference_field == "city"
    assert score_sample(grader, sample).score == 1.0
    assert score_sample(grader, row_sample({"reference": "Paris", "city": "Lyon"}, "Paris")).score == 0.0
    assert OPENAI.to_json(grader, [])["reference"] == "{{ item.city }}"


def test_item_reference_is_the_expected_answer_even_beside_other_answer_keys() -> None:
    grader = OPENAI.from_json({"type": "string_check", "name": "ref", "input": "{{ sample.output_text }}",
                               "reference": "{{ item.reference }}", "operation": "eq"})
    assert score_sample(grader, row_sample({"expected": "no", "reference": "Paris"}, "Paris")).score == 1.0


def test_a_non_default_input_is_refused_not_dropped() -> None:
    with pytest.raises(PlatformError, match="output_json.answer"):
        OPENAI.from_json({"type": "string_check", "name": "j", "input": "{{ sample.output_json.answer }}",
                          "reference": "{{ item.reference }}", "operation": "eq"})


def test_python_grader_item_is_the_dataset_row() -> None:
    sample = row_sample({"question": "capital?", "reference": "Paris"}, '{"answer": "Paris"}')
    built = payloads.mka1_sample(sample)
    assert built["item"] == {"question": "capital?", "reference": "Paris"}
    assert built["sample"]["output_text"] == '{"answer": "Paris"}'
    assert built["sample"]["output_json"] == {"answer": "Paris"}


def test_multi_needs_a_map_of_graders() -> None:
    with pytest.raises(PlatformError, match="map"):
        OPENAI.from_json({"type": "multi", "name": "m", "graders": [], "calculate_output": "a"})
