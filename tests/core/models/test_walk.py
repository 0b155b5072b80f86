"""One walk over a grader's tree (``models.common.walk``): a composite's components and a jury's
jurors, nested, in order; every reader of the tree (dump, key checks, approvals, dry run, placement)
goes through it."""

from __future__ import annotations

from studio.core.engine.executors.placement import driver_reason
from studio.core.engine.preflight import needed_endpoints
from studio.core.models import dump_grader, parse_grader, walk

NESTED = {
    "kind": "composite", "key": "outer", "components": [
        {"grader": {"kind": "builtin", "key": "exact", "function": "exact_match"}},
        {"grader": {"kind": "composite", "key": "inner", "mode": "any", "components": [
            {"grader": {"kind": "function", "key": "backed", "source": "def grade(s):\n    return 1.0\n",
                        "model_access": True, "endpoint": "helper"}},
            {"grader": {"kind": "jury", "key": "panel", "jurors": [
                {"grader": {"kind": "binary_judge", "key": "a", "criteria": "right", "endpoint": "first"}},
                {"grader": {"kind": "binary_judge", "key": "b", "criteria": "right", "endpoint": "second"}},
            ]}},
        ]}},
    ],
}


def test_walk_visits_every_grader_once_each_before_its_parts() -> None:
    grader = parse_grader(NESTED)
    assert [g.key for g in walk(grader)] == ["outer", "exact", "inner", "backed", "panel", "a", "b"]


def test_dump_writes_every_nested_kind_and_reads_back_the_same() -> None:
    grader = parse_grader(NESTED)
    data = dump_grader(grader)
    jury = data["components"][1]["grader"]["components"][1]["grader"]
    assert jury["kind"] == "jury" and [j["grader"]["kind"] for j in jury["jurors"]] == ["binary_judge"] * 2
    assert parse_grader(data) == grader


def test_key_checks_and_approvals_read_the_same_endpoints() -> None:
    """The key check before a run and the endpoint approvals name the same endpoints (one reading,
    ``needed_endpoints``): every judge's and the model-backed function's, however deep."""
    grader = parse_grader(NESTED)
    assert list(needed_endpoints(grader)) == ["helper", "first", "second"]


def test_placement_reads_the_parts_of_a_nested_composite() -> None:
    grader = parse_grader(NESTED)
    assert driver_reason(grader) == ("a model-backed function grader reaches its endpoint through this "
                                     "machine: it runs here")
