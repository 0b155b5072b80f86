"""Graders of every kind, each written with only the settings its targets carry (lossless)."""

from __future__ import annotations

from studio.core.models import (
    BashGrader,
    BinaryJudge,
    BinaryShot,
    BuiltinGrader,
    Component,
    CompositeGrader,
    CriteriaJudge,
    Criterion,
    ExternalEndpoint,
    FunctionGrader,
    GraderDefinition,
    Metric,
    PrebuiltJudge,
    RangeJudge,
    RubricJudge,
    Turn,
)

ADAPTIVE_SOURCE = '''from adaptive_harmony import StringThread


async def grade(thread: StringThread) -> float:
    completion = (thread.completion() or "").strip()
    expected = str(thread.metadata.get("expected", "")).strip()
    return 1.0 if completion == expected else 0.0
'''

MKA1_SOURCE = '''def grade(sample, item):
    output = (sample.get("extracted_output") or sample.get("output_text") or "").strip().lower()
    target = str(item.get("target") or "").strip().lower()
    return {"scores": {"exact": 1.0 if output == target else 0.0}}
'''

MKA1_BATCH_SOURCE = '''def grade_batch(samples):
    right = sum(1 for s in samples if s.get("extracted_output") == s.get("target"))
    return {"metrics": {"accuracy": right / len(samples) if samples else 0.0}}
'''

LETTA_SOURCE = '''from letta_evals.decorators import grader
from letta_evals.models import GradeResult, Sample


@grader
def short_answer(sample: Sample, submission: str) -> GradeResult:
    return GradeResult(score=1.0 if len(submission) < 200 else 0.0, rationale="length check")
'''

PROMPTFOO_SOURCE = '''def get_assert(output, context):
    expected = context["vars"].get("expected", "")
    return {"pass": expected in output, "score": 1.0 if expected in output else 0.0, "reason": "substring"}
'''


def every_kind() -> list[GraderDefinition]:
    exact = BuiltinGrader(key="exact", function="exact_match")
    return [
        FunctionGrader(key="fn-adaptive", name="Exact (Adaptive)", description="strict equality",
                       source=ADAPTIVE_SOURCE, metric=Metric(key="exact", kind="bool")),
        FunctionGrader(key="fn-mka1", name="Exact (MKA1)", source=MKA1_SOURCE, contract="mka1_sample",
                       metric=Metric(key="exact"), timeout_seconds=45.0, max_model_calls=0, tags=["qa"],
                       description="case-insensitive"),
        FunctionGrader(key="fn-mka1-batch", source=MKA1_BATCH_SOURCE, contract="mka1_batch",
                       model_access=True, max_model_calls=8, timeout_seconds=120.0),
        FunctionGrader(key="fn-letta", name="Short", source=LETTA_SOURCE, contract="letta"),
        FunctionGrader(key="fn-promptfoo", source=PROMPTFOO_SOURCE, contract="promptfoo"),
        BinaryJudge(
            key="judge-binary", name="Helpful", model="gpt-4o-mini", criteria="The answer is helpful.",
            examples=[BinaryShot(messages=[Turn(role="user", content="2+2?")], completion="4",
                                 reasoning="correct", verdict="PASS")],
        ),
        BinaryJudge(key="judge-plain", model="gpt-4o-mini", criteria="The answer is polite."),
        RangeJudge(key="judge-range", model="gpt-4o-mini", criteria="Rate the clarity of the answer."),
        RubricJudge(key="judge-rubric", name="Quality", model="gpt-4o-mini", temperature=0.2,
                    prompt="Question: {input}\nExpected: {ground_truth}\nAnswer: {submission}\n"
                           'Reply as JSON {{"score": 0..1, "rationale": "..."}}',
                    system_prompt="You are a strict grader."),
        CriteriaJudge(key="judge-criteria", model="claude-haiku-4-5",
                      criteria=[Criterion(text="Mentions Paris"), Criterion(text="Is rude", weight=-0.5)]),
        PrebuiltJudge(key="rag-faithfulness", model="gpt-4o-mini", metric_type="faithfulness"),
        PrebuiltJudge(key="rag-answer", model="gpt-4o-mini", metric_type="answer_relevancy"),
        ExternalEndpoint(key="remote", url="https://scoring.example.com/score"),
        BashGrader(key="tests-pass", command="pytest -q", timeout_seconds=60.0),
        exact,
        BuiltinGrader(key="exact-raw", function="exact_match", options={"strip": False, "empty_submission_zero": False, "empty_reference_zero": False}),
        BuiltinGrader(key="contains", function="contains"),
        BuiltinGrader(key="contains-case", function="contains",
                      options={"case_sensitive": True, "empty_submission_zero": False, "empty_reference_zero": False}),
        BuiltinGrader(key="regex", function="regex_match"),
        BuiltinGrader(key="ascii", function="ascii_printable_only"),
        BuiltinGrader(key="is-json", function="is_json", options={"empty_submission_zero": False, "empty_reference_zero": False}),
        BuiltinGrader(key="keywords", function="contains_all",
                      options={"values": ["paris", "france"], "empty_submission_zero": False, "empty_reference_zero": False}),
        BuiltinGrader(key="normalized", function="exact_match", options={"normalize": True}),
        CompositeGrader(key="blend", components=[
            Component(grader=BuiltinGrader(key="exact-raw", function="exact_match",
                                           options={"strip": False, "empty_submission_zero": False, "empty_reference_zero": False}), weight=2.0),
            Component(grader=BuiltinGrader(key="contains", function="contains", options={"empty_submission_zero": False, "empty_reference_zero": False})),
        ]),
        CompositeGrader(key="either", mode="any", components=[
            Component(grader=BuiltinGrader(key="contains", function="contains")),
            Component(grader=BuiltinGrader(key="normalized", function="exact_match", options={"normalize": True})),
        ]),
    ]


# Which fixture each platform must be able to express (the rest may be refused, with a reason).
EXPRESSIBLE = {
    "adaptive": {"fn-adaptive", "judge-binary", "judge-plain", "rag-faithfulness", "rag-answer", "remote"},
    "mka1": {"fn-mka1", "fn-mka1-batch"},
    "letta": {"fn-letta", "judge-rubric", "exact", "contains", "regex", "ascii"},
    "openai": {"fn-mka1", "judge-plain", "judge-binary", "judge-rubric", "exact-raw", "contains",
               "contains-case", "blend"},
    "promptfoo": {"fn-promptfoo", "judge-plain", "judge-range", "rag-faithfulness", "rag-answer", "exact-raw",
                  "contains", "contains-case", "regex", "is-json", "keywords", "blend"},
    "hud": {"tests-pass", "judge-criteria", "contains", "keywords", "normalized", "either"},
    "inspect": {"fn-mka1", "fn-adaptive", "exact", "exact-raw", "contains", "regex"},
}
