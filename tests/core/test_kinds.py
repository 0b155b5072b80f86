"""The kind registry: every kind the definitions know declares itself once, and the palette's
variables are the ones the judges really set."""

from __future__ import annotations

import pytest

from studio.core.graders.registry import factory_for, kind_labels, kinds
from studio.core.judges.kinds import prompt_judges
from studio.core.judges.variables import VARIABLE_DOCS, sample_variables
from studio.core.kinds import FAMILIES
from studio.core.models import BinaryJudge, Sample, Turn, parse_grader


def test_every_kind_is_declared_once_in_menu_order() -> None:
    order = [(FAMILIES.index(k.family), k.rank) for k in kinds().values()]
    assert order == sorted(order) and len(set(order)) == len(order)
    assert list(kinds())[:2] == ["function", "javascript"]
    assert kind_labels()["binary_judge"] == "Binary judge"
    for name, kind in kinds().items():
        assert callable(factory_for(name)), name
        definition = parse_grader({"kind": name, "key": f"starter-{name}", **kind.starter})
        assert definition.kind == name and type(definition) is kind.model
        assert kind.editor == ("judge" if kind.is_judge else kind.editor)
        assert kind.editor in {"function", "judge", "form", "yaml"}, name


def test_prompt_judges_are_the_kinds_with_a_preview() -> None:
    judges = {name for name, kind in kinds().items() if kind.is_judge}
    assert judges == set(prompt_judges()) == {
        "binary_judge", "range_judge", "rubric_judge", "criteria_judge", "letter_judge", "prebuilt", "pairwise_judge"}
    for name in judges:
        system, user = kinds()[name].default_templates("faithfulness")
        assert (system and user) or name in ("rubric_judge", "letter_judge")  # one format-string prompt


def test_the_palette_documents_every_sample_variable() -> None:
    grader = BinaryJudge(key="b", criteria="correct")
    sample = Sample(id="s", messages=[Turn(role="user", content="hi")], completion="hello")
    produced = set(sample_variables(grader, sample))
    documented = {name.split(".")[0] for name in VARIABLE_DOCS}
    judge_owned = {"criteria", "output_schema"}  # each kind documents these in KIND.variables
    assert produced - judge_owned - {"template_variables"} == documented
    assert "context_turns_without_last_user" in VARIABLE_DOCS


def test_a_function_grader_is_found_without_importing_the_judges() -> None:
    """``get_kind`` reads a kind from the module named after it: a run of a function grader starts
    without the judge kinds and the HTTP client (a kind elsewhere still comes from the full scan)."""
    import subprocess
    import sys

    code = ("import sys; from studio.core.graders.registry import factory_for, get_kind; "
            "factory_for('function'); factory_for('builtin'); "
            "print(sorted(m for m in sys.modules if m.startswith(('httpx', 'aiohttp', 'studio.core.judges.kinds.')))); "
            "print(get_kind('external_endpoint').kind)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "external_endpoint"


def test_each_platform_does_with_each_kind_what_the_kind_declares() -> None:
    """A kind that does not name a platform (or is refused by it) is never exported there; a kind a
    platform carries either exports or is refused for a reason of its definition, never a crash."""
    from studio.core.platforms.registry import platforms

    for name, kind in kinds().items():
        definition = parse_grader({"kind": name, "key": f"starter-{name}", "model": "gpt-4o-mini", **kind.starter}
                                  if kind.is_judge else {"kind": name, "key": f"starter-{name}", **kind.starter})
        for target, platform in platforms().items():
            carry = kind.carried_by(target)
            support = platform.can_export(definition)
            if carry is None or not carry.exports:
                assert not support.ok and support.reason, (name, target)
                if carry is None and kind.elsewhere is None:
                    assert name.replace("_", " ") in support.reason or name in support.reason, (name, target)
            elif support.ok:
                assert platform.export(definition).files, (name, target)


def test_a_kind_table_finds_a_row_by_the_kind_and_refuses_two_rows_for_one_kind() -> None:
    from studio.core.kinds import ByKind
    from studio.core.models import BinaryJudge, RangeJudge, parse_grader

    table: ByKind[str] = ByKind("test")

    @table.on(BinaryJudge, RangeJudge)
    def judged(grader: BinaryJudge | RangeJudge) -> str:
        return grader.key

    binary = parse_grader({"kind": "binary_judge", "key": "b", "criteria": "c"})
    row = table.of(binary)
    assert row is not None and row(binary) == "b"
    assert table.of(parse_grader({"kind": "builtin", "key": "e", "function": "exact_match"})) is None
    assert table.kinds() == ["binary_judge", "range_judge"]
    with pytest.raises(TypeError, match="kind 'binary_judge' has two rows"):
        table.on(BinaryJudge)(lambda grader: "again")


def test_every_platform_row_names_a_kind_the_kind_lets_the_platform_carry() -> None:
    """A platform's table has rows only for kinds whose descriptor lets that platform export them
    (a row for a refused kind would be dead code, a sign the two disagree)."""
    import importlib

    from studio.core.kinds import ByKind, get_kind
    from studio.core.platforms.registry import platforms

    for name in platforms():
        module = importlib.import_module(f"studio.core.platforms.{name}")
        for table in (v for v in vars(module).values() if isinstance(v, ByKind)):
            for kind in table.kinds():
                carry = get_kind(kind).carried_by(name)
                assert carry is not None and carry.exports, (name, table.what, kind)
