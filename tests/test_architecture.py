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
import functools
import importlib
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

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


# --- the GUI: no loops between its modules or its folders, type-only imports included -----------------
GUI = "nanobot_desktop.gui"


def _gui_graph(folders: bool) -> dict[str, set[str]]:
    """gui/'s imports, `if TYPE_CHECKING:` ones too (a loop of annotations is still a loop to read);
    with `folders`, each module stands for its folder (gui/chat/, gui/window/, …)."""
    modules = {name: path for name, path in _modules().items() if name.startswith(GUI + ".")}

    def node(name: str) -> str:
        return ".".join(name.split(".")[:3]) if folders else name

    graph: dict[str, set[str]] = {node(name): set() for name in modules}
    for name, path in modules.items():
        for found, module in _imports(path, at_run_time=False):
            targets = [module]
            if isinstance(found, ast.ImportFrom):
                targets += [f"{module}.{alias.name}" for alias in found.names]
            graph[node(name)] |= {node(target) for target in targets if target in modules and node(target) != node(name)}
    return graph


def test_no_two_gui_modules_import_each_other_even_for_type_checking() -> None:
    assert [sorted(cycle) for cycle in _cycles(_gui_graph(folders=False))] == []


def test_gui_folders_do_not_import_each_other_in_a_loop_and_nothing_imports_shell() -> None:
    graph = _gui_graph(folders=True)
    assert [sorted(cycle) for cycle in _cycles(graph)] == [], "move what both folders need into gui/common/"
    shell = f"{GUI}.shell"
    assert sorted(folder for folder, targets in graph.items() if shell in targets) == [], \
        "shell/ is the composition root: nothing else imports it"


def test_the_gui_graph_counts_imports_made_only_for_type_checking() -> None:
    base = PACKAGE_DIR / "gui" / "window" / "base.py"  # imports the chat controller only for annotations
    assert "nanobot_desktop.gui.chat.controller" in {module for _node, module in _imports(base, at_run_time=False)}
    assert "nanobot_desktop.gui.chat.controller" not in {module for _node, module in _imports(base, at_run_time=True)}
    assert f"{GUI}.chat.controller" in _gui_graph(folders=False)[f"{GUI}.window.base"]


# --- the window's contract: typed attributes, panels found by name and wired by capability ----------
WINDOW_DIR = PACKAGE_DIR / "gui" / "window"


def _annotations(path: Path) -> list[tuple[int, str]]:
    """(line, annotation) of every attribute annotated in `path` (class bodies and `self.x: T = …`)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.AnnAssign):
            found.append((node.lineno, ast.unparse(node.annotation)))
    return found


def test_the_window_declares_no_attribute_as_any() -> None:
    offenders = [f"{path.name}:{line}: {annotation}" for path in sorted(WINDOW_DIR.glob("*.py"))
                 if path.name not in ("tray.py", "tray_approvals.py", "tray_rules.py", "tray_less.py", "dbus_notifier.py")
                 for line, annotation in _annotations(path) if re.search(r"\bAny\b", annotation)]
    assert offenders == []


def test_the_window_finds_panels_by_name_and_wires_them_by_capability_not_by_attribute_lookup() -> None:
    offenders: list[str] = []
    for path in sorted(WINDOW_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr"):
                offenders.append(f"{path.name}:{node.lineno}: {node.func.id}(…)")
            elif isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
                offenders.append(f"{path.name}:{node.lineno}: __getattr__")
    assert offenders == []


# --- GUI listeners subscribe to the event types they handle (EngineBridge.subscribe) ---------------
# Modules that still sort events themselves, with how many isinstance checks over event types they
# make; the number may only go down. None is left: the chat's controller, the tray and its approvals
# subscribe a table by event type, and the chat's relay looks its table up with the bridge's own rule
# (`handlers_for`). A new check fails here: subscribe instead.
EVENT_CASCADES_LEFT: dict[str, int] = {}


def _event_type_checks(path: Path, event_types: set[str]) -> int:
    """isinstance(x, T) calls in `path` whose T (or one of a tuple's) is an engine event class: a name
    imported from the engine's package, or `events.<Name>`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    engine_imports = [alias for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                      and node.module in (ENGINE, f"{ENGINE}.events") for alias in node.names]
    imported = {alias.asname or alias.name for alias in engine_imports if alias.name in event_types}
    modules = {alias.asname or alias.name for alias in engine_imports if alias.name == "events"}

    def is_event_type(node: ast.expr) -> bool:
        if isinstance(node, ast.Tuple):
            return any(is_event_type(element) for element in node.elts)
        if isinstance(node, ast.Starred):
            return is_event_type(node.value)
        if isinstance(node, ast.Name):
            return node.id in imported
        return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules \
            and node.attr in event_types

    for statement in tree.body:  # module-level groups of event types: _END_EVENTS = (TurnFinished, ...)
        if isinstance(statement, ast.Assign) and is_event_type(statement.value):
            imported |= {target.id for target in statement.targets if isinstance(target, ast.Name)}

    return sum(1 for node in ast.walk(tree)
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
               and len(node.args) == 2 and is_event_type(node.args[1]))


def test_gui_listeners_subscribe_to_event_types_instead_of_sorting_every_event() -> None:
    import inspect

    from nanobot_desktop.engine import events

    event_types = {name for name, value in vars(events).items()
                   if inspect.isclass(value) and issubclass(value, events.Event)}
    assert {"TurnStarted", "ConfigChanged", "Event"} <= event_types
    found = {name: _event_type_checks(path, event_types) for name, path in _modules().items() if name.startswith(GUI + ".")}
    grown = {name: count for name, count in found.items() if count > EVENT_CASCADES_LEFT.get(name, 0)}
    assert grown == {}, "subscribe to the event types a listener handles: EngineBridge.subscribe({Type: handler}, owner)"
    moved = {name: count for name, count in EVENT_CASCADES_LEFT.items() if found.get(name, 0) < count}
    assert moved == {}, "fewer checks left than EVENT_CASCADES_LEFT says: lower its number"
