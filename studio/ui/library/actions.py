"""Library operations the sidebar, the editor and the menus share (Anki's "operation" habit).

Each one calls the core, turns a refusal into a sentence in a message box, tells every view through
``ctx.graders_changed`` and reports what happened on the status bar. They are single-row SQLite
writes (milliseconds), so they run inline; anything that executes a grader goes to ``ctx.tasks``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from studio.core.errors import StudioError
from studio.core.models import GraderDefinition, parse_grader
from studio.core.models.definition import dump_grader
from studio.core.near_names import first_free
from studio.core.store.graders import GraderRecord

from ..context import AppContext
from ..messages import Messages
from ..qt import QObject, QtWidgets, Signal
from .new_dialog import NewGraderDialog
from .versions import DiffView, VersionsDialog

if TYPE_CHECKING:
    from studio.core.platforms import ImportResult, Platform
    from studio.core.store import StaleVersion


class NewDialog(Protocol):
    """What ``new`` asks of the New grader dialog (tests answer it without showing one)."""

    def exec(self) -> int: ...

    def definition(self) -> GraderDefinition: ...

T = TypeVar("T")


class GraderActions(QObject):
    status = Signal(str)
    open_requested = Signal(str)
    compare_requested = Signal(str)  # grader key: compare its newest run with the previous one

    def __init__(self, ctx: AppContext, messages: Messages, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.messages = messages
        #: replaced in tests to answer the New dialog without showing it
        self.new_dialog_factory: Callable[..., NewDialog] = NewGraderDialog
        #: the window's guard: may the grader ``key`` be left (unsaved edits saved, discarded or kept)?
        self.may_leave: Callable[[str], bool] = lambda key: True

    def _call(self, title: str, fn: Callable[[], T]) -> T | None:
        try:
            return fn()
        except Exception as exc:  # every refusal becomes a sentence, never a traceback
            self.messages.error(title, exc)
            return None

    def _changed(self, text: str) -> None:
        self.ctx.graders_changed.emit()
        self.status.emit(text)

    def _parent(self) -> QtWidgets.QWidget | None:
        return self.messages.parent

    # -- create ---------------------------------------------------------------------------------
    def new(self, kind: str | None = None) -> str | None:
        taken = {r.key for r in self.ctx.library.graders.list(include_deleted=True) if not r.deleted}
        dialog = self.new_dialog_factory(taken, self._parent(), kind=kind)
        if not dialog.exec():
            return None
        definition = self._call("Cannot create the grader", dialog.definition)
        return None if definition is None else self.create(definition)

    def create(self, definition: GraderDefinition, message: str = "created in the studio") -> str | None:
        record = self._call("Cannot create the grader", lambda: self.ctx.library.graders.create(definition, message))
        if record is None:
            return None
        self._changed(f"Created {record.key} (v{record.current_version}).")
        self.open_requested.emit(record.key)
        return record.key

    def duplicate(self, key: str) -> str | None:
        record = self._call("Cannot duplicate", lambda: self.ctx.library.graders.get(key))
        if record is None:
            return None
        taken = {r.key for r in self.ctx.library.graders.list(include_deleted=True)}
        new_key = self.messages.ask_text("Duplicate grader", "Key of the copy:",
                                         first_free(f"{key}-copy", taken, joiner=""))
        if not new_key:
            return None
        data = dump_grader(record.definition)
        data["key"] = new_key
        if record.definition.name:
            data["name"] = f"{record.definition.name} (copy)"
        definition = self._call("Cannot duplicate", lambda: parse_grader(data))
        return None if definition is None else self.create(definition, f"duplicated from {key} v{record.current_version}")

    # -- save / lock / delete ----------------------------------------------------------------------
    def save(self, definition: GraderDefinition, message: str = "", *,
             base_version: int | None = None) -> GraderRecord | None:
        """Save a new version; ``base_version`` (what the edits began from) refuses a save over
        another analyst's newer version and offers both side by side instead."""
        from studio.core.store import StaleVersion

        before = self._call("Cannot save", lambda: self.ctx.library.graders.get(definition.key))
        if before is None:
            return None
        try:
            record = self.ctx.library.graders.save(definition, message, base_version=base_version)
        except StaleVersion as stale:
            self.offer_stale_diff(stale, definition)
            return None
        except Exception as exc:  # every refusal becomes a sentence, never a traceback
            self.messages.error("Cannot save", exc)
            return None
        if record.current_version == before.current_version:
            self.status.emit(f"No changes to save in {record.key}.")
        else:
            self._changed(f"Saved {record.key} as v{record.current_version}.")
        return record

    def offer_stale_diff(self, stale: StaleVersion, definition: GraderDefinition) -> QtWidgets.QDialog | None:
        """Another analyst saved since these edits began: say who, keep the edits in the editor, and
        offer the stored version and the edits side by side (nothing is written over)."""
        from studio.core.models.files import to_yaml

        self.stale_dialog = None
        if not self.messages.confirm("Cannot save: a newer version is stored",
                                     f"{stale}. Your edits stay in the editor, unsaved.", "Compare side by side"):
            return None
        stored = self._call("Cannot compare", lambda: self.ctx.library.graders.version(stale.key, stale.head))
        if stored is None:
            return None
        dialog = QtWidgets.QDialog(self._parent())
        dialog.setWindowTitle(f"{stale.key}: v{stale.head} stored, your edits from v{stale.base}")
        layout = QtWidgets.QVBoxLayout(dialog)
        view = DiffView(dialog)
        by = f" by {stale.author}" if stale.author else ""
        view.show_diff(f"v{stale.head}{by} (stored)", to_yaml(stored.definition),
                       f"Your edits (from v{stale.base}, unsaved)", to_yaml(definition))
        layout.addWidget(view)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout.addWidget(buttons)
        dialog.resize(1000, 600)
        dialog.open()
        self.stale_dialog = dialog
        self.diff_view = view
        return dialog

    def set_locked(self, key: str, locked: bool) -> bool:
        """Lock or unlock; another analyst's lock is lifted only after asking (a forced unlock is
        recorded in the grader's history, docs/team.md)."""
        from studio.core.store.authors import current_user
        from studio.core.store.versioned import lock_sentence

        force = False
        current = None if locked else self._call("Cannot change the lock", lambda: self.ctx.library.graders.get(key))
        if current is not None and current.locked and current.locked_by and current.locked_by != current_user():
            if not self.messages.confirm("Unlock another analyst's grader?",
                                         f"{key} is {lock_sentence(current)}. Unlock it anyway? The forced unlock "
                                         "is recorded in its history.", "Force unlock"):
                return False
            force = True
        record = self._call("Cannot change the lock",
                            lambda: self.ctx.library.graders.set_locked(key, locked, force=force))
        if record is None:
            return False
        self._changed(f"{'Locked' if locked else 'Unlocked'} {key}.")
        return True

    def delete(self, key: str) -> bool:
        if not self.may_leave(key):  # unsaved edits are saved, discarded on purpose, or the delete stops
            return False
        if not self.messages.confirm("Delete grader",
                                     f"Move “{key}” to the Trash? Its versions and runs are kept and it can be restored.",
                                     "Move to Trash"):
            return False
        def delete() -> bool:
            self.ctx.library.graders.delete(key)
            return True

        done = self._call("Cannot delete", delete)
        if not done:
            return False
        self._changed(f"Moved {key} to the Trash.")
        return True

    def restore(self, key: str) -> bool:
        record = self._call("Cannot restore", lambda: self.ctx.library.graders.restore(key))
        if record is None:
            return False
        self._changed(f"Restored {key} from the Trash.")
        self.open_requested.emit(key)
        return True

    def import_file(self, path: str) -> list[str]:
        """Create the graders of a platform's file (format detected); returns the keys created."""
        from studio.core.platforms import detect_platform

        def read() -> tuple[Platform, ImportResult]:
            platform = detect_platform(Path(path))
            if not platform.imports:
                raise StudioError(f"{platform.label} has no grader file format to import from")
            return platform, platform.import_file(Path(path))  # what the CLI reads: a NUL, a cut file refused

        found = self._call("Cannot import", read)
        if found is None:
            return []
        platform, result = found
        created: list[str] = []
        refused: list[str] = []
        for grader in result.graders:
            try:
                self.ctx.library.graders.create(grader, f"imported from {platform.label} ({Path(path).name})")
                created.append(grader.key)
            except Exception as exc:
                from ..messages import describe_error

                refused.append(f"{grader.key}: {describe_error(exc)}")
        made: dict[str, str] = {}
        if platform.name == "openai" and created and not refused:  # an eval: its suite, and its items beside it
            made = self._call("Cannot import the eval", lambda: self._openai_eval(Path(path), result.graders, refused)) or {}
        if refused or result.warnings or result.skipped:
            head = f"Imported {len(created)} of {len(result.graders)} grader(s) from {platform.label}."
            if result.skipped:  # the same list the CLI prints: each entry of the file left out, by place
                head += f" {len(result.skipped)} entr{'y' if len(result.skipped) == 1 else 'ies'} of the file not imported:"
            self.messages.error("Import", "\n".join(
                [head] + [f"• {line}" for line in result.report() + refused]))
        if created:
            extra = "".join(f" {what.capitalize()} {name}." for what, name in made.items())
            self._changed(f"Imported {', '.join(created)} from {platform.label}.{extra}")
            self.open_requested.emit(created[0])
        return created

    def _openai_eval(self, path: Path, graders: list[GraderDefinition], refused: list[str]) -> dict[str, str]:
        """An OpenAI eval's suite (and a dataset of ``NAME.items.jsonl`` when it lies beside the
        file), as ``grader-studio import EVAL.json --items ITEMS.jsonl`` makes them."""
        from studio.core.platforms import openai_evals

        read = openai_evals.load(path)
        items = openai_evals.sibling_items(path)
        samples = openai_evals.read_items(items) if items is not None else None
        made, failed = openai_evals.make_runnable(self.ctx.library, read, graders, samples, path.name,
                                                  items.name if items is not None else "")
        refused += [f"{what}: {why}" for what, why in failed.items()]
        return made

    # -- versions ---------------------------------------------------------------------------------
    def show_versions(self, key: str, dark: bool = False) -> VersionsDialog | None:
        record = self._call("Cannot show versions", lambda: self.ctx.library.graders.get(key, include_deleted=True))
        versions = self._call("Cannot show versions", lambda: self.ctx.library.graders.versions(key))
        if record is None or versions is None:
            return None
        dialog = VersionsDialog(key, versions, record.current_version, record.locked or record.deleted,
                                self._parent(), dark=dark)
        dialog.restore_requested.connect(lambda number: self.restore_version(key, number))
        dialog.compare_requested.connect(lambda: self.compare_requested.emit(key))
        dialog.open()
        return dialog

    def restore_version(self, key: str, number: int) -> bool:
        record = self._call("Cannot restore the version", lambda: self.ctx.library.graders.restore_version(key, number))
        if record is None:
            return False
        self._changed(f"Restored v{number} of {key} as v{record.current_version}.")
        self.open_requested.emit(key)
        return True
