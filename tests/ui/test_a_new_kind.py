"""A judge kind shipped outside the studio is one kind module and one editor body, nothing else.

A temporary package registers itself the way a real one would: its distribution's metadata names it
under the ``grader_studio.kinds`` entry point. The studio then lists the kind, validates and writes
its definitions, edits it in its own designer body, runs it through the engine against a judge on
127.0.0.1, and every export target refuses it by name (one with the kind's own reason).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import add_endpoint, qa

from studio.core import kinds as registry
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import dump_grader, parse_grader
from studio.core.platforms.registry import platforms
from studio.core.store import Library

KIND_MODULE = '''
"""A toy judge: the binary judge's prompt about one word the answer must contain."""

from typing import Any, Literal

from studio.core.judges.kinds import binary_judge
from studio.core.judges.render import RenderedCall, RenderedPrompt
from studio.core.kinds import Kind, refused
from studio.core.models import JudgeBase


class ToyJudge(JudgeBase):
    kind: Literal["toy_judge"] = "toy_judge"
    word: str

    @property
    def criteria(self) -> str:
        return f"The response contains the word {self.word}."

    examples: list = []


def preview(judge, sample):
    return RenderedPrompt(kind=judge.kind, calls=[RenderedCall(label="verdict",
                                                               messages=binary_judge.build_messages(judge, sample))])


async def score(judge, sample, trace, memo: dict[str, Any]):
    verdict, reasoning = await trace.ask_verdict("verdict", judge, binary_judge.build_messages(judge, sample),
                                                 binary_judge.VERDICTS)
    if verdict is None:
        return trace.failure("no verdict")
    return trace.outcome(score=1.0 if verdict == "PASS" else 0.0, rationale=reasoning, details={"verdict": verdict})


KIND = Kind(kind="toy_judge", label="Toy judge", model=ToyJudge, scorer="studio.core.judges.scorer:make_scorer",
            preview=preview, editor="judge", body="toykinds.toy_body:ToyBody", starter={"word": "Paris"},
            default_templates=lambda _variant: (binary_judge.BINARY_SYSTEM, ""), icon=("mdi6.star", "#aa3366"),
            platforms={"adaptive": refused("Adaptive has no toy judge, by the toy's own word")})
'''

BODY_MODULE = '''
from studio.ui.editor.bodies.judge import JudgeBody
from studio.ui.qt import QtWidgets


class ToyBody(JudgeBody):
    form_title = "Word"

    def _build_form(self):
        self.word = QtWidgets.QLineEdit()
        self.word.textChanged.connect(self._emit_changed)
        self.form.addRow("Word", self.word)

    def _load_kind(self, d):
        self.word.setText(d.word)

    def _kind_values(self):
        return {"word": self.word.text()}

    def _set_kind_read_only(self, read_only):
        self.word.setReadOnly(read_only)
'''


def _forget() -> None:
    registry._registry.cache_clear()
    registry._named_module.cache_clear()
    for name in [m for m in sys.modules if m == "toykinds" or m.startswith("toykinds.")]:
        del sys.modules[name]


@pytest.fixture
def toy_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The toy package on sys.path, registered by its distribution's entry point (no studio file changes)."""
    root = tmp_path / "site"
    package = root / "toykinds"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "toy_judge.py").write_text(textwrap.dedent(KIND_MODULE))
    (package / "toy_body.py").write_text(textwrap.dedent(BODY_MODULE))
    info = root / "toykinds-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toykinds\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[grader_studio.kinds]\ntoy = toykinds\n")
    monkeypatch.syspath_prepend(str(root))
    _forget()
    yield root
    monkeypatch.undo()
    _forget()


def test_a_new_judge_kind_is_listed_edited_run_and_refused_by_name(
        toy_kind: Path, qtbot: Any, ctx: Any, library: Library, fake_judge: FakeJudgeServer) -> None:
    from studio.core.graders.registry import kind_labels
    from studio.ui.editor.bodies import make_body
    from studio.ui.icons import kind_icon
    from studio.ui.library.starters import starter

    # listed: in the registry, the menus' labels, its own icon
    assert kind_labels()["toy_judge"] == "Toy judge"
    assert list(registry.kinds()).index("toy_judge") < list(registry.kinds()).index("external_endpoint")
    assert not kind_icon("toy_judge").isNull()

    # a definition of it validates, nested too, and writes back the same
    toy = parse_grader({"kind": "toy_judge", "key": "has-paris", "word": "Paris", "endpoint": "fake"})
    assert type(toy).__name__ == "ToyJudge" and dump_grader(toy)["word"] == "Paris"
    composite = parse_grader({"kind": "composite", "key": "c", "components": [{"grader": dump_grader(toy)}]})
    assert parse_grader(dump_grader(composite)) == composite

    # edited: its own designer body, found from the descriptor, round-trips the definition
    body = make_body(ctx, "toy_judge", "light")
    qtbot.addWidget(body)
    assert type(body).__name__ == "ToyBody"
    definition = starter("toy_judge", "toy-start", "A toy")
    body.load(definition)
    assert body.definition() == definition
    body.refresh_preview()

    # run: through the engine, scored by the judge on 127.0.0.1
    add_endpoint(library, fake_judge)
    library.graders.create(toy)
    library.datasets.create("geo", [qa("a", "Capital of France?", "Paris", "Paris"),
                                    qa("b", "Capital of France?", "Lyon", "Paris")])
    run = run_grader(library, "has-paris", "geo", RunOptions(concurrency=2))
    assert run.status == "completed" and run.counts == {"ok": 2}
    scores = {r["sample_id"]: r["score"] for r in library.runs.results(run.id)}
    assert set(scores.values()) <= {0.0, 1.0} and len(scores) == 2
    assert fake_judge.requests["/v1/chat/completions"] >= 2

    # the facts other code reads from the descriptor, by their defaults: a judge stays on this machine
    # on a cluster, runs no code in the sandbox, scores in [0, 1] (a suite threshold is checked
    # against it), grades one answer a sample (no dataset of pairs offered)
    from studio.core.engine.executors.placement import driver_reason
    from studio.core.store.suites import score_range
    from studio.ui.samples import preferred_dataset

    descriptor = registry.get_kind("toy_judge")
    assert "a toy_judge grader calls an endpoint" in (driver_reason(toy) or "")
    assert not descriptor.sandboxed and not descriptor.pairs and descriptor.calls_note == ""
    assert score_range(toy) == descriptor.score_bounds == (0.0, 1.0)
    assert preferred_dataset([], "toy_judge", ["geo-pairs"]) is None

    # refused by name on export: every target (none declares it), Adaptive with the kind's own reason
    for name, platform in platforms().items():
        support = platform.can_export(toy)
        assert not support.ok, name
        if name == "adaptive":
            assert support.reason == "Adaptive has no toy judge, by the toy's own word"
        else:
            assert "toy judge" in support.reason or "toy_judge" in support.reason, (name, support.reason)


def test_a_kind_typo_names_the_nearest_kind() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as caught:
        parse_grader({"kind": "binary_judg", "key": "x", "criteria": "c"})
    assert caught.value.errors()[0]["msg"] == "unknown kind 'binary_judg'; did you mean 'binary_judge'?"
