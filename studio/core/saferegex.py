"""Regular expressions from users and samples, matched on the host without ever running unbounded.

Built-in graders, the pattern extractor and a letter judge's ``grade_pattern`` match patterns a
grader author or a dataset row wrote, in the host process, for speed. Python's ``re`` backtracks:
``^(a+)+$`` on ``"a" * 34 + "!"`` runs for minutes and cannot be interrupted from another thread.
So a pattern is always compiled by ``re`` first (its errors and its meaning are the reference), then
matched by one of two engines:

- **RE2** (google-re2, linear time) when it gives ``re``'s answer on this text: pattern and
  text are ASCII (RE2's ``\\w``, ``\\d``, ``\\b`` and case folding are ASCII-only), the text holds none
  of the whitespace RE2's ``\\s`` leaves out, no ``$`` meets a newline (``re``'s ``$`` also matches
  before a final ``\\n``), and the pattern avoids the spellings the two read differently
  (``{,n}``, ``[[:alpha:]]``); for ``search`` the pattern also has no groups (``matches`` does not care).
  That is the common case and costs no more than ``re``; a differential test keeps it honest.
- **a helper process** running ``re`` itself otherwise (backreferences, lookarounds, Unicode text),
  with a deadline the host enforces: past ``DEADLINE_S`` the helper is killed and the caller gets
  ``RegexTimeout``, which a sample shows as its error. One helper per process, reused.

A deadline per match is not enough when a dataset brings the patterns: ten thousand rows, each with
its own slow pattern, would cost ten thousand deadlines. So a run spends at most ``RUN_BUDGET_S``
(and each grader in it ``GRADER_BUDGET_S``) on matches stopped at the deadline: the run's engine
opens a ``TimeoutBudget`` (``use_budget``), a suite names each grader's share (``budget_scope``), and
once it is spent every further match that needs the helper is refused at once with one sentence
(``RegexBudgetSpent``), while matches RE2 answers in linear time go on.

Why a helper process and not the ``regex`` package's in-process ``timeout=``: ``regex`` is another
engine (compatible with ``re`` in its VERSION0 mode by design, not the same code), while ``re`` is
the reference every pattern's meaning is checked against here; swapping would need a differential
test of its own. With the budget, the helper's cost (one process, reused) is bounded per run.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import functools
import json
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Protocol

from studio.core.json_types import JsonArray, JsonObject, JsonValue


@functools.cache
def _re2() -> ModuleType | None:
    """The [re2] fast path's module, imported on the first pattern compiled (not by every process
    that imports this module: a judge run's start-up, issue 32); None where google-re2 is missing
    (a dependency, but a platform without its wheel still works)."""
    try:
        import re2
    except ImportError:  # pragma: no cover - exercised where google-re2 has no wheel
        return None
    module: ModuleType = re2  # google-re2 ships no types (mypy sees Any)
    return module



#: how long one match may run in the helper before it is stopped (seconds)
DEADLINE_S = 2.0
#: flags the RE2 path reproduces; any other flag goes to the helper
_RE2_FLAGS = re.IGNORECASE | re.ASCII
#: characters Python's ``\\s`` matches and RE2's does not (among ASCII)
_RE2_SPACE_GAP = frozenset("\x0b\x1c\x1d\x1e\x1f")
_MULTILINE = re.compile(r"\(\?[a-zA-Z]*m")
#: ``[[:alpha:]]``: a POSIX class to RE2, a ``[`` and a ``:`` to Python (a class like ``[:=]`` is fine)
_POSIX_CLASS = re.compile(r"\[[^\]]*\[:")


class RegexFailure(RuntimeError):
    """A pattern that could not be matched safely here: the sample's error says why."""


class RegexTimeout(RegexFailure):
    """A match stopped at the deadline (catastrophic backtracking)."""

    def __init__(self, pattern: str) -> None:
        shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
        super().__init__(f"the regular expression {shown!r} ran longer than {DEADLINE_S:g} s on this text "
                         "and was stopped (catastrophic backtracking: avoid nested quantifiers such as (a+)+)")


#: seconds of deadline-stopped matches one run may spend, over all its graders
RUN_BUDGET_S = 30.0
#: seconds of deadline-stopped matches one grader of a run may spend
GRADER_BUDGET_S = 10.0


class RegexBudgetSpent(RegexFailure):
    """The run (or this grader) already spent its time on stopped matches: not run at all."""


class TimeoutBudget:
    """Seconds a run has spent on matches stopped at the deadline, in all and per grader."""

    def __init__(self, run_s: float | None = None, grader_s: float | None = None) -> None:
        self.run_s = RUN_BUDGET_S if run_s is None else run_s
        self.grader_s = GRADER_BUDGET_S if grader_s is None else grader_s
        self.spent = 0.0
        self.spent_by: dict[str, float] = {}
        self._lock = threading.Lock()

    def charge(self, scope: str, seconds: float) -> None:
        with self._lock:
            self.spent += seconds
            self.spent_by[scope] = self.spent_by.get(scope, 0.0) + seconds

    def refusal(self, scope: str) -> str | None:
        """The sentence that refuses a further slow match, or None while there is time left."""
        with self._lock:
            if self.spent >= self.run_s:
                return (f"not matched: this run already spent {self.spent:g} s on regular expressions stopped "
                        f"at the {DEADLINE_S:g} s deadline (at most {self.run_s:g} s per run), so patterns that "
                        "need the slow engine are no longer run; simplify the patterns (avoid nested "
                        "quantifiers such as (a+)+)")
            mine = self.spent_by.get(scope, 0.0)
            if mine >= self.grader_s:
                return (f"not matched: {scope} already spent {mine:g} s in this run on regular expressions "
                        f"stopped at the {DEADLINE_S:g} s deadline (at most {self.grader_s:g} s per grader), so "
                        "its patterns that need the slow engine are no longer run; simplify the patterns "
                        "(avoid nested quantifiers such as (a+)+)")
        return None


#: the run's budget and the grader whose share is being spent (set by the engine; None: unbounded
#: count of deadlines, as for a single try in the editor)
_BUDGET: contextvars.ContextVar[tuple[TimeoutBudget, str] | None] = contextvars.ContextVar(
    "saferegex_budget", default=None)


def use_budget(budget: TimeoutBudget, scope: str) -> contextvars.Token[tuple[TimeoutBudget, str] | None]:
    """Charge stopped matches in this context (and the tasks it starts) to ``budget``'s ``scope``."""
    return _BUDGET.set((budget, scope))


def end_budget(token: contextvars.Token[tuple[TimeoutBudget, str] | None]) -> None:
    """Stop charging the budget ``use_budget`` gave ``token`` for."""
    _BUDGET.reset(token)


@contextlib.contextmanager
def budget_scope(scope: str) -> Iterator[None]:
    """Within the current budget, charge to ``scope`` (one grader of a suite)."""
    current = _BUDGET.get()
    if current is None:
        yield
        return
    token = _BUDGET.set((current[0], scope))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _ask_helper(request: JsonObject, pattern: str) -> JsonValue:
    """The helper's answer, within the run's budget of stopped matches (see the module docstring)."""
    current = _BUDGET.get()
    if current is not None:
        refused = current[0].refusal(current[1])
        if refused is not None:
            raise RegexBudgetSpent(refused)
    try:
        return _helper().ask(request, pattern)
    except RegexTimeout:
        if current is not None:
            current[0].charge(current[1], DEADLINE_S)
        raise


@dataclass(frozen=True)
class Found:
    """What callers read from a match: ``group(n or name)`` and ``groups()``, as ``re.Match``."""

    spans: tuple[str | None, ...]
    names: dict[str, int] = field(default_factory=dict)

    def group(self, which: int | str = 0) -> str | None:
        index = self.names.get(which, -1) if isinstance(which, str) else which
        if not 0 <= index < len(self.spans):
            raise IndexError("no such group")
        return self.spans[index]

    def groups(self) -> tuple[str | None, ...]:
        return self.spans[1:]


@functools.lru_cache(maxsize=256)
def compile_python(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile`` (raises ``re.error``): the reference for what a pattern means."""
    return re.compile(pattern, flags)


def _to_re2(pattern: str) -> str | None:
    """The RE2 spelling of a Python pattern when the two read it alike, else None."""
    if not pattern.isascii() or "{," in pattern or _POSIX_CLASS.search(pattern):
        return None
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            width = {"u": 4, "U": 8}.get(e, 0)
            if width:  # \uXXXX (the JavaScript translation's spaces and line ends): RE2's \x{XXXX}
                out.append("\\x{" + pattern[i + 2:i + 2 + width] + "}")
                i += 2 + width
                continue
            out.append("\\z" if e == "Z" else c + e)  # re's \Z is the very end: RE2's \z
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


class _Re2Match(Protocol):
    """What is read of an RE2 match: the whole match's text."""

    def group(self, index: int) -> str: ...


class _Re2Program(Protocol):
    """What is used of a compiled RE2 program (google-re2's ``_Regexp``)."""

    def search(self, text: str) -> _Re2Match | None: ...


@functools.lru_cache(maxsize=256)
def _compile_re2(
pattern: str, flags: int) -> _Re2Program | None:
    re2 = _re2()
    if re2 is None or flags & ~_RE2_FLAGS:
        return None
    spelled = _to_re2(pattern)
    if spelled is None:
        return None
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not flags & re.IGNORECASE
    try:
        program: _Re2Program = re2.compile(spelled, options)  # google-re2 ships no types
        return program
    except Exception:  # re2.error: a construct RE2 does not have (backreference, lookaround...)
        return None


def _re2_for(pattern: str, flags: int, text: str) -> _Re2Program | None:
    """The RE2 program that gives ``re``'s answer on ``text``, or None."""
    if not text.isascii() or not _RE2_SPACE_GAP.isdisjoint(text):
        return None
    if "\n" in text and ("$" in pattern or _MULTILINE.search(pattern)):
        return None  # line ends: re's $ also matches before a final newline; (?m) edge cases
    return _compile_re2(pattern, flags)


def matches(pattern: str, text: str, flags: int = 0) -> bool:
    """``re.search(pattern, text, flags) is not None`` that never runs longer than ``DEADLINE_S``
    (raises ``re.error`` for an invalid pattern, ``RegexTimeout`` past the deadline)."""
    compile_python(pattern, flags)
    program = _re2_for(pattern, flags, text)
    if program is not None:
        return program.search(text) is not None
    return _ask_helper({"op": "search", "p": pattern, "f": flags, "t": text}, pattern) is not None


def search(pattern: str, text: str, flags: int = 0) -> Found | None:
    """``re.search(pattern, text, flags)`` that never runs longer than ``DEADLINE_S``. The groups of
    a match come from the helper: what a group holds after a repetition that matched empty differs
    between RE2 and ``re`` (``([a-c]|\\b)*``), though whether and where it matches does not."""
    compiled = compile_python(pattern, flags)
    program = _re2_for(pattern, flags, text)
    if program is not None:
        found = program.search(text)
        if found is None:  # no match is the same answer in both engines (and the usual attack)
            return None
        if compiled.groups == 0:
            return Found((found.group(0),))
    answer = _ask_helper({"op": "search", "p": pattern, "f": flags, "t": text}, pattern)
    return None if answer is None else Found(tuple(answer), dict(compiled.groupindex))


def findall(pattern: str, text: str, flags: int = 0) -> JsonArray:
    """``re.findall`` under the deadline (always in the helper: RE2 steps over empty matches
    differently from ``re``, and ``search_all`` extraction is rare)."""
    compile_python(pattern, flags)
    answer = _ask_helper({"op": "findall", "p": pattern, "f": flags, "t": text}, pattern)
    return [tuple(item) if isinstance(item, list) else item for item in answer]


# -- the helper process ---------------------------------------------------------------------------------------
# SIGALRM's default action ends the helper by itself (no Python code has to run, so a match holding
# the interpreter cannot delay it): a helper whose studio died mid-match does not outlive it by long
_SERVE = r"""
import json, re, signal, sys
alarm = getattr(signal, "alarm", lambda seconds: None)
for line in sys.stdin:
    ask = json.loads(line)
    alarm(ask["d"])
    pattern = re.compile(ask["p"], ask["f"])
    if ask["op"] == "search":
        m = pattern.search(ask["t"])
        answer = None if m is None else [m.group(0), *m.groups()]
    else:
        answer = pattern.findall(ask["t"])
    alarm(0)
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
"""


def _interpreter() -> str:
    """A Python to run the helper: the studio's own, or in a frozen app (whose executable is the app)
    the machine's ``python3``, as the sandbox's workers use; the helper needs only the stdlib."""
    if getattr(sys, "frozen", False):
        found = shutil.which("python3")
        if found is None:
            raise RegexFailure("this pattern needs RE2 or a Python interpreter (python3) to run under a "
                               "deadline, and this machine has neither")
        return found
    return sys.executable


class _Helper:
    """One ``python -c`` child answering match requests a line at a time, killed at the deadline."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._answers: queue.Queue[str | None] = queue.Queue()

    def _start(self) -> subprocess.Popen[str]:
        process = subprocess.Popen([_interpreter(), "-I", "-S", "-c", _SERVE], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                   encoding="utf-8", errors="surrogatepass")
        answers: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                answers.put(line)
            answers.put(None)

        threading.Thread(target=read, name="saferegex-reader", daemon=True).start()
        self._answers = answers
        return process

    def ask(self, request: JsonObject, pattern: str) -> JsonValue:
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._process = self._start()
            process = self._process
            assert process.stdin is not None
            request = {**request, "d": int(DEADLINE_S) + 3}  # the helper's own end, past the host's deadline
            try:
                process.stdin.write(json.dumps(request) + "\n")
                process.stdin.flush()
                line = self._answers.get(timeout=DEADLINE_S)
            except queue.Empty:
                self._stop()
                raise RegexTimeout(pattern) from None
            except OSError:
                line = None
            if line is None:
                self._stop()
                raise RegexFailure("the regular expression helper stopped unexpectedly")
            return json.loads(line)

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def close(self) -> None:
        with self._lock:
            self._stop()


_HELPER: _Helper | None = None
_HELPER_LOCK = threading.Lock()


def _helper() -> _Helper:
    global _HELPER
    with _HELPER_LOCK:
        if _HELPER is None:
            _HELPER = _Helper()
            atexit.register(_HELPER.close)
        return _HELPER
