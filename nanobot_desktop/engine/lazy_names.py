"""Names of a package imported on first use (PEP 562): how `nanobot_desktop.engine` and
`nanobot_desktop.engine.config` stay cheap to import (start-up time is measured).

A module of its own, below both packages, so that `engine.config` need not import the engine's
package, whose type-only imports reach every module (that was an import circle for type checkers).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping
from typing import Any


def lazy_attributes(package: str, exports: Mapping[str, str], namespace: dict[str, Any],
                     submodules: Collection[str] = ()) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's PEP 562 `__getattr__` and `__dir__`: each name of `exports` (name -> the module of
    the package defining it) is imported on first use and then kept in `namespace`; `submodules` are
    returned as modules. One mechanism for the engine's package and `engine.config`."""

    def attribute(name: str) -> Any:
        if name in submodules:  # e.g. `events`, for `events.TurnStarted`-style use
            return importlib.import_module(f"{package}.{name}")
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module_name}"), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted(set(namespace) | set(namespace["__all__"]))

    return attribute, names
