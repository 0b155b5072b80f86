"""Grader files are imported whole or refused with the line they break on, and ``import --key`` means
the same on every platform (issue 43).

Every file each platform's export writes is cut short in the middle of a line and imported again:
JSON and Python do not parse (the line is named, with or without ``--from``), and YAML, which often
still parses when cut, is refused for ending in the middle of a line. A key names the one grader of a
file, HUD modules and Inspect files included; a file of several is refused with a sentence.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from studio.core.models import parse_grader
from studio.core.platforms import PlatformError, detect_platform, get_platform, platforms
from studio.core.platforms._base import KeyRefused

GRADERS = [
    parse_grader({"kind": "builtin", "key": "contains-b", "function": "contains", "name": "Contains B"}),
    parse_grader({"kind": "function", "key": "fn-c", "source": "async def grade(thread):\n    return 1.0\n"}),
    parse_grader({"kind": "binary_judge", "key": "judge-d", "criteria": "Is the answer polite and correct?",
                  "model": "gpt-4o-mini"}),
]
IMPORTING = [name for name, platform in platforms().items() if platform.imports]
LINE = re.compile(r":(\d+): ")


def exported(name: str, folder: Path) -> list[Path]:
    """The files ``name``'s export writes for ``GRADERS`` that import back whole on their own."""
    platform = get_platform(name)
    paths = []
    for relative, text in platform.export_many(GRADERS).files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        try:
            if platform.import_file(path).graders:
                paths.append(path)
        except PlatformError:  # a helper the export writes beside the graders (a provider, a runtime)
            continue
    return paths


def mid_line(text: str, fraction: float) -> int:
    """An offset near ``fraction`` of ``text`` that is not at the start of a line."""
    cut = max(1, int(len(text) * fraction))
    while cut < len(text) - 1 and (text[cut - 1] in "\r\n" or not text[cut - 1].strip()):
        cut += 1
    return cut


@pytest.mark.parametrize("name", IMPORTING)
def test_a_file_cut_short_is_refused_naming_a_line(tmp_path: Path, name: str) -> None:
    files = exported(name, tmp_path / "whole")
    assert files, f"{name} exported nothing that imports back"
    platform = get_platform(name)
    for path in files:
        text = path.read_text(encoding="utf-8")
        for fraction in (0.25, 0.5, 0.75, 0.95):
            cut = path.with_name(f"cut-{int(fraction * 100)}-{path.name}")
            cut.write_text(text[: mid_line(text, fraction)], encoding="utf-8")
            with pytest.raises(PlatformError) as caught:
                platform.import_file(cut)
            said = str(caught.value)
            named = LINE.search(said)
            if path.suffix != ".py":  # JSON and YAML name the line; a Python file may be refused as
                # not the module exported (HUD) or as holding no scorer (Inspect)
                assert named and 1 <= int(named.group(1)) <= text.count("\n") + 1, said
            # without --from: the platform is detected and refuses, or the syntax error itself is said
            try:
                found = detect_platform(cut)
            except PlatformError as exc:
                assert LINE.search(str(exc)) or "--from" in str(exc), exc  # or which platform is unsure
            else:
                with pytest.raises(PlatformError):
                    found.import_file(cut)


@pytest.mark.parametrize(("name", "text", "line", "said"), [
    ("g.json", '{"type": "string_check",\n "name": "x",\n "input": "{{sample.output_text}}"\n "operation": "eq"}\n',
     4, "not valid JSON (Expecting ',' delimiter at column 2)"),
    ("g.yaml", "graders:\n  a:\n    kind: tool\n   function: contains\n", 4, "not valid YAML"),
    ("g.py", "from inspect_ai.scorer import includes\n\ndef task(:\n    return includes()\n", 3, "not valid Python"),
])
def test_a_syntax_error_is_named_by_its_line_without_from(tmp_path: Path, name: str, text: str, line: int,
                                                          said: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PlatformError) as caught:
        detect_platform(path).import_file(path)
    assert f"{name}:{line}: " in str(caught.value) and said in str(caught.value), caught.value


def test_a_yaml_config_ending_mid_line_is_refused_and_with_a_line_break_imported(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    text = "name: s\ndataset: d.jsonl\ntarget:\n  kind: letta_code\ngraders:\n  a:\n    kind: tool\n    function: contains"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PlatformError) as caught:
        get_platform("letta").import_file(path)
    assert "suite.yaml:8: the file ends in the middle of a line" in str(caught.value)
    path.write_text(text + "\n", encoding="utf-8")
    assert [g.key for g in get_platform("letta").import_file(path).graders] == ["a"]


def test_a_non_utf8_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "g.openai.json"
    path.write_bytes(b'{"type": "string_check",\n "name": "caf\xe9"}\n')
    with pytest.raises(PlatformError, match=r"g.openai.json:2: not UTF-8 text \(byte 0xe9\)"):
        get_platform("openai").import_file(path)


# ---- import --key ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", IMPORTING)
def test_a_key_names_the_one_grader_of_a_file_on_every_platform(tmp_path: Path, name: str) -> None:
    platform = get_platform(name)
    singles = []
    for grader in GRADERS:
        if platform.can_export(grader).ok:
            folder = tmp_path / grader.key
            for relative, text in platform.export(grader).files.items():
                (folder / relative).parent.mkdir(parents=True, exist_ok=True)
                (folder / relative).write_text(text, encoding="utf-8")
            singles += [p for p in folder.rglob("*") if p.is_file() and _imports_one(platform, p)]
    assert singles, f"{name}: no single-grader file"
    for path in singles:
        [plain] = platform.import_file(path).graders
        [keyed] = platform.import_file(path, key="my-key").graders
        assert keyed.key == "my-key", (name, path.name)
        assert keyed.model_copy(update={"key": plain.key}) == plain  # nothing else changed


def _imports_one(platform, path: Path) -> bool:  # type: ignore[no-untyped-def]
    try:
        return len(platform.import_file(path).graders) == 1
    except PlatformError:
        return False


def test_hud_and_inspect_honour_the_key(tmp_path: Path) -> None:
    """The two whose import gave back the exported definition's own key whatever --key said."""
    for name, grader in (("hud", GRADERS[0]), ("hud", GRADERS[1]), ("inspect", GRADERS[0]), ("inspect", GRADERS[2])):
        platform = get_platform(name)
        [(relative, text)] = [(r, t) for r, t in platform.export(grader).files.items() if r.endswith(".py")]
        path = tmp_path / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        assert [g.key for g in platform.import_file(path, key="chosen").graders] == ["chosen"], (name, grader.key)


def test_an_inspect_task_of_one_scorer_takes_the_key_and_of_two_refuses_it(tmp_path: Path) -> None:
    one = tmp_path / "one.py"
    one.write_text("from inspect_ai.scorer import includes\n\nSCORER = includes()\n", encoding="utf-8")
    assert [g.key for g in get_platform("inspect").import_file(one, key="mine").graders] == ["mine"]
    two = tmp_path / "two.py"
    two.write_text("from inspect_ai.scorer import exact, includes\n\nSCORERS = [includes(), exact()]\n",
                   encoding="utf-8")
    with pytest.raises(KeyRefused) as caught:
        get_platform("inspect").import_file(two, key="mine")
    assert "holds 2 (two-includes, two-exact)" in str(caught.value) and caught.value.exit_code == 2


def test_a_key_that_is_not_a_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "one.py"
    path.write_text("from inspect_ai.scorer import includes\n\nSCORER = includes()\n", encoding="utf-8")
    with pytest.raises(KeyRefused, match="'Not A Key!' is not a grader key"):
        get_platform("inspect").import_file(path, key="Not A Key!")


def test_a_nul_in_a_grader_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text('name: s\ndataset: d.jsonl\ntarget:\n  kind: letta_code\ngraders:\n  fine:\n    kind: tool\n'
                    '    function: contains\n  bad:\n    kind: tool\n    function: contains\n'
                    '    display_name: "bad\\0name"\n', encoding="utf-8")
    with pytest.raises(PlatformError) as caught:
        get_platform("letta").import_file(path)
    assert str(caught.value).startswith(f"{path}:12: grader 'bad' holds a NUL character (\\x00)"), caught.value
    # the six characters \u0000 in a grader's text (here, code) are text, not a NUL
    source = tmp_path / "g.adaptive.py"
    source.write_text('async def grade(thread):\n    return float("\\\\u0000" in "")\n', encoding="utf-8")
    [grader] = get_platform("adaptive").import_file(source).graders
    assert "\\u0000" in grader.source and "\x00" not in grader.source
