"""The plain-float lane of a worker reply ({"at": i, "f": [scores]}): checked like any entry before
one byte of it is used (no process needed; tests/hostile sends the same lies from inside a worker)."""

from __future__ import annotations

import json
import math

import pytest

from studio.core.sandbox import wire
from studio.core.sandbox.results import OK, RAISED, result_rows, to_outcome
from studio.core.store.runs import ok_row, outcome_values, scores_prefix

LIMITS = wire.Limits(output_bytes=64 * 1024, count=6)


def checked(floats: object, at: object, seen: set[int] | None = None) -> dict[int, object]:
    results: dict[int, object] = {}
    wire.check_floats(floats, at, LIMITS, set() if seen is None else seen, results)  # type: ignore[arg-type]
    return results


def test_each_float_is_the_score_of_its_sample_and_a_gap_is_nobodys() -> None:
    seen: set[int] = set()
    results: dict[int, object] = {}
    assert wire.check_floats([1.0, None, 0.25], 2, LIMITS, seen, results) == 2  # type: ignore[arg-type]
    assert results == {2: 1.0, 4: 0.25} and seen == {2, 4}


@pytest.mark.parametrize(("floats", "at"), [
    ([1.0], 6), ([1.0, 1.0], 5), ([1.0], -1), ([1.0], True), ([1.0], 1.0), ([1.0], None), ([1.0], "0"),
    ({"0": 1.0}, 0), ("1.0", 0), ([0.0] * 7, 0),
])
def test_an_array_outside_the_batch_or_of_another_shape_is_refused(floats: object, at: object) -> None:
    with pytest.raises(wire.ProtocolError, match="malformed score array"):
        checked(floats, at)


@pytest.mark.parametrize("value", [1, True, "1.0", [1.0], {"x": 1.0}, 10**400])
def test_anything_but_a_float_in_the_array_is_refused(value: object) -> None:
    with pytest.raises(wire.ProtocolError, match="something else than numbers"):
        checked([0.5, value], 0)


def test_a_sample_scored_twice_is_refused_across_lanes_and_messages() -> None:
    seen = {3}  # an entry of the same batch answered sample 3 already
    with pytest.raises(wire.ProtocolError, match="two results"):
        checked([1.0, 1.0], 2, seen)
    seen = set()
    checked([1.0], 0, seen)
    checked([None, 1.0], 0, seen)  # a gap claims nothing: sample 1 is new
    assert seen == {0, 1}
    with pytest.raises(wire.ProtocolError, match="two results"):
        checked([1.0], 0, seen)


def test_a_non_finite_float_becomes_an_ordinary_entry_for_the_platform_rules() -> None:
    # json.loads reads NaN and Infinity: the worker's own encoder never puts them in the array
    floats = json.loads('[NaN, Infinity, -Infinity, 1e308]')
    results = checked(floats, 0)
    assert results[3] == 1e308
    for i in range(3):
        entry = results[i]
        assert isinstance(entry, list) and entry[:2] == [i, OK] and not math.isfinite(entry[2])
        assert to_outcome(entry, "adaptive", "score", 256, 64).status == "invalid"


def test_rows_from_bare_floats_equal_the_rows_of_their_entries() -> None:
    batch = [(10 + i, f"s{i}", "") for i in range(4)]
    mixed: list[list[object] | float] = [1.0, [1, RAISED, "ValueError: x", "ValueError", 3], -0.0, math.nan]
    rows = result_rows(mixed, batch, 7, "adaptive", "em", 256, 64, 0.5)  # type: ignore[arg-type]
    prefix = scores_prefix("em")
    assert rows[0] == ok_row(7, 10, "s0", prefix, 1.0, 0.5)
    assert rows[2] == ok_row(7, 12, "s2", prefix, -0.0, 0.5) and rows[2][5] == '{"em": -0.0}'
    raised = to_outcome([1, RAISED, "ValueError: x", "ValueError", 3], "adaptive", "em", 256, 64, 0.5)
    assert rows[1] == outcome_values(7, 11, "s1", raised)
    assert rows[3][3] == "invalid" and rows[3][4] == 0.0


@pytest.mark.parametrize(("floats", "at", "seen"), [
    ([1.0, 0.0, 0.5], 0, set()),  # all new, all finite: the whole-array path
    ([1.0, 0.0, 0.5], 3, {0, 1, 2}),  # after another message: still new
    ([1.0, -0.0, 1e308, 1e308], 1, set()),  # finite, but their sum overflows: sample by sample
    ([1.0, math.inf, 0.5], 0, set()),  # a non-finite one: sample by sample
    ([1.0, None, 0.5], 0, set()),  # a gap: sample by sample
])
def test_a_whole_array_is_checked_as_its_samples_would_be(floats: list[object], at: int, seen: set[int]) -> None:
    """The array checked whole in C (every value a float, every index new, the sum finite) gives
    what the sample-by-sample loop gives: the same results, the same samples seen."""
    results: dict[int, object] = {}
    after = set(seen)
    count = wire.check_floats(floats, at, LIMITS, after, results)  # type: ignore[arg-type]
    expected = {at + k: (v if math.isfinite(v) else [at + k, OK, v]) for k, v in enumerate(floats)
                if isinstance(v, float)}
    assert results == expected and count == len(expected)
    assert after == seen | set(expected)
    assert all(type(results[k]) is float for k in expected if math.isfinite(floats[k - at]))  # type: ignore[arg-type]


def test_a_whole_array_claiming_a_sample_seen_before_is_refused() -> None:
    with pytest.raises(wire.ProtocolError, match="two results"):
        checked([1.0, 0.0, 1.0], 0, {2})


def test_rows_of_an_all_float_batch_equal_their_one_at_a_time_rows() -> None:
    """A batch of bare floats only (each distinct score's text made once) gives the rows each float
    gives alone: the sign of a zero kept in its text, every value its own row."""
    batch = [(20 + i, f"s{i}", "") for i in range(6)]
    floats: list[list[object] | float] = [1.0, 0.0, -0.0, 0.25, 1.0, 1e-300]
    rows = result_rows(floats, batch, 7, "adaptive", "em", 256, 64, 0.5)
    prefix = scores_prefix("em")
    assert rows == [ok_row(7, 20 + i, f"s{i}", prefix, v, 0.5) for i, v in enumerate(floats)]  # type: ignore[arg-type]
    assert [r[5] for r in rows[1:3]] == ['{"em": 0.0}', '{"em": -0.0}']
