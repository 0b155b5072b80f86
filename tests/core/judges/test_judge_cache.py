"""The response cache: an unchanged re-run makes no calls; --no-cache asks again; edits miss."""

from __future__ import annotations

from judge_helpers import qa

from studio.core.models import BinaryJudge, CriteriaJudge, Criterion

SAMPLES = [
    qa(str(i), "Capital of France?", c, "Paris") for i, c in enumerate(["Paris", "Lyon", "Nice"])
]
JUDGE = BinaryJudge(key="b", criteria="Correct capital.", endpoint="fake")


def calls(server) -> int:
    return server.requests["/v1/chat/completions"]


def test_rerun_is_served_from_the_cache(endpoint, fake_judge, score) -> None:
    first = score(JUDGE, SAMPLES)
    made = calls(fake_judge)
    assert made == 3 and not any(o.cached for o in first)
    second = score(JUDGE, SAMPLES)
    assert calls(fake_judge) == made
    assert all(o.cached for o in second)
    assert [o.score for o in second] == [o.score for o in first]
    assert all(o.prompt_tokens == 0 for o in second)  # nothing spent this time


def test_no_cache_calls_again(endpoint, fake_judge, score) -> None:
    score(JUDGE, SAMPLES)
    again = score(JUDGE, SAMPLES, use_cache=False)
    assert calls(fake_judge) == 6
    assert not any(o.cached for o in again)


def test_a_changed_judge_or_model_misses(endpoint, fake_judge, score) -> None:
    score(JUDGE, SAMPLES)
    score(JUDGE.model_copy(update={"criteria": "The answer names the right city."}), SAMPLES)
    assert calls(fake_judge) == 6
    score(JUDGE.model_copy(update={"model": "another-model"}), SAMPLES)
    assert calls(fake_judge) == 9


def test_multi_call_judges_are_cached_per_call(endpoint, fake_judge, score) -> None:
    judge = CriteriaJudge(
        key="c", endpoint="fake", criteria=[Criterion(text="'Paris'"), Criterion(text="'France'")]
    )
    score(judge, SAMPLES)
    made = calls(fake_judge)
    assert made == 6
    assert all(o.cached for o in score(judge, SAMPLES))
    assert calls(fake_judge) == made


def test_two_servers_with_one_model_name_do_not_share_answers(library, endpoint, fake_judge, score) -> None:  # type: ignore[no-untyped-def]
    from judge_helpers import add_endpoint

    from studio.core.demo.fake_server import FakeJudgeServer

    score(JUDGE, SAMPLES)
    with FakeJudgeServer() as other:
        add_endpoint(library, other, name="other")  # same model name "fake-judge", another server
        again = score(JUDGE.model_copy(update={"endpoint": "other"}), SAMPLES)
        assert other.requests["/v1/chat/completions"] == 3
    assert not any(o.cached for o in again)


def test_the_cache_keeps_only_its_newest_entries(library) -> None:  # type: ignore[no-untyped-def]
    from studio.core.judges.http.cache import ResponseCache

    cache = ResponseCache(library.engine, flush_every=1, max_entries=5)
    try:
        for i in range(8):
            cache.put(f"k{i}", {"n": i})
            cache.flush()
        assert [cache.get(f"k{i}") for i in range(8)] == [None, None, None] + [{"n": i} for i in range(3, 8)]
    finally:
        cache.close()
