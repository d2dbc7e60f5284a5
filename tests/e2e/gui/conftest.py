"""The GUI tests' loop and widget hygiene (tests/gui/conftest.py) for the e2e window tests."""

from tests.gui.conftest import _qt_objects_die_on_the_gui_thread, qloop
from tests.gui.window_fixtures import open_window

__all__ = ["_qt_objects_die_on_the_gui_thread", "open_window", "qloop"]
