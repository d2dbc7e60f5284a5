"""engine/surface.py: a package's public names read from its `__init__.pyi`, the one place they are written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.surface import attach, read_stub


def _package(tmp_path: Path, stub: str) -> Path:
    init = tmp_path / "__init__.py"
    init.write_text("", encoding="utf-8")
    (tmp_path / "__init__.pyi").write_text(stub, encoding="utf-8")
    return init


def test_each_name_comes_from_its_line_and_the_docstring_is_not_read(tmp_path: Path) -> None:
    init = _package(tmp_path, '"""The surface.\n\nfrom here on: prose, not an import\nimport this\n"""\n\n'
                               "from . import events as events\n"
                               "from .config import Config as Config  # pydantic\n"
                               "from .llm.registry import resolve_provider as resolve_provider\n")
    assert read_stub(str(init.with_suffix(".pyi"))) == {"events": "", "Config": "config",
                                                        "resolve_provider": "llm.registry"}


@pytest.mark.parametrize("line", ["from nanobot_desktop.engine.runtime import Engine as Engine",
                                  "from .runtime import Engine", "from .runtime import Engine as Motor",
                                  "from .runtime import Engine as Engine, open_settings_files as open_settings_files",
                                  "import nanobot_desktop.engine.runtime"])
def test_a_line_in_another_form_is_refused_with_its_place(tmp_path: Path, line: str) -> None:
    init = _package(tmp_path, '"""Doc."""\n\nfrom .events import Event as Event\n' + line + "\n")
    with pytest.raises(ImportError, match=r"__init__\.pyi:4: .* is not `from \.module import Name as Name`"):
        read_stub(str(init.with_suffix(".pyi")))


def test_attach_imports_a_name_on_first_use_and_keeps_it() -> None:
    namespace: dict[str, Any] = {}
    init = str(Path(__file__).resolve().parents[2] / "nanobot_desktop" / "engine" / "__init__.py")
    attribute, names, public = attach("nanobot_desktop.engine", init, namespace)
    from nanobot_desktop.engine.workspace import atomic_write_text

    assert attribute("atomic_write_text") is atomic_write_text and namespace["atomic_write_text"] is atomic_write_text
    assert "events" in public and "atomic_write_text" in names()
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        attribute("nothing_here")
