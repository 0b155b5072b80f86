"""Run inside the platforms venv: render or read an exported judge with the platform's own code.

Reads one JSON request on stdin, writes one JSON answer on the last stdout line. Free of studio
imports (the platforms venv does not have the studio).

* ``{"mode": "jinja", "criteria": [...], "rows": [{"item", "sample"}]}``: every testing criterion's
  input messages rendered with Jinja2 for every row (``{{ item.x }}``/``{{ sample.output_text }}``),
  strict about undefined names, and the eval definition checked with the openai package's types.
* ``{"mode": "inspect_log", "path": ...}``: per sample id, the inputs of every model call Inspect
  logged and the scores, read with Inspect's own log reader.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def jinja(request: dict[str, Any]) -> dict[str, Any]:
    import jinja2
    from openai.types.graders import LabelModelGrader, ScoreModelGrader
    from pydantic import TypeAdapter

    models = {"label_model": LabelModelGrader, "score_model": ScoreModelGrader}
    for criterion in request["criteria"]:
        if criterion["type"] in models:
            models[criterion["type"]].model_validate(criterion)
    if request.get("eval") is not None:
        from openai.types.eval_create_params import EvalCreateParams

        TypeAdapter(EvalCreateParams).validate_python(request["eval"])
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    rendered: dict[str, list[list[dict[str, str]]]] = {}
    for criterion in request["criteria"]:
        templates = [(m["role"], env.from_string(m["content"])) for m in criterion.get("input", [])]
        rendered[criterion["name"]] = [
            [{"role": role, "content": t.render(item=row["item"], sample=row["sample"])} for role, t in templates]
            for row in request["rows"]
        ]
    return rendered


def inspect_log(request: dict[str, Any]) -> dict[str, Any]:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(request["path"], resolve_attachments=True)
    out: dict[str, Any] = {"status": log.status, "samples": {}}
    for sample in log.samples or []:
        calls = []
        for event in sample.events:
            if event.event == "model":
                calls.append([{"role": m.role, "content": m.content if isinstance(m.content, str) else m.text}
                              for m in event.input])
        scores = {name: score.value for name, score in (sample.scores or {}).items()}
        out["samples"][str(sample.id)] = {"calls": calls, "scores": scores}
    return out


def main() -> None:
    request = json.load(sys.stdin)
    answer = {"jinja": jinja, "inspect_log": inspect_log}[request["mode"]](request)
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
