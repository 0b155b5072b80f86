"""The window's ``endpoints trust``: where a run or a Test would send the user's key to an endpoint
a teammate set or changed, this dialog lists what changed, who wrote it and when, and asks.

Nothing is sent before the user presses Approve; Cancel leaves the key unsent and the approval as
it was (store/endpoint_trust.py keeps approvals outside the library)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..qt import QtWidgets

if TYPE_CHECKING:
    from studio.core.store.endpoint_trust import Pending


def approval_text(held: Pending) -> str:
    """The dialog's words, plain text: what the user is asked to approve, and why."""
    name = held.config.name
    if held.changes is None:
        head = (f"Endpoint “{name}” was last written {held.who()} and you have not approved it on "
                "this machine. Your key for it goes to:")
    else:
        head = f"Endpoint “{name}” changed since you approved it (last written {held.who()}):"
    lines = "\n".join(f"• {line}" for line in held.lines())
    return (f"{head}\n{lines}\n\nYour key is not sent until you approve. Approve only if you know "
            "this server (the same as `grader-studio endpoints trust " + name + "`).")


class ApproveEndpointDialog(QtWidgets.QDialog):
    def __init__(self, held: Pending, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Approve endpoint {held.config.name}?")
        self.text = QtWidgets.QPlainTextEdit(approval_text(held))  # plain text: a teammate's data
        self.text.setReadOnly(True)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        self.approve_button = buttons.addButton("Approve", QtWidgets.QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setDefault(True)  # approving is a choice, never the Enter key's
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(560, 280)


def approved_now(ask: Callable[[Pending], bool], exc: BaseException) -> bool:
    """Whether ``exc`` is a refusal to send the key to an endpoint not approved here which the
    user, asked now, approved: the caller then tries again (a run, a Test, a generation, probes).
    Every place that can meet the refusal asks through here, so each offers the same dialog."""
    from studio.core.store.endpoint_trust import EndpointNotApproved

    return isinstance(exc, EndpointNotApproved) and ask_and_approve(ask, exc.pending)


def ask_and_approve(ask: Callable[[Pending], bool], held: Pending) -> bool:
    """Ask (``Messages.approve_endpoint``, or a test's fake) and record the approval when given."""
    from studio.core.store.endpoint_trust import approve

    if not ask(held):
        return False
    approve(held.config, held.library)
    return True
