"""The bundle's slimmed ICU data (packaging/icu_slim.py) still serves what Qt asks ICU for.

The bundle collects a libicudata without ICU's formatting and display-name trees (15 MB less).
These checks build that library from the installed PySide6 and run Qt on it (the loader takes
``LD_LIBRARY_PATH`` before ICU's ``$ORIGIN`` run path): collation, locale case mapping, legacy
codecs, time zones and the window all behave as on the wheel's full data, and the trees the
studio's Qt relies on are in the package.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("packaging_icu_slim", REPO / "packaging" / "icu_slim.py")
assert spec is not None and spec.loader is not None
icu_slim = importlib.util.module_from_spec(spec)
spec.loader.exec_module(icu_slim)

#: Qt's uses of ICU, each printed as JSON so the slimmed run can be compared with the full one
PROBE = r"""
import json, sys
from PySide6.QtCore import QCollator, QLocale, QStringDecoder, QTimeZone, QDateTime
from PySide6.QtWidgets import QApplication, QLabel
app = QApplication([])
label = QLabel("Grader Studio: ärger, Ähnlichkeit, 日本語"); label.show(); app.processEvents()
out = {
    "icu": [l.split()[-1] for l in open("/proc/self/maps") if "libicudata" in l][:1],
    "sv": sorted(["ö", "z", "a", "å", "ä"], key=QCollator(QLocale("sv_SE")).sortKey),
    "de": sorted(["ö", "z", "a", "Äpfel", "Zebra"], key=QCollator(QLocale("de_DE")).sortKey),
    "upper": [QLocale("tr_TR").toUpper("istanbul"), QLocale("el_GR").toUpper("άλφα"), QLocale("de").toUpper("straße")],
    "codecs": [QStringDecoder(n).isValid() for n in ("Shift_JIS", "EUC-KR", "GB18030", "windows-1251", "KOI8-R")],
    "tz": [QTimeZone(b"Europe/Berlin").isValid(), QTimeZone(b"Europe/Berlin").abbreviation(QDateTime(2024, 1, 2, 3, 4, 5))],
    "numbers": [QLocale("fr_FR").toString(1234567.5, "f", 2), QLocale("de").nativeLanguageName()],
    "width": label.fontMetrics().horizontalAdvance(label.text()),
}
print(json.dumps(out))
"""


def _probe(lib_dir: Path | None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    if lib_dir is not None:
        env["LD_LIBRARY_PATH"] = str(lib_dir)
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def slim_lib(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int, int]:
    missing = icu_slim.missing_tools()
    if missing and os.environ.get("CI") != "true":
        pytest.skip(f"the ICU slimming tools are not installed: {', '.join(missing)}")
    assert not missing, f"packaging/build needs {', '.join(missing)} (binutils, icu-devtools, gcc)"
    import PySide6

    libs = sorted((Path(PySide6.__file__).parent / "Qt" / "lib").glob("libicudata.so.*"))
    assert libs, "PySide6 ships no libicudata"
    out = tmp_path_factory.mktemp("icu") / libs[0].name
    before, after = icu_slim.slim(libs[0], out)
    return libs[0], out, before, after


def test_the_slim_data_keeps_what_qt_reads_and_drops_the_display_trees(slim_lib: tuple[Path, Path, int, int]) -> None:
    _full, out, before, after = slim_lib
    assert after < before - 10_000_000  # the dropped trees are most of the data
    _name, offset, size = icu_slim._data_symbol(out)
    package = out.parent / "icudt73l.dat"
    with out.open("rb") as lib:
        lib.seek(offset)
        package.write_bytes(lib.read(size))
    names = icu_slim.items(package)
    trees = {n.split("/", 1)[0] for n in names if "/" in n}
    assert trees.isdisjoint(icu_slim.DROPPED_TREES)
    assert set(icu_slim.KEPT_TREES) <= trees
    assert set(icu_slim.KEPT_ITEMS) <= set(names)
    assert any(n.endswith(".cnv") for n in names)


def test_qt_on_the_slim_data_behaves_as_on_the_full_data(slim_lib: tuple[Path, Path, int, int]) -> None:
    _full, out, _before, _after = slim_lib
    full, slim = _probe(None), _probe(out.parent)
    assert slim["icu"] == [str(out)]  # the probe really ran on the slimmed library
    assert full["icu"] != slim["icu"]
    for key in ("sv", "de", "upper", "codecs", "tz", "numbers", "width"):
        assert slim[key] == full[key], key
    assert slim["sv"] == ["a", "z", "å", "ä", "ö"]  # Swedish collation, from coll/sv.res
