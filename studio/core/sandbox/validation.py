"""The checks a function grader passes before it is saved, returned as data for the CLI and editor.

Adaptive's five in order - syntax, structure, signature, execution, test run - stopping at the first
failure (later checks are reported as skipped), preceded by the 64 KiB size limit; the other
contracts get the same checks with their own entry point and mock sample. Execution and the test run
happen in the sandbox, never in the studio's process.
"""

from __future__ import annotations

import ast
from typing import Literal

from pydantic import BaseModel, ConfigDict

from studio.core.models import MAX_SOURCE_BYTES, Contract, FunctionGrader, Sample, Turn

from . import payloads
from .pool import WorkerPool, shared_pool
from .results import OK, batch_outcomes, to_outcome
from .session import GraderSession, GraderSpec

CheckStatus = Literal["passed", "failed", "warning", "skipped"]
CHECK_NAMES = ("size", "syntax", "structure", "signature", "execution", "test run")

ENTRY = {"adaptive": "grade", "mka1_sample": "grade", "mka1_batch": "grade_batch", "promptfoo": "get_assert"}
PARAMS: dict[str, tuple[int, ...]] = {
    "adaptive": (1,),
    "mka1_sample": (2, 3),
    "mka1_batch": (1, 2),
    "letta": (2,),
    "promptfoo": (2,),
}


class Check(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    status: CheckStatus
    message: str = ""
    line: int | None = None


# Contracts whose platform calls the entry synchronously: an ``async def`` there returns a coroutine
# the platform never awaits. Adaptive (one parameter, a thread) and Letta graders may be async, and so
# may promptfoo's get_assert (its Python wrapper runs a coroutine function with asyncio.run).
SYNC_CONTRACTS = {
    "mka1_sample": "MKA1 and OpenAI python graders call `def grade(sample, item)` synchronously "
                   "(an async grader is Adaptive's `async def grade(thread)`, one parameter)",
    "mka1_batch": "MKA1 calls `def grade_batch(samples[, ctx])` synchronously",
}


def _mock_sample() -> Sample:
    return Sample(
        id="mock-1",
        messages=[Turn(role="user", content="What is 2+2?")],
        completion="4",
        expected="4",
        fields={"question": "What is 2+2?", "answer": "4", "input": "What is 2+2?"},
    )


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _is_letta_marked(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "grader":
            return True
    return False


def _entry(tree: ast.Module, contract: str, function_name: str | None) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, str]:
    """The entry function, or None with the reason."""
    functions = _functions(tree)
    if contract == "letta" and function_name is None:
        marked = [f for f in functions.values() if _is_letta_marked(f)]
        if len(marked) == 1:
            return marked[0], ""
        if len(marked) > 1:
            return None, "several @grader functions: set the function name"
        return None, "no top-level @grader function (from letta_evals.decorators import grader)"
    name = function_name or ENTRY[contract]
    fn = functions.get(name)
    if fn is None:
        nested = any(
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name for n in ast.walk(tree)
        )
        where = " (it is nested: it must be at module top level)" if nested else ""
        kind = "async def" if contract == "adaptive" else "def"
        return None, f"no top-level `{kind} {name}(...)`{where}"
    if contract == "adaptive" and not isinstance(fn, ast.AsyncFunctionDef):
        return None, "`grade` must be async: write `async def grade(thread: StringThread) -> float`"
    if contract in SYNC_CONTRACTS and isinstance(fn, ast.AsyncFunctionDef):
        return None, f"`{fn.name}` is async, but {SYNC_CONTRACTS[contract]}"
    return fn, ""


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef, contract: str) -> Check:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    allowed = PARAMS[contract]
    if args.vararg is None and len(positional) not in allowed or args.kwonlyargs and any(
        d is None for d in args.kw_defaults
    ):
        want = " or ".join(str(n) for n in allowed)
        return Check(
            name="signature",
            status="failed",
            message=f"`{fn.name}` takes {len(positional)} parameter(s); the contract passes {want}",
            line=fn.lineno,
        )
    warnings: list[str] = []
    if contract == "adaptive":
        ann = positional[0].annotation if positional else None
        if ann is None:
            warnings.append("the parameter has no `StringThread` annotation")
        elif ast.unparse(ann).split(".")[-1] != "StringThread":
            warnings.append(f"the parameter is annotated `{ast.unparse(ann)}`, expected `StringThread`")
        if fn.returns is None:
            warnings.append("the return is not annotated `-> float`")
        elif ast.unparse(fn.returns) not in ("float", "int"):
            warnings.append(f"the return is annotated `{ast.unparse(fn.returns)}`, expected `float`")
    if warnings:
        return Check(name="signature", status="warning", message="; ".join(warnings), line=fn.lineno)
    return Check(name="signature", status="passed", message=f"{fn.name}({', '.join(a.arg for a in positional)})", line=fn.lineno)


def _static_checks(source: str, contract: str, function_name: str | None) -> tuple[list[Check], bool]:
    checks: list[Check] = []
    size = len(source.encode())
    if size > MAX_SOURCE_BYTES:
        checks.append(Check(name="size", status="failed", message=f"source is {size} bytes; the limit is 64 KiB"))
        return checks, False
    checks.append(Check(name="size", status="passed", message=f"{size} bytes"))
    try:
        tree = ast.parse(source, filename="grader.py")
        compile(tree, "grader.py", "exec")
    except SyntaxError as exc:
        checks.append(Check(name="syntax", status="failed", message=str(exc.msg), line=exc.lineno))
        return checks, False
    checks.append(Check(name="syntax", status="passed", message="compiles"))
    fn, reason = _entry(tree, contract, function_name)
    if fn is None:
        checks.append(Check(name="structure", status="failed", message=reason))
        return checks, False
    checks.append(Check(name="structure", status="passed", message=f"top-level `{fn.name}` found", line=fn.lineno))
    signature = _signature(fn, contract)
    checks.append(signature)
    return checks, signature.status != "failed"


#: why a sandbox check is ``skipped`` in a quick check (``execute=False``)
NOT_RUN = "not run yet: Validate runs it in the sandbox"


def validate(
    source: str,
    contract: Contract,
    *,
    function_name: str | None = None,
    timeout_seconds: float = 10.0,
    memory_mb: int = 512,
    pool: WorkerPool | None = None,
    execute: bool = True,
) -> list[Check]:
    """Every check in order; after the first failure the rest are ``skipped``. ``execute=False``:
    only the checks that run nothing (size, syntax, structure, signature), quick enough for a save
    and for every pause in typing; the sandbox's are then ``skipped`` as not run yet."""
    checks, ok = _static_checks(source, contract, function_name)
    if ok and execute:
        checks += _sandbox_checks(source, contract, function_name, timeout_seconds, memory_mb, pool)
    done = {c.name for c in checks}
    why = NOT_RUN if ok and not execute else "skipped: an earlier check failed"
    checks += [Check(name=n, status="skipped", message=why) for n in CHECK_NAMES if n not in done]
    return checks


def _sandbox_checks(
    source: str, contract: str, function_name: str | None, timeout: float, memory_mb: int, pool: WorkerPool | None
) -> list[Check]:
    grader = FunctionGrader(
        key="validation", source=source, contract=contract, function_name=function_name,
        timeout_seconds=timeout, memory_mb=memory_mb,
    )
    pool = pool or shared_pool()
    session = GraderSession(pool, GraderSpec.of(grader, pool.settings))
    try:
        loaded = session.load()
        if not loaded.get("ok"):
            stage = loaded.get("stage")
            name = "structure" if stage == "structure" else "syntax" if stage == "syntax" else "execution"
            return [Check(name=name, status="failed", message=str(loaded.get("error")), line=loaded.get("line"))]
        checks = [Check(name="execution", status="passed", message="module body ran in the sandbox")]
        checks.append(_test_run(session, contract, grader.metric.key, memory_mb))
        return checks
    finally:
        session.close()


def _test_run(session: GraderSession, contract: str, key: str, memory_mb: int) -> Check:
    sample = _mock_sample()
    if contract == "mka1_batch":
        entry = session.run(payloads.build(contract, [sample]), whole=True)[0]
        if entry[1] != OK:
            outcome = to_outcome(entry, contract, key, memory_mb, 64)
        else:
            outcome = batch_outcomes(entry[2], [sample.id], key)[0][0]
    else:
        entry = session.run(payloads.build(contract, [sample]))[0]
        outcome = to_outcome(entry, contract, key, memory_mb, 64)
    if outcome.status != "ok":
        return Check(name="test run", status="failed", message=outcome.error or outcome.status, line=outcome.details.get("line"))
    shown = "no per-sample score (batch metrics only)" if outcome.score is None else f"returned {outcome.score:g}"
    return Check(name="test run", status="passed", message=f"mock sample ('What is 2+2?' -> '4'): {shown}")


def detect_contract(source: str) -> Contract | None:
    """Which platform's grader this is, from its top-level functions and imports."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    functions = _functions(tree)
    if any(_is_letta_marked(f) for f in functions.values()) or "letta_evals" in source:
        return "letta"
    grade = functions.get("grade")
    if isinstance(grade, ast.AsyncFunctionDef) and len(grade.args.args) == 1:
        return "adaptive"
    if "grade_batch" in functions:
        return "mka1_batch"
    if grade is not None and len([*grade.args.posonlyargs, *grade.args.args]) in (2, 3):
        return "mka1_sample"
    if "get_assert" in functions:
        return "promptfoo"
    if isinstance(grade, ast.AsyncFunctionDef):
        return "adaptive"
    return None
