"""Take PySide6's feature hook out of the import path.

Importing PySide6 replaces `builtins.__import__` with its `__feature_import__`, which exists for the
optional `from __feature__ import snake_case, true_property` switches. From then on every import
statement in the process, also one inside a function that runs during a turn, calls Python code of
PySide6's (`feature_import`), and each newly loaded module is checked for whether its source mentions
"PySide6" (`_mod_uses_pyside`). That check reads the source through `inspect.getsource`, which
leaves every line in `linecache` for the life of the process: about 14 MB in a window at rest.

The app uses no `__feature__` switch (tests/gui/common/test_pyside_import.py checks its sources), so
`install` puts back the import PySide6 wraps, `builtins.__orig_import__` (PySide6's own lazy-class
import, which stays), and empties `linecache` of what the hook read before. A module PySide6 never
recorded gets the selection of one without switches, as every module of ours did before. The start to
the first paint: 859 M -> 848 M instructions (callgrind; the bare window 588 M), 3-11 ms sooner in
alternated starts. If a PySide6 version keeps the hook elsewhere, nothing is changed.
"""

from __future__ import annotations

import builtins
import linecache

_FEATURE_IMPORT = "__feature_import__"  # PySide6's hook, kept in builtins beside what it wraps
_WRAPPED_IMPORT = "__orig_import__"


def install() -> bool:
    """Put back the import PySide6's feature hook wraps (once); True when the hook is out of the path."""
    hook = getattr(builtins, _FEATURE_IMPORT, None)
    wrapped = getattr(builtins, _WRAPPED_IMPORT, None)
    if hook is None or not callable(wrapped):
        return False
    if builtins.__import__ is hook:
        builtins.__import__ = wrapped
        linecache.clearcache()
    return builtins.__import__ is wrapped
