"""A judge exported to MKA1 is the same judge (issue 22): a model_backed grader sending render's messages.

The exported ``grade(sample, item, ctx)`` runs in the studio's own MKA1 contract (the sandbox, the
model bridge's Responses API shape) against the scripted judge on 127.0.0.1, for every sample of the
demo datasets: every request it makes is recorded as the endpoint receives it (``responses_to_chat``),
the first one of each sample equals ``grader-studio render``'s messages, temperature and token limit,
and its scores equal the studio's own judge's on the same samples.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import add_endpoint
from platforms_env import VENV_PYTHON, needs_module, run_json
from test_judge_exports import DATASETS, DEMO, judges, samples, studio, write

from studio.core.demo import DEMO_ENDPOINT
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.graders.registry import make_scorer
from studio.core.judges.bridge import make_model_bridge, responses_to_chat
from studio.core.models import (
    BinaryJudge,
    BinaryShot,
    FunctionGrader,
    GraderDefinition,
    Outcome,
    RubricJudge,
    Sample,
    Turn,
)
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.files import load as load_definition
from studio.core.platforms import get_platform
from studio.core.platforms._eval import export_eval
from studio.core.platforms._fidelity import fidelity
from studio.core.platforms._fields import export_endpoints, export_model
from studio.core.platforms._judge_prompts import item_fields, portable
from studio.core.platforms.mka1 import Mka1Platform
from studio.core.scoring import GradingContext
from studio.core.store import Library


def with_slots(sample: Sample, grader: GraderDefinition) -> Sample:
    """The sample as a row the studio's export writes: the prompt's slots among its fields."""
    slots = {k: v for k, v in item_fields(sample, grader).items() if k not in ("id", "completion")}
    return sample.model_copy(update={"fields": {**sample.fields, **slots}})


class Recorder:
    """The run's model bridge, recording each request as the endpoint receives it."""

    def __init__(self, library: Library) -> None:
        self.real = make_model_bridge(library, DEMO_ENDPOINT, use_cache=False)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, method: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        request = responses_to_chat(kwargs)
        with self.lock:
            self.requests.append({"messages": [m.model_dump() for m in request.messages],
                                  "temperature": request.temperature, "max_tokens": request.max_tokens,
                                  "logprobs": request.logprobs, "schema": request.json_schema})
        return self.real(method, kwargs)

    def close(self) -> None:
        self.real.close()  # type: ignore[attr-defined]


@pytest.fixture
def demo_endpoint(library: Library, fake_judge: FakeJudgeServer) -> Iterator[EndpointConfig]:
    config = add_endpoint(library, fake_judge, name=DEMO_ENDPOINT, timeout=30.0)
    with export_endpoints({DEMO_ENDPOINT: config}):
        yield config


def score(grader: GraderDefinition, rows: list[Sample], library: Library, bridge: Any = None) -> list[Outcome]:
    async def go() -> list[Outcome]:
        options = {"model_bridge": bridge} if bridge is not None else {}
        scorer = make_scorer(grader, GradingContext(library=library, options=options))
        try:
            return await scorer.score_batch(rows)
        finally:
            await scorer.aclose()

    return asyncio.run(go())


def exported(grader: GraderDefinition) -> tuple[dict[str, Any], FunctionGrader]:
    """The grader declaration MKA1 gets, and the studio's MKA1 grader made from it (as import makes it)."""
    result = get_platform("mka1").export(grader)
    declaration = json.loads(result.files[f"{grader.key}.grader.json"])
    return declaration, Mka1Platform.from_grader(declaration, grader.key)


def test_exported_judges_send_the_studio_prompt_and_score_as_the_studio(
        library: Library, demo_endpoint: EndpointConfig) -> None:
    for grader in judges():
        declaration, function = exported(grader)
        assert declaration["contract"] == "model_backed" and declaration["model_access"] == "mka1"
        assert function.model_access and function.contract == "mka1_sample"
        for name in DATASETS:
            rows = [with_slots(s, grader) for s in samples(name)]
            recorder = Recorder(library)
            try:
                ours = score(function, rows, library, recorder)
            finally:
                recorder.close()
            budget = portable(grader).max_tokens  # the judge's, else the endpoint's, else the kind's budget
            for sample in rows:
                prompt = studio(grader, sample)
                sent = [r for r in recorder.requests if r["messages"] == prompt]
                assert sent, (grader.key, name, sample.id)
                assert sent[0]["temperature"] == grader.temperature and sent[0]["max_tokens"] == budget
            theirs = score(grader, rows, library)
            for sample, mine, expected in zip(rows, ours, theirs, strict=True):
                where = (grader.key, name, sample.id)
                if expected.status == "skipped":  # NA: MKA1's mean counts a 0, the judge object says why
                    assert mine.status == "ok" and mine.score == 0.0, where
                    assert mine.details["judge"]["verdict"] == "NA", where
                elif expected.status == "ok":
                    assert mine.status == "ok" and mine.score == pytest.approx(expected.score, abs=1e-9), where
                else:
                    assert mine.status == "error", (where, mine)


def test_rows_without_slots_read_them_from_mkas_sample_and_row(library: Library,
                                                               demo_endpoint: EndpointConfig) -> None:
    """A row of the user's own MKA1 dataset: the conversation from item.messages, else the prompt."""
    grader = judges()[0]
    _, function = exported(grader)
    single = Sample(id="one", messages=[Turn(role="user", content="Capital of France?")], completion="Paris",
                    expected="Paris")
    turns = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of Peru?"}]
    several = Sample(id="two", messages=[Turn(**t) for t in turns], completion="Lima", expected="Lima",
                     fields={"messages": turns})
    recorder = Recorder(library)
    try:
        outcomes = score(function, [single, several], library, recorder)
    finally:
        recorder.close()
    sent = [r["messages"] for r in recorder.requests]
    assert studio(grader, single) in sent and studio(grader, several) in sent
    assert [o.score for o in outcomes] == [o.score for o in score(grader, [single, several], library)]


def test_an_mka1_judge_imports_back_as_the_same_judge(tmp_path: Path) -> None:
    platform = get_platform("mka1")
    for grader in judges():
        with export_model("openai:gpt-4.1-mini"):
            result = platform.export(grader)
            for rel, text in result.files.items():
                (tmp_path / rel).write_text(text, encoding="utf-8")
            back = platform.import_(tmp_path / f"{grader.key}.task.json").graders[0]
            assert back == grader
            assert platform.export(back).files == result.files
        source = json.loads(result.files[f"{grader.key}.grader.json"])["source"]
        assert "'model': 'openai:gpt-4.1-mini'" in source.replace('"', "'") or "openai:gpt-4.1-mini" in source
        compile(source, f"{grader.key}.py", "exec")  # MKA1 runs it as is


def test_the_export_dialog_says_what_travels_and_what_mka1_refuses() -> None:
    platform = get_platform("mka1")
    with export_model("m"):
        for grader in judges():
            said = fidelity(platform, grader)
            assert not said.refused and said.exact[0].startswith("the studio's exact messages"), said
        binary = fidelity(platform, judges()[0])
        assert any("NA verdict" in a for a in binary.approximated)
        templated = load_definition(DEMO / "graders" / "rag-grounded-judge.grader.yaml")
        assert "Handlebars" in fidelity(platform, templated).refused
    for path in sorted((DEMO / "graders").glob("*.grader.yaml")):
        grader = load_definition(path)
        if grader.kind in ("criteria_judge", "letter_judge", "prebuilt", "pairwise_judge"):
            support = platform.can_export(grader)
            assert not support.ok and grader.kind.split("_")[0] in support.reason, grader.key


def test_judges_beyond_the_demo_with_shots_variables_and_awkward_text(library: Library,
                                                                      demo_endpoint: EndpointConfig) -> None:
    shots = [BinaryShot(messages=[Turn(role="user", content="2+2? {{x}}")], completion="4 {% raw %}",
                        reasoning="correct", verdict="PASS")]
    graders: list[GraderDefinition] = [
        # a name with backslashes and triple quotes: the generated module's docstring must still parse
        BinaryJudge(key="shots", name='C:\\new """ \\N{x}', endpoint=DEMO_ENDPOINT,
                    criteria="Helpful; quote \"{input}\" {{ item.x }}",
                    examples=shots, temperature=0.3, max_tokens=300),
        RubricJudge(key="vars", endpoint=DEMO_ENDPOINT, system_prompt="Strict. {not a slot}",
                    prompt="Q: {input}\nTone wanted: {tone}\nGold: {ground_truth}\nA: {submission}\n"
                           'JSON {{"score": 0..1, "rationale": "..."}}'),
    ]
    rows = [
        Sample(id="doc", messages=[Turn(role="system", content="Use the document."),
                                   Turn(role="document", content="Lima is the capital of Peru. <b>é</b>"),
                                   Turn(role="user", content="Capital of Peru? {{colour}}")],
               completion="Lima {% endraw %} ✓", expected="Lima", fields={"rubric_vars": {"tone": "dry"}}),
        Sample(id="bare", messages=[Turn(role="user", content="Say hi")], completion="",
               fields={"rubric_vars": {"tone": 3}}),
        Sample(id="multi", messages=[Turn(role="user", content="a"), Turn(role="assistant", content="b"),
                                     Turn(role="user", content="c\n\nd")], completion="e", expected="",
               fields={"rubric_vars": {"tone": "warm"}}),
    ]
    for grader in graders:
        _, function = exported(grader)
        prepared = [with_slots(s, grader) for s in rows]
        recorder = Recorder(library)
        try:
            ours = score(function, prepared, library, recorder)
        finally:
            recorder.close()
        sent = [r["messages"] for r in recorder.requests]
        theirs = score(grader, prepared, library)
        for sample, mine, expected in zip(prepared, ours, theirs, strict=True):
            if not (grader.kind == "rubric_judge" and not sample.completion):  # Letta: no call for ""
                assert studio(grader, sample) in sent, (grader.key, sample.id)
            assert (mine.status, mine.score) == (expected.status, expected.score), (grader.key, sample.id, mine)


def test_a_suite_exports_to_mka1_with_its_rows_and_the_judges_read_them_as_render(
        tmp_path: Path, library: Library, demo_endpoint: EndpointConfig) -> None:
    """``export a b c --to mka1 --dataset qa``: a manifest MKA1's package validates, rows whose MKA1 item
    gives every judge render's messages, and an import of the manifest giving back every grader."""
    graders = [*judges(), load_definition(DEMO / "graders" / "qa-token-f1-mka1.grader.yaml")]
    rows = samples("qa")
    result = export_eval("mka1", [(g.key, g) for g in graders], rows, "qa")
    assert not result.refused
    write(result.files, tmp_path)
    lines = [json.loads(line) for line in (tmp_path / "qa.jsonl").read_text().splitlines()]
    assert [line["id"] for line in lines] == [s.id for s in rows]
    manifest = json.loads((tmp_path / "qa.suite.json").read_text())
    assert [t["id"] for t in manifest["tasks"]] == [g.key for g in graders]
    needs_module("mka1")  # MKA1's own package reads the manifest
    checked = run_json([str(VENV_PYTHON), "-c", "import json, sys; from mka1.models import EvalSuiteManifest; "
                        "m = EvalSuiteManifest.model_validate(json.load(sys.stdin)); print(json.dumps(len(m.tasks)))"],
                       manifest)
    assert checked == len(graders)
    as_mka1 = [Sample(id=line["id"], messages=s.messages, completion=s.completion, fields=line)
               for line, s in zip(lines, rows, strict=True)]  # each line is MKA1's item for its sample
    for grader, task in zip(graders, manifest["tasks"], strict=True):
        function = Mka1Platform.from_grader(task["grader"], grader.key)
        recorder = Recorder(library)
        try:
            outcomes = score(function, as_mka1, library, recorder)
        finally:
            recorder.close()
        assert all(o.status == "ok" for o in outcomes), grader.key
        if grader.kind != "function":
            sent = [r["messages"] for r in recorder.requests]
            assert all(studio(grader, s) in sent for s in rows), grader.key
    back = get_platform("mka1").import_(tmp_path / "qa.suite.json").graders
    assert [g.key for g in back] == [g.key for g in graders]
    assert back[:3] == judges()
