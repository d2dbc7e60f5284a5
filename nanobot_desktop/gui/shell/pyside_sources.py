"""Keep PySide6 from holding the source text of every module the app imports.

After PySide6 is loaded, each later import runs a hook of PySide6's (`PySide6.support.feature`,
for its optional `from __feature__ import ...` switches) that asks whether the module's source
mentions "PySide6". It asks through `inspect.getsource`, which reads the file through `linecache`
and leaves every line of it there for the life of the process: about 14 MB in a window at rest
(pydantic, typing_extensions, asyncio, ...), more after each lazy import, and the reading and line
splitting costs start-up time too.

`install` answers the same question from the file's bytes, read and dropped at once, and empties
`linecache` of what the hook's first pass (over the modules loaded before PySide6) put there; a
traceback reads the lines it shows again when it needs them. Modules
without a `.py` file, or whose file cannot be read, still go through PySide6's own check. If a
PySide6 version no longer has that hook, nothing is changed.
"""

from __future__ import annotations

import linecache
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

_HOOK_MODULES = ("PySide6.support.feature", "shibokensupport.feature")
_HOOK_NAME = "_mod_uses_pyside"
_MARK = "_nanobot_reads_bytes"


def install() -> bool:
    """Replace the hook's source check (once); True when it is in place."""
    feature = next((sys.modules[name] for name in _HOOK_MODULES if name in sys.modules), None)
    original: Callable[[ModuleType], bool] | None = getattr(feature, _HOOK_NAME, None)
    if feature is None or not callable(original):
        return False
    if getattr(original, _MARK, False):
        return True

    def mentions_pyside(module: ModuleType) -> bool:
        source = getattr(module, "__file__", None)
        if isinstance(source, str) and source.endswith(".py"):
            try:
                return b"PySide6" in Path(source).read_bytes()
            except OSError:
                pass
        return original(module)

    setattr(mentions_pyside, _MARK, True)
    setattr(feature, _HOOK_NAME, mentions_pyside)
    linecache.clearcache()
    return True
