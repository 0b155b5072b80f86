"""HUD: the studio's built-ins and composites score every tricky pair exactly as ``hud.graders`` does.

Each grader is exported to a HUD module and run by HUD's package (platform_side/hud_side.py); HUD's
own normalize, f1_score, numeric_match and combine's naming are compared directly too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conformance_samples import TEXTS, compare, pairs
from platforms_env import VENV_PYTHON, needs_module, run_json

from studio.core.graders.builtin import score_sample
from studio.core.graders.composite import unique_names
from studio.core.graders.text import first_number, normalize, token_f1
from studio.core.models import BuiltinGrader, Component, CompositeGrader, GraderDefinition, Sample
from studio.core.platforms import get_platform

SIDE = Path(__file__).parent / "platform_side" / "hud_side.py"
NAME_SETS = [["m", "m"], ["m", "m", "m-1"], ["a", "b", "a", "a-2", "b"], ["x", "x-1", "x", "x-1"], ["q"]]


def hud_graders() -> list[BuiltinGrader]:
    found = []
    for empty in (True, False):
        for n, (function, options) in enumerate([
            ("exact_match", {"normalize": True}),
            ("exact_match", {"case_sensitive": False}),
            ("exact_match", {"case_sensitive": False, "negate": True}),
            ("contains", {}),
            ("contains", {"case_sensitive": True}),
            ("contains", {"strip": False, "negate": True}),
            ("contains_any", {"values": ["paris", "\u00df", "42", "\ufb01"]}),
            ("contains_all", {"values": ["Paris", "par"], "case_sensitive": True}),
            ("numeric_match", {}),
            ("numeric_match", {"tolerance": 0.01}),
            ("token_f1", {}),
        ]):
            found.append(BuiltinGrader(key=f"b{n}-{int(empty)}", function=function,
                                       options={**options, "empty_submission_zero": empty,
                                                "empty_reference_zero": not empty if n % 2 else empty}))
    return found


def composite() -> CompositeGrader:
    parts = [("m", 0.5, hud_graders()[0]), ("m", 0.3, hud_graders()[3]), ("m-1", 0.4, hud_graders()[10]),
             ("pen", -0.25, hud_graders()[8])]
    return CompositeGrader(key="combo", components=[Component(name=n, weight=w, grader=g) for n, w, g in parts])


def ours(grader: GraderDefinition, answer: str, expected: str) -> list:
    if isinstance(grader, CompositeGrader):
        import asyncio

        from studio.core.graders.composite import CompositeScorer
        from studio.core.scoring import GradingContext

        out = asyncio.run(CompositeScorer(grader, GradingContext()).score_batch(
            [Sample(id="s", completion=answer, expected=expected)]))[0]
        return [out.score, {k: v for k, v in (out.scores or {}).items() if k != grader.metric.key}]
    return [score_sample(grader, Sample(id="s", completion=answer, expected=expected)).score]


@pytest.fixture(scope="module")
def hud_run() -> dict:
    needs_module("hud.graders")
    graders: list[GraderDefinition] = [*hud_graders(), composite()]
    platform = get_platform("hud")
    modules = {}
    for g in graders:
        assert platform.can_export(g).ok, (g.key, platform.can_export(g).reason)
        modules[g.key.replace("-", "_")] = next(iter(platform.export(g).files.values()))
    payload = {"modules": modules, "pairs": pairs(), "texts": TEXTS, "name_sets": NAME_SETS}
    return {"graders": graders, "out": run_json([str(VENV_PYTHON), str(SIDE)], payload)}


def test_every_exported_grader_scores_as_hud(hud_run: dict) -> None:
    bad = []
    for g in hud_run["graders"]:
        theirs = hud_run["out"]["rewards"][g.key.replace("-", "_")]
        mine = [ours(g, a, e) for a, e in pairs()]
        if not isinstance(g, CompositeGrader):
            theirs = [[t[0]] for t in theirs]
        bad += compare("hud", mine, theirs, [f"{g.key} {a!r} vs {e!r}" for a, e in pairs()])
    assert not bad, "\n".join(bad[:40])


def test_text_helpers_match_hud(hud_run: dict) -> None:
    out = hud_run["out"]
    bad = compare("hud", [normalize(t) for t in TEXTS], out["normalize"], [f"normalize {t!r}" for t in TEXTS])
    bad += compare("hud", [token_f1(a, e) for a, e in pairs()], out["f1"], [f"f1 {a!r} {e!r}" for a, e in pairs()])
    mine = []
    for a, e in pairs():
        want, got = first_number(e), first_number(a)
        mine.append(None if want is None else float(got is not None and got == want))
    bad += compare("hud", mine, out["numeric"], [f"numeric {a!r} {e!r}" for a, e in pairs()])
    bad += compare("hud", [unique_names(n) for n in NAME_SETS], out["names"], [repr(n) for n in NAME_SETS])
    assert not bad, "\n".join(bad[:40])


def test_thousands_separators_is_a_named_difference() -> None:
    """HUD reads ``1,000`` as 1; the studio does too unless ``thousands_separators`` is on (not exportable)."""
    sample = Sample(id="s", completion="about 1,000 people", expected="1000")
    hud_like = BuiltinGrader(key="n", function="numeric_match")
    grouped = BuiltinGrader(key="n", function="numeric_match", options={"thousands_separators": True})
    assert score_sample(hud_like, sample).score == 0.0
    assert score_sample(grouped, sample).score == 1.0
    assert not get_platform("hud").can_export(grouped).ok


def hud_demo_graders() -> list[GraderDefinition]:
    """The demo library's HUD graders (tagged hud) that HUD can run: built-ins and composites."""
    from studio.core.models.files import load

    demo = Path(__file__).resolve().parents[2] / "resources" / "demo" / "graders"
    found = [load(p) for p in sorted(demo.glob("*.grader.yaml"))]
    return [g for g in found if "hud" in g.tags and isinstance(g, BuiltinGrader | CompositeGrader)
            and get_platform("hud").can_export(g).ok]


def test_hud_graders_follow_hud_on_empty_text_and_separators() -> None:
    """A HUD grader scores as HUD's own code on every pair, empty answer and empty expected included
    (HUD: exact_match("", "") and contains("", "") are 1.0) and numbers written with separators: its
    export is HUD's comparisons alone, with no studio guard in front of them."""
    needs_module("hud.graders")
    graders = hud_demo_graders()
    assert {g.key for g in graders} >= {"qa-blended-score", "arithmetic-numeric", "qa-token-f1"}
    platform = get_platform("hud")
    modules = {}
    for g in graders:
        source = next(iter(platform.export(g).files.values()))
        assert "0.0 if not" not in source, f"{g.key}: the export guards HUD's comparison"
        modules[g.key.replace("-", "_")] = source
    cases = pairs() + [("", ""), ("1000000", "1,000,000"), ("1.000.000", "1000000"), ("1,000,000", "1000000")]
    out = run_json([str(VENV_PYTHON), str(SIDE)], {"modules": modules, "pairs": cases, "texts": [], "name_sets": []})
    bad = []
    for g in graders:
        theirs = out["rewards"][g.key.replace("-", "_")]
        mine = [ours(g, a, e) for a, e in cases]
        if not isinstance(g, CompositeGrader):
            theirs = [[t[0]] for t in theirs]
        bad += compare("hud", mine, theirs, [f"{g.key} {a!r} vs {e!r}" for a, e in cases])
    assert not bad, "\n".join(bad[:40])
