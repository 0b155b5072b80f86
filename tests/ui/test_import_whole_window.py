"""The window's grader import refuses what the CLI's does, with the same sentence, creating nothing:
a grader holding a NUL and a file cut short (issue 43)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

SUITE = ('name: s\ndataset: d.jsonl\ntarget:\n  kind: letta_code\ngraders:\n  fine:\n    kind: tool\n'
         '    function: contains\n  bad:\n    kind: tool\n    function: contains\n    display_name: "bad\\0name"\n')


@pytest.mark.parametrize(("text", "said"), [
    (SUITE, "suite.yaml:12: grader 'bad' holds a NUL character"),
    (SUITE.replace('"bad\\0name"\n', "bad na"), "suite.yaml:12: the file ends in the middle of a line"),
])
def test_the_window_refuses_what_it_cannot_import_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        window: Any, text: str, said: str) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    shown: list[str] = []
    monkeypatch.setattr(window.grader_actions.messages, "error", lambda title, text: shown.append(str(text)))
    assert window.grader_actions.import_file(str(path)) == []
    assert len(shown) == 1 and said in shown[0], shown
    assert window.ctx.library.graders.list() == []
