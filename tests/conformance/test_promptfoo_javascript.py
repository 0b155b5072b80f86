"""promptfoo ``javascript`` assertions: imported as javascript graders, run by Node in the studio's
sandbox, they score every sample exactly as promptfoo's own ``runAssertions`` (pass and score).

The cases follow promptfoo's javascript-assertion documentation and examples (an inline expression,
a score with a threshold, multi-line bodies that throw or return a GradingResult, one without a
reason, context.vars, a file's default export, a named export returning componentResults, config
parameters, an async module, an ES module, not-javascript, a declaration before the final
expression, a {{var}} template, a wrong return type), written out here; both sides read the same files.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from conformance_samples import compare, pairs
from platforms_env import NPM_MODULES, needs_node, needs_promptfoo, run_json

from studio.core.graders.javascript import JavascriptScorer
from studio.core.models import JavascriptGrader, Outcome, Sample
from studio.core.platforms import get_platform
from studio.core.sandbox import payloads
from studio.core.scoring import GradingContext

SIDE = Path(__file__).parent / "platform_side" / "promptfoo_python_side.mjs"
SAMPLES = 80

FILES = {
    "longer_than_ten.js": "module.exports = (output, context) => {\n  return output.length > 10;\n};\n",
    "max_size.js": "module.exports = (output, context) => {\n  return output.length > context.config.maximumOutputSize;\n};\n",
    "grading.js": (
        "module.exports = {\n"
        "  customFunction: (output, context) => {\n"
        "    console.log('Prompt:', context.prompt);\n"
        "    console.log('Vars', context.vars.topic);\n"
        "    const lower = output.toLowerCase();\n"
        "    return {\n"
        "      pass: lower.includes('paris'),\n"
        "      score: lower.includes('paris') ? 0.75 : 0.2,\n"
        "      reason: 'Looks at Paris',\n"
        "      componentResults: [\n"
        "        { pass: lower.includes('paris'), score: 0.5, reason: 'Contains paris', namedScores: { Paris: 1.0 } },\n"
        "        { pass: lower.includes('the'), score: 0.5, reason: 'Contains the', namedScores: { The: 0.66 } },\n"
        "      ],\n"
        "    };\n"
        "  },\n"
        "};\n"
    ),
    "min_length.js": (
        "module.exports = (output, context) => {\n"
        "  const minLength = context.config?.minLength;\n"
        "  if (typeof minLength !== 'number') {\n"
        "    throw new Error('Expected assertion config.minLength to be a number');\n"
        "  }\n"
        "  return { pass: output.length >= minLength, score: output.length, reason: `length ${output.length}` };\n"
        "};\n"
    ),
    "few_words.js": (
        "module.exports = async (output) => {\n"
        "  await new Promise((resolve) => setTimeout(resolve, 1));\n"
        "  return output.split(/\\s+/).filter(Boolean).length <= 3;\n"
        "};\n"
    ),
    "starts.mjs": "export default function (output, context) {\n  return output.startsWith(context.vars.expected);\n}\n",
}

MULTILINE_THROW = """\
if (output.length === 0) {
  throw new Error('empty output');
}
return {
  pass: output.toLowerCase().includes('paris'),
  score: output.toLowerCase().includes('paris') ? 1 : 0.25,
  reason: 'checked',
};
"""
MULTILINE_NO_REASON = """\
// Insert your scoring logic here...
if (output === 'Paris') {
  return {
    pass: true,
    score: 0.5,
  };
}
return {
  pass: false,
  score: 0,
  reason: 'Assertion failed',
};
"""

ASSERTS: list[dict[str, Any]] = [
    {"type": "javascript", "value": "output.includes('Paris')"},
    {"type": "javascript", "value": "output.length / 10", "threshold": 0.5},
    {"type": "javascript", "value": "output.length / 10"},
    {"type": "javascript", "value": MULTILINE_THROW},
    {"type": "javascript", "value": MULTILINE_NO_REASON},
    {"type": "javascript", "value": "output.includes(context.vars.expected)"},
    {"type": "javascript", "value": "output.length >= context.vars.min_length"},
    {"type": "javascript", "value": "file://longer_than_ten.js"},
    {"type": "javascript", "value": "file://max_size.js", "config": {"maximumOutputSize": 10}},
    {"type": "javascript", "value": "file://grading.js:customFunction"},
    {"type": "javascript", "value": "file://min_length.js", "config": {"minLength": 5}},
    {"type": "javascript", "value": "file://min_length.js", "config": {"minLength": 20}},
    {"type": "javascript", "value": "file://min_length.js"},
    {"type": "javascript", "value": "file://few_words.js"},
    {"type": "javascript", "value": "file://starts.mjs"},
    {"type": "not-javascript", "value": "output.includes('Paris')"},
    {"type": "not-javascript", "value": "output.length", "threshold": 3},
    {"type": "javascript", "value": "const s = output.trim(); s.length > 0 && s === s.toUpperCase()"},
    {"type": "javascript", "value": "output.toLowerCase().includes('{{expected}}'.toLowerCase())"},
    {"type": "javascript", "value": "output.trim()"},
    {"type": "javascript", "value": "JSON.parse(output).a === 1"},
    {"type": "javascript", "value": "output.length > 3;\n"},
    {"type": "javascript", "value": "typeof context.prompt === 'string' && context.vars.topic === 'bananas'"},
]


def samples() -> list[Sample]:
    return [Sample(id=str(n), completion=o, expected=e, messages=[{"role": "user", "content": f"question {n}"}],
                   fields={"vars": {"expected": e, "topic": "bananas", "min_length": 5}})
            for n, (o, e) in enumerate(pairs()[:SAMPLES])]


def ours(outcome: Outcome) -> Any:
    """[score, pass], or "error" when the sample is an error result (promptfoo: the test errored)."""
    if outcome.status != "ok":
        return "error"
    return [outcome.score, outcome.details.get("pass")]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("javascript")
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def promptfoo_scores(base: Path) -> list[list[Any]]:
    needs_promptfoo()
    node = shutil.which("node")
    assert node
    index = NPM_MODULES / "promptfoo" / "dist" / "src" / "index.js"
    calls = [payloads.promptfoo(s) for s in samples()]
    jobs = [{"assertion": item, "calls": calls, "reasons": True} for item in ASSERTS]
    return run_json([node, str(SIDE)], {"index": str(index), "jobs": jobs}, cwd=base)["scores"]


def test_imported_javascript_scores_as_promptfoo(base: Path, promptfoo_scores: list[list[Any]]) -> None:
    needs_node()
    platform = get_platform("promptfoo")
    bad: list[str] = []
    for n, (item, theirs) in enumerate(zip(ASSERTS, promptfoo_scores, strict=True)):
        grader = platform.from_assert(dict(item), f"js{n}", base)
        assert isinstance(grader, JavascriptGrader)
        scorer = JavascriptScorer(grader, GradingContext(concurrency=1))
        try:
            mine = [ours(o) for o in scorer.score_sync(samples())]
        finally:
            scorer.close()
        their = ["error" if isinstance(t, str) else [t[0], t[1]] for t in theirs]
        labels = [f"{item['type']} {str(item['value'])[:40]!r} on {s.completion!r}" for s in samples()]
        bad += compare("promptfoo", mine, their, labels)
    assert not bad, "\n".join(bad[:40])


def test_failure_reasons_follow_promptfoo(base: Path, promptfoo_scores: list[list[Any]]) -> None:
    """A throw and a wrong return type fail with promptfoo's own reason text (its first line)."""
    needs_node()
    platform = get_platform("promptfoo")
    checked = 0
    for n in (3, 4, 19):
        grader = platform.from_assert(dict(ASSERTS[n]), f"r{n}", base)
        scorer = JavascriptScorer(grader, GradingContext(concurrency=1))
        try:
            outcomes = scorer.score_sync(samples())
        finally:
            scorer.close()
        for outcome, theirs in zip(outcomes, promptfoo_scores[n], strict=True):
            if not isinstance(theirs, str) and not theirs[1]:
                assert (outcome.rationale or "").splitlines()[0] == theirs[2].splitlines()[0]
                checked += 1
    assert checked >= 3 * 10
