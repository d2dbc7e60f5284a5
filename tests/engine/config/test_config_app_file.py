"""desktop.json beside config.json, the one-time move of an older app's keys, and saves that respect
the file: through a symlink to its target, never over a read-only file, one-line errors for deep nesting."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from nanobot_desktop.engine.config import (ConfigError, load_app_settings, load_config, migrate_app_keys,
                                           patch_config_file, patch_settings)
from nanobot_desktop.engine.llm.registry import resolve_provider

OLD_APP_CONFIG = {  # what nanobot Desktop wrote before desktop.json existed (abridged, same shape)
    "agents": {"defaults": {"workspace": "~/ws", "model": "llama3.2", "provider": "ollama", "maxTokens": 8192,
                            "disabledSkills": ["weather"]}},
    "providers": {"custom": {"apiKey": "", "apiBase": None}, "openai": {"apiKey": "sk-openai"},
                  "ollama": {"apiKey": "", "apiBase": "http://127.0.0.1:11434/v1"},
                  "lmstudio": {"apiKey": "", "apiBase": None}},
    "tools": {"exec": {"timeout": 60}, "approval": {"exec": "allow"}},
    "desktop": {"theme": "dark", "closeToTray": False, "startAtLogin": False, "notifications": True},
}


def _write(path: Path, data: object, indent: int = 2) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data, indent=indent, ensure_ascii=False).encode("utf-8")
    path.write_bytes(raw)
    return raw


def test_old_app_keys_move_out_once_with_a_backup_and_one_log_line(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "config.json"
    original = _write(path, OLD_APP_CONFIG)
    caplog.set_level(logging.INFO, logger="nanobot_desktop.engine.config.migrate")
    result = migrate_app_keys(path)
    assert result is not None and result.backup is not None and result.backup.read_bytes() == original
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert "desktop" not in saved and "approval" not in saved["tools"]
    assert "disabledSkills" not in saved["agents"]["defaults"]
    assert "ollama" not in saved["providers"] and "lmstudio" not in saved["providers"]
    # the local server is now in the one form both CLIs run
    assert saved["agents"]["defaults"]["provider"] == "custom"
    assert saved["providers"]["custom"] == {"apiKey": "no-key", "apiBase": "http://127.0.0.1:11434/v1"}
    assert saved["providers"]["openai"] == {"apiKey": "sk-openai"}  # the rest as it was
    app = load_app_settings(path)
    assert (app.theme, app.close_to_tray, app.tool_approval, app.disabled_skills) == (
        "dark", False, {"exec": "allow"}, ["weather"])
    assert app.local_servers["custom"].kind == "ollama"
    lines = [r.getMessage() for r in caplog.records if r.name.endswith("migrate")]
    assert len(lines) == 1 and "desktop, tools.approval" in lines[0] and result.backup.name in lines[0]
    resolved = resolve_provider(load_config(path))
    assert (resolved.name, resolved.api_base, resolved.model) == ("custom", "http://127.0.0.1:11434/v1", "llama3.2")
    before = path.read_bytes()
    assert migrate_app_keys(path) is None and path.read_bytes() == before  # once
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "config.json.before-desktop-json",
                                                         "desktop.json"]


def test_the_move_does_not_reformat_what_the_cli_wrote(tmp_path: Path) -> None:
    """A 0.3.5-style file (indent 2, no final newline, unicode as is) plus an old `desktop` block:
    afterwards the bytes are exactly the file without that block."""
    cli_written = {"agents": {"defaults": {"workspace": "~/été", "model": "m", "disabledSkills": []}},
                   "providers": {"custom": {"apiKey": None, "apiBase": None}, "ollama": {"apiKey": None}},
                   "api": {"port": 8900}}
    path = tmp_path / "config.json"
    _write(path, {**cli_written, "desktop": {"theme": "light"}})
    migrate_app_keys(path)
    assert path.read_bytes() == json.dumps(cli_written, indent=2, ensure_ascii=False).encode("utf-8")
    assert load_app_settings(path).theme == "light"


def test_a_config_the_cli_wrote_is_never_touched(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    raw = _write(path, {"agents": {"defaults": {"disabledSkills": ["github"]}},
                        "providers": {"ollama": {"apiKey": None, "apiBase": "http://127.0.0.1:11434/v1"}}})
    assert migrate_app_keys(path) is None and path.read_bytes() == raw
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]


def test_null_keys_bases_and_headers_read_as_not_set(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    _write(path, {"providers": {"custom": {"apiKey": None, "apiBase": None, "extraHeaders": None},
                                "openai": None},
                  "tools": {"web": {"search": {"apiKey": None}}, "exec": {"pathAppend": None}}})
    config = load_config(path)
    assert config.providers.custom.api_key.get_secret_value() == "" and config.providers.custom.api_base is None
    assert config.providers.openai.api_key.get_secret_value() == ""
    assert config.tools.web.search.api_key.get_secret_value() == "" and config.tools.exec.path_append == ""


def test_app_settings_patch_writes_only_desktop_json(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    raw = _write(path, {"agents": {"defaults": {"model": "m"}}})
    config, app, changed = patch_settings(path, {"app.theme": "dark", "app.toolApproval": {"exec": "deny"}})
    assert config is None and app is not None and app.theme == "dark"
    assert changed == ["app.theme", "app.toolApproval"]
    assert path.read_bytes() == raw
    assert json.loads((tmp_path / "desktop.json").read_text()) == {"theme": "dark", "toolApproval": {"exec": "deny"}}
    with pytest.raises(ConfigError, match=r"desktop\.json: theme: "):
        patch_settings(path, {"app.theme": "neon"})
    assert load_app_settings(path).theme == "dark"


def test_an_invalid_patch_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    raw = _write(path, {"agents": {"defaults": {"model": "m"}}})
    with pytest.raises(ConfigError, match=r"agents\.defaults\.maxTokens: Input should be a valid integer"):
        patch_settings(path, {"agents.defaults.maxTokens": "lots", "app.theme": "dark"})
    assert path.read_bytes() == raw and not (tmp_path / "desktop.json").exists()


def test_save_goes_through_a_symlink_to_its_target(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "nanobot.json"
    _write(target, {"agents": {"defaults": {"model": "m"}}})
    link = tmp_path / "home" / "config.json"
    link.parent.mkdir()
    link.symlink_to(target)
    patch_config_file(link, {"agents.defaults.temperature": 0.5})
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["agents"]["defaults"] == {"model": "m", "temperature": 0.5}
    assert sorted(p.name for p in target.parent.iterdir()) == ["nanobot.json"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can write read-only files")
def test_a_read_only_config_is_refused_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    raw = _write(path, {"agents": {"defaults": {"model": "m"}}})
    path.chmod(0o444)
    with pytest.raises(ConfigError) as info:
        patch_config_file(path, {"agents.defaults.temperature": 0.5})
    assert "read-only" in str(info.value) and "\n" not in str(info.value)
    assert path.read_bytes() == raw and oct(path.stat().st_mode & 0o777) == "0o444"


def test_a_read_only_config_is_refused_even_for_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root may write anything, so the check is the access test itself: simulate what a user gets."""
    path = tmp_path / "config.json"
    raw = _write(path, {"agents": {"defaults": {"model": "m"}}})
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == path and mode == os.W_OK
                        else real_access(p, mode, **kw))
    with pytest.raises(ConfigError, match=r"config\.json is read-only: nothing was saved"):
        patch_config_file(path, {"agents.defaults.temperature": 0.5})
    assert path.read_bytes() == raw


@pytest.mark.parametrize("depth", [20, 60, 900, 100_000])
def test_deep_nesting_is_one_line_naming_file_and_problem(tmp_path: Path, depth: int,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from nanobot_desktop.cli import main as desktop_cli

    path = tmp_path / "config.json"
    path.write_text('{"channels": {"x": ' + "[" * depth + "]" * depth + "}}", encoding="utf-8")
    if depth <= 60:  # deep but possible: loads (a free-form channel block)
        assert isinstance(load_config(path).channels.model_extra["x"], list)
        return
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "config.json" in message and "nested" in message and "\n" not in message
    assert desktop_cli(["agent", "-m", "hi", "--config", str(path)]) != 0  # the CLI: one line, no traceback
    err = capsys.readouterr().err.strip()
    assert err.startswith("Error: ") and "nested" in err and "\n" not in err and "Traceback" not in err


def test_the_config_package_does_not_import_the_provider_registry() -> None:
    """The old cycle (config re-exported the registry, which imported config) is gone."""
    import subprocess
    import sys

    code = ("import sys, nanobot_desktop.engine.config\n"
            "assert 'nanobot_desktop.engine.llm.registry' not in sys.modules\n"
            "import nanobot_desktop.engine.llm.registry\n")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60).returncode == 0


def test_an_auto_provider_served_by_a_moved_local_entry_becomes_custom(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    _write(path, {"agents": {"defaults": {"model": "ollama/llama3.2", "provider": "auto"}},
                  "providers": {"ollama": {"apiKey": "", "apiBase": "http://127.0.0.1:11434/v1"}},
                  "desktop": {}})
    migrate_app_keys(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["agents"]["defaults"] == {"model": "llama3.2", "provider": "custom"}
    assert saved["providers"] == {"custom": {"apiKey": "no-key", "apiBase": "http://127.0.0.1:11434/v1"}}
    resolved = resolve_provider(load_config(path))
    assert (resolved.name, resolved.api_base, resolved.model) == ("custom", "http://127.0.0.1:11434/v1", "llama3.2")


def test_the_saved_theme_is_read_without_pydantic_and_agrees_with_the_full_read(tmp_path: Path) -> None:
    from typing import get_args

    from nanobot_desktop.engine.config import AppSettings, saved_theme
    from nanobot_desktop.engine.config.peek import THEMES

    assert set(THEMES) == set(get_args(AppSettings.model_fields["theme"].annotation))
    config = tmp_path / "config.json"
    assert saved_theme(config) == "system"  # no desktop.json yet
    for theme in ("dark", "light", "system"):
        patch_settings(config, {"app.theme": theme})
        assert saved_theme(config) == theme == load_app_settings(config).theme
    desktop = tmp_path / "desktop.json"
    for broken in (b'{"theme": "dark"', b'{"theme": "purple"}', b'["dark"]', b"\xff\xfe"):
        desktop.write_bytes(broken)  # the full read reports these; the quick one falls back to "system"
        assert saved_theme(config) == "system"
    desktop.write_bytes(b'\xef\xbb\xbf{"theme": "dark"}')  # a BOM, as the full read tolerates
    assert saved_theme(str(config)) == "dark" == load_app_settings(config).theme
