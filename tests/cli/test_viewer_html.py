"""The HTML viewer (issue 47) opened in a real headless Chromium: the header is ``runs show --json``'s,
filters, search and sample links land on the right rows, a comparison lists its regressions first, a
hostile sample stays text, and the file states how it was cut. The checks on the file itself (its
JSON, its policy) run without a browser."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import add_endpoint
from viewer_browser import Watched, browser  # noqa: F401  (the module-scoped fixture)

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.reports.viewer.page import DATA_ID, asset, csp
from studio.core.models import BinaryJudge, BuiltinGrader, Sample, Turn
from studio.core.models.labels import LabelInput
from studio.core.models.thread import ToolCall
from studio.core.store import Library
from tests.conftest import run_cli, run_main

HOSTILE = "<script>alert(1)</script> [click](javascript:alert(2)) <img src=x onerror=alert(3)>"
TOPICS = ("geo", "math", "</script><script>alert(4)</script>")
N = 30


def _samples() -> list[Sample]:
    out = []
    for i in range(N):
        completion = "wrong" if i % 3 == 0 else f"answer {i}" + (" and more" if i % 5 == 0 else "")
        messages = [Turn(role="system", content="Answer briefly."),
                    Turn(role="document", content=f"Document {i}: the answer is {i}."),
                    Turn(role="user", content=f"question {i} {HOSTILE}"),
                    Turn(role="assistant", content="", tool_calls=[ToolCall(id="c1", name="lookup",
                                                                            arguments='{"q": "<b>x</b>"}')]),
                    Turn(role="tool", content="\u2028<!-- 42 -->\u2029", tool_call_id="c1")]
        out.append(Sample(id=f"s{i}", messages=messages, completion=completion, expected=f"answer {i}",
                          metadata={"topic": TOPICS[i % 3], "n": i}))
    return out


class Library_:
    def __init__(self, db: Path, out: Path) -> None:
        self.db, self.out = db, out

    def cli(self, *args: str) -> Any:
        done = run_main(*args, db=self.db)
        assert done.returncode in (0, 1), done.stderr
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.cli(*args, "--json").stdout)


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library_]:
    root = tmp_path_factory.mktemp("viewer")
    db = root / "library.sqlite"
    server = FakeJudgeServer().start()
    try:
        with Library.open(db) as library:
            add_endpoint(library, server, price_input="2", price_output="8")  # USD per million tokens
            library.graders.create(BuiltinGrader(key="has", function="contains"))
            library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
            library.graders.create(BinaryJudge(key="judge", criteria="Names the right answer.", endpoint="fake"))
            library.datasets.create("d", _samples())
            library.labels.put_many("d", [LabelInput(sample_id=f"s{i}", verdict="PASS" if i % 8 == 0 else "FAIL",
                                                     labeler="ana <b>", note="<img src=x onerror=alert(5)>")
                                          for i in range(0, N, 4)])
        made = Library_(db, root)
        assert made.json("run", "has", "d")["id"] == 1
        assert made.json("run", "exact", "d")["id"] == 2
        assert made.json("run", "--graders", "exact,has", "d")["id"] == 3
        assert made.json("run", "judge", "d")["id"] == 4
        with Library.open(db) as library:  # "has" v2 is stricter: a suite run of it regresses on "has"
            library.graders.save(BuiltinGrader(key="has", function="exact_match"))
        assert made.json("run", "--graders", "exact,has", "d")["id"] == 5
        yield made
    finally:
        server.stop()


def export(lib: Library_, run: int, *extra: str) -> Path:
    path = lib.out / f"run{run}{''.join(extra).replace('-', '_')}.html"
    lib.cli("runs", "export", str(run), "--format", "html", "-o", str(path), *extra)
    return path


def embedded(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    found = re.search(f'<script type="application/json" id="{DATA_ID}">(.*?)</script>', text, re.S)
    assert found is not None
    return json.loads(found.group(1))


# ---- the file, without a browser ---------------------------------------------------------------------
def test_the_data_is_inert_json_and_the_policy_allows_only_the_pages_own_code(lib: Library_) -> None:
    path = export(lib, 1)
    text = path.read_text(encoding="utf-8")
    data = embedded(path)
    block = text.split(f'id="{DATA_ID}">', 1)[1].split("</script>", 1)[0]
    for raw in ("<", ">", "&", "\u2028", "\u2029"):
        assert raw not in block  # escaped: nothing in the data can close or bend its element
    assert HOSTILE in "".join(data["strings"]) and TOPICS[2] in data["strings"]  # read back exactly
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text).group(1)
    assert policy == csp(asset("viewer.js"), asset("viewer.css"))
    assert "default-src 'none'" in policy and "unsafe" not in policy and "http" not in policy
    assert text.count("<script") == 2  # the data and the page's one script
    assert "https://" not in asset("viewer.js") and "http://" not in asset("viewer.css")
    assert ".innerHTML" not in asset("viewer.js") and "insertAdjacentHTML" not in asset("viewer.js")


def test_the_cut_is_made_and_stated(lib: Library_) -> None:
    whole = embedded(export(lib, 4))
    assert whole["cut"] == {"prompts": True, "text_chars": None, "texts_cut": 0, "chars_cut": 0}
    assert any(calls for calls in whole["cols"]["calls"])  # the judge's exact prompts are in
    cut = embedded(export(lib, 4, "--no-prompts", "--cut-text", "40"))
    assert cut["cut"]["prompts"] is False and cut["cut"]["text_chars"] == 40 and cut["cut"]["texts_cut"] > 0
    assert not any(cut["cols"]["calls"])
    assert all(len(t) <= 40 + len("… [cut: 9,999,999 more characters]") for t in cut["strings"])
    refused = run_main("runs", "export", "4", "--format", "html", "--cut-text", "3", db=lib.db)
    assert refused.returncode == 2 and "--cut-text" in refused.stderr


# ---- in the browser -------------------------------------------------------------------------------------
def test_the_header_shows_runs_show_numbers(lib: Library_, browser: Any) -> None:  # noqa: F811
    for run in (1, 4):
        shown = lib.json("runs", "show", str(run))["run"]
        agg = shown["aggregates"]
        watched = Watched(browser, export(lib, run))
        page = watched.open()

        def figure(key: str, page: Any = page) -> str:
            return page.text_content(f'[data-figure="{key}"]')

        assert figure("mean") == f"{agg['mean']:.4f}"
        assert figure("mean_ci") == f"[{agg['mean_ci'][0]:.4f}, {agg['mean_ci'][1]:.4f}]"
        assert figure("pass_rate") == f"{agg['pass_rate'] * 100:.1f}%"
        low, high = agg["pass_rate_ci"]  # (Wilson's, as runs show prints it)
        assert figure("pass_rate_ci") == f"[{low * 100:.1f}%, {high * 100:.1f}%]"
        assert f"pass rate {agg['pass_rate']:.1%} [{low:.1%}, {high:.1%}]" in run_main("runs", "show", str(run),
                                                                                      db=lib.db).stdout
        assert figure("n") == str(agg["n"])
        assert figure("done") == f"{shown['done']}/{shown['total']}"
        assert figure("counts") == "  ".join(f"{k} {v}" for k, v in sorted(shown["counts"].items()))
        usage = shown["usage"]["total"]
        assert figure("tokens") == f"{usage['calls']} · {usage['prompt_tokens']} + {usage['completion_tokens']}"
        assert figure("cost") == ("—" if usage["cost_usd"] is None else f"${usage['cost_usd']}")
        printed = run_main("runs", "show", str(run), db=lib.db).stdout
        terminal = page.text_content("details.terminal pre")
        assert terminal and terminal in printed  # runs show's own lines
        assert watched.count() == N
        watched.check_clean()
        watched.page.close()
    suite = lib.json("runs", "show", "3")["run"]
    watched = Watched(browser, export(lib, 3))
    page = watched.open()
    for grader in suite["graders"]:
        cells = page.eval_on_selector(f'table.graders tr[data-grader="{grader["key"]}"]',
                                      "tr => Array.from(tr.cells).map(c => c.textContent)")
        low, high = grader["aggregates"]["pass_rate_ci"]
        assert cells[1] == f"{grader['aggregates']['mean']:.4f}" and cells[5] == str(grader["aggregates"]["n"])
        assert cells[4] == f"[{low * 100:.1f}%, {high * 100:.1f}%]"
    watched.check_clean()


def test_filters_search_sort_and_links_land_on_the_right_rows(lib: Library_, browser: Any) -> None:  # noqa: F811
    results = lib.json("runs", "show", "1")["results"]
    failed = {r["sample_id"] for r in lib.json("runs", "show", "1", "--failed")["results"]}
    watched = Watched(browser, export(lib, 1), height=2000)  # every row of 30 on screen
    page = watched.open()
    assert watched.rows() == [f"s{i}" for i in range(N)]

    page.select_option('select[name="verdict"]', "FAIL")
    assert set(watched.rows()) == failed and watched.count() == len(failed)
    assert "verdict=FAIL" in page.evaluate("location.hash")
    page.click('button:has-text("Clear filters")')

    page.fill('input[name="q"]', "AND MORE")
    page.wait_for_function(f"() => document.querySelector('.count').dataset.count != '{N}'")
    wanted = {r["sample_id"] for r in results if "and more" in (r["completion"] or "")}
    assert set(watched.rows()) == wanted
    page.click('button:has-text("Clear filters")')

    page.select_option('select[name="mf"]', "topic")
    page.select_option('select[name="mv"]', TOPICS[2])
    assert watched.rows() == [f"s{i}" for i in range(N) if i % 3 == 2]
    page.click('button:has-text("Clear filters")')

    page.select_option('select[name="label"]', "PASS")
    assert watched.rows() == [f"s{i}" for i in range(0, N, 8)]
    page.click('button:has-text("Clear filters")')

    page.fill('input[name="min"]', "0.5")
    page.press('input[name="min"]', "Enter")
    assert set(watched.rows()) == {r["sample_id"] for r in results if r["score"] is not None and r["score"] >= 0.5}
    page.click('button:has-text("Clear filters")')

    page.click('button[data-sort="score"]')  # ascending, then descending
    page.click('button[data-sort="score"]')
    scores = {r["sample_id"]: r["score"] for r in results}
    shown = watched.rows()
    assert [scores[s] for s in shown] == sorted(scores.values(), reverse=True)
    page.click('button[data-sort="sid"]')  # a text column sorts by its text
    assert watched.rows() == sorted(f"s{i}" for i in range(N))
    assert "sort=sid" in page.evaluate("location.hash")

    # a link with a sample and filters opens on that sample, with those filters
    watched.page.close()
    watched = Watched(browser, export(lib, 1), height=2000)
    page = watched.open("#verdict=FAIL&sample=s6")
    assert page.text_content(".detail h2") == "sample s6 (#6)"
    assert page.get_attribute('.grid-row.selected', "data-sample") == "s6"
    page.emulate_media(media="print")  # printed: the header and the sample, not the controls and grid
    assert page.is_visible(".summary") and page.is_visible(".detail h2")
    assert not page.is_visible(".controls") and not page.is_visible(".grid")
    page.emulate_media(media="screen")
    assert set(watched.rows()) == failed and page.input_value('select[name="verdict"]') == "FAIL"
    page.click('.grid-row[data-sample="s9"]')
    assert "sample=s9" in page.evaluate("location.hash") and "verdict=FAIL" in page.evaluate("location.hash")
    assert page.text_content(".detail h2") == "sample s9 (#9)"
    watched.check_clean()


def test_each_sample_shows_its_tokens_and_cost(lib: Library_, browser: Any) -> None:  # noqa: F811
    from fractions import Fraction

    from studio.core.engine.usage import format_usd

    results = {r["sample_id"]: r for r in lib.json("runs", "show", "4")["results"]}
    watched = Watched(browser, export(lib, 4))
    page = watched.open()
    for sid in ("s0", "s7"):
        page.evaluate(f"location.hash = 'sample={sid}'")
        page.wait_for_function(f"() => document.querySelector('.detail h2').textContent.startsWith('sample {sid} ')")
        r = results[sid]
        assert r["prompt_tokens"] > 0
        usd = (Fraction(r["prompt_tokens"]) * 2 + Fraction(r["completion_tokens"]) * 8) / 1_000_000
        assert page.get_attribute(".grader [data-cost]", "data-cost") == format_usd(usd)
        assert f"tokens {r['prompt_tokens']} prompt + {r['completion_tokens']} completion" in page.text_content(".grader")
    watched.check_clean()


def test_the_suite_page_has_a_column_per_grader_and_filters_by_grader(lib: Library_, browser: Any) -> None:  # noqa: F811
    watched = Watched(browser, export(lib, 3), height=2000)
    page = watched.open()
    heads = page.eval_on_selector_all(".grid-head .cell", "cells => cells.map(c => c.textContent)")
    assert "exact" in heads and "has" in heads
    exact = {r["sample_id"]: r["score"] for r in lib.json("runs", "show", "2")["results"]}
    page.select_option('select[name="grader"]', "exact")
    page.select_option('select[name="verdict"]', "FAIL")
    assert set(watched.rows()) == {s for s, score in exact.items() if score < 0.5}
    watched.check_clean()


def test_the_comparison_lists_regressions_first(lib: Library_, browser: Any) -> None:  # noqa: F811
    report = lib.json("runs", "compare", "1", "2")
    regressions = [f["sample_id"] for f in report["flips"] if f["a"]["verdict"] == "PASS"]
    assert regressions  # "and more" passes contains, fails exact
    path = lib.out / "compare.html"
    lib.cli("runs", "compare", "1", "2", "--html", "-o", str(path))
    watched = Watched(browser, path, height=2000)
    page = watched.open()
    rows = watched.rows()
    assert rows[:len(regressions)] == regressions
    assert page.text_content('table.stats tr[data-grader="(run)"] td.regress') == str(report["pass_a_fail_b"])
    cells = page.eval_on_selector('table.stats tr[data-grader="(run)"]', "tr => Array.from(tr.cells).map(c => c.textContent)")
    assert cells[1] == str(report["n_common"]) and cells[8] == f"{report['mcnemar_p']:.4f}"
    page.select_option('select[name="change"]', "regression")
    assert watched.rows() == regressions
    page.click(f'.grid-row[data-sample="{regressions[0]}"]')
    assert page.locator(".pair .col").count() == 2
    assert page.text_content(".pair .col >> nth=0").startswith("A · has v1: PASS")
    assert page.text_content(".pair .col >> nth=1").startswith("B · exact v1: FAIL")
    watched.check_clean()


def test_a_hostile_sample_stays_text(lib: Library_, browser: Any) -> None:  # noqa: F811
    for path in (export(lib, 4), export(lib, 3)):
        watched = Watched(browser, path)
        page = watched.open()
        for i in range(N):  # every sample's detail drawn: thread, labels, metadata, prompts
            page.evaluate(f"location.hash = 'sample=s{i}'")
            page.wait_for_function(f"() => document.querySelector('.detail h2').textContent.startsWith('sample s{i} ')")
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        page.evaluate("location.hash = 'sample=s8'")  # labelled: its note and author are hostile too
        page.wait_for_function("() => document.querySelector('.detail h2').textContent.startsWith('sample s8 ')")
        detail = page.text_content(".detail")
        assert HOSTILE in detail and "<img src=x onerror=alert(5)>" in detail and "by ana <b>" in detail
        assert TOPICS[2] in detail
        assert page.locator("img").count() == 0 and page.locator("script").count() == 2
        assert page.evaluate("Array.from(document.querySelectorAll('a')).every(a => a.getAttribute('href').startsWith('#'))")
        # the policy itself: a script put into the page by hand does not run
        page.evaluate("() => { const s = document.createElement('script'); s.textContent = 'alert(7)'; document.body.appendChild(s); }")
        page.evaluate("() => { const i = document.createElement('img'); i.src = 'https://example.invalid/x.png'; document.body.appendChild(i); }")
        page.wait_for_timeout(200)
        assert any("Content Security Policy" in line for line in watched.console), watched.console
        watched.check_clean()
        watched.page.close()


def test_a_suite_comparison_lists_each_graders_regressions(lib: Library_, browser: Any) -> None:  # noqa: F811
    report = lib.json("runs", "compare", "3", "5")
    assert set(report["graders"]) == {"exact", "has"}
    regressions = [f["sample_id"] for f in report["graders"]["has"]["flips"] if f["a"]["verdict"] == "PASS"]
    assert regressions and not report["graders"]["exact"]["flips"]
    path = lib.out / "suite-compare.html"
    lib.cli("runs", "compare", "3", "5", "--html", "-o", str(path))
    watched = Watched(browser, path, height=2000)
    page = watched.open()
    assert watched.rows()[:len(regressions)] == regressions
    heads = page.eval_on_selector_all(".grid-head .cell", "cells => cells.map(c => c.textContent)")
    assert {"A has", "B has", "Δ has", "Δ exact"} <= set(heads)
    assert page.text_content('table.stats tr[data-grader="has"] td.regress') == str(len(regressions))
    assert page.text_content('table.stats tr[data-grader="exact"] td.regress') == "0"
    row = page.eval_on_selector(f'.grid-row[data-sample="{regressions[0]}"]',
                                "r => Array.from(r.childNodes).map(c => c.textContent)")
    where = heads.index("A has")
    assert row[where:where + 3] == ["PASS", "FAIL", "-1.000"]
    watched.check_clean()


def test_the_page_is_the_same_from_a_postgresql_library(lib: Library_, pg_url: str, tmp_path: Path) -> None:
    """The rows, labels and histogram are read through the store's SQL on either database."""
    with Library.open(pg_url) as library:
        library.graders.create(BuiltinGrader(key="has", function="contains"))
        library.datasets.create("d", _samples())
        library.labels.put_many("d", [LabelInput(sample_id=f"s{i}", verdict="PASS" if i % 8 == 0 else "FAIL",
                                                 labeler="ana <b>", note="<img src=x onerror=alert(5)>")
                                      for i in range(0, N, 4)])
    # a child process: this module's browser (Playwright's event loop) may be open in this one
    ran = run_cli("run", "has", "d", "--json", db=pg_url)  # type: ignore[arg-type]
    assert ran.returncode in (0, 1), ran.stderr
    path = tmp_path / "pg.html"
    done = run_main("runs", "export", str(json.loads(ran.stdout)["id"]), "--format", "html", "-o", str(path), db=pg_url)
    assert done.returncode == 0, done.stderr
    on_pg, on_sqlite = embedded(path), embedded(export(lib, 1))

    def rows(data: dict[str, Any]) -> list[tuple[Any, ...]]:
        cols, text = data["cols"], data["strings"]
        return [(text[cols["sid"][j]], text[cols["verdict"][j]], cols["score"][j], text[cols["input"][j]],
                 data["label"][j] >= 0 and text[data["label"][j]]) for j in range(data["n"])]

    assert rows(on_pg) == rows(on_sqlite) and on_pg["histogram"] == on_sqlite["histogram"]
    assert sorted(on_pg["meta"]) == sorted(on_sqlite["meta"]) == ["n", "topic"]
