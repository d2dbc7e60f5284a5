"""PySide6's feature hook is out of the import path: imports run no PySide6 Python code and keep no
module's source text in memory (issue 17's memory, the start-up row's time)."""

from __future__ import annotations

import builtins
import importlib.util
import linecache
import re
import sys
from pathlib import Path

import pytest

import nanobot_desktop
import nanobot_desktop.gui.shell  # importing the shell takes the hook out
from nanobot_desktop.gui.shell.pyside_import import install

FEATURE_SWITCH = re.compile(rb"^\s*(from|import)\s+__feature__\b", re.MULTILINE)


def test_imports_bypass_the_feature_hook_keep_no_source_and_pyside_still_works(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module imported now is neither recorded nor read by PySide6's hook, and its Qt classes,
    signals, properties and enums behave as without any feature switch."""
    feature = sys.modules["PySide6.support.feature"]
    assert builtins.__import__ is vars(builtins)["__orig_import__"], "PySide6's feature hook is still in the path"
    assert install() is True  # already out: installing again changes nothing
    uses = tmp_path / "nb_probe_uses_qt.py"
    uses.write_text(
        "from PySide6.QtCore import Property, QObject, Qt, Signal\n"
        "class Probe(QObject):\n"
        "    changed = Signal(int)\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self._value = 0\n"
        "    def _get(self):\n"
        "        return self._value\n"
        "    def _set(self, value):\n"
        "        self._value = value\n"
        "        self.changed.emit(value)\n"
        "    value = Property(int, _get, _set)\n"
        "ALIGN = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop\n", encoding="utf-8")
    plain = tmp_path / "nb_probe_plain.py"
    plain.write_text("VALUE = 2\n" * 2000, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:  # an import statement's way: builtins.__import__, where PySide6 hooked in
        uses_module = __import__("nb_probe_uses_qt")
        plain_module = __import__("nb_probe_plain")
        assert plain_module.VALUE == 2
        assert "nb_probe_uses_qt" not in feature.pyside_feature_dict
        assert "nb_probe_plain" not in feature.pyside_feature_dict
        assert str(uses) not in linecache.cache and str(plain) not in linecache.cache
        probe = uses_module.Probe()
        seen: list[int] = []
        probe.changed.connect(seen.append)
        probe.setProperty("value", 7)
        assert probe.value == 7 and seen == [7]
        assert hasattr(probe, "objectName") and not hasattr(probe, "object_name")  # no snake_case switch
        assert uses_module.ALIGN & uses_module.Qt.AlignmentFlag.AlignTop
    finally:
        for name in ("nb_probe_uses_qt", "nb_probe_plain"):
            sys.modules.pop(name, None)


def test_no_module_of_the_app_or_of_qasync_asks_for_a_feature_switch() -> None:
    """What taking the hook out relies on: nothing the app runs says `from __feature__ import ...`."""
    spec = importlib.util.find_spec("qasync")
    assert spec is not None and spec.origin is not None
    roots = [Path(nanobot_desktop.__file__).parent, Path(spec.origin).parent]
    sources = [path for root in roots for path in root.rglob("*.py")]
    assert len(sources) > 200
    assert [path for path in sources if FEATURE_SWITCH.search(path.read_bytes())] == []
