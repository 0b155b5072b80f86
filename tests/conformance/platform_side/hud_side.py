"""Runs inside the platforms venv: score with HUD's own code. JSON in on stdin, JSON out on stdout.

Input: {"modules": {name: python source of a studio HUD export}, "pairs": [[answer, expected]],
"texts": [...], "name_sets": [[names]]}. Output: rewards per module and pair, HUD's normalize,
f1_score and numeric_match per pair, and the names HUD's combine gives repeated subscores.
Kept free of studio imports: the studio is not installed in this venv.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import sys
import tempfile
import warnings
from pathlib import Path

from hud.graders import SubScore, combine, f1_score, normalize, numeric_match


def first_number(text: str) -> float | None:
    found = re.search(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", text)
    return float(found.group()) if found else None


async def main() -> None:
    data = json.load(sys.stdin)
    warnings.simplefilter("ignore")
    out: dict = {"rewards": {}, "normalize": [], "f1": [], "numeric": [], "names": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name, source in data["modules"].items():
            path = Path(tmp) / f"{name}.py"
            path.write_text(source, encoding="utf-8")
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            rewards = []
            for answer, expected in data["pairs"]:
                result = await module.grade(answer, expected)
                rewards.append([result.reward, {s.name: s.value for s in result.subscores}])
            out["rewards"][name] = rewards
    out["normalize"] = [normalize(t) for t in data["texts"]]
    for answer, expected in data["pairs"]:
        out["f1"].append(f1_score(answer, expected))
        want = first_number(expected)
        out["numeric"].append(None if want is None else numeric_match(answer, want))
    for names in data["name_sets"]:
        result = await combine(*(SubScore(name=n, value=1.0, weight=1.0) for n in names))
        out["names"].append([s.name for s in result.subscores])
    print(json.dumps(out))


asyncio.run(main())
