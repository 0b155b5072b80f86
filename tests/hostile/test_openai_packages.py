"""An OpenAI python criterion sees the packages of OpenAI's grader image, and nothing else of the host.

In each isolation mode (bubblewrap, and the namespaces fallback; CI's second pass hides bwrap and
checks the fallback alone): the graders guide's rapidfuzz example runs unchanged and scores what
rapidfuzz gives on the host; numpy works; the studio, SQLAlchemy, httpx and keyring stay unimportable
even when the grader puts the host's site-packages on sys.path; the packages cannot be written; a
library file and the studio's key stay out of reach; a function grader keeps the standard library.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from rapidfuzz import fuzz, utils

from studio.core.datasets.shapes import row_to_sample
from studio.core.graders.openai_grader import make_scorer
from studio.core.models import FunctionGrader, Outcome, Sample
from studio.core.models.openai_grader import OpenAIGrader
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.scoring import GradingContext

#: the graders guide's python example, as a user would paste it: rapidfuzz's WRatio of the output
#: against the item's reference answer, with rapidfuzz's default preprocessing, scaled to 0..1
GUIDE_GRADER = """from rapidfuzz import fuzz, utils

def grade(sample, item) -> float:
    output_text = sample["output_text"]
    reference_answer = item["reference_answer"]
    return fuzz.WRatio(output_text, reference_answer, processor=utils.default_process) / 100.0
"""

PAIRS = [
    ("Paris", "Paris"),
    ("paris, FRANCE!", "Paris France"),
    ("The capital of France is Paris.", "Paris"),
    ("Zürich – Schweiz", "zurich schweiz"),
    ("東京は日本の首都です", "東京"),
    ("", "anything"),
    ("", ""),
    ("a b c d e f g", "g f e d c b a"),
    ("¿Qué tal?", "que tal"),
    ("x" * 3000 + " answer", "answer"),
]


def row(item: dict[str, Any], output: str, n: int = 1) -> Sample:
    return row_to_sample({"item": item, "sample": {"output_text": output}}, "openai", str(n))


def python_criterion(pool: WorkerPool, source: str, samples: list[Sample]) -> list[Outcome]:
    """``source`` as an OpenAI python criterion, in the packages pool derived from ``pool``'s mode."""
    async def go() -> list[Outcome]:
        grader = OpenAIGrader(key="g", criterion={"type": "python", "name": "p", "source": source})
        scorer = make_scorer(grader, GradingContext(options={"sandbox_pool": pool}))
        try:
            return await scorer.score_batch(samples)
        finally:
            await scorer.aclose()

    return asyncio.run(go())


def test_the_guides_rapidfuzz_grader_runs_unchanged_and_scores_as_on_the_host(mode_pool: WorkerPool) -> None:
    samples = [row({"reference_answer": ref}, out, i) for i, (out, ref) in enumerate(PAIRS)]
    outcomes = python_criterion(mode_pool, GUIDE_GRADER, samples)
    host = [fuzz.WRatio(out, ref, processor=utils.default_process) / 100.0 for out, ref in PAIRS]
    assert [o.error for o in outcomes] == [None] * len(PAIRS)
    assert [o.score for o in outcomes] == host
    assert len(set(host)) > 3  # the pairs tell scores apart: equal lists are not all 1.0 or 0.0


def test_numpy_scipy_and_the_other_image_packages_work(mode_pool: WorkerPool) -> None:
    source = """import numpy as np
from scipy import stats
import yaml, pydantic, nltk
from rouge_score import rouge_scorer

def grade(sample, item) -> float:
    a = np.array(item["a"], dtype=float)
    b = np.array(item["b"], dtype=float)
    cosine = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    rho = stats.spearmanr(a, b).statistic
    rouge = rouge_scorer.RougeScorer(["rouge1"]).score("the cat sat", sample["output_text"])["rouge1"].fmeasure
    assert yaml.safe_load("x: 1") == {"x": 1}
    return round((cosine + float(rho) + rouge) / 3, 6)
"""
    [outcome] = python_criterion(mode_pool, source, [row({"a": [1, 2, 3], "b": [2, 4, 7]}, "the cat sat")])
    assert outcome.error is None, outcome.error
    import numpy as np
    from scipy import stats

    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 7.0])
    expected = (float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))) + float(stats.spearmanr(a, b).statistic) + 1.0) / 3
    assert outcome.score == round(expected, 6)


@pytest.mark.parametrize("module", ["studio", "sqlalchemy", "keyring", "httpx"])
def test_the_rest_of_site_packages_stays_invisible(mode_pool: WorkerPool, module: str) -> None:
    """Even with the host's site-packages put on sys.path: the directory is not there inside."""
    site = str(Path(sqlalchemy.__file__).resolve().parent.parent)
    repo = str(Path(__file__).resolve().parents[2])
    source = f"""import sys
sys.path[:0] = [{site!r}, {repo!r}, "/packages/.."]
import {module}

def grade(sample, item) -> float:
    return 1.0
"""
    [outcome] = python_criterion(mode_pool, source, [row({}, "x")])
    assert outcome.status != "ok" and outcome.score is None
    assert f"No module named '{module}'" in (outcome.error or ""), outcome.error


def test_the_packages_cannot_be_written_nor_the_library_or_key_read(mode_pool: WorkerPool) -> None:
    import numpy

    host_numpy = Path(numpy.__file__).resolve().parent
    library = Path(tempfile.mkdtemp(dir="/var/tmp")) / "library.sqlite"  # outside any /tmp the worker has
    library.write_text("the team's library")
    try:
        source = f"""import os
import numpy

def _try(path, mode):
    try:
        with open(path, mode) as fh:
            if mode == "w":
                fh.write("import os  # planted")
            else:
                return fh.read()
        return "done"
    except OSError as exc:
        return type(exc).__name__

def grade(sample, item):
    here = os.path.dirname(numpy.__file__)
    out = {{
        "plant": _try(os.path.join(here, "planted.py"), "w"),
        "replace": _try(os.path.join(here, "__init__.py"), "w"),
        "host_path": _try({str(host_numpy / "planted.py")!r}, "w"),
        "library": _try({str(library)!r}, "r"),
        "key": [v for v in os.environ.values() if "sk-" in v],
    }}
    return {{"scores": {{"x": 1.0}}, "judge": out}}
"""
        grader = FunctionGrader(key="probe", source=source, contract="mka1_sample", timeout_seconds=30, memory_mb=512)
        packages_pool = WorkerPool(size=1, settings=mode_pool.settings.model_copy(
            update={"packages": ("numpy",)}))
        scorer = FunctionScorer(grader, GradingContext(), packages_pool)
        try:
            [outcome] = scorer.score_sync([row({}, "x")])
        finally:
            scorer.close()
            packages_pool.close()
        assert outcome.status == "ok", outcome.error
        out = outcome.details["judge"]
        assert out["plant"] != "done" and out["replace"] != "done" and out["host_path"] != "done", out
        assert out["library"] != "the team's library" and out["key"] == [], out
        assert not (host_numpy / "planted.py").exists()
    finally:
        shutil.rmtree(library.parent)


def test_a_function_grader_keeps_the_standard_library_alone(mode_pool: WorkerPool) -> None:
    source = "import rapidfuzz\n\ndef grade(sample, item):\n    return 1.0\n"
    grader = FunctionGrader(key="f", source=source, contract="mka1_sample", timeout_seconds=5, memory_mb=256)
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": mode_pool}))
    try:
        [outcome] = scorer.score_sync([row({}, "x")])
    finally:
        scorer.close()
    assert outcome.status != "ok" and "No module named 'rapidfuzz'" in (outcome.error or ""), outcome.error
