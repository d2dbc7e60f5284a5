"""A package's public surface, read from the `__init__.pyi` beside its `__init__.py` (napari's way).

The stub is the one place a public name is written. Type checkers read it instead of the
`__init__.py`, so mypy checks the GUI's `from nanobot_desktop.engine import ...` against it; at run
time `attach` turns its lines into the package's `__all__` and PEP 562 `__getattr__`/`__dir__`, which
import a name's module on its first use. Importing the package thus stays nearly free: start-up is
measured, and the first paint must not import openai, pydantic or the asyncio-heavy modules.

The stub is read with one regular expression, not `ast` (lazy_loader's `attach_stub` parses it with
`ast`: about 3 ms to import it and more to parse, at every start). So each import line of the stub
must read `from .module import Name as Name` (or `from . import sub as sub` for a submodule); any
other import line is refused with its line number, never silently left out.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from typing import Any

_IMPORT = re.compile(r"from \.(?P<module>[\w.]*) import (?P<name>\w+) as (?P=name)")
_DOCSTRING = '"""'


def read_stub(path: str) -> dict[str, str]:
    """name -> the module of the package that defines it ("" for a submodule of the package itself)."""
    names: dict[str, str] = {}
    in_docstring = False
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            if raw.count(_DOCSTRING) % 2:
                in_docstring = not in_docstring
                continue
            line = raw.split("#", 1)[0].strip()
            if in_docstring or not line.startswith(("from ", "import ")):
                continue
            match = _IMPORT.fullmatch(line)
            if match is None:
                raise ImportError(f"{path}:{number}: {line!r} is not `from .module import Name as Name`, "
                                  "the one form a public name is written in")
            names[match["name"]] = match["module"]
    return names


def attach(package: str, init_file: str, namespace: dict[str, Any]
           ) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """`__getattr__`, `__dir__` and `__all__` for the package whose `__init__.py` is `init_file`,
    from the `__init__.pyi` beside it. A name's value is kept in `namespace` once imported."""
    exports = read_stub(os.path.splitext(init_file)[0] + ".pyi")

    def attribute(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if module == "":  # a submodule, e.g. `events` for `events.TurnStarted`-style use
            return importlib.import_module(f"{package}.{name}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return attribute, names, sorted(exports)
