"""The app shell: start-up, the event loop, lifecycle, single instance, theme.

Importing it first adjusts PySide6's import hook (pyside_sources.py), so that no module imported
after this point leaves its source text in memory.
"""

import PySide6.QtCore  # noqa: F401 - loads the PySide6 import hook that the next line adjusts

from nanobot_desktop.gui.shell.pyside_sources import install as _keep_sources_out_of_memory

_keep_sources_out_of_memory()
