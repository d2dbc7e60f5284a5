"""The settings: config.json shared with the nanobot CLI, and desktop.json, the app's own.

models (pydantic, camel/snake) | io (load, patch, atomic write through symlinks) | env (NANOBOT_*) |
app_file (desktop.json) | migrate (moving the old app's keys out of config.json) | paths |
peek (the saved theme, read before the first paint without pydantic).
Provider choice is `nanobot_desktop.engine.llm.registry` (it needs the models; the models never need it).

The public names are written once, in `__init__.pyi` beside this file, and resolved on first use
(engine/surface.py): importing `paths` or `peek` must not build the pydantic models (start-up time
is measured).
"""

from nanobot_desktop.engine.surface import attach

__getattr__, __dir__, __all__ = attach(__name__, __file__, globals())
