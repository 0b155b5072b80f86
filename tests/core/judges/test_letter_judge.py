"""The letter-grade judge (Inspect's model_graded_qa/fact) scores over real HTTP against our scripted
judge: the last GRADE decides, P is half credit when offered, no usable grade is an error."""

from __future__ import annotations

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import LetterJudge, Sample, Turn
from studio.core.models.endpoints import EndpointConfig

TEMPLATE = "[Task]: {question}\n[Submission]: {answer}\n[Criterion]: {criterion}\n{instructions}"


def sample(n: int, answer: str) -> Sample:
    return Sample(id=str(n), messages=[Turn(role="user", content="Capital of France?")], completion=answer,
                  expected="Paris")


def test_letter_grades_over_http(fake_judge: FakeJudgeServer, endpoint: EndpointConfig, score) -> None:
    fake_judge.add_rule("answer-one", "Looks right at first. GRADE: I\nOn reflection it is right.\nGRADE: C")
    fake_judge.add_rule("answer-two", "Half of it. GRADE: P")
    fake_judge.add_rule("answer-three", "I cannot decide.")
    samples = [sample(1, "answer-one"), sample(2, "answer-two"), sample(3, "answer-three")]
    plain = LetterJudge(key="qa", template=TEMPLATE, endpoint=endpoint.name)
    partial = plain.model_copy(update={"partial_credit": True})
    one, two, three = score(plain, samples)
    assert (one.status, one.score, one.details["grade"]) == ("ok", 1.0, "C")
    assert two.status == "error"  # P was not offered: a protocol deviation, not a zero
    assert three.status == "error" and "Grade not found" in (three.error or "")
    assert [o.score for o in score(partial, samples[:2])] == [1.0, 0.5]
