"""Export, import, export again, on every demo grader and every target, with and without a dataset.

What ``export`` writes, ``import`` reads back: either the same grader, or the export names each field
that did not come back (the CLI exits 3 with that list). Whatever came back exports and imports again
unchanged: a second trip never loses more than the first one said.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from studio.core.demo import build_demo
from studio.core.models import GraderDefinition, dump_grader
from studio.core.platforms._eval import TARGETS, export_eval
from studio.core.platforms._fields import export_endpoints
from studio.core.platforms._roundtrip import WHOLE, _differing, measure, read_back
from studio.core.platforms.registry import get_platform, platforms
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[GraderDefinition], Library]]:
    library = Library.open(tmp_path_factory.mktemp("demo") / "library.sqlite")
    build_demo(library)
    endpoints = {e.name: e for e in EndpointRepository.of(library).list()}
    with export_endpoints(endpoints):  # judges name their endpoint's model id, as the CLI's export does
        yield [r.definition for r in library.graders.list()], library
    library.close()


def _trip(target: str, grader: GraderDefinition, samples: list | None) -> tuple[object, dict[str, list[str]]]:
    platform = get_platform(target)
    result = export_eval(target, [(grader.key, grader)], samples, "qa") if samples else platform.export(grader)
    back = read_back(platform, result, [grader])
    return back.get(grader.key), measure(platform, [grader], result)


@pytest.mark.parametrize("with_dataset", [False, True], ids=["grader", "eval"])
@pytest.mark.parametrize("target", sorted(platforms()))
def test_export_import_export_loses_only_what_it_names(demo, target: str, with_dataset: bool) -> None:  # type: ignore[no-untyped-def]
    graders, library = demo
    if with_dataset and target not in TARGETS:
        pytest.skip(f"{target} writes no eval with a dataset")  # its export --dataset refuses, by name
    samples = library.datasets.samples("qa") if with_dataset else None
    platform = get_platform(target)
    exported = 0
    for grader in graders:
        if not platform.can_export(grader).ok:
            continue
        exported += 1
        again, lost = _trip(target, grader, samples)
        if again is None:  # nothing read back: the whole grader is named as not carried
            assert lost == {grader.key: [WHOLE]}, (target, grader.key)
            continue
        # the list names exactly the fields that differ
        assert lost.get(grader.key, []) == _differing(dump_grader(grader), dump_grader(again)), (target, grader.key)
        # and what came back travels again without a further loss
        if platform.can_export(again).ok:
            twice, lost_twice = _trip(target, again, samples)
            assert lost_twice == {}, (target, grader.key, lost_twice)
            assert twice == again
    assert exported, f"no demo grader exports to {target}"


def test_eval_import_of_an_openai_export_with_its_dataset(demo) -> None:  # type: ignore[no-untyped-def]
    """The eval ``export --to openai --dataset`` writes is recognised and read back (its criteria)."""
    graders, library = demo
    judge = next(g for g in graders if g.key == "qa-correctness-judge")
    again, lost = _trip("openai", judge, library.datasets.samples("qa"))
    assert again is not None and again.kind == "binary_judge"
    assert {"name", "description", "tags", "endpoint"} <= set(lost[judge.key])
