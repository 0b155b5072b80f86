"""Every name a person or an endpoint chose reaches the markdown reports as plain text: never a link,
HTML, a code span, a heading or a new table cell. Checked by rendering with a real CommonMark +
GFM-tables parser (markdown-it), not by looking for characters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.reports.markdown import cell
from studio.core.models import BinaryJudge, Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

HOSTILE = [
    "a|b|c",
    "tick`code`tick",
    "# heading",
    "<script>alert(1)</script>",
    "line\none\n## two",
    "[x](javascript:alert(1))",
    "![img](http://127.0.0.1/x.png)",
    "**bold** _it_ ~~gone~~",
    "&lt;b&gt; &#60;i&#62;",
    "$x^2$ \\ back\\slash",
    "<http://127.0.0.1/autolink>",
    "x]](javascript:alert(1))",
]

GFM = MarkdownIt("commonmark").enable("table").enable("strikethrough")
MARKUP = {"link_open", "image", "html_inline", "html_block", "code_inline", "strong_open", "em_open", "s_open",
          "heading_open", "fence", "code_block"}


def _inline_children(tokens: list[Token]) -> list[Token]:
    return [child for t in tokens if t.type == "inline" for child in (t.children or [])]


@pytest.mark.parametrize("name", HOSTILE)
def test_an_escaped_name_renders_as_its_own_text_in_a_table_cell(name: str) -> None:
    tokens = GFM.parse(f"| grader | n |\n| --- | ---: |\n| {cell(name)} | 3 |\n")
    cells = [t for t in tokens if t.type == "inline"]
    assert [c.content for c in cells][-1] == "3"  # still two cells: no | broke out
    assert len(cells) == 4
    assert not MARKUP & {t.type for t in tokens + _inline_children(tokens)}
    text = "".join(t.content for t in (cells[2].children or []) if t.type == "text")
    assert text == " ".join(name.split())  # shown as typed (on one line)


@pytest.mark.parametrize("name", HOSTILE)
def test_an_escaped_name_in_a_heading_is_one_heading_of_plain_text(name: str) -> None:
    tokens = GFM.parse(f"## Grader Studio run 1: {cell(name)}\n\nafter\n")
    assert [t.type for t in tokens].count("heading_open") == 1
    assert not MARKUP - {"heading_open"} & {t.type for t in tokens + _inline_children(tokens)}


@pytest.fixture
def hostile_library(db_path: Path, fake_judge: FakeJudgeServer) -> str:
    dataset = "qa|`x`<script>alert(1)</script>](javascript:alert(1))"
    with Library.open(db_path) as lib:
        EndpointRepository.of(lib).save(EndpointConfig(
            name="fake", base_url=fake_judge.base_url, model="m|`<b>x</b>`](javascript:1)", retry_backoff=0.01,
            max_retries=1, timeout=5.0))
        lib.graders.create(BinaryJudge(key="judge", name="# Judge | <img src=x onerror=alert(1)> `x`\n## y",
                                       criteria="The answer is correct.", endpoint="fake"))
        lib.datasets.create(dataset, [Sample(id=f"s|{i}`<i>", messages=[Turn(role="user", content="Capital?")],
                                             completion="Paris", expected="Paris") for i in range(3)])
    return dataset


def test_a_run_report_of_hostile_names_has_no_markup_of_theirs(cli, hostile_library: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = tmp_path / "summary.md"
    done = cli("run", "judge", hostile_library, "--json", "--markdown", str(report))
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["id"]
    again = tmp_path / "again.md"
    assert cli("runs", "report", str(run_id), "--markdown", str(again)).returncode == 0
    for text in (report.read_text(encoding="utf-8"), again.read_text(encoding="utf-8")):
        tokens = GFM.parse(text)
        found = {t.type for t in tokens + _inline_children(tokens)}
        assert not {"link_open", "image", "html_inline", "html_block", "code_inline", "fence"} & found, text
        headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
        # the run's, the one grader's and the tokens': nothing a name started
        assert [h.split(" ")[0] for h in headings] == ["Grader", "judge", "Tokens"], headings
        widths, count = [], 0
        for t in tokens:  # each table row's number of cells
            if t.type in ("td_open", "th_open"):
                count += 1
            elif t.type == "tr_close":
                widths.append(count)
                count = 0
        assert widths and set(widths[:2]) == {7}, widths  # the summary table: header and the grader's row
        assert set(widths[2:]) <= {3, 6}, widths  # the lowest scores (3 cells), tokens and cost (6)


def test_the_generation_section_escapes_the_names_it_states(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run --generate-with --markdown`'s section names the datasets, the endpoint and the model: as text too."""
    from studio.core.engine.reports import Generated
    from studio.core.engine.reports.markdown import generation_section

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    report = tmp_path / "summary.md"
    generated = Generated(dataset="out`](javascript:alert(1))", stored=1, endpoint="e<script>x</script>",
                          model="m`x`|y", source_dataset="src\n## z", calls=1)
    report.write_text(generation_section(generated, None), encoding="utf-8")
    tokens = GFM.parse(report.read_text(encoding="utf-8"))
    found = {t.type for t in tokens + _inline_children(tokens)}
    assert not {"link_open", "html_inline", "html_block", "code_inline"} & found
    assert [t.type for t in tokens].count("heading_open") == 1
    sentence = next(t for t in tokens if t.type == "inline" and t.content.startswith("Dataset"))
    text = "".join(c.content for c in sentence.children or [] if c.type in ("text", "softbreak"))
    assert text == ("Dataset out`](javascript:alert(1)): 1 answers from endpoint e<script>x</script> "
                    "(model m`x`|y) to the inputs of src ## z.")
