"""The package's shape, checked from its source: who may import whom.

- the engine never imports Qt (it runs under the CLI, with no display);
- the GUI and the CLI use the engine only through `nanobot_desktop.engine`, its typed public surface;
- importing that surface is cheap (no openai, no pydantic until a name that needs them is used);
- no two modules import each other, directly or through others (imports deferred into a function count:
  they run too; imports only for type checkers do not).
"""

from __future__ import annotations

import ast
import functools
import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import nanobot_desktop.engine as engine_api

PACKAGE_DIR = Path(engine_api.__file__).resolve().parent.parent
ENGINE = "nanobot_desktop.engine"

# Cycles that exist and are being removed elsewhere; each names where. Empty when there are none.
KNOWN_CYCLES: list[set[str]] = []


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE_DIR.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


@functools.cache
def _tree(path: Path) -> ast.Module:
    """Each module parsed once for all the checks here (parsing the package is most of their time)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(path: Path, *, at_run_time: bool) -> list[tuple[ast.ImportFrom | ast.Import, str]]:
    """(node, absolute module) for each import; `at_run_time` leaves out `if TYPE_CHECKING:` blocks."""
    tree = _tree(path)
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[ast.ImportFrom | ast.Import, str]] = []

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.extend((node, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(max(0, node.level - 1)):
                    base = base.rpartition(".")[0]
                module = f"{base}.{node.module}" if node.level and node.module else (base if node.level else node.module)
                found.append((node, module or ""))
            elif isinstance(node, ast.If) and at_run_time and _is_type_checking(node.test):
                visit(node.orelse)
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    visit([child for child in getattr(node, field, []) if isinstance(child, ast.stmt)])
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return found


def test_the_engine_never_imports_qt() -> None:
    offenders = [f"{name}: {module}" for name, path in _modules().items() if name.startswith(ENGINE)
                 for _node, module in _imports(path, at_run_time=False)
                 if module.split(".")[0] in ("PySide6", "shiboken6", "qasync")]
    assert offenders == []


def test_the_gui_and_the_cli_use_the_engine_only_through_its_public_package() -> None:
    public = set(engine_api.__all__)
    offenders: list[str] = []
    for name, path in _modules().items():
        if not (name.startswith("nanobot_desktop.gui") or name == "nanobot_desktop.cli"):
            continue
        for node, module in _imports(path, at_run_time=False):
            where = f"{path.relative_to(PACKAGE_DIR.parent)}:{node.lineno}"
            if isinstance(node, ast.Import) and module.startswith(ENGINE + "."):
                offenders.append(f"{where}: import {module}")
            elif isinstance(node, ast.ImportFrom) and module.startswith(ENGINE + "."):
                offenders.append(f"{where}: from {module} import ... (use `from {ENGINE} import ...`)")
            elif isinstance(node, ast.ImportFrom) and module == ENGINE:
                offenders += [f"{where}: {alias.name} is not in {ENGINE}.__all__"
                              for alias in node.names if alias.name not in public]
    assert offenders == []


def _stub_exports(package: ModuleType) -> dict[str, str]:
    """name -> defining module, as a type checker reads the package's `__init__.pyi` (with `ast`, a
    reader independent of the regular expression the package itself reads it with)."""
    stub = Path(package.__file__ or "").with_suffix(".pyi")
    exports: dict[str, str] = {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            assert isinstance(node, ast.ImportFrom) and node.level == 1, f"{stub}:{node.lineno}: not `from .module`"
            for alias in node.names:
                assert alias.asname == alias.name, f"{stub}:{node.lineno}: {alias.name} is not re-exported"
                exports[alias.name] = f"{package.__name__}.{node.module}" if node.module else ""
    return exports


def test_the_public_surface_is_written_once_in_a_stub_and_resolves_to_what_the_stub_says() -> None:
    import nanobot_desktop.engine.config as config_api

    for package in (engine_api, config_api):
        exports = _stub_exports(package)
        assert sorted(package.__all__) == sorted(exports)
        init = ast.parse(Path(package.__file__ or "").read_text(encoding="utf-8"))
        written = [node.lineno for node in ast.walk(init) if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict)
                   and not isinstance(getattr(node, "ctx", None), ast.Store)]
        assert written == [], f"{package.__name__}/__init__.py lists names again (line {written}); the stub is the list"
        for name, module in exports.items():
            value = getattr(package, name)
            expected = importlib.import_module(f"{package.__name__}.{name}") if module == "" else \
                getattr(importlib.import_module(module), name)
            assert value is expected, name
        assert set(exports) <= set(dir(package))


def test_every_public_engine_name_resolves_and_the_package_imports_nothing_heavy() -> None:
    code = ("import sys, nanobot_desktop.engine as e; e.TurnStarted; e.SessionChanged; "
            "print('openai' in sys.modules, 'pydantic' in sys.modules, 'PySide6' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False", "False"]


def _import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node, module in _imports(path, at_run_time=True):
            targets = [module]
            if isinstance(node, ast.ImportFrom):  # `from pkg import sub` imports the submodule
                targets += [f"{module}.{alias.name}" for alias in node.names]
            graph[name] |= {target for target in targets if target in modules and target != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycles() -> None:
    cycles = _cycles(_import_graph())
    unexpected = [sorted(cycle) for cycle in cycles if cycle not in KNOWN_CYCLES]
    assert unexpected == [], "modules that import each other: move what both need into a third module"
    assert all(known in cycles for known in KNOWN_CYCLES), "a known cycle is gone: remove it from KNOWN_CYCLES"
