"""The scripted judge's few-shot memory: how the fake judge "learns" from a prompt's examples.

A real model given a worked example tends to judge a similar case the same way. The scripted judge
imitates that with one marker: a sample whose text carries ``[[case:NAME]]`` gets the verdict (or
score) that the prompt's few-shot example carrying the same ``[[case:NAME]]`` was given. With no
such example, the usual rules apply, so tests can make a judge disagree with humans on a family of
cases and then measure whether examples taken from some of them fix the others (``align``).
An explicit ``[[judge:...]]`` marker on the sample still wins.
"""

from __future__ import annotations

import re

from studio.core.json_types import JsonObject

_CASE = re.compile(r"\[\[case:([A-Za-z0-9_.-]+)\]\]")
_VERDICT = re.compile(r'"verdict"\s*:\s*"(PASS|FAIL|NA)"')
_SCORE = re.compile(r"SCORE:\s*(-?\d+)")


def cases(text: str) -> list[str]:
    return _CASE.findall(text)


def shot_answers(messages: list[JsonObject]) -> dict[str, str]:
    """Case name -> the answer its example was given: each user turn before the last one is an
    example, answered by the assistant turns after it up to the next example (a verdict, or a
    ``SCORE: n`` line)."""
    learned: dict[str, str] = {}
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    for i, message in enumerate(messages[:last_user]):
        if message.get("role") != "user":
            continue
        names = cases(str(message.get("content") or ""))
        if not names:
            continue
        answer = None
        for reply in messages[i + 1:last_user]:
            if reply.get("role") == "user" and cases(str(reply.get("content") or "")):
                break  # the next example
            if reply.get("role") != "assistant":
                continue
            text = str(reply.get("content") or "")
            found = _VERDICT.search(text) or _SCORE.search(text)
            if found:
                answer = found.group(1)
        if answer is not None:
            for name in names:
                learned[name] = answer
    return learned


def learned_answer(messages: list[JsonObject], subject: str) -> str | None:
    """The answer an example of the same case taught, for the sample text ``subject``."""
    names = cases(subject)
    if not names:
        return None
    learned = shot_answers(messages)
    return next((learned[n] for n in names if n in learned), None)
