"""What an export loses, measured: the written files are imported back and compared with the graders.

An export is only trusted to carry a grader when reading its files back gives the same definition.
``read_back(platform, result)`` writes the files to a private temporary folder, finds every file this
platform (or, for a whole eval, any platform) recognises and imports it; ``losses(graders, back)``
names, per grader, each field whose value did not come back (``name``, ``description``, ``tags``,
``endpoint``...). The CLI's ``export`` prints them and exits 3, so nothing is lost silently; a test
runs the comparison on every demo grader and every target.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from studio.core.json_types import JsonObject
from studio.core.models import GraderDefinition, dump_grader
from studio.core.safe_files import write_tree

from ._base import ExportResult, Platform, PlatformError

#: stands for a grader that did not come back at all
WHOLE = "(the whole grader: its files cannot be imported back)"


def read_back(platform: Platform, result: ExportResult,
              originals: Sequence[GraderDefinition] = ()) -> dict[str, GraderDefinition]:
    """The graders this platform's importer reads from the export's files, by key (empty when the
    platform has no importer). A file the importer refuses is not read; its graders count as lost.
    Where two files of one export give the same key (MKA1's grader and task files), the one closer to
    the original in ``originals`` is kept: the file to import is the one that carries more."""
    if not platform.imports or not result.files:
        return {}
    wanted = {g.key: dump_grader(g) for g in originals}
    found: dict[str, GraderDefinition] = {}
    with tempfile.TemporaryDirectory(prefix="grader-studio-roundtrip-") as tmp:
        root = Path(tmp)
        write_tree(root, result.files)
        for name in sorted(result.files):
            path = root / name
            if not platform.detect(path):
                continue
            try:
                imported = platform.import_(path)
            except PlatformError:
                continue
            for grader in imported.graders:
                before = found.get(grader.key)
                if before is None or (grader.key in wanted and len(_differing(wanted[grader.key], dump_grader(grader)))
                                      < len(_differing(wanted[grader.key], dump_grader(before)))):
                    found[grader.key] = grader
    return found


def _differing(before: JsonObject, after: JsonObject, prefix: str = "") -> list[str]:
    """The fields (dotted for a composite's or a jury's parts) whose values differ."""
    out = []
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a == b:
            continue
        if name in ("components", "jurors") and isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                for part in sorted(set(x) | set(y)):
                    if x.get(part) == y.get(part):
                        continue
                    if part == "grader" and isinstance(x.get(part), dict) and isinstance(y.get(part), dict):
                        out += _differing(x[part], y[part], f"{prefix}{name}[{i}].grader.")
                    else:
                        out.append(f"{prefix}{name}[{i}].{part}")
            continue
        out.append(prefix + name)
    return out


def losses(graders: Iterable[GraderDefinition], back: dict[str, GraderDefinition],
           refused: Sequence[str] = ()) -> dict[str, list[str]]:
    """Per grader key (refused ones left out), the fields that did not come back equal; {} when
    every grader came back the same."""
    out: dict[str, list[str]] = {}
    for grader in graders:
        if grader.key in refused:
            continue
        again = back.get(grader.key)
        if again is None:
            out[grader.key] = [WHOLE]
            continue
        fields = _differing(dump_grader(grader), dump_grader(again))
        if fields:
            out[grader.key] = fields
    return out


def measure(platform: Platform, graders: Sequence[GraderDefinition], result: ExportResult) -> dict[str, list[str]]:
    """``losses`` of this export, read back by ``platform``'s importer."""
    return losses(graders, read_back(platform, result, graders), list(result.refused))
