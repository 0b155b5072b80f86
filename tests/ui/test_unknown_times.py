"""The window shows a stored time the library could not read (read as None: a hand edit of a
SQLite library) as "unknown time": the Versions dialog lists every version instead of failing."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from studio.core.models import BuiltinGrader
from studio.core.outside import UNKNOWN_TIME
from studio.core.store import Library
from studio.ui.library.versions import VersionsDialog


def test_the_versions_dialog_shows_an_unreadable_time_as_unknown(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with Library.open(tmp_path / "lib.sqlite") as library:
        library.graders.create(BuiltinGrader(key="g", function="exact_match"))
        with library.engine.begin() as conn:
            conn.execute(text("INSERT INTO grader_versions (grader_id, version, action, definition, message,"
                              " created_at, author) SELECT grader_id, 2, action, definition, 'by hand', 'yesterday',"
                              " 'mallory' FROM grader_versions"))
            conn.execute(text("UPDATE graders SET current_version = 2"))
        versions = library.graders.versions("g")
    dialog = VersionsDialog("g", versions, 2, read_only=False)
    qtbot.addWidget(dialog)
    rows = [[dialog.list.topLevelItem(i).text(c) for c in range(5)] for i in range(dialog.list.topLevelItemCount())]
    assert rows[0][:4] == ["v2 (current)", "create", "mallory", UNKNOWN_TIME] and rows[0][4] == "by hand"
    assert rows[1][3] != UNKNOWN_TIME and rows[1][0] == "v1"
