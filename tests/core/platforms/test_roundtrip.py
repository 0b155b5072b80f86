"""Every grader a target can express exports, imports back and compares equal."""

from __future__ import annotations

from pathlib import Path

import pytest
from platform_graders import EXPRESSIBLE, every_kind

from studio.core.models import GraderDefinition, dump_grader
from studio.core.models.files import load as load_definition
from studio.core.platforms import (
    ExportResult,
    Platform,
    PlatformError,
    detect_platform,
    get_platform,
    platforms,
)
from studio.core.platforms._roundtrip import measure

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "resources" / "demo" / "graders"
# Inspect imports the built-in scorers a task file calls (tests/core/platforms/test_inspect_import.py)
# and, like HUD, reads back a module the studio exported, unchanged, from the definition it carries
IMPORTERS = [p for p in platforms().values() if p.imports]
# the file of an export that holds the whole definition, by preference
PRIMARY = (".task.json", ".adaptive.json", ".openai.json", "suite.yaml", "promptfooconfig.yaml", "_hud.py",
           "_inspect.py")


def write(result: ExportResult, root: Path) -> Path:
    for rel, text in result.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    for suffix in PRIMARY:
        for rel in result.files:
            if rel.endswith(suffix):
                return root / rel
    raise AssertionError(f"no importable file in {sorted(result.files)}")


def round_trip(platform: Platform, grader: GraderDefinition, root: Path) -> tuple[ExportResult, GraderDefinition]:
    result = platform.export(grader)
    path = write(result, root)
    assert detect_platform(path) is platform
    imported = platform.import_(path)
    assert [g.key for g in imported.graders] == [grader.key], imported.warnings
    return result, imported.graders[0]


def check(platform: Platform, grader: GraderDefinition, tmp_path: Path) -> None:
    first, back = round_trip(platform, grader, tmp_path / "a")
    if not measure(platform, [grader], first):  # nothing named as not carried: it comes back equal
        assert dump_grader(back) == dump_grader(grader)
    else:  # lossy: what came back exports to exactly the same files (a fixed point)
        again = platform.export(back)
        assert again.files == first.files


@pytest.mark.parametrize("platform", IMPORTERS, ids=lambda p: p.name)
def test_every_kind_round_trips(platform: Platform, tmp_path: Path) -> None:
    expressible = set()
    for grader in every_kind():
        if not platform.can_export(grader).ok:
            continue
        expressible.add(grader.key)
        check(platform, grader, tmp_path / grader.key)
    assert EXPRESSIBLE[platform.name] <= expressible


@pytest.mark.parametrize("platform", IMPORTERS, ids=lambda p: p.name)
def test_fixtures_export_without_losses(platform: Platform) -> None:
    """The fixtures carry only what each target holds: their round trips are exact equality."""
    lossy = {}
    for grader in every_kind():
        if grader.key in EXPRESSIBLE[platform.name] and platform.can_export(grader).ok:
            warnings = platform.export(grader).warnings
            if warnings:
                lossy[grader.key] = warnings
    expected_losses = {  # name/description have no OpenAI field; examples no OpenAI/promptfoo field;
        # the empty-text rules differ: Letta zeroes both, OpenAI compares both, promptfoo fails an
        # empty contains/regex value only (the shared contains fixtures follow OpenAI); promptfoo's
        # llm-rubric reads one sampled SCORE where the range judge weighs the score's logprobs (its
        # steps are not given, so the studio's prompt cannot travel); a judge's messages travel exactly
        # but OpenAI reads the answer its own way and promptfoo has no NA verdict (issue 22)
        "openai": {"fn-mka1", "judge-rubric", "judge-binary", "judge-plain", "contains"},
        # (and its pre-built RAG assertions use promptfoo's own prompts)
        "promptfoo": {"contains", "regex", "contains-case", "blend", "judge-range", "judge-plain",
                      "rag-answer", "rag-faithfulness"},
        # HUD's LLMJudgeGrader asks with its own prompt; Inspect runs without a description or timeout
        # (the module still carries them, so the studio reads the grader back whole)
        "hud": {"judge-criteria"},
        "inspect": {"fn-adaptive", "fn-mka1"},
    }
    assert set(lossy) == expected_losses.get(platform.name, set()), lossy


@pytest.mark.parametrize("platform", IMPORTERS, ids=lambda p: p.name)
def test_demo_graders_round_trip(platform: Platform, tmp_path: Path) -> None:
    demo = [load_definition(p) for p in sorted(DEMO.glob("*.grader.yaml"))]
    assert demo
    for grader in demo:
        if platform.can_export(grader).ok:
            check(platform, grader, tmp_path / grader.key)


@pytest.mark.parametrize("platform", list(platforms().values()), ids=lambda p: p.name)
def test_refusals_say_why(platform: Platform) -> None:
    for grader in every_kind():
        support = platform.can_export(grader)
        if not support.ok:
            assert len(support.reason) > 15
            with pytest.raises(PlatformError, match=grader.key):
                platform.export(grader)


@pytest.mark.parametrize("platform", list(platforms().values()), ids=lambda p: p.name)
def test_exports_hold_no_keys_or_local_paths(platform: Platform) -> None:
    from studio.core.models import BashGrader, ExternalEndpoint, RubricJudge

    secrets = [
        ExternalEndpoint(key="remote", url="https://x.example.com/score", api_key_env="SECRET_ENV_NAME"),
        BashGrader(key="tests-pass", command="pytest -q", cwd="/home/alice/project"),
        RubricJudge(key="judge-rubric", endpoint="my-local-llama", prompt="Rate {submission}"),
    ]
    for grader in secrets:
        if platform.can_export(grader).ok:
            result = platform.export(grader)
            text = "".join(result.files.values())
            assert "/home/alice" not in text and "SECRET_ENV_NAME" not in text
            assert result.warnings  # what was dropped is said


def test_all_exports_gather_into_one_suite_or_config() -> None:
    graders = every_kind()
    for name, main in (("letta", "suite.yaml"), ("promptfoo", "promptfooconfig.yaml")):
        result = get_platform(name).export_many(graders)
        assert main in result.files
        assert set(result.refused) == {g.key for g in graders} - EXPRESSIBLE[name] - {
            g.key for g in graders if get_platform(name).can_export(g).ok
        }


def test_unknown_files_are_not_guessed(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(PlatformError, match="--from"):
        detect_platform(path)
