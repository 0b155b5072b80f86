"""Author once, export anywhere: the small stdlib adapter that runs a function grader written for one
platform's contract inside another platform's entry point.

The generated module holds the grader's source unchanged, as a string literal (``repr``) executed in
a namespace of its own, so nothing the author wrote is pasted into code and the adapter's own names
cannot collide with the grader's. The target's inputs become the studio's plain sample (output,
expected answer, question as one user turn, the row's fields and metadata); the studio's own payload
builders (``studio_guest.payloads``, stdlib only, embedded the same way) shape it for the grader's
contract, exactly as the studio's sandbox does; the result is read back as the studio reads it.
The grader's imports of ``adaptive_harmony`` and ``letta_evals`` get the studio's stdlib stand-ins
(private to the grader: nothing is put in ``sys.modules``), exactly what it runs against in the studio.
"""

from __future__ import annotations

from studio.core.models import FunctionGrader, GraderBase
from studio.core.sandbox.launch import GUEST_DIR

from ._fields import docstring

SHIMS = GUEST_DIR / "shims"
TARGETS = ("mka1", "openai", "promptfoo", "letta", "hud")
NATIVE = {"mka1": "mka1_sample", "openai": "mka1_sample", "promptfoo": "promptfoo", "letta": "letta"}


def function_grader(grader: GraderBase) -> FunctionGrader | None:
    """``grader`` as a function grader, or None: the one place an export narrows a definition to
    the function model (its source, contract and entry point are what an export writes)."""
    # a real type narrowing at the exports' boundary, not a per-kind ladder
    return grader if isinstance(grader, FunctionGrader) else None


def adapted(grader: GraderBase, target: str) -> FunctionGrader | None:
    """The function grader a generated adapter carries to ``target`` (its contract is another's), or None."""
    function = function_grader(grader)
    return function if function is not None and function.contract != target else None


def refusal(grader: FunctionGrader, target_label: str) -> str | None:
    """Why no adapter can carry this grader to a per-sample target (None: it can), naming one that can."""
    if grader.contract == "mka1_batch":
        return (f"grade_batch scores a whole run at once; {target_label} grades one sample at a time "
                "(export it to MKA1, which runs batch graders)")
    if grader.model_access:
        return (f"it calls a model through MKA1's ctx, which {target_label} does not provide "
                "(export it to MKA1)")
    return None


def _read(path: str) -> str:
    return (SHIMS / path).read_text(encoding="utf-8") if not path.startswith("guest:") else \
        (GUEST_DIR / "studio_guest" / path.removeprefix("guest:")).read_text(encoding="utf-8")


RUNTIME = '''
import asyncio as _asyncio
import sys as _sys
import types as _types


def _private(name, source):
    module = _types.ModuleType(name)
    exec(compile(source, name + ".py", "exec"), module.__dict__)
    return module


_STANDIN_MODULES = {}


def _standin(name):
    """The studio's stdlib stand-in for ``name`` (private: never put in sys.modules)."""
    if name not in _STANDIN_MODULES:
        module = _types.ModuleType(name)
        module.__package__ = "letta_evals" if name.startswith("letta_evals") else ""
        if name == "letta_evals":
            module.__path__ = []
            module.decorators = _standin("letta_evals.decorators")
            module.models = _standin("letta_evals.models")
            source = ("from letta_evals.decorators import extractor, grader; "
                      "from letta_evals.models import GradeResult, Sample")
        else:
            source = STANDINS[name]
        _STANDIN_MODULES[name] = module
        exec(compile(source, name.replace(".", "/") + ".py", "exec"), _bind(module))
    return _STANDIN_MODULES[name]


def _bind(module):
    module.__dict__["__builtins__"] = _BUILTINS
    return module.__dict__


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    """The grader sees the studio's stand-ins for adaptive_harmony and letta_evals, as in the
    studio's sandbox, whatever this process has installed; every other import is the real one."""
    if level == 0 and (name == "adaptive_harmony" or name == "letta_evals" or name.startswith("letta_evals.")):
        module = _standin(name)
        return module if fromlist or "." not in name else _standin(name.partition(".")[0])
    return _real_import(name, globals, locals, fromlist, level)


import builtins as _builtins_module  # noqa: E402

_real_import = _builtins_module.__import__
_BUILTINS = dict(_builtins_module.__dict__, __import__=_import)
_PAYLOADS = _private("studio_payloads", PAYLOADS)
_GRADER = {"__name__": "grader_source", "__builtins__": _BUILTINS}
exec(compile(GRADER_SOURCE, "grader_source.py", "exec"), _GRADER)


def _entry():
    if FUNCTION_NAME:
        return _GRADER[FUNCTION_NAME]
    if CONTRACT == "letta":
        marked = [v for k, v in _GRADER.items() if callable(v) and not k.startswith("__")
                  and (getattr(v, "__letta_grader__", False) or getattr(v, "_is_grader", False))]
        if len(marked) != 1:
            raise LookupError("the grader source needs exactly one @grader function")
        return marked[0]
    return _GRADER[{"adaptive": "grade", "mka1_sample": "grade", "promptfoo": "get_assert"}[CONTRACT]]


def _plain(output, expected, question, row):
    """The studio's plain sample: the question as one user turn, the row as fields and metadata."""
    row = dict(row or {})
    skip = ("input", "prompt", "question", "messages", "output", "completion", "response", "output_text")
    return {
        "id": str(row.get("id", "0")),
        "messages": [{"role": "user", "content": question}] if question else [],
        "completion": output,
        "expected": expected,
        # a row's own metadata object holds its extra keys (Adaptive rows), as the studio reads it
        "metadata": {**{k: v for k, v in row.items() if k not in skip and k != "metadata"},
                     **(row["metadata"] if isinstance(row.get("metadata"), dict) else {})},
        "fields": row,
    }


def _call(sample):
    fn = _entry()
    if CONTRACT == "adaptive":
        p = _PAYLOADS.adaptive(sample)
        StringThread = _standin("adaptive_harmony").StringThread
        return fn(StringThread([tuple(t) for t in p["turns"]], p["metadata"]))
    if CONTRACT == "mka1_sample":
        p = _PAYLOADS.mka1_sample(sample)
        return fn(p["sample"], p["item"])
    if CONTRACT == "letta":
        p = _PAYLOADS.letta(sample)
        return fn(_standin("letta_evals.models").Sample(**p["sample"]), p["submission"])
    p = _PAYLOADS.promptfoo(sample)
    return fn(p["output"], p["context"])


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \\
            or value in (float("inf"), float("-inf")):
        raise ValueError("the grader returned %r, not a finite number" % (value,))
    return float(value)


def _read_score(value):
    """The grader's return read as the studio reads its contract's results."""
    if CONTRACT == "mka1_sample" and isinstance(value, dict):
        scores = {k: v for k, v in (value.get("scores") or {}).items()
                  if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v
                  and v not in (float("inf"), float("-inf"))}
        if not scores:
            raise ValueError("returned a dict without any finite numeric score in 'scores'")
        return float(scores.get(METRIC, next(iter(scores.values()))))
    if CONTRACT == "letta" and hasattr(value, "score"):
        return _number(value.score)
    if CONTRACT == "promptfoo":
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        if isinstance(value, dict):
            if value.get("score") is not None:
                return _number(value["score"])
            return 1.0 if value.get("pass") else 0.0
    return _number(value)


def _finish(value):
    if hasattr(value, "__await__"):
        async def wait():
            return await value
        try:
            _asyncio.get_running_loop()
        except RuntimeError:
            return _asyncio.run(wait())
        # called synchronously from inside a running loop: finish on a loop of its own, in a thread
        import threading

        box = {}

        def work():
            try:
                box["value"] = _asyncio.run(wait())
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
                box["error"] = exc

        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        if "error" in box:
            raise box["error"]
        return box["value"]
    return value


async def _afinish(value):
    return (await value) if hasattr(value, "__await__") else value


def score(output, expected=None, question="", row=None):
    """The grader's score for one sample, as the studio computes it (sync targets)."""
    return _read_score(_finish(_call(_plain(output or "", expected, question or "", row))))


async def ascore(output, expected=None, question="", row=None):
    """The same, awaiting an async grader on the caller's loop (async targets)."""
    return _read_score(await _afinish(_call(_plain(output or "", expected, question or "", row))))
'''

ENTRIES = {
    "mka1": '''

def grade(sample, item):
    """MKA1 / OpenAI python grader entry: ``sample`` carries the output, ``item`` is the dataset row."""
    item = dict(item or {})
    keys = ("target", "reference", "reference_answer", "expected", "ground_truth")
    nested = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    expected = next((where[k] for where in (item, nested) for k in keys if where.get(k) is not None), None)
    question = item.get("prompt") or item.get("input") or (sample or {}).get("prompt") or ""
    if not isinstance(question, str):
        question = str(question)
    return score((sample or {}).get("output_text") or "", expected, question, item)
''',
    "promptfoo": '''

def get_assert(output, context):
    """promptfoo python assertion entry: the score, and pass when it is above zero."""
    context = context or {}
    variables = dict(context.get("vars") or {})
    question = context.get("prompt") or variables.get("input") or ""
    value = score(output if isinstance(output, str) else str(output), variables.get("expected"),
                  question if isinstance(question, str) else str(question), variables)
    return {"pass": value > 0, "score": value, "reason": "score %s" % value}
''',
    "letta": '''
from letta_evals.decorators import grader as _letta_grader  # noqa: E402
from letta_evals.models import GradeResult as _GradeResult  # noqa: E402


@_letta_grader
async def {name}(sample, submission):
    """Letta custom tool grader entry (reference it as ``file.py:{name}``)."""
    row = {{}}
    for part in ("extra_vars", "rubric_vars", "metadata"):
        row.update(getattr(sample, part, None) or {{}})
    question = sample.input if isinstance(sample.input, str) else "\\n".join(map(str, sample.input or []))
    row.update(input=question, ground_truth=sample.ground_truth)
    value = await ascore(submission, sample.ground_truth, question, row)
    return _GradeResult(score=value, rationale="score %s" % value)
''',
    "hud": '''
from hud.graders import EvaluationResult, SubScore, combine  # noqa: E402


async def grade(answer, expected=None, question="", row=None):
    """HUD entry: ``await grade(answer, expected, question, row)`` from a task, yield the result.
    ``row`` is the dataset row (dict) the grader may read beyond the expected answer."""
    value = await ascore(answer, expected, question, row)
    return await combine(SubScore(name=METRIC, value=value, weight=1.0))
''',
}


def entry_name(grader: FunctionGrader) -> str:
    return "grade_" + grader.key.replace("-", "_").replace(".", "_")


def adapter_module(grader: FunctionGrader, target: str) -> str:
    """A Python module exposing ``target``'s entry point around ``grader`` (whose contract differs)."""
    kind = "mka1" if target == "openai" else target
    standins = {
        "adaptive_harmony": _read("adaptive_harmony.py"),
        "letta_evals": _read("letta_evals/__init__.py"),
        "letta_evals.decorators": _read("letta_evals/decorators.py"),
        "letta_evals.models": _read("letta_evals/models.py"),
    }
    title = (f"{grader.name or grader.key}: a {grader.contract} function grader exported by Grader Studio "
             f"(grader {grader.key!r}) for {target}, with a standard-library adapter around its unchanged source.")
    head = (
        f"{docstring(title)}\n\n"
        f"GRADER_SOURCE = {grader.source!r}\n"
        f"CONTRACT = {grader.contract!r}\n"
        f"FUNCTION_NAME = {grader.function_name!r}\n"
        f"METRIC = {grader.metric.key!r}\n"
        f"STANDINS = {standins!r}\n"
        f"PAYLOADS = {_read('guest:payloads.py')!r}\n"
    )
    entry = ENTRIES[kind].replace("{name}", entry_name(grader)).replace("{{", "{").replace("}}", "}") \
        if kind == "letta" else ENTRIES[kind]
    return head + RUNTIME + entry
