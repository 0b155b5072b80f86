"""The kind registry: every kind the definitions know declares itself once, and the palette's
variables are the ones the judges really set."""

from __future__ import annotations

from studio.core.graders.registry import factory_for, kind_labels, kinds
from studio.core.judges.kinds import prompt_judges
from studio.core.judges.variables import VARIABLE_DOCS, sample_variables
from studio.core.models import GRADER_KINDS, BinaryJudge, Sample, Turn, parse_grader


def test_every_kind_is_declared_once_in_menu_order() -> None:
    assert tuple(kinds()) == GRADER_KINDS
    assert kind_labels()["binary_judge"] == "Binary judge"
    for name, kind in kinds().items():
        assert callable(factory_for(name)), name
        definition = parse_grader({"kind": name, "key": f"starter-{name}", **kind.starter})
        assert definition.kind == name
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
