"""The app shell: start-up, the event loop, lifecycle, single instance, theme.

Importing it first takes PySide6's feature hook out of the import path (pyside_import.py): no import
after this point runs PySide6's Python code or leaves its module's source text in memory.
"""

import PySide6.QtCore  # noqa: F401 - installs the PySide6 import hook that the next line takes out

from nanobot_desktop.gui.shell.pyside_import import install as _take_out_feature_hook

_take_out_feature_hook()
