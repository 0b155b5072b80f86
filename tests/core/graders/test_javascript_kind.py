"""The javascript kind: promptfoo's calling convention and result rules inside the Node sandbox,
validation of its code, and a clear error per sample without Node."""

from __future__ import annotations

import pytest
from platforms_env import needs_node

from studio.core.checks import check_definition
from studio.core.graders.javascript import JavascriptScorer
from studio.core.models import Extractor, JavascriptGrader, Outcome, Sample, Turn
from studio.core.scoring import GradingContext


def score(grader: JavascriptGrader, samples: list[Sample]) -> list[Outcome]:
    scorer = JavascriptScorer(grader, GradingContext(concurrency=1))
    try:
        return scorer.score_sync(samples)
    finally:
        scorer.close()


def test_threshold_negation_template_and_config_follow_promptfoo() -> None:
    needs_node()
    s = [Sample(id="a", completion="Paris is big", expected="Paris", fields={"vars": {"n": 2}}),
         Sample(id="b", completion="Lyon", expected="Paris", fields={"vars": {"n": 2}})]
    by_threshold = score(JavascriptGrader(key="t", source="output.length / 10", threshold=0.5), s)
    assert [(o.score, o.details["pass"]) for o in by_threshold] == [(1.2, True), (0.4, False)]
    negated = score(JavascriptGrader(key="n", source="output.includes('Paris')", negate=True), s)
    assert [(o.score, o.details["pass"]) for o in negated] == [(0.0, False), (1.0, True)]
    templated = score(JavascriptGrader(key="p", source="output.startsWith('{{expected}}') && context.vars.n === 2"), s)
    assert [o.score for o in templated] == [1.0, 0.0]
    config = score(JavascriptGrader(key="c", form="module", config={"limit": 5},
                                    source="module.exports = (output, context) => output.length <= context.config.limit"), s)
    assert [o.score for o in config] == [0.0, 1.0]


def test_an_extractor_picks_the_output_and_a_throw_fails_with_the_reason() -> None:
    needs_node()
    sample = Sample(id="a", messages=[Turn(role="user", content="q"), Turn(role="assistant", content="first"),
                                      Turn(role="user", content="again")], completion="last")
    first = JavascriptGrader(key="f", source="output === 'first'", extractor=Extractor(kind="first_assistant"))
    assert score(first, [sample])[0].score == 1.0
    thrower = JavascriptGrader(key="x", source="if (output) { throw new Error('nope') }\nreturn true")
    [failed] = score(thrower, [sample])
    assert failed.status == "ok" and failed.score == 0.0 and failed.rationale == "Custom function threw error: nope"


def test_validation_loads_the_code_in_a_node_worker() -> None:
    needs_node()
    good = check_definition(JavascriptGrader(key="g", source="output.length > 1"))
    assert [c.status for c in good] == ["passed", "passed", "passed"]
    bad = check_definition(JavascriptGrader(key="b", form="module", source="module.exports = {}"))
    assert bad[-1].status == "failed" and "export a function" in bad[-1].message


def test_without_node_every_sample_is_an_error_naming_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_STUDIO_NODE", "")
    [outcome] = score(JavascriptGrader(key="g", source="true"), [Sample(id="a", completion="x")])
    assert outcome.status == "error" and "Node.js" in (outcome.error or "")
    checks = check_definition(JavascriptGrader(key="g", source="true"))
    assert checks[-1].status == "failed" and "Node.js" in checks[-1].message
