"""An exported judge is the same judge (issue 22): the platform renders the studio's exact messages.

For the demo's binary, range and rubric judges and every sample of the three demo datasets, each
platform's own code renders the exported prompt and the result equals ``render_prompt`` (what
``grader-studio render`` prints) message for message: Jinja2 for OpenAI graders, promptfoo itself
(Nunjucks in Node, read back from its ``renderedGradingPrompt``), Inspect itself (the model calls its
log records). The promptfoo config and the Inspect task carry the dataset and run offline against the
scripted judge, and give the studio's scores.
"""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import add_endpoint
from platforms_env import (
    NPM_MODULES,
    PROMPTFOO,
    VENV_BIN,
    VENV_PYTHON,
    env,
    needs_module,
    needs_promptfoo,
    run_json,
)

from studio.core.datasets import read_dataset
from studio.core.demo import DEMO_ENDPOINT
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.judges import parsing
from studio.core.judges.http.chat import ChatResponse, TokenLogprob
from studio.core.judges.kinds.range_judge import logprob_score
from studio.core.judges.kinds.rubric_judge import read_score
from studio.core.judges.render import render_prompt
from studio.core.models import GraderDefinition, Outcome, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.files import load as load_definition
from studio.core.platforms import PlatformError, get_platform
from studio.core.platforms import _judge_runtime as runtime
from studio.core.platforms._eval import export_eval
from studio.core.platforms._fields import export_endpoints, load_yaml_text
from studio.core.platforms._judge_prompts import (
    export_model,
    item_fields,
    message_json,
    portable,
    render_python,
)
from studio.core.scoring import GradingContext
from studio.core.store import Library

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[2] / "resources" / "demo"
JUDGES = ("qa-correctness-judge", "answer-quality-1to5", "qa-rubric-letta")
DATASETS = ("qa", "rag", "json_outputs")
SIDE = str(HERE / "judge_platform_side.py")


def judges() -> list[GraderDefinition]:
    return [load_definition(DEMO / "graders" / f"{key}.grader.yaml") for key in JUDGES]


def samples(name: str) -> list[Sample]:
    return read_dataset(DEMO / "datasets" / f"{name}.jsonl").samples


def studio(grader: GraderDefinition, sample: Sample) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in render_prompt(grader, sample).messages]


def write(files: dict[str, str], root: Path) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


NO_REFERENCE = Sample(id="no-ref", messages=[Turn(role="system", content="Be brief."),
                                              Turn(role="user", content="Name a {{colour}}.")],
                      completion="Blue {% raw %}")


# ---- without platforms: the export's own rendering and its answer reading ------------------------


def test_every_row_renders_as_the_studio_does() -> None:
    for grader in judges():
        with export_model("gpt-4o-mini"):
            judge = portable(grader)
        parts = [message_json(m) for m in judge.messages]
        for name in DATASETS:
            for sample in [*samples(name), NO_REFERENCE]:
                fields = item_fields(sample, grader)
                assert render_python(judge.messages, fields) == studio(grader, sample), (grader.key, sample.id)
                assert runtime.fill(parts, fields) == studio(grader, sample), (grader.key, sample.id)


ANSWERS = [
    '{"reasoning": "fine", "verdict": "PASS"}', "```json\n{\"verdict\": \"fail\", \"reasoning\": \"x\"}\n```",
    "I think PASS. Final: FAIL", "no verdict here", '{"verdict": "MAYBE"} so NA', "SCORE: 4", "score = 9 then 3",
    '{"score": 0.75, "rationale": "close"}', '{"score": "1.5"}', '{"score": true}', "text {\"score\": 0.2} more",
    '{"score": NaN}', "", "SCORE: -1 and 2", '[1, 2] {"score": 0, "rationale": ""}',
]


def test_the_exported_runtime_reads_answers_as_the_studio_does() -> None:
    for text in ANSWERS:
        assert runtime.parse_verdict(text, ("PASS", "FAIL", "NA")) == parsing.parse_verdict(text, ("PASS", "FAIL", "NA"))
        assert runtime.parse_int_score(text, 1, 5) == parsing.parse_int_score(text, 1, 5)
        try:
            expected: Any = read_score(text)[:2]
        except Exception as exc:  # the studio raises JudgeError; the runtime ValueError, same message
            expected = str(exc)
        try:
            got: Any = runtime.read_rubric_score(text)
        except ValueError as exc:
            got = str(exc)
        assert got == expected, text
    tokens = [("SCORE", -0.1, {}), (":", -0.1, {}), (" ", -0.2, {}),
              ("4", -0.3, {"4": -0.3, "5": -1.2, "3": -2.0, "9": -0.1, "x": -0.5})]
    response = ChatResponse(text="SCORE: 4", logprobs=[TokenLogprob(token=t, logprob=lp, top=top)
                                                       for t, lp, top in tokens])
    ours = runtime.logprob_score([{"token": t, "logprob": lp, "top": top} for t, lp, top in tokens], 1, 5)
    assert ours == logprob_score(response, 1, 5)


def test_a_judge_without_a_model_id_is_refused_by_name_not_given_the_endpoint_name() -> None:
    grader = judges()[0]  # endpoint demo-scripted-judge, no model
    support = get_platform("openai").can_export(grader)
    assert not support.ok and "--model" in support.reason
    with export_model("gpt-4o-mini"):
        data = json.loads(get_platform("openai").export(grader).files[f"{grader.key}.openai.json"])
    assert data["model"] == "gpt-4o-mini"
    endpoint = EndpointConfig(name=DEMO_ENDPOINT, base_url="http://127.0.0.1:9/v1", model="llama-3-8b")
    with export_endpoints({DEMO_ENDPOINT: endpoint}):
        data = json.loads(get_platform("openai").export(grader).files[f"{grader.key}.openai.json"])
    assert data["model"] == "llama-3-8b"


def test_an_azure_endpoint_exports_its_deployment_as_the_model() -> None:
    grader = judges()[0]
    endpoint = EndpointConfig(name=DEMO_ENDPOINT, kind="azure", base_url="https://res.openai.azure.com",
                              model="grader-gpt4o-deployment", api_version="2024-10-21")
    with export_endpoints({DEMO_ENDPOINT: endpoint}):
        data = json.loads(get_platform("openai").export(grader).files[f"{grader.key}.openai.json"])
    assert data["model"] == "grader-gpt4o-deployment"


def test_what_cannot_travel_is_refused_with_the_reason() -> None:
    templated = load_definition(DEMO / "graders" / "rag-grounded-judge.grader.yaml")
    with export_model("m"):
        for target in ("openai", "inspect"):
            support = get_platform(target).can_export(templated)
            assert not support.ok and "Handlebars" in support.reason
        with pytest.raises(PlatformError, match="written for"):
            export_eval("hud", [(g.key, g) for g in judges()], samples("qa"), "qa")


def test_exported_judges_import_back_as_the_same_judge(tmp_path: Path) -> None:
    for target in ("openai", "promptfoo"):
        platform = get_platform(target)
        for grader in judges():
            if grader.kind == "range_judge" and target == "openai":
                continue  # a score_model on the judge's scale imports as no studio kind yet
            with export_model("gpt-4o-mini"):
                result = platform.export(grader)
            write(result.files, tmp_path / target / grader.key)
            main = next(p for p in result.files if p.endswith((".openai.json", ".yaml")))
            back = platform.import_(tmp_path / target / grader.key / main).graders[0]
            with export_model("gpt-4o-mini"):
                assert platform.export(back).files == result.files, (target, grader.key)


# ---- OpenAI graders: Jinja2 renders the testing criteria over the items --------------------------


def test_openai_criteria_rendered_by_jinja2_equal_render(tmp_path: Path) -> None:
    needs_module("jinja2")
    for name in DATASETS:
        rows = samples(name)
        with export_model("gpt-4o-mini"):
            result = export_eval("openai", [(g.key, g) for g in judges()], rows, name)
        assert not result.refused
        definition = json.loads(result.files[f"{name}.eval.json"])
        items = [json.loads(line) for line in result.files[f"{name}.items.jsonl"].splitlines()]
        assert len(items) == len(rows)
        rendered = run_json([str(VENV_PYTHON), SIDE], {"mode": "jinja", "criteria": definition["testing_criteria"],
                                                       "rows": items, "eval": definition})
        for grader in judges():
            criterion = next(c for c in definition["testing_criteria"] if c["name"] == grader.key)
            assert criterion["model"] == "gpt-4o-mini"
            for sample, messages in zip(rows, rendered[grader.key], strict=True):
                assert messages == studio(grader, sample), (grader.key, name, sample.id)


# ---- promptfoo and Inspect: the whole eval runs offline against the scripted judge ---------------


@pytest.fixture
def demo_endpoint(library: Library, fake_judge: FakeJudgeServer) -> Iterator[EndpointConfig]:
    config = add_endpoint(library, fake_judge, name=DEMO_ENDPOINT, timeout=30.0)
    with export_endpoints({DEMO_ENDPOINT: config}):
        yield config


def studio_scores(library: Library, grader: GraderDefinition, rows: list[Sample]) -> list[Outcome]:
    from studio.core.graders.registry import make_scorer

    async def go() -> list[Outcome]:
        scorer = make_scorer(grader, GradingContext(library=library))
        try:
            return await scorer.score_batch(rows)
        finally:
            await scorer.aclose()

    return asyncio.run(go())


def same_score(ours: float | None, theirs: Any) -> bool:
    return ours is not None and isinstance(theirs, (int, float)) and math.isclose(ours, theirs, abs_tol=1e-9)


def test_promptfoo_rubric_prompts_rendered_by_nunjucks_equal_render() -> None:
    """Every demo sample, through Nunjucks in Node as promptfoo renders an llm-rubric prompt."""
    needs_promptfoo()
    graders = judges()
    for name in DATASETS:
        rows = samples(name)
        with export_model("gpt-4o-mini"):
            result = export_eval("promptfoo", [(g.key, g) for g in graders], rows, name)
        config = load_yaml_text(result.files["promptfooconfig.yaml"], "config")
        asserts = config["defaultTest"]["assert"]
        cases = [{"prompt": n, "vars": {**test["vars"], "output": test["vars"]["completion"], "rubric": a["value"]}}
                 for test in config["tests"] for n, a in enumerate(asserts)]
        rendered = run_json(["node", str(HERE / "nunjucks_render.js"), str(NPM_MODULES)],
                            {"prompts": [a["rubricPrompt"] for a in asserts], "cases": cases})
        assert len(rendered) == len(rows) * len(graders)
        for n, messages in enumerate(rendered):
            sample, grader = rows[n // len(graders)], graders[n % len(graders)]
            assert asserts[n % len(graders)]["metric"] == grader.key
            assert messages == studio(grader, sample), (grader.key, name, sample.id)


#: promptfoo's Python provider is slow to start per call: the real run takes the first rows of each set
RUN_ROWS = 4
# each platform's own eval run over one demo dataset in the default suite, the others in the slow
# suite (a run is a minute or two of the platform's start-up and calls on two shared cores)
RUN_DATASETS = [pytest.param(name, marks=[pytest.mark.slow] if name != "qa" else []) for name in DATASETS]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", RUN_DATASETS)
def test_promptfoo_eval_runs_and_sends_the_studio_prompt(tmp_path: Path, library: Library,
                                                         demo_endpoint: EndpointConfig, name: str) -> None:
    needs_promptfoo()
    graders = judges()
    rows = samples(name)[:RUN_ROWS]
    result = export_eval("promptfoo", [(g.key, g) for g in graders], rows, name)
    root = tmp_path / name
    write(result.files, root)
    done = subprocess.run([str(PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "-o", "out.json", "--no-cache",
                           "--no-progress-bar", "-j", "4"], cwd=root, capture_output=True, text=True,
                          timeout=840, env=env())
    assert (root / "out.json").exists(), done.stderr[-3000:]
    results = json.loads((root / "out.json").read_text())["results"]["results"]
    assert len(results) == len(rows)
    by_id = {s.id: s for s in rows}
    expected = {g.key: dict(zip([s.id for s in rows], studio_scores(library, g, rows), strict=True))
                for g in graders}
    for entry in results:
        sample = by_id[entry["testCase"]["description"]]
        components = {c["assertion"]["metric"]: c for c in entry["gradingResult"]["componentResults"]}
        for grader in graders:
            component = components[grader.key]
            prompt = json.loads(component["metadata"]["renderedGradingPrompt"])
            assert prompt == studio(grader, sample), (grader.key, name, sample.id)
            outcome = expected[grader.key][sample.id]
            if outcome.status == "ok":
                assert same_score(outcome.score, component["score"]), (grader.key, sample.id, component)


@pytest.mark.slow  # an Inspect eval per dataset (~20 s): in the slow suite, which .ci/run runs too
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", RUN_DATASETS)
def test_inspect_task_runs_and_sends_the_studio_prompt(tmp_path: Path, library: Library,
                                                       demo_endpoint: EndpointConfig, name: str) -> None:
    needs_module("inspect_ai")
    graders = judges()
    rows = samples(name)
    result = export_eval("inspect", [(g.key, g) for g in graders], rows, name)
    root = tmp_path / name
    write(result.files, root)
    logs = root / "logs"
    done = subprocess.run([str(VENV_BIN / "inspect"), "eval", f"{name}_task.py", "--model", "mockllm/model",
                           "--log-format", "json", "--log-dir", str(logs), "--max-connections", "8"],
                          cwd=root, capture_output=True, text=True, timeout=840, env=env())
    assert done.returncode == 0, done.stderr[-3000:]
    log = run_json([str(VENV_PYTHON), SIDE], {"mode": "inspect_log", "path": str(next(logs.glob("*.json")))})
    assert log["status"] == "success"
    assert set(log["samples"]) == {s.id for s in rows}
    expected = {g.key: dict(zip([s.id for s in rows], studio_scores(library, g, rows), strict=True))
                for g in graders} if name == "qa" else {}
    for sample in rows:
        logged = log["samples"][sample.id]
        for grader in graders:
            assert studio(grader, sample) in logged["calls"], (grader.key, name, sample.id)
            scorer = grader.key.replace("-", "_")
            outcome = expected.get(grader.key, {}).get(sample.id)
            if outcome is not None and outcome.status == "ok":
                assert same_score(outcome.score, logged["scores"][scorer]), (grader.key, sample.id)


def test_letta_suite_with_its_dataset_validates(tmp_path: Path) -> None:
    needs_module("letta_evals")
    graders = [load_definition(DEMO / "graders" / f"{key}.grader.yaml")
               for key in ("qa-rubric-letta", "qa-contains-expected", "qa-exact-match")]
    rows = samples("qa")
    with export_model("gpt-4o-mini"):
        result = export_eval("letta", [(g.key, g) for g in graders], rows, "qa")
    assert not result.refused
    write(result.files, tmp_path)
    lines = (tmp_path / "dataset.jsonl").read_text().splitlines()
    assert len(lines) == len(rows) and json.loads(lines[0])["ground_truth"] == rows[0].expected
    done = subprocess.run([str(VENV_BIN / "letta-evals"), "validate", "suite.yaml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env())
    assert done.returncode == 0 and "is valid" in done.stdout, done.stdout + done.stderr
    loaded = run_json([str(VENV_PYTHON), "-c", "import json, sys; from letta_evals.models import Sample; "
                       "rows = [Sample.model_validate_json(l) for l in open('dataset.jsonl')]; "
                       "print(json.dumps([r.input for r in rows]))"], {}, cwd=tmp_path)
    assert loaded == [item_fields(s)["input"] for s in rows]


def test_a_rubric_with_its_own_placeholders_travels_and_a_broken_one_is_refused_by_reason() -> None:
    """``{tone}`` is a row's rubric_vars value: every target carries it as a slot; a prompt the studio
    itself cannot render is refused with the reason, never a traceback."""
    from studio.core.models import RubricJudge

    grader = RubricJudge(key="toned", model="m", prompt="Q: {input}\nTone: {tone}\nA: {submission}")
    row = Sample(id="r", messages=[Turn(role="user", content="hi {x}")], completion="yo",
                 fields={"rubric_vars": {"tone": "dry"}})
    judge = portable(grader)
    assert render_python(judge.messages, item_fields(row, grader)) == studio(grader, row)
    broken = RubricJudge(key="broken", model="m", prompt="Q: {input} {submission")
    for target in ("openai", "promptfoo", "inspect", "mka1"):
        assert get_platform(target).can_export(grader).ok, target
        support = get_platform(target).can_export(broken)
        assert not support.ok and "does not render" in support.reason, (target, support.reason)
