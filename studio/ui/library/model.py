"""The library tree: graders grouped by kind, then a Trash group of deleted graders.

A small ``QAbstractItemModel`` over ``GraderRecord``s (there are tens to hundreds of graders, so the
whole list is held; ``reload`` resets it when the library changes). Searching is a recursive
``QSortFilterProxyModel`` over ``SEARCH_ROLE``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from studio.core.graders.registry import kind_labels
from studio.core.store.graders import GraderRecord

from ..icons import icon, kind_icon
from ..qt import QObject, Qt, QtCore

KEY_ROLE = Qt.ItemDataRole.UserRole + 1
SEARCH_ROLE = Qt.ItemDataRole.UserRole + 2
RECORD_ROLE = Qt.ItemDataRole.UserRole + 3
TRASH = "__trash__"


@dataclass
class _Group:
    kind: str
    label: str
    records: list[GraderRecord] = field(default_factory=list)


class LibraryModel(QtCore.QAbstractItemModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._groups: list[_Group] = []

    def reload(self, live: list[GraderRecord], deleted: list[GraderRecord]) -> None:
        self.beginResetModel()
        groups = {kind: _Group(kind, label) for kind, label in kind_labels().items()}
        for record in live:
            groups.setdefault(record.kind, _Group(record.kind, record.kind)).records.append(record)
        self._groups = [g for g in groups.values() if g.records]
        for group in self._groups:
            group.records.sort(key=lambda r: r.definition.display_name.lower())
        if deleted:
            self._groups.append(_Group(TRASH, "Trash", sorted(deleted, key=lambda r: r.key)))
        self.endResetModel()

    # -- lookup -------------------------------------------------------------------------------
    def index_of(self, key: str, in_trash: bool = False) -> QtCore.QModelIndex:
        for g, group in enumerate(self._groups):
            if (group.kind == TRASH) != in_trash:
                continue
            for r, record in enumerate(group.records):
                if record.key == key:
                    return self.index(r, 0, self.index(g, 0))
        return QtCore.QModelIndex()

    def record(self, index: QtCore.QModelIndex) -> GraderRecord | None:
        if not index.isValid() or not index.internalId():
            return None
        return self._groups[index.internalId() - 1].records[index.row()]

    # -- model --------------------------------------------------------------------------------
    def index(self, row: int, column: int, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> QtCore.QModelIndex:  # noqa: B008
        if column != 0:
            return QtCore.QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, 0, 0) if 0 <= row < len(self._groups) else QtCore.QModelIndex()
        if parent.internalId():
            return QtCore.QModelIndex()
        group = self._groups[parent.row()]
        return self.createIndex(row, 0, parent.row() + 1) if 0 <= row < len(group.records) else QtCore.QModelIndex()

    def parent(self, index: QtCore.QModelIndex) -> QtCore.QModelIndex:  # type: ignore[override]
        if not index.isValid() or not index.internalId():
            return QtCore.QModelIndex()
        return self.createIndex(index.internalId() - 1, 0, 0)

    def rowCount(self, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> int:  # noqa: N802, B008
        if not parent.isValid():
            return len(self._groups)
        if parent.internalId():
            return 0
        return len(self._groups[parent.row()].records)

    def columnCount(self, parent: QtCore.QModelIndex | QtCore.QPersistentModelIndex = QtCore.QModelIndex()) -> int:  # noqa: N802, B008
        return 1

    def flags(self, index: QtCore.QModelIndex | QtCore.QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if not index.internalId():
            return Qt.ItemFlag.ItemIsEnabled
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: QtCore.QModelIndex | QtCore.QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        if not index.internalId():
            group = self._groups[index.row()]
            if role == Qt.ItemDataRole.DisplayRole:
                return f"{group.label}  ({len(group.records)})"
            if role == Qt.ItemDataRole.DecorationRole:
                return icon("trash") if group.kind == TRASH else kind_icon(group.kind)
            if role == SEARCH_ROLE:
                return ""
            return None
        group = self._groups[index.internalId() - 1]
        record = group.records[index.row()]
        definition = record.definition
        if role == Qt.ItemDataRole.DisplayRole:
            return definition.display_name
        if role == Qt.ItemDataRole.DecorationRole:
            if record.locked:
                return icon("lock")
            return icon("trash") if record.deleted else kind_icon(record.kind)
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [definition.display_name, f"key: {record.key} · v{record.current_version}",
                     kind_labels().get(record.kind, record.kind)]
            if record.locked:
                from studio.core.store.versioned import lock_sentence

                lines.append(f"{lock_sentence(record)}: read-only until unlocked")
            if definition.description:
                lines.append(definition.description.strip().splitlines()[0])
            return "\n".join(lines)  # plain text: the window never reads a tooltip as HTML
        if role == KEY_ROLE:
            return record.key
        if role == RECORD_ROLE:
            return record
        if role == SEARCH_ROLE:
            return " ".join([record.key, definition.name, definition.description, *definition.tags])
        return None


class LibraryFilter(QtCore.QSortFilterProxyModel):
    """Matches the search text against key, name, description and tags; groups stay when a child matches."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterRole(SEARCH_ROLE)
