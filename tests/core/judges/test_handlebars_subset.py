"""Our Handlebars renderer (judges/handlebars.py) gives pybars' output, byte for byte.

Checked on every built-in judge prompt and every demo grader's template, over every demo sample
and over generated values (braces, HTML characters, newlines, unicode, empty, None, lists, dicts),
and on generated templates of the subset; a template or value outside the subset goes to pybars.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import studio.core.judges.kinds as kinds_package
from studio.core.datasets.readers import read_dataset
from studio.core.judges import templates
from studio.core.judges.handlebars import Unsupported, compile_subset, render_subset
from studio.core.judges.http.errors import JudgeError
from studio.core.judges.templates import StrictVars, dialect_of, render_handlebars, render_pybars
from studio.core.judges.variables import sample_variables
from studio.core.models import BinaryJudge
from studio.core.models import files as definition_files

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "resources" / "demo"


def builtin_templates() -> dict[str, str]:
    """Every Handlebars prompt shipped: module constants of the judge kinds and templates.py, and
    the demo graders' templates."""
    found: dict[str, str] = {}
    modules = [templates] + [
        importlib.import_module(f"{kinds_package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(kinds_package.__path__)
    ]
    for module in modules:
        for name, value in vars(module).items():
            if name.startswith("__"):
                continue
            if isinstance(value, str) and "{{" in value and dialect_of(value) == "handlebars":
                found[f"{module.__name__}.{name}"] = value
    for path in sorted((DEMO / "graders").glob("*.grader.yaml")):
        definition = definition_files.load(path)
        for field in ("system_template", "user_template", "template"):
            value = getattr(definition, field, None)
            if isinstance(value, str) and "{{" in value and dialect_of(value) == "handlebars":
                found[f"{path.name}:{field}"] = value
    return found


TEMPLATES = builtin_templates()
SAMPLES = [sample for path in sorted((DEMO / "datasets").glob("*.jsonl"))
           for sample in read_dataset(path).samples]
JUDGE = BinaryJudge(key="b", criteria="c", template_variables={"product": "Northwind <Cloud>"})
_NAMES = re.compile(r"\{\{[{#/^]?\s*(?:if |unless |each )?\s*@?([A-Za-z_][\w-]*)")


def roots(template: str) -> set[str]:
    return {name for name in _NAMES.findall(template)
            if name not in {"if", "unless", "each", "else", "index", "first", "last", "key",
                            "this"}}


def outcome(render: Any, template: str, variables: dict[str, Any]) -> tuple[str, str]:
    try:
        return ("text", render(template, variables))
    except JudgeError as exc:
        return (type(exc).__name__, str(exc))


def check(template: str, variables: dict[str, Any]) -> None:
    assert outcome(render_handlebars, template, variables) == outcome(
        render_pybars, template, variables
    )


TRICKY = ["", "plain", "{{x}}", "{{{x}}}", "}}{{", "<b>&amp;'\"`=</b>", "a\nb\r\n\n", "  ",
          "ünïcödé ✓ 中文 🙂", "\x00\t", None, True, False, 0, 3.5, ["a", "<b>"], [],
          {"k": "<v>"}, {}]


def test_the_built_in_templates_are_all_in_the_subset() -> None:
    assert len(TEMPLATES) >= 15, sorted(TEMPLATES)
    outside = [name for name, text in TEMPLATES.items() if compile_subset(text) is None]
    assert outside == []


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_built_in_template_over_every_demo_sample(name: str) -> None:
    template = TEMPLATES[name]
    nodes = compile_subset(template)
    assert nodes is not None
    for n, sample in enumerate(SAMPLES):
        variables = sample_variables(JUDGE, sample)
        for key in sorted(roots(template) - set(variables)):
            variables[key] = TRICKY[(n + len(key)) % len(TRICKY)]
        # the demo data stays in the subset: our renderer answers, not the fallback
        ours = render_subset(nodes, StrictVars(variables))
        assert ours == render_pybars(template, variables), (name, sample.id)


values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(TRICKY[:10])
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
    | st.text(alphabet="{}<>&\"'`= \n\r\t@#/!~^", max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["role", "content", "expected", "x", "length"]), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_built_in_templates_over_generated_values(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(TEMPLATES)))
    template = TEMPLATES[name]
    variables: dict[str, Any] = {key: data.draw(values, label=key) for key in roots(template)}
    variables["metadata"] = data.draw(st.one_of(
        st.none(), st.dictionaries(st.sampled_from(["expected", "other"]), values, max_size=2)))
    variables["template_variables"] = {"product": data.draw(values)}
    variables["context_turns_without_last_user"] = data.draw(st.one_of(
        values, st.lists(st.fixed_dictionaries({"role": values, "content": values}), max_size=3)))
    if data.draw(st.booleans()):  # now and then a variable is missing: same error both ways
        variables.pop(data.draw(st.sampled_from(sorted(variables))))
    check(template, variables)


#: pieces of templates, inside and outside the subset (the latter must fall back to pybars)
PIECES = [
    "text", " ", "\n", "\r\n", "{", "}", "}}", "<&>", "{{a}}", "{{{a}}}", "{{ a }}", "{{a.b}}",
    "{{a/b}}", "{{this}}", "{{this.b}}", "{{@index}}", "{{@first}}", "{{@last}}", "{{@key}}",
    "{{@root.a}}", "{{missing}}", "{{! a comment }}", "{{!-- x --}}", "{{~a~}}", "{{#if a}}",
    "{{#if a.b}}", "{{#unless a}}", "{{#each a}}", "{{#each b}}", "{{else}}", "{{/if}}",
    "{{/unless}}", "{{/each}}", "  {{#if a}}  \n", "\n{{/if}}\n", "{{#if true}}", "{{#if 0}}",
    "{{&a}}", "{{json a}}", "{{#with a}}", "{{> p}}", "{{a.length}}", "{{a.0}}", "{{else.x}}",
    "{{eq}}", "{{[a]}}", "{{{{raw}}}}", "\r", "{{ else }}", "\t{{/each}} \r\n", "{{#each a }}",
    "{{@a}}", "{{a-b}}", "{{#if\na}}", "{{/ if}}", "{{^}}", "{{^if a}}", "{{{ a.b }}}", "{{#if b}}",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=12), a=values, b=values)
def test_generated_templates(pieces: list[str], a: Any, b: Any) -> None:
    check("".join(pieces), {"a": a, "b": b})


def test_what_is_outside_the_subset_goes_to_pybars() -> None:
    for template in ["{{json a}}", "{{#with a}}{{b}}{{/with}}", "{{> p}}", "{{&a}}",
                     "{{#if true}}x{{/if}}", "{{[a]}}"]:
        assert compile_subset(template) is None, template
    nodes = compile_subset("{{a.0}}")
    assert nodes is not None
    with pytest.raises(Unsupported):  # a list walked by a path: pybars indexes it
        render_subset(nodes, StrictVars({"a": ["x"]}))
    assert render_handlebars("{{a.0}}", {"a": ["x"]}) == "x"


def test_the_first_render_does_not_import_pybars() -> None:
    import subprocess
    import sys

    code = ("import sys; from studio.core.judges.templates import render_handlebars, "
            "CONVERSATION_BLOCK as t; render_handlebars(t, {'context_str': 'c', 'completion': 'a',"
            " 'metadata': {}}); print('pybars' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


_PIECES = ["{{#if a}}", "{{/if}}", "{{! note }}", "{{else}}", "{{#each xs}}", "{{/each}}", "{{~a~}}", "{{a}}",
           " ", "\t", "\n", "\r\n", "x", "~", "{{else if b}}"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_the_whitespace_pass_gives_pybars_text(pieces: list[str]) -> None:
    """Our whitespace pass (also the one pybars' compiler is given) and pybars' own give one text."""
    from pybars import Compiler

    from studio.core.judges.handlebars import whitespace_control

    source = "".join(pieces)
    assert whitespace_control(source) == Compiler.whitespace_control(Compiler(), source)


def test_a_line_of_block_tags_does_not_backtrack_for_ever() -> None:
    """pybars' own pattern takes minutes to give up on 30 tags and no newline; ours is linear."""
    from studio.core.judges.handlebars import whitespace_control

    line = "{{#if a}} " * 200
    assert whitespace_control("\n" + line + "x") == "\n" + line + "x"
    assert templates._compiler().whitespace_control is whitespace_control
    assert render_handlebars("\n" + "{{#if a}} " * 40 + "y" + "{{/if}}" * 40, {"a": True}) == "\n" + " " * 40 + "y"
