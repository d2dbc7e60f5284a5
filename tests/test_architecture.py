"""The package's shape, checked from its source: who may import whom.

- the engine never imports Qt (it runs under the CLI, with no display);
- the GUI and the CLI use the engine only through `nanobot_desktop.engine`, its typed public surface;
- importing that surface is cheap (no openai, no pydantic until a name that needs them is used);
- no two modules import each other, directly or through others: imports deferred into a function count
  (they run too), and so do imports only for type checkers (`if TYPE_CHECKING:`): a circle a type
  checker has to untangle is one a reader has to untangle too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import nanobot_desktop.engine as engine_api

PACKAGE_DIR = Path(engine_api.__file__).resolve().parent.parent
ENGINE = "nanobot_desktop.engine"

# Cycles that exist and are being removed elsewhere; each names where. Empty when there are none.
KNOWN_CYCLES: list[set[str]] = []
# The parts of the package the cycle test covers: all of it (the engine, the CLI and the GUI).
CYCLE_FREE = ("nanobot_desktop",)


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


def _imports(path: Path, *, at_run_time: bool) -> list[tuple[ast.ImportFrom | ast.Import, str]]:
    """(node, absolute module) for each import; `at_run_time` leaves out `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
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


def test_every_public_engine_name_resolves_and_the_package_imports_nothing_heavy() -> None:
    assert sorted(engine_api.__all__) == sorted(["events", *engine_api._EXPORTS]), "__all__ and _EXPORTS differ"
    for name in engine_api.__all__:
        assert getattr(engine_api, name) is not None, name
    code = ("import sys, nanobot_desktop.engine as e; e.TurnStarted; e.SessionChanged; "
            "print('openai' in sys.modules, 'pydantic' in sys.modules, 'PySide6' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False", "False"]


def _import_graph(modules: dict[str, Path] | None = None, *, at_run_time: bool = False) -> dict[str, set[str]]:
    """module -> the package's modules it imports: absolute and relative imports, at the top, inside
    functions and (unless `at_run_time`) under `if TYPE_CHECKING:`."""
    modules = _modules() if modules is None else modules
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node, module in _imports(path, at_run_time=at_run_time):
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


def _one_circle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """One closed path through a cycle's modules, to print: a -> b -> ... -> a."""
    start = min(component)
    path, seen = [start], {start}
    while True:
        targets = sorted(graph[path[-1]] & component)
        if (start in targets and len(path) > 1) or not targets:
            return [*path, start]
        unseen = [target for target in targets if target not in seen]
        if not unseen:  # back into the path: print that loop
            loop_start = path.index(targets[0])
            return [*path[loop_start:], targets[0]]
        path.append(unseen[0])
        seen.add(unseen[0])


def test_the_graph_counts_type_only_relative_and_deferred_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n")
    (package / "b.py").write_text("def f():\n    from . import c\n")
    (package / "c.py").write_text("from .a import A\n")
    modules = {f"pkg.{path.stem}" if path.stem != "__init__" else "pkg": path for path in package.glob("*.py")}
    global PACKAGE_DIR
    kept, PACKAGE_DIR = PACKAGE_DIR, package
    try:
        graph = _import_graph(modules)
        at_run_time = _import_graph(modules, at_run_time=True)
    finally:
        PACKAGE_DIR = kept
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg", "pkg.c"}, "pkg.c": {"pkg.a"}}
    assert _cycles(graph) == [{"pkg.a", "pkg.b", "pkg.c"}]
    assert _one_circle(graph, {"pkg.a", "pkg.b", "pkg.c"}) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]
    assert _cycles(at_run_time) == []  # the circle is closed only by the type checker's import


def test_the_package_has_no_import_cycles_type_only_imports_included() -> None:
    graph = _import_graph()
    graph = {name: targets for name, targets in graph.items() if name.startswith(CYCLE_FREE)}
    cycles = _cycles({name: targets & set(graph) for name, targets in graph.items()})
    unexpected = [" -> ".join(_one_circle(graph, cycle)) for cycle in cycles if cycle not in KNOWN_CYCLES]
    assert unexpected == [], "modules that import each other (move what both need into a third module, " \
                             "or pass a Protocol or a callable down)"
    assert all(known in cycles for known in KNOWN_CYCLES), "a known cycle is gone: remove it from KNOWN_CYCLES"
