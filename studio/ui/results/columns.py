"""The grid's columns: title, sort key, width and how a cell of each is written."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from studio.core.store.results_query import ResultRow


def one_line(text: str, limit: int = 240) -> str:
    """Cells show one line: newlines and runs of spaces collapse, the view elides the rest."""
    flat = " ".join(text[: limit * 2].split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def score_text(row: ResultRow) -> str:
    if row.score is None:
        return "—"
    extra = [f"{k} {v:.3g}" for k, v in row.scores.items() if k != "score" and isinstance(v, (int, float))]
    base = f"{row.score:.3f}"
    return f"{base}  ({', '.join(extra)})" if extra else base


def latency_text(row: ResultRow) -> str:
    ms = row.latency_ms
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def tokens_text(row: ResultRow) -> str:
    total = row.prompt_tokens + row.completion_tokens
    return f"{total:,}" if total else ""


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    width: int
    text: Callable[[ResultRow], str]
    numeric: bool = False
    long_text: Callable[[ResultRow], str] | None = None  # tooltip source for elided columns
    tip: str = ""  # the header's tooltip (a short header's whole name); the title when empty
    #: "pass" or "fail" for a cell tinted by its verdict (a suite's score cells), None for no tint
    verdict: Callable[[ResultRow], str | None] | None = None


# status and score first: what a run is read for stays in view on a laptop screen
COLUMNS: tuple[Column, ...] = (
    Column("idx", "#", 44, lambda r: str(r.idx), numeric=True),
    Column("sample_id", "Sample", 86, lambda r: r.sample_id, long_text=lambda r: r.sample_id),
    Column("status", "Status", 64, lambda r: r.status),
    Column("score", "Score", 64, score_text, numeric=True, long_text=score_text),
    Column("label", "Label", 56, lambda r: r.label),  # the human label, beside the judge's score
    Column("input", "Input", 260, lambda r: one_line(r.input), long_text=lambda r: r.input),
    Column("completion", "Completion", 260, lambda r: one_line(r.completion), long_text=lambda r: r.completion),
    Column("expected", "Expected", 150, lambda r: one_line(r.expected), long_text=lambda r: r.expected),
    Column("error", "Error", 200, lambda r: one_line(r.error), long_text=lambda r: r.error),
    Column("latency", "Latency", 76, latency_text, numeric=True),
    Column("tokens", "Tokens", 70, tokens_text, numeric=True,
           long_text=lambda r: f"{r.prompt_tokens:,} prompt + {r.completion_tokens:,} completion"),
    Column("cached", "Cached", 66, lambda r: "✓" if r.cached else ""),
)

COLUMN_INDEX = {c.key: i for i, c in enumerate(COLUMNS)}
