"""PySide6's import hook no longer keeps every imported module's source text in memory (issue 17)."""

from __future__ import annotations

import linecache
import sys
from pathlib import Path

import nanobot_desktop.gui.shell  # noqa: F401 - importing the shell installs the adjusted check
from nanobot_desktop.gui.shell.pyside_sources import install


def test_imports_leave_no_source_in_linecache_and_pyside_modules_are_still_recognised(tmp_path: Path, monkeypatch):
    feature = sys.modules["PySide6.support.feature"]
    assert install() is True  # already in place: installing again changes nothing
    uses = tmp_path / "nb_probe_uses_qt.py"
    uses.write_text("from PySide6.QtCore import QObject\nVALUE = 1\n", encoding="utf-8")
    plain = tmp_path / "nb_probe_plain.py"
    plain.write_text("VALUE = 2\n" * 2000, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:  # an import statement's way (builtins.__import__), which is where PySide6 hooks in
        assert __import__("nb_probe_uses_qt").VALUE == 1
        assert __import__("nb_probe_plain").VALUE == 2
        assert str(uses) not in linecache.cache and str(plain) not in linecache.cache
        # what PySide6 decided for each: 0 = uses PySide6 (its __feature__ switches apply), -1 = ignore it
        assert feature.pyside_feature_dict["nb_probe_uses_qt"] == 0
        assert feature.pyside_feature_dict["nb_probe_plain"] == -1
    finally:
        for name in ("nb_probe_uses_qt", "nb_probe_plain"):
            sys.modules.pop(name, None)
            feature.pyside_feature_dict.pop(name, None)
