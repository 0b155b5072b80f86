"""Each judge kind has its own designer body, found from the kind, and it round-trips its definition."""

from __future__ import annotations

from typing import Any

from studio.core.graders.registry import kinds
from studio.ui.editor.bodies import make_body
from studio.ui.editor.bodies.judge import JudgeBody
from studio.ui.library.starters import starter

JUDGE_KINDS = sorted(name for name, kind in kinds().items() if kind.editor == "judge")


def test_every_judge_kind_gets_the_body_named_after_it_and_it_round_trips(qtbot: Any, ctx: Any) -> None:
    assert {"binary_judge", "range_judge", "rubric_judge", "criteria_judge", "prebuilt"} <= set(JUDGE_KINDS)
    classes = set()
    for kind in JUDGE_KINDS:
        body = make_body(ctx, kind, "light")
        qtbot.addWidget(body)
        assert isinstance(body, JudgeBody) and type(body) is not JudgeBody, kind
        assert type(body).__module__ == f"studio.ui.editor.bodies.{kind}", kind
        classes.add(type(body))
        definition = starter(kind, f"k_{kind}", "A judge")
        body.load(definition)
        assert body.definition() == definition, kind
        body.set_read_only(True)
        assert body.definition() == definition, kind
        body.refresh_preview()
    assert len(classes) == len(JUDGE_KINDS)
