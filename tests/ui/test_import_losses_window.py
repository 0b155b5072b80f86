"""The window's import lists every entry of the file it could not import, as the CLI does (issue 26)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from studio.core.platforms import get_platform

CONFIG = """\
prompts: ['{{input}}']
providers: [echo]
defaultTest:
  assert:
    - type: contains
      value: Paris
    - type: javascript
      value: output.length < 9
tests:
  - description: capital
    assert:
      - type: javascript
        value: output.includes('Paris')
      - type: levenshtein
        value: Paris
"""


def write(tmp_path: Path) -> Path:
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def test_window_import_lists_the_same_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: Any) -> None:
    monkeypatch.setenv("GRADER_STUDIO_NODE", "")
    shown: list[str] = []
    monkeypatch.setattr(window.grader_actions.messages, "error", lambda title, text: shown.append(str(text)))
    created = window.grader_actions.import_file(str(write(tmp_path)))
    assert created == ["contains-1"]
    [text] = shown
    assert "3 entries of the file not imported" in text
    for line in get_platform("promptfoo").import_(write(tmp_path)).report():
        assert line in text
