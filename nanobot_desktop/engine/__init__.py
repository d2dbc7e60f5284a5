"""The engine's public surface: everything the window and the command line may use, by name.

The names are written once, in `__init__.pyi` beside this file: type checkers read it instead of
this file, and `surface.attach` reads it here, so each name's module is imported on first use
(PEP 562 `__getattr__`): importing this package costs nothing, and `Engine` (openai) or `Config`
(pydantic) are only imported by the code that touches them — start-up time is measured.
"""

from nanobot_desktop.engine.surface import attach

__getattr__, __dir__, __all__ = attach(__name__, __file__, globals())
