"""The `slow` marker is honest: tests/conftest.py fails an unmarked test that starts a process only a
slow test may start (so `python3 dev.py test --quick` stays quick); here, what counts as one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import slow_process


def test_the_app_as_a_process_counts_in_any_of_its_forms() -> None:
    assert slow_process([sys.executable, "-m", "nanobot_desktop", "agent", "-m", "hi"]) == "the app as a process"
    assert slow_process((sys.executable, "-X", "utf8", "-m", "nanobot_desktop.cli")) == "the app as a process"
    assert slow_process([sys.executable, "-c", "import nanobot_desktop.engine"]) is None  # an import check
    assert slow_process(["bwrap", "--", "sh", "-c", "echo -m nanobot_desktop"]) is None  # only as python's -m


def test_reference_clis_and_installed_mcp_servers_count_under_their_roots(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NANOBOT_DESKTOP_REFERENCE_CLIS", str(tmp_path / "clis"))
    monkeypatch.setenv("NANOBOT_DESKTOP_MCP_SERVERS", str(tmp_path / "mcp"))
    assert slow_process([tmp_path / "clis" / "nanobot-ai-0.3.5" / "bin" / "nanobot", "agent"]) == "a reference nanobot CLI"
    assert slow_process(str(tmp_path / "mcp" / "time" / "bin" / "mcp-server-time")) == "an installed MCP server"
    assert slow_process(["sh", "-c", "echo hello"]) is None
    monkeypatch.delenv("NANOBOT_DESKTOP_REFERENCE_CLIS")
    assert slow_process([tmp_path / "clis" / "nanobot-ai-0.3.5" / "bin" / "nanobot"]) is None


def test_an_unmarked_test_starting_the_app_fails_at_its_teardown(pytester: pytest.Pytester,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("PYTHONPATH", str(root))
    pytester.makeconftest("from tests.conftest import _isolated_home, _slow_marker_is_honest  # noqa: F401\n")
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n    heavy: heavy\n")
    pytester.makepyfile(test_probe=f"""
import subprocess, sys
import pytest

def _start():
    subprocess.run([sys.executable, "-m", "nanobot_desktop.no_such_module"], capture_output=True, cwd={str(root)!r})

def test_unmarked():
    _start()

@pytest.mark.slow
def test_marked():
    _start()
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*test_unmarked*", "*this test starts the app as a process*mark it @pytest.mark.slow*"])
