"""The code editor: highlighting that keeps up with a 64 KiB file, indentation, markers, find."""

from __future__ import annotations

from typing import Any

from studio.ui.editor.code_editor import CodeEditor
from studio.ui.editor.find_bar import FindBar
from studio.ui.editor.highlighter import PygmentsHighlighter
from studio.ui.qt import Qt, QtWidgets

BLOCK = '''
def score_{n}(text: str) -> float:
    """Docstring {n}
    spanning lines"""
    values = [len(w) for w in text.split() if w]  # comment {n}
    return sum(values) / max(1, len(values))
'''


def test_typing_in_a_64k_file_stays_fast(qtbot: Any, monkeypatch: Any) -> None:
    """What keeps typing fast is that a keystroke re-lexes its own line, not the file: count the
    lines highlighted per keystroke (the time itself is bench material, not a test's)."""
    calls: list[str] = []
    original = PygmentsHighlighter.highlightBlock

    def counting(self, text: str) -> None:  # type: ignore[no-untyped-def]
        calls.append(text)
        original(self, text)

    monkeypatch.setattr(PygmentsHighlighter, "highlightBlock", counting)
    editor = CodeEditor("python")
    qtbot.addWidget(editor)
    source = "".join(BLOCK.format(n=n) for n in range(400))[: 64 * 1024]
    editor.set_text(source)
    editor.show()
    cursor = editor.textCursor()
    cursor.setPosition(len(source) // 2)
    editor.setTextCursor(cursor)
    QtWidgets.QApplication.processEvents()
    assert len(calls) >= editor.blockCount()  # the whole file was highlighted once, through the counter
    worst = 0
    for char in "x = 1":
        calls.clear()
        qtbot.keyClick(editor, char)
        QtWidgets.QApplication.processEvents()
        worst = max(worst, len(calls))
    assert 1 <= worst <= 3, f"a keystroke re-highlighted {worst} lines of {editor.blockCount()}"


def test_highlighting_follows_multiline_strings(qtbot: Any) -> None:
    editor = CodeEditor("python")
    qtbot.addWidget(editor)
    editor.set_text('x = """\nnot code: def\n"""\ndef f(): pass\n')
    string_fmt = editor.document().findBlockByNumber(1).layout().formats()
    code_fmt = editor.document().findBlockByNumber(3).layout().formats()
    assert string_fmt and code_fmt
    assert string_fmt[0].format.foreground().color() != code_fmt[0].format.foreground().color()


def test_indent_tab_and_markers(qtbot: Any) -> None:
    editor = CodeEditor("python")
    qtbot.addWidget(editor)
    editor.show()
    editor.setFocus()
    qtbot.keyClicks(editor, "def f():")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "return 1")
    assert editor.toPlainText() == "def f():\n    return 1"
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.toPlainText().endswith("\n        ")
    editor.undo()
    editor.set_markers({2: ("error", "bad return")})
    assert editor.markers() == {2: ("error", "bad return")}
    editor.go_to_line(2)
    assert editor.textCursor().blockNumber() == 1


def test_find_bar_wraps(qtbot: Any) -> None:
    editor = CodeEditor(None)
    bar = FindBar(editor)
    qtbot.addWidget(editor)
    qtbot.addWidget(bar)
    editor.set_text("alpha beta\ngamma alpha\n")
    bar.open_bar()
    bar.field.setText("alpha")
    assert editor.textCursor().selectedText() == "alpha"
    assert bar.find_next() and editor.textCursor().blockNumber() == 1
    assert bar.find_next() and editor.textCursor().blockNumber() == 0  # wrapped
    bar.field.setText("missing")
    assert bar.status.text() == "No matches"
