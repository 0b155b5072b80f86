"""A refusal that advises another target is true: that target accepts the grader (issue 12)."""

from __future__ import annotations

from pathlib import Path

from platform_graders import every_kind

from studio.core.models.files import load as load_definition
from studio.core.platforms import platforms

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "graders"


def test_every_advised_target_accepts_the_grader() -> None:
    graders = every_kind() + [load_definition(p) for p in sorted(DEMO.glob("*.grader.yaml"))]
    names = {p.label: p for p in platforms().values()} | {"MKA1": platforms()["mka1"], "promptfoo": platforms()["promptfoo"],
                                                           "OpenAI": platforms()["openai"], "Letta": platforms()["letta"]}
    checked = 0
    for grader in graders:
        for platform in platforms().values():
            support = platform.can_export(grader)
            if support.ok or "export it to" not in support.reason:
                continue
            advice = support.reason.split("export it to", 1)[1]
            advised = [p for label, p in names.items() if label in advice and p is not platform]
            assert advised, (platform.name, grader.key, support.reason)
            for target in advised:
                assert target.can_export(grader).ok, (platform.name, grader.key, support.reason, target.name)
                checked += 1
    assert checked
