"""The judge-cache repository on its own: store, replace, trim to the newest, clear (the keying and
batching above it are tested through real judge runs in tests/core/judges/test_judge_cache.py)."""

from __future__ import annotations

from studio.core.store import Library


def test_answers_are_stored_replaced_and_read_back(library: Library) -> None:
    repo = library.judge_cache
    reader = repo.reader()
    try:
        assert reader.response("k") is None
        repo.write({"k": '{"a": 1}', "j": '{"b": 2}'}, max_entries=10)
        assert reader.response("k") == '{"a": 1}'
        repo.write({"k": '{"a": 3}'}, max_entries=10)
        assert (reader.response("k"), reader.response("j")) == ('{"a": 3}', '{"b": 2}')
    finally:
        reader.close()


def test_the_oldest_answers_go_first_and_clear_counts_what_it_removed(library: Library) -> None:
    repo = library.judge_cache
    for i in range(6):
        repo.write({f"k{i}": str(i)}, max_entries=4)
    reader = repo.reader()
    try:
        assert [reader.response(f"k{i}") for i in range(6)] == [None, None, "2", "3", "4", "5"]
        assert repo.clear() == 4
        assert reader.response("k5") is None
    finally:
        reader.close()
