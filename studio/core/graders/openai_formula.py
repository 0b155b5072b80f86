"""A multi grader's ``calculate_output``, read by a parser (never ``eval``).

OpenAI's graders guide lists what the formula may use: the sub-graders' names, numbers, the
operators ``+ - * / ^`` and parentheses, and the functions ``min max abs floor ceil exp sqrt log``.
The formula is parsed once into a tree (a bad one is refused at import with the column it fails
at) and evaluated per sample over the sub-graders' scores.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from studio.core.errors import StudioError

FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min, "max": max, "abs": abs, "floor": math.floor, "ceil": math.ceil,
    "exp": math.exp, "sqrt": math.sqrt, "log": math.log,
}
#: functions of one argument; min and max take one or more
UNARY = {"abs", "floor", "ceil", "exp", "sqrt", "log"}
_TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?|([A-Za-z_][\w.]*)|(\*\*|[-+*/^(),]))")


class FormulaError(StudioError):
    """A ``calculate_output`` that is not a formula, or one that cannot be computed for a sample."""


@dataclass(frozen=True)
class Node:
    op: str  # "num", "name", "neg", "+", "-", "*", "/", "^", "call"
    value: float = 0.0
    name: str = ""
    args: tuple[Node, ...] = ()


def _lex(text: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            raise FormulaError(f"calculate_output {text!r}: unexpected {text[pos:].strip()[0]!r} at column {pos + 1}")
        number = match.group(0).strip() if match.group(1) else None
        if number is not None:
            out.append(("num", number, match.start(1) + 1))
        elif match.group(2):
            out.append(("name", match.group(2), match.start(2) + 1))
        else:
            out.append(("op", "^" if match.group(3) == "**" else match.group(3), match.start(3) + 1))
        pos = match.end()
    return out


class _Parser:
    """expr := term (('+'|'-') term)*; term := unary (('*'|'/') unary)*; unary := '-' unary | power;
    power := atom ('^' unary)?; atom := number | name | name '(' args ')' | '(' expr ')'."""

    def __init__(self, text: str, names: set[str]) -> None:
        self.text, self.names = text, names
        self.tokens = _lex(text)
        self.pos = 0

    def fail(self, what: str) -> FormulaError:
        if self.pos < len(self.tokens):
            _, value, col = self.tokens[self.pos]
            return FormulaError(f"calculate_output {self.text!r}: {what}, found {value!r} at column {col}")
        return FormulaError(f"calculate_output {self.text!r}: {what}, found the end of the formula")

    def peek(self, *values: str) -> bool:
        return self.pos < len(self.tokens) and self.tokens[self.pos][0] == "op" and self.tokens[self.pos][1] in values

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def parse(self) -> Node:
        if not self.tokens:
            raise FormulaError("calculate_output is empty")
        node = self.expr()
        if self.pos != len(self.tokens):
            raise self.fail("expected an operator")
        return node

    def expr(self) -> Node:
        node = self.term()
        while self.peek("+", "-"):
            op = self.take()[1]
            node = Node(op, args=(node, self.term()))
        return node

    def term(self) -> Node:
        node = self.unary()
        while self.peek("*", "/"):
            op = self.take()[1]
            node = Node(op, args=(node, self.unary()))
        return node

    def unary(self) -> Node:
        if self.peek("-"):
            self.take()
            return Node("neg", args=(self.unary(),))
        if self.peek("+"):
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> Node:
        base = self.atom()
        if self.peek("^"):
            self.take()
            return Node("^", args=(base, self.unary()))  # right-associative: 2^3^2 = 2^9
        return base

    def atom(self) -> Node:
        if self.pos >= len(self.tokens):
            raise self.fail("expected a number, a grader name or '('")
        kind, value, _ = self.tokens[self.pos]
        if kind == "num":
            self.pos += 1
            return Node("num", value=float(value))
        if kind == "name":
            self.pos += 1
            if self.peek("("):
                if value not in FUNCTIONS:
                    self.pos -= 1
                    raise self.fail(f"unknown function (known: {', '.join(FUNCTIONS)})")
                self.take()
                args = [self.expr()]
                while self.peek(","):
                    self.take()
                    args.append(self.expr())
                if not self.peek(")"):
                    raise self.fail("expected ')'")
                self.take()
                if value in UNARY and len(args) != 1:
                    raise FormulaError(f"calculate_output {self.text!r}: {value}() takes one argument")
                return Node("call", name=value, args=tuple(args))
            if value not in self.names:
                self.pos -= 1
                raise self.fail(f"unknown grader name (the graders are {', '.join(sorted(self.names))})")
            return Node("name", name=value)
        if self.peek("("):
            self.take()
            node = self.expr()
            if not self.peek(")"):
                raise self.fail("expected ')'")
            self.take()
            return node
        raise self.fail("expected a number, a grader name or '('")


def parse(text: str, names: set[str]) -> Node:
    """The formula's tree; ``names`` are the sub-graders' names it may read."""
    return _Parser(text, names).parse()


def evaluate(node: Node, scores: Mapping[str, float]) -> float:
    """The formula's value for one sample; a division by zero or a math domain error is a
    FormulaError (the sample's error, never a made-up number)."""
    try:
        value = _eval(node, scores)
    except ZeroDivisionError:
        raise FormulaError("calculate_output divides by zero for this sample") from None
    except (ValueError, OverflowError) as exc:
        raise FormulaError(f"calculate_output cannot be computed for this sample ({exc})") from None
    if not math.isfinite(value):
        raise FormulaError("calculate_output is not a finite number for this sample")
    return value


def _eval(node: Node, scores: Mapping[str, float]) -> float:
    op = node.op
    if op == "num":
        return node.value
    if op == "name":
        return float(scores[node.name])
    args = [_eval(a, scores) for a in node.args]
    if op == "neg":
        return -args[0]
    if op == "call":
        return float(FUNCTIONS[node.name](*args))
    left, right = args
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if op == "/":
        return left / right
    return float(math.pow(left, right))  # "^"
