"""No copy of the pass rule and no copy of the mean: a new one fails here, before it disagrees.

Every score compared with a pass line (``score >= threshold``, ``< 0.5``, ``threshold.__le__``, a
missing score read as ``score or 0.0``) is models/pass_rule.py's; every mean, pass rate and time
per sample of a run is engine/summary.py's (``summarize``, ``mean``). The copies issue 45 found
(written_tally's plain batches, agreement's sweep reading a missing score as 0.0, JUnit's reason,
the promptfoo provider's second 0.5, the verdict's gate, two branches of ``runs.aggregates``)
disagreed with the rule or with each other. Other modules divide sums for other reasons (the
statistics of intervals and agreement, a sample's own score from its parts): each is named below
with why, so a new module is a new decision, not a silent copy."""

from __future__ import annotations

import re
from pathlib import Path

STUDIO = Path(__file__).resolve().parent.parent / "studio"

#: a score compared with a pass line, in Python or JavaScript
COMPARISONS = [
    re.compile(r"""\bscores?\w*[\]\)"']*\s*(>=|<=|<|>)\s*[\w.\[\]"'()]*(threshold|fail_under)"""),
    re.compile(r"""(threshold|fail_under)\w*[\]\)"']*\s*(>=|<=|<|>)\s*[\w.\[\]"'()]*score"""),
    re.compile(r"""\b(score|result|value)s?\w*[\]\)"']*\s*(>=|<=|<|>)\s*0?\.5\b"""),
    re.compile(r"""(threshold|limit|fail_under)\w*\)?\.__(le|ge|lt|gt)__"""),
    re.compile(r"""\b(result|value|mean)\w*\s*(>=|<=|<|>)\s*[\w.\[\]"'()]*(threshold|fail_under|limit)"""),
    re.compile(r"""\bscore\w*\)?\s+or\s+0(\.0)?\b"""),  # NA read as zero
]
#: a mean (or a rate) worked out by hand
MEANS = [
    re.compile(r"""sum\(.*\)\s*/\s*len\("""),
    re.compile(r"""/\s*(n|count|total|graded|tally\.n|self\.n|len\(\w+\))\b(?!\w)"""),
    re.compile(r"""score_sum\s*/"""),
    re.compile(r"""\bavg\("""),
]

RULE_HOME = {"core/models/pass_rule.py": "the pass rule"}
COMPARISONS_ALLOWED = RULE_HOME
MEANS_ALLOWED = {
    "core/engine/summary.py": "the one summary: mean, pass rate, time per sample",
    "core/intervals.py": "the summary's intervals (Wilson, Student's t)",
    "core/stats.py": "agreement statistics (kappa, alpha, proportions with their intervals)",
    "core/store/panel_stats.py": "a jury's and a pairwise judge's agreement statistics",
    "core/store/postgres.py": "a docstring naming SQL's avg()",
    "core/engine/plan.py": "a sample's overall score by a suite's mean rule (``weighted_mean``)",
    "core/graders/jury.py": "a sample's score from its jurors' (the jury's aggregation)",
    "core/judges/kinds/range_judge.py": "a sample's score from a judge's several answers",
    "core/judges/http/chat.py": "a judge's answer's token probabilities, normalised",
    "core/platforms/_judge_runtime.py": "the range judge's reading, written out for promptfoo's runtime",
    "core/engine/progress.py": "seconds per sample for the progress estimate",
    "core/engine/agreement.py": "the confusion matrix's accuracy and base rate (numpy; the rest: summary.mean)",
    "cli/runs.py": "the progress bar's width",
}


def _hits(patterns: list[re.Pattern[str]], allowed: dict[str, str]) -> list[str]:
    found = []
    for path in sorted(STUDIO.rglob("*")):
        if path.suffix not in (".py", ".js") or not path.is_file():
            continue
        name = path.relative_to(STUDIO).as_posix()
        if name in allowed:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(p.search(line) for p in patterns):
                found.append(f"studio/{name}:{number}: {line.strip()}")
    return found


def test_no_score_is_compared_outside_the_pass_rule() -> None:
    assert _hits(COMPARISONS, COMPARISONS_ALLOWED) == [], (
        "compare a score through models/pass_rule.py (decide, plain_decisions, reaches, deciding_clause)")


def test_no_mean_is_worked_out_outside_the_summary() -> None:
    assert _hits(MEANS, MEANS_ALLOWED) == [], "read a run's mean or rate from engine/summary.py (summarize, mean)"


def test_the_patterns_find_the_copies_issue_45_found() -> None:
    """The patterns themselves: each copy that was fixed is found (so an empty list above means none)."""
    copies = ["passed = sum(map(threshold.__le__, scores))",
              "judge = ['PASS' if decide('ok', call.score or 0.0, None, t) == 'pass' else 'FAIL']",
              "elif score is None or score >= section.pass_threshold:",
              'passed = result["score"] >= config.get("pass_threshold", 0.5)',
              "const rawPass = result >= grader.threshold;",
              "elif mean < thresholds.overall:", "elif section.mean < limit:"]
    means = ['"mean": tally.score_sum / tally.n if tally.n else None,',
             'pass_rate=tally.decisions.get("pass", 0) / graded if graded else None,',
             "avg(CASE WHEN status IN ('ok','invalid') THEN score END) AS mean,",
             "return sum(scores) / len(scores)", "return {key: self.sums[key].value() / count for key in x}"]
    assert [c for c in copies if not any(p.search(c) for p in COMPARISONS)] == []
    assert [m for m in means if not any(p.search(m) for p in MEANS)] == []
    assert all((STUDIO / name).exists() for name in {**COMPARISONS_ALLOWED, **MEANS_ALLOWED})
