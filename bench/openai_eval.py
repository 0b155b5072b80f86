"""An imported OpenAI eval (string_check + text_similarity + python) over 10,000 items against the
studio's built-in equivalents over the same rows, in the same rounds (issue 46).

Both suites are ``grader-studio run SUITE DATASET`` in a child process on copies of one library: the
eval imported from its JSON (``openai_evals``: three ``openai_grader`` criteria, the dataset from an
items JSONL with a stored output column) and the baseline suite of what the studio already had for
the same checks: ``exact_match`` (strip off, as string_check eq), ``token_f1`` (a text overlap score)
and the same ``grade(sample, item)`` source as a function grader (MKA1 sample contract). Timed end to
end with each child's CPU time (user + sys) and peak RSS (``suite_throughput.timed``); the runs
alternate ``--rounds`` times and the best of each is kept. ``--metric`` picks the text_similarity
metric (fuzzy_match by default; bleu, rouge_l, meteor ... to see each one's cost).

Target: the imported eval within 1.5x the built-in suite's CPU (the python grader, the same sandbox
work on both sides, dominates; string_check and a text metric add a few microseconds a row).
Run: ``python bench/openai_eval.py [--items N] [--rounds R] [--metric M]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from suite_throughput import timed  # type: ignore[import-not-found]

from studio.core.models import BuiltinGrader, BuiltinOptions, FunctionGrader
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.platforms import get_platform, openai_evals
from studio.core.store import Library

TARGET_RATIO = 1.5
SOURCE = """def grade(sample, item) -> float:
    words = len(sample["output_text"].split())
    return 1.0 if words <= 12 else 12 / words
"""
WORDS = ["the", "a", "cat", "dog", "sat", "ran", "on", "in", "mat", "park", "quickly", "slowly", "red", "blue", "big", "small"]


def criteria(metric: str) -> list[dict[str, object]]:
    return [
        {"type": "string_check", "name": "exact", "input": "{{ sample.output_text }}",
         "reference": "{{ item.reference }}", "operation": "eq"},
        {"type": "text_similarity", "name": "similar", "input": "{{ sample.output_text }}",
         "reference": "{{ item.reference }}", "evaluation_metric": metric, "pass_threshold": 0.5},
        {"type": "python", "name": "short", "source": SOURCE, "pass_threshold": 0.5},
    ]


def write_items(path: Path, n: int) -> None:
    import random

    rng = random.Random(46)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            reference = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
            output = reference if i % 3 == 0 else " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 16)))
            f.write(json.dumps({"id": i, "question": f"q{i}", "reference": reference, "output": output}) + "\n")


def build(folder: Path, n: int, metric: str) -> Path:
    db = folder / "clean.sqlite"
    eval_path = folder / "bench.eval.json"
    eval_path.write_text(json.dumps({"name": "bench", "data_source_config": {"type": "custom", "item_schema": {}},
                                     "testing_criteria": criteria(metric)}), encoding="utf-8")
    items = folder / "bench.items.jsonl"
    write_items(items, n)
    with Library.open(db) as lib:
        imported = get_platform("openai").import_file(eval_path).graders
        for grader in imported:
            lib.graders.create(grader)
        read = openai_evals.load(eval_path)
        made, refused = openai_evals.make_runnable(lib, read, imported, openai_evals.read_items(items),
                                                   eval_path.name, items.name)
        assert not refused and made == {"suite": "bench", "dataset": "bench"}, (made, refused)
        builtins = [BuiltinGrader(key="b-exact", function="exact_match", options=BuiltinOptions(strip=False)),
                    BuiltinGrader(key="b-f1", function="token_f1"),
                    FunctionGrader(key="b-short", source=SOURCE, contract="mka1_sample")]
        for grader in builtins:
            lib.graders.create(grader)
        lib.suites.create(SuiteDefinition(key="builtin", graders=[SuiteMember(grader=g.key) for g in builtins]))
    return db


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--metric", default="fuzzy_match")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "studio"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        clean = build(folder, args.items, args.metric)
        times: dict[str, list[tuple[float, float, float]]] = {"builtin": [], "bench": []}
        for _ in range(args.rounds):
            for suite in ("builtin", "bench"):
                db = folder / f"{suite}.sqlite"
                shutil.copy(clean, db)
                env = {**os.environ, "GRADER_STUDIO_DB": str(db)}
                times[suite].append(timed(cli, env, "run", suite, "bench", "--json"))
                check = subprocess.run([*cli, "runs", "list", "--json"], env=env, capture_output=True, text=True)
                [run] = json.loads(check.stdout)
                assert run["status"] == "completed" and run["counts"] == {"ok": args.items}, run
    n = args.items
    for label, found in (("built-in suite (exact_match, token_f1, function)", times["builtin"]),
                         (f"imported eval (string_check, text_similarity {args.metric}, python)", times["bench"])):
        wall, cpu = min(r[0] for r in found), min(r[1] for r in found)
        print(f"{label}: best {wall:.2f} s wall, {cpu:.2f} s CPU ({cpu / n * 1e6:.0f} us an item), "
              f"{n / wall:,.0f} items/s, peak {max(r[2] for r in found):.0f} MB")
    base = min(r[1] for r in times["builtin"])
    ours = min(r[1] for r in times["bench"])
    wall_ratio = min(r[0] for r in times["bench"]) / min(r[0] for r in times["builtin"])
    print(f"imported / built-in: CPU {ours / base:.2f}x, wall {wall_ratio:.2f}x (goal <= {TARGET_RATIO}x); "
          f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
