"""PySide6's import hook no longer keeps every imported module's source text in memory (issue 17)."""

from __future__ import annotations

import linecache
import sys
from pathlib import Path

import pytest

import nanobot_desktop.gui.shell  # noqa: F401 - importing the shell installs the adjusted check
from nanobot_desktop.gui.shell.pyside_sources import install


def test_imports_leave_no_source_in_linecache_and_pyside_modules_are_still_recognised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check PySide6's hook calls is ours, and it answers right from the file's bytes.

    It asks our check directly rather than reading PySide6's record of what it decided
    (`pyside_feature_dict`): that record is PySide6's own bookkeeping, shared by the whole test
    process, and this test once found no entry there for its module depending on which GUI test
    files ran before it, while our check had answered correctly.
    """
    feature = sys.modules["PySide6.support.feature"]
    assert install() is True  # already in place: installing again changes nothing
    assert getattr(feature._mod_uses_pyside, "_nanobot_reads_bytes", False), "PySide6's hook calls another check"
    uses = tmp_path / "nb_probe_uses_qt.py"
    uses.write_text("from PySide6.QtCore import QObject\nVALUE = 1\n", encoding="utf-8")
    plain = tmp_path / "nb_probe_plain.py"
    plain.write_text("VALUE = 2\n" * 2000, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:  # an import statement's way (builtins.__import__), which is where PySide6 hooks in
        uses_module = __import__("nb_probe_uses_qt")
        plain_module = __import__("nb_probe_plain")
        assert uses_module.VALUE == 1 and plain_module.VALUE == 2
        # what PySide6 is told for each: it uses PySide6 (its __feature__ switches apply), or ignore it
        assert feature._mod_uses_pyside(uses_module) is True
        assert feature._mod_uses_pyside(plain_module) is False
        assert str(uses) not in linecache.cache and str(plain) not in linecache.cache
    finally:
        for name in ("nb_probe_uses_qt", "nb_probe_plain"):
            sys.modules.pop(name, None)
            feature.pyside_feature_dict.pop(name, None)
