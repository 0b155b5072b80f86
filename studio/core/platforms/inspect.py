"""Inspect AI: a Python module with an ``@scorer`` (and a task stub so ``inspect list tasks`` sees it).

Built-in comparisons are written out as plain Python inside the scorer. Function graders are embedded
verbatim: MKA1-sample ones are called with the sample/item dicts built from Inspect's state and
target; Adaptive ones with a ``StringThread`` of the conversation (the studio's own stdlib stand-in for
``adaptive_harmony`` travels inside the module, so nothing else needs installing). Judges and
composites are not exported: Inspect's model-graded scorers use their own prompts, which would score
differently.
"""

from __future__ import annotations

import ast
from pathlib import Path

from studio.core.models import BuiltinGrader, FunctionGrader, GraderDefinition
from studio.core.sandbox.launch import GUEST_DIR

from ._adapters import adapter_module, refusal
from ._base import ExportResult, ImportResult, Platform, PlatformError, Support
from ._fields import docstring, read_text, slug, unexported
from .openai import plain_extractor

LABEL = "Inspect AI"
COMPARISONS = {
    "exact_match": "float(fold(output) == fold(reference))",
    "contains": "float(fold(reference) in fold(output))",
    "starts_with": "float(fold(output).startswith(fold(reference)))",
    "regex_match": "float(re.search(reference, output, 0 if CASE_SENSITIVE else re.IGNORECASE) is not None)",
}
CASE_DEFAULT = {"exact_match": True, "starts_with": True, "regex_match": True, "contains": False}


INSPECT_SCORERS = ("includes", "match", "pattern", "exact", "f1", "model_graded_qa", "model_graded_fact",
                   "choice", "answer", "math")
NOT_MAPPED = {
    "match": "match() strips, drops punctuation and compares at a location (and reads numbers); no studio "
             "comparison does exactly that yet",
    "pattern": "pattern() extracts groups and compares them to the target; no studio comparison does that yet",
    "exact": "exact() normalises tokens its own way (casefold, punctuation, numbers, articles); the studio's "
             "exact_match normalises as HUD does",
    "f1": "f1() tokenises on spaces and hyphens with its own normalisation; the studio's token_f1 is HUD's",
    "model_graded_qa": "model_graded_qa() grades with Inspect's own prompt and C/P/I letters; a studio judge "
                       "would score differently",
    "model_graded_fact": "model_graded_fact() grades with Inspect's own prompt and C/P/I letters; a studio "
                         "judge would score differently",
}


def _scorer_name(node: ast.expr) -> str | None:
    target = node.func if isinstance(node, ast.Call) else None
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


class InspectPlatform(Platform):
    name = "inspect"
    label = LABEL
    imports = True

    def detect(self, path: Path) -> bool:
        if path.suffix != ".py":
            return False
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        return "inspect_ai" in text

    def import_(self, path: Path, key: str | None = None) -> ImportResult:
        """The task file's scorers, read from its syntax tree (the file is never executed)."""
        text = read_text(path)
        try:
            tree = ast.parse(text, filename=path.name)
        except SyntaxError as exc:
            raise PlatformError(f"{path.name} line {exc.lineno}: not valid Python ({exc.msg})") from None
        result = ImportResult()
        seen: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    _scorer_name(d) == "scorer" or (isinstance(d, ast.Name) and d.id == "scorer")
                    for d in node.decorator_list):
                line = min([node.lineno] + [d.lineno for d in node.decorator_list])
                result.warnings.append(
                    f"line {line}: @scorer {node.name} is custom Python run on Inspect's TaskState; "
                    "rewrite it as a function grader (the studio never runs a task file to import it)")
                continue
            name = _scorer_name(node) if isinstance(node, ast.Call) else None
            if name not in INSPECT_SCORERS:
                continue
            assert isinstance(node, ast.Call)
            try:
                grader = self._from_call(name, node, key if key and not seen else slug(f"{path.stem}-{name}"))
            except PlatformError as exc:
                result.warnings.append(f"line {node.lineno}: {name}(): {exc}")
                continue
            if grader.key in seen:
                grader = grader.model_copy(update={"key": slug(f"{grader.key}-{node.lineno}")})
            seen.add(grader.key)
            result.graders.append(grader)
        if not result.graders:
            detail = "; ".join(result.warnings) or "no Inspect scorer found"
            raise PlatformError(f"{path.name}: no scorer imported ({detail})")
        return result

    @staticmethod
    def _from_call(name: str, call: ast.Call, key: str) -> BuiltinGrader:
        if name != "includes":
            raise PlatformError(NOT_MAPPED.get(name, f"{name}() has no studio grader kind"))
        args: dict[str, object] = {}
        for n, arg in enumerate(call.args):
            if n > 0 or not isinstance(arg, ast.Constant):
                raise PlatformError("arguments must be literal values")
            args["ignore_case"] = arg.value
        for kw in call.keywords:
            if kw.arg != "ignore_case" or not isinstance(kw.value, ast.Constant):
                raise PlatformError(f"argument {kw.arg or '**'} is not a literal ignore_case")
            args["ignore_case"] = kw.value.value
        ignore_case = args.get("ignore_case", True)
        if not isinstance(ignore_case, bool):
            raise PlatformError("ignore_case must be True or False")
        # Inspect's includes: target in output, casefolded when ignoring case, no stripping, and an
        # empty target is contained in anything
        return BuiltinGrader(key=key, function="contains", options={
            "case_sensitive": not ignore_case, "case_fold": "casefold", "strip": False,
            "empty_submission_zero": False, "empty_reference_zero": False})

    def can_export(self, grader: GraderDefinition) -> Support:
        if not plain_extractor(grader):
            return Support.no("Inspect scorers read the model output; the studio extractor is not exported")
        if isinstance(grader, BuiltinGrader):
            o = grader.options
            if grader.function not in COMPARISONS:
                return Support.no(f"the {grader.function} comparison is not written for Inspect yet")
            if o.reference_field:
                return Support.no("Inspect's target is the sample's answer, not a dataset row field; "
                                  "OpenAI graders can read it")
            if o.regex_dialect != "python":
                return Support.no("the JavaScript regex dialect is not written for Inspect; promptfoo reads it")
            if o.normalize or o.values or o.tolerance:
                return Support.no("normalised text, value lists and tolerances are not written for Inspect yet")
            return Support.yes()
        if isinstance(grader, FunctionGrader):
            problem = refusal(grader, LABEL)  # Letta and promptfoo contracts travel in an adapter
            return Support.no(problem) if problem else Support.yes()
        return Support.no(
            f"a {grader.kind.replace('_', ' ')} is not exported: Inspect's model-graded scorers use their "
            "own prompts and would score differently"
        )

    def _export(self, grader: GraderDefinition) -> ExportResult:
        warnings: list[str] = []
        fn = grader.key.replace("-", "_").replace(".", "_")
        if isinstance(grader, BuiltinGrader):
            body = self._builtin(grader)
            warnings += unexported(grader, {"function", "options", "extractor", "name"}, LABEL)
        else:
            assert isinstance(grader, FunctionGrader)
            if grader.contract == "adaptive":
                body = self._adaptive(grader)
            elif grader.contract == "mka1_sample":
                body = self._function(grader)
            else:
                body = self._adapted(grader)
                warnings.append(f"{grader.key}: its {grader.contract} source runs inside a generated adapter "
                                "(the sample's metadata is its row)")
            warnings += unexported(grader, {"source", "contract", "name", "extractor"}, LABEL)
        module = (
            f"{docstring(f'{grader.name or grader.key}: Inspect AI scorer exported by Grader Studio (grader {grader.key!r}).')}\n\n"
            "from __future__ import annotations\n\n"
            "import re  # noqa: F401\n\n"
            "import sys  # noqa: F401\n"
            "import types  # noqa: F401\n\n"
            "from inspect_ai import Task, task\n"
            "from inspect_ai.scorer import Score, Target, mean, scorer\n"
            "from inspect_ai.solver import TaskState\n\n"
            f"{body}\n\n"
            "@scorer(metrics=[mean()])\n"
            f"def {fn}():\n"
            "    async def score(state: TaskState, target: Target) -> Score:\n"
            "        output = state.output.completion\n"
            "        value = await _score(state, output, target.text)\n"
            f"        return Score(value=value, answer=output, metadata={{'grader': {grader.key!r}}})\n\n"
            "    return score\n\n\n"
            "@task\n"
            f"def {fn}_task() -> Task:\n"
            '    """Add a dataset and a solver; the scorer is the exported grader."""\n'
            f"    return Task(dataset=[], scorer={fn}())\n"
        )
        return ExportResult(files={f"{fn}_inspect.py": module}, warnings=warnings)

    @staticmethod
    def _builtin(grader: BuiltinGrader) -> str:
        o = grader.options
        case = CASE_DEFAULT[grader.function] if o.case_sensitive is None else o.case_sensitive
        reference = repr(o.reference) if o.reference is not None else "target"
        value = COMPARISONS[grader.function]
        if o.negate:
            value = f"1.0 - {value}"
        empty = ["not output"] if o.empty_submission_zero else []  # the studio's (Letta's) early zeros
        if o.empty_reference_zero:
            empty.append("not reference")
        guard = f"    if {' or '.join(empty)}:\n        return 0.0\n" if empty else ""
        return (
            f"STRIP = {grader.strips!r}\nCASE_SENSITIVE = {case!r}\n\n\n"
            "def fold(text: str) -> str:\n"
            "    text = text.strip() if STRIP else text\n"
            f"    return text if CASE_SENSITIVE else text.{'casefold' if o.case_fold == 'casefold' else 'lower'}()\n\n\n"
            "async def _score(state: TaskState, output: str, target: str) -> float:\n"
            f"    reference = {reference}\n"
            f"{guard}"
            f"    return {value}\n"
        )

    @staticmethod
    def _function(grader: FunctionGrader) -> str:
        return (
            f"METRIC = {grader.metric.key!r}\n\n"
            "# --- the grader's own source, unchanged (MKA1 sample contract) ---\n"
            f"{grader.source.rstrip()}\n"
            "# --- end of the grader's source ---\n\n\n"
            "async def _score(state: TaskState, output: str, target: str) -> float:\n"
            "    question = state.input_text\n"
            '    sample = {"output_text": output, "extracted_output": output, "prompt": question}\n'
            '    item = {"input": question, "target": target, "reference_answer": target}\n'
            "    result = grade(sample, item)  # noqa: F821 - defined by the source above\n"
            "    if isinstance(result, dict):\n"
            '        scores = result.get("scores") or {}\n'
            "        return float(scores.get(METRIC, next(iter(scores.values()), 0.0)))\n"
            "    return float(result)\n"
        )

    @staticmethod
    def _adapted(grader: FunctionGrader) -> str:
        return (
            "# Grader Studio's stdlib adapter around the grader's unchanged source (a string literal)\n"
            f"_ADAPTER_SOURCE = {adapter_module(grader, 'mka1')!r}\n"
            "_ADAPTER = types.ModuleType('studio_adapter')\n"
            "exec(compile(_ADAPTER_SOURCE, 'studio_adapter.py', 'exec'), _ADAPTER.__dict__)\n\n\n"
            "async def _score(state: TaskState, output: str, target: str) -> float:\n"
            "    return await _ADAPTER.ascore(output, target, state.input_text, dict(state.metadata or {}))\n"
        )

    @staticmethod
    def _adaptive(grader: FunctionGrader) -> str:
        shim = (GUEST_DIR / "shims" / "adaptive_harmony.py").read_text(encoding="utf-8")
        return (
            "# Grader Studio's stdlib stand-in for adaptive_harmony.StringThread, for the source below\n"
            f"_SHIM = {shim!r}\n"
            "if 'adaptive_harmony' not in sys.modules:\n"
            "    _module = types.ModuleType('adaptive_harmony')\n"
            "    exec(compile(_SHIM, 'adaptive_harmony.py', 'exec'), _module.__dict__)\n"
            "    sys.modules['adaptive_harmony'] = _module\n\n"
            "# --- the grader's own source, unchanged (Adaptive contract) ---\n"
            f"{grader.source.rstrip()}\n"
            "# --- end of the grader's source ---\n\n\n"
            "async def _score(state: TaskState, output: str, target: str) -> float:\n"
            "    from adaptive_harmony import StringThread\n\n"
            "    turns = [(m.role, m.text) for m in state.messages if m.role != 'assistant']\n"
            "    metadata = {**(state.metadata or {}), 'expected': target}\n"
            "    result = grade(StringThread(turns + [('assistant', output)], metadata))  # noqa: F821\n"
            "    if hasattr(result, '__await__'):\n"
            "        result = await result\n"
            "    return float(result)\n"
        )


PLATFORM = InspectPlatform()
