"""Every modal question and error box the window shows, behind one injectable object.

Errors become sentences (qutebrowser's split): a ``StudioError`` (the library's refusals, definition
problems, unreachable endpoints ...) is shown as it is; anything else, a bare ``ValueError`` or
``OSError`` of our own code included, is a bug: one line naming the file its traceback was written to
(``studio.core.errors.bug_report``, the CLI's own), the traceback also tucked under "Show Details". Tests pass a recording fake instead, so nothing blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import ValidationError

from studio.core.errors import bug_report, is_user_error

from . import file_dialogs
from .plain import message_box
from .qt import QtWidgets

if TYPE_CHECKING:
    from studio.core.store.endpoint_trust import Pending

Answer = Literal["save", "discard", "cancel"]
EditsAnswer = Literal["save", "saved", "cancel"]

def describe_error(exc: BaseException) -> str:
    """One readable paragraph for an exception; never a traceback."""
    if isinstance(exc, ValidationError):
        lines = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"] if not str(p).endswith("_judge"))
            message = err["msg"].removeprefix("Value error, ")
            lines.append(f"{where}: {message}" if where else message)
        return "The definition is not valid:\n" + "\n".join(f"• {line}" for line in lines)
    if is_user_error(exc):
        return str(exc).strip() or type(exc).__name__
    return bug_report(exc)


def is_bug(exc: BaseException) -> bool:
    return not is_user_error(exc)


class Messages:
    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        self.parent = parent

    def error(self, title: str, error: BaseException | str) -> None:
        box = message_box(QtWidgets.QMessageBox.Icon.Warning, title,
                          error if isinstance(error, str) else describe_error(error),
                          QtWidgets.QMessageBox.StandardButton.Ok, self.parent)
        details = getattr(error, "__traceback_text__", None)
        if isinstance(error, BaseException) and is_bug(error) and details:
            box.setDetailedText(details)
        box.exec()

    def info(self, title: str, text: str) -> None:
        message_box(QtWidgets.QMessageBox.Icon.Information, title, text, QtWidgets.QMessageBox.StandardButton.Ok,
                    self.parent).exec()

    def confirm(self, title: str, text: str, action: str = "OK", *, safe_default: bool = False) -> bool:
        """``safe_default``: Enter answers Cancel (a question after Ctrl+S must not be typed through)."""
        box = message_box(QtWidgets.QMessageBox.Icon.Question, title, text,
                          QtWidgets.QMessageBox.StandardButton.Cancel, self.parent)
        ok = box.addButton(action, QtWidgets.QMessageBox.ButtonRole.AcceptRole)
        if safe_default:
            box.setDefaultButton(QtWidgets.QMessageBox.StandardButton.Cancel)
        else:
            box.setDefaultButton(ok)
        box.exec()
        return box.clickedButton() is ok

    def ask_unsaved(self, name: str) -> Answer:
        buttons = QtWidgets.QMessageBox.StandardButton
        box = message_box(QtWidgets.QMessageBox.Icon.Question, "Unsaved changes",
                          f"“{name}” has unsaved changes. Save them as a new version?",
                          buttons.Save | buttons.Discard | buttons.Cancel, self.parent)
        box.setDefaultButton(buttons.Save)
        answer = box.exec()
        answers: dict[int, Answer] = {buttons.Save: "save", buttons.Discard: "discard"}
        return answers.get(answer, "cancel")

    def ask_use_edits(self, name: str, action: str) -> EditsAnswer:
        """Before a run or an export: the unsaved edits (saved first as a new version) or the saved version."""
        box = message_box(
            QtWidgets.QMessageBox.Icon.Question, "Unsaved changes",
            f"“{name}” has unsaved changes. {action.capitalize()} uses a saved version: save your edits as "
            "a new version first, or use the version already saved?",
            QtWidgets.QMessageBox.StandardButton.Cancel, self.parent)
        save = box.addButton("Save and use the new version", QtWidgets.QMessageBox.ButtonRole.AcceptRole)
        saved = box.addButton("Use the saved version", QtWidgets.QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(save)
        box.exec()
        clicked = box.clickedButton()
        return "save" if clicked is save else "saved" if clicked is saved else "cancel"

    def approve_endpoint(self, held: Pending) -> bool:
        """Where a run or a Test would send the key to an endpoint not approved here: the changes,
        who made them, Approve or Cancel (dialogs/endpoint_trust.py)."""
        from .dialogs.endpoint_trust import ApproveEndpointDialog

        return bool(ApproveEndpointDialog(held, self.parent).exec())

    def choose_file(self, title: str, filters: str = "") -> str | None:
        return file_dialogs.open_file(self.parent, title, "", filters)

    def choose_new_file(self, title: str, filters: str = "") -> str | None:
        """A file to open or create (the library file)."""
        return file_dialogs.open_or_new_file(self.parent, title, filters)

    def ask_text(self, title: str, label: str, text: str = "") -> str | None:
        value, ok = QtWidgets.QInputDialog.getText(self.parent, title, label, text=text)
        return value if ok else None

    def ask_int(self, title: str, label: str, value: int, low: int, high: int) -> int | None:
        number, ok = QtWidgets.QInputDialog.getInt(self.parent, title, label, value, low, high)
        return number if ok else None

    def choose_directory(self, title: str) -> str | None:
        return file_dialogs.existing_directory(self.parent, title)
