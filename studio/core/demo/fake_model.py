"""The scripted "model under test" behind ``grader-studio fake-judge``: canned answers, not a model.

Why: ``grader-studio generate`` calls the model being evaluated, and the demo (and the tests) must
run that workflow with no account and no model. The fake-judge server answers as this script when
a request names one of ``MODELS`` (so the demo's one server is both the judge and the models
under test), or every request when started with ``--model-under-test``.

It knows the demo's QA questions and their reference answers (``resources/demo/datasets``) and,
per model, answers most right and concisely, some right but verbosely and some wrong, picked by a
hash of the model, the question and the request's seed: deterministic, so tests know what each
model says, and two models differ. A question it does not know gets a refusal.
"""

from __future__ import annotations

import functools
import hashlib
import json

from studio.core.json_types import JsonObject, JsonValue
from studio.core.paths import demo_dir

LABEL = "grader-studio fake-judge (a scripted model under test: canned answers, not a model)"

#: per model: the percentage answered right and concisely, and right but verbosely; the rest wrong
PROFILES: dict[str, tuple[int, int]] = {
    "scripted-model-a": (80, 10),
    "scripted-model-b": (45, 15),
}
MODELS = tuple(PROFILES)
DEFAULT_PROFILE = PROFILES["scripted-model-a"]

_VERBOSE_TAIL = (
    "That is the short answer, but it is worth adding some context: questions like this one are "
    "often asked in quizzes and textbooks, and the answer is well established by many reliable "
    "sources, so you can be confident in it. Let me know if you would like more detail on the "
    "history or the reasoning behind it."
)
REFUSAL = "I'm sorry, I don't know the answer to that question."


@functools.cache
def knowledge() -> tuple[tuple[str, str], ...]:
    """(question, reference answer) of every demo sample that has both, in file order."""
    pairs: dict[str, str] = {}
    for path in sorted((demo_dir() / "datasets").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            expected = (row.get("metadata") or {}).get("expected")
            users = [m.get("content") for m in row.get("messages") or [] if m.get("role") == "user"]
            if isinstance(expected, str) and users and isinstance(users[-1], str):
                pairs.setdefault(_normal(users[-1]), expected)
    return tuple(pairs.items())


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def serves(model: JsonValue) -> bool:
    return isinstance(model, str) and model in PROFILES


def answer(messages: list[JsonObject], model: JsonValue, seed: JsonValue = None) -> str:
    """What the scripted model says to the last user message."""
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    question = _normal(users[-1]) if users else ""
    table = knowledge()
    index = next((n for n, (q, _) in enumerate(table) if q == question), None)
    if index is None:
        return REFUSAL
    expected = table[index][1]
    right, verbose = PROFILES.get(str(model), DEFAULT_PROFILE)
    digest = hashlib.sha256(f"{model}\n{question}\n{seed}".encode()).digest()
    bucket = int.from_bytes(digest[:4], "big") % 100
    if bucket < right:
        return expected
    if bucket < right + verbose:
        return f"The answer is {expected}. {_VERBOSE_TAIL}"
    wrong = table[(index + 1 + digest[4] % (len(table) - 1)) % len(table)][1]
    if _normal(wrong) == _normal(expected):
        return REFUSAL
    return wrong
