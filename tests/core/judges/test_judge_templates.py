"""Templates: every Adaptive Handlebars variable, OpenAI {{ sample.* }}/{{ item.* }}, Letta {placeholders}."""

from __future__ import annotations

import time

import pytest

from studio.core.judges.http.errors import JudgeError, TemplateError, UnknownVariable
from studio.core.judges.render import render_prompt
from studio.core.judges.templates import dialect_of, render_format, render_template
from studio.core.judges.variables import sample_variables
from studio.core.models import BinaryJudge, Extractor, Sample, Turn

SAMPLE = Sample(
    id="s1",
    messages=[
        Turn(role="system", content="Be brief."),
        Turn(role="document", content="Doc A."),
        Turn(role="user", content="First question?"),
        Turn(role="assistant", content="First answer."),
        Turn(role="user", content="Second <question>?"),
    ],
    completion="Final & answer.",
    expected="Paris",
    metadata={"domain": "geo"},
    fields={"question": "Second question?", "rubric_vars": {"tone": "dry"}},
)
JUDGE = BinaryJudge(key="j", criteria="Is it right?", template_variables={"product": "Atlas"})

CASES = [
    ("{{{completion}}}", "Final & answer."),
    ("{{completion}}", "Final &amp; answer."),  # Handlebars escapes double braces
    ("{{{last_user_turn_content}}}", "Second <question>?"),
    (
        "{{{context_str}}}",
        "system: Be brief.\ndocument: Doc A.\nuser: First question?\nassistant: First answer.\nuser: Second <question>?",
    ),
    (
        "{{{context_str_without_last_user}}}",
        "system: Be brief.\ndocument: Doc A.\nuser: First question?\nassistant: First answer.",
    ),
    ("{{#each turns}}{{role}},{{/each}}", "system,document,user,assistant,user,assistant,"),
    ("{{#each context_turns}}{{@index}}{{/each}}", "01234"),
    (
        "{{#each context_turns_without_last_user}}{{role}} {{/each}}",
        "system document user assistant ",
    ),
    ("{{metadata.domain}}/{{metadata.expected}}", "geo/Paris"),
    ("{{#if metadata.missing}}yes{{else}}no{{/if}}", "no"),
    ("{{criteria}}", "Is it right?"),
    ("{{template_variables.product}} {{product}}", "Atlas Atlas"),
    ("{{#if output_schema}}schema{{/if}}", "schema"),
    ("{{ sample.output_text }} | {{ item.question }}", "Final & answer. | Second question?"),
]


@pytest.mark.parametrize(("template", "expected"), CASES)
def test_variables(template: str, expected: str) -> None:
    variables = sample_variables(JUDGE, SAMPLE)
    variables["criteria"] = JUDGE.criteria
    variables["output_schema"] = "{...}"
    assert render_template(template, variables) == expected


def test_openai_templates_do_not_escape_and_name_unknown_fields() -> None:
    variables = sample_variables(JUDGE, SAMPLE)
    assert dialect_of("{{ sample.output_text }}") == "openai"
    assert dialect_of("{{{completion}}} {{ sample.output_text }}") == "handlebars"
    assert render_template("{{item.rubric_vars}}", variables) == '{"tone": "dry"}'
    with pytest.raises(UnknownVariable, match="'item.answer'"):
        render_template("{{ item.answer }}", variables)


@pytest.mark.parametrize(
    "template", ["{{{complettion}}}", "{{#if contxt}}x{{/if}}", "{{#each turnz}}{{/each}}"]
)
def test_unknown_variable_names_it(template: str) -> None:
    with pytest.raises(UnknownVariable) as info:
        render_template(template, sample_variables(JUDGE, SAMPLE))
    assert info.value.name in template
    assert "completion" in str(info.value)  # the message lists what is known


def test_syntax_errors_are_template_errors() -> None:
    with pytest.raises(TemplateError, match="syntax"):
        render_template("{{#each turns}}", sample_variables(JUDGE, SAMPLE))


def test_letta_format_rules() -> None:
    assert render_format("{a} {{literal}} {b[0]}", {"a": 1, "b": [2]}) == "1 {literal} 2"
    with pytest.raises(UnknownVariable, match="'missing'"):
        render_format("{missing}", {})
    with pytest.raises(TemplateError):
        render_format("unbalanced { brace", {})


def test_extractor_decides_the_completion() -> None:
    judge = JUDGE.model_copy(update={"extractor": Extractor(kind="first_assistant")})
    assert sample_variables(judge, SAMPLE)["completion"] == "First answer."


def test_render_prompt_is_fast_enough_for_live_preview() -> None:
    judge = JUDGE.model_copy(
        update={"user_template": "{{#each turns}}{{role}}: {{{content}}}\n{{/each}}"}
    )
    render_prompt(judge, SAMPLE)
    started = time.perf_counter()
    for _ in range(200):
        render_prompt(judge, SAMPLE)
    assert (time.perf_counter() - started) / 200 < 0.005  # well under a keystroke


def test_render_a_composite_shows_each_judge() -> None:
    from studio.core.models import (
        BuiltinGrader,
        Component,
        CompositeGrader,
        CriteriaJudge,
        Criterion,
    )

    composite = CompositeGrader(
        key="blend",
        components=[
            Component(name="exact", grader=BuiltinGrader(key="x", function="exact_match")),
            Component(name="judge", grader=JUDGE),
            Component(
                name="hud",
                grader=CriteriaJudge(key="h", criteria=[Criterion(text="a"), Criterion(text="b")]),
            ),
        ],
    )
    labels = [c.label for c in render_prompt(composite, SAMPLE).calls]
    assert labels == ["judge: verdict", "hud: criterion 1: a", "hud: criterion 2: b"]
    with pytest.raises(JudgeError, match="no judge inside"):
        render_prompt(composite.model_copy(update={"components": composite.components[:1]}), SAMPLE)
