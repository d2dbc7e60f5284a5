"""Fixtures shared by the engine tests that run the real nanobot CLIs beside the app."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own, `tmp_path/home`, for the reference CLIs and the app's `onboard` (so the
    test can look at `home/.nanobot`); tests/conftest.py has already removed the NANOBOT_* variables."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home
