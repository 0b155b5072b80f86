"""What a run names, as the store answers it (store/targets.py): every way of starting a run (the
run request's check, the runner's own start, the dry run) says the same of a name that names
nothing it can run."""

from __future__ import annotations

import pytest

from studio.core.engine.dry_run import dry_run
from studio.core.engine.request import RunRequest
from studio.core.engine.runner import start_run
from studio.core.models import BuiltinGrader, Sample
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library, NotFound
from studio.core.store.suites import InvalidSuite
from studio.core.store.targets import targets


@pytest.fixture
def lib(library: Library) -> Library:
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.graders.create(BuiltinGrader(key="contains", function="contains"))
    library.suites.create(SuiteDefinition(key="geo", overall="mean",
                                          graders=[SuiteMember(grader="exact"), SuiteMember(grader="contains")]))
    library.datasets.create("d", [Sample(id="s0", messages=[{"role": "user", "content": "q"},
                                                             {"role": "assistant", "content": "a"}],
                                         expected="a")])
    return library


def test_a_name_is_a_grader_or_a_suites_members(lib: Library) -> None:
    assert targets(lib, "exact") == [("exact", 1)]
    assert targets(lib, "geo") == [("exact", 1), ("contains", 1)]
    assert targets(lib, None, graders=["contains", " exact "]) == [("contains", 1), ("exact", 1)]


def test_a_trashed_suite_is_said_to_be_in_the_trash_however_the_run_starts(lib: Library) -> None:
    """The runner's own start used to say "no grader or suite with key 'geo'" where ``run`` said the
    suite is in the trash: both now read the store's one answer."""
    lib.suites.delete("geo")
    said = "suite 'geo' is in the trash; restore it first"
    with pytest.raises(InvalidSuite, match=said):
        RunRequest.asked(grader="geo", dataset="d").check(lib)
    with pytest.raises(InvalidSuite, match=said):
        start_run(lib, "geo", "d")
    with pytest.raises(InvalidSuite, match=said):
        dry_run(lib, "geo", "d")


def test_an_unknown_name_offers_the_near_keys_of_both(lib: Library) -> None:
    with pytest.raises(NotFound, match="no grader or suite with key 'ge'.*geo"):
        start_run(lib, "ge", "d")
    with pytest.raises(NotFound, match="no grader or suite with key 'exac'.*exact"):
        targets(lib, "exac")
