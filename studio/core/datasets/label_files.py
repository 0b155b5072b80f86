"""Label files (JSONL or CSV): read all or nothing, naming the line that is wrong; write them back.

A line has ``sample_id`` and either ``label`` (PASS/FAIL/NA, or true/false, case-insensitive) or
``score`` (a number), optionally ``note`` and ``labeler``. CSV cells are text: an empty ``label`` or
``score`` cell counts as absent.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models.labels import Label, LabelInput
from studio.core.outside import iso_time
from studio.core.safe_files import file_problem
from studio.core.spreadsheet import CsvDictWriter

from .readers import DatasetError, csv_rows, jsonl_rows

_VERDICTS = {"pass": "PASS", "fail": "FAIL", "na": "NA", "n/a": "NA", "true": "PASS", "false": "FAIL"}
FIELDS = ("sample_id", "label", "score", "note", "labeler", "version", "created_at")


def _rows(path: Path) -> Iterator[tuple[int, JsonValue]]:
    """The file's rows by the datasets' own readers (a broken CSV record or JSON line is refused with
    its line, never half-read); CSV cells stay text, an empty one is absent."""
    if path.suffix.lower() != ".csv":
        yield from jsonl_rows(path)
        return
    rows = csv_rows(path)
    first = next(rows, None)
    if first is None:
        return
    if "sample_id" not in first[1]:
        raise DatasetError(str(path), 1, "the CSV header needs a sample_id column")
    for number, row in itertools.chain((first,), rows):
        yield number, {k: v for k, v in row.items() if k and v is not None}


def _label(row: JsonValue) -> LabelInput:
    if not isinstance(row, dict):
        raise ValueError("a line must be an object with sample_id and label or score")
    if "sample_id" not in row or row["sample_id"] in (None, ""):
        raise ValueError("no sample_id")
    verdict = row.get("label")
    if isinstance(verdict, bool):
        verdict = "PASS" if verdict else "FAIL"
    elif verdict is not None:
        verdict = _VERDICTS.get(str(verdict).strip().lower())
        if verdict is None:
            raise ValueError(f"label {row['label']!r} is not PASS, FAIL, NA, true or false")
    score = row.get("score")
    if score is not None:
        if isinstance(score, bool):
            raise ValueError("score must be a number, not true/false")
        try:
            score = float(score)
        except (TypeError, ValueError):
            raise ValueError(f"score {row['score']!r} is not a number") from None
        if not math.isfinite(score):
            raise ValueError(f"score {row['score']!r} is not a finite number")
    if verdict is None and score is None:
        raise ValueError("give a label (PASS/FAIL/NA, true/false) or a score")
    return LabelInput(sample_id=str(row["sample_id"]), verdict=verdict, score=score,
                      note=str(row.get("note") or ""), labeler=str(row.get("labeler") or ""))


def read_labels(path: Path | str, known_ids: Iterable[str] | None = None) -> list[LabelInput]:
    """Every label of the file, or a ``DatasetError`` naming the first bad line (an unknown sample
    id or a sample labelled twice included)."""
    path = Path(path)
    if (problem := file_problem(path)) is not None:  # a FIFO or a device would never end
        raise DatasetError(str(path), None, problem)
    known = None if known_ids is None else set(known_ids)
    seen: dict[str, int] = {}
    out = []
    for number, row in _rows(path):
        try:
            label = _label(row)
        except (ValueError, ValidationError) as exc:
            message = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise DatasetError(str(path), number, message) from None
        if known is not None and label.sample_id not in known:
            raise DatasetError(str(path), number, f"unknown sample id {label.sample_id!r} (not in the dataset)")
        if label.sample_id in seen:
            raise DatasetError(str(path), number, f"sample {label.sample_id!r} is already labelled on line "
                                                  f"{seen[label.sample_id]}")
        seen[label.sample_id] = number
        out.append(label)
    if not out:
        raise DatasetError(str(path), None, "no labels in the file")
    return out


def label_record(label: Label) -> JsonObject:
    return {"sample_id": label.sample_id, "label": label.verdict, "score": label.score, "note": label.note,
            "labeler": label.labeler, "version": label.version, "created_at": iso_time(label.created_at)}


def write_labels(items: Iterable[Label], out: TextIO, fmt: str = "jsonl", *, raw: bool = False) -> int:
    """JSONL or CSV; CSV text cells a spreadsheet would read as formulas get a leading ``'`` unless
    ``raw`` (studio.core.spreadsheet)."""
    count = 0
    if fmt == "csv":
        writer = CsvDictWriter(out, list(FIELDS), raw=raw)
        writer.writeheader()
        for label in items:
            writer.writerow({k: ("" if v is None else v) for k, v in label_record(label).items()})
            count += 1
        return count
    for label in items:
        out.write(json.dumps(label_record(label), ensure_ascii=False) + "\n")
        count += 1
    return count
