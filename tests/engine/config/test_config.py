"""config.json: post4 schema and defaults, both key spellings, unknown keys kept, env overrides,
patches that change only what they name, clear errors that leave the file alone, secrets kept out
of repr, provider resolution. (desktop.json and the migration: test_config_app_file.py.)"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.config import (
    DEFAULT_TOOL_APPROVAL, AppSettings, Config, ConfigError, cron_store_path, data_dir, default_config_path,
    load_config, logs_dir, patch_config_file)
from nanobot_desktop.engine.llm.registry import PROVIDER_PRESETS, ResolvedProvider, resolve_provider

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "config"


def save_config(config: Config, path: Path | None = None, **patch: Any) -> None:
    """What a save is now: a patch of the named paths onto the file as it is."""
    patch_config_file(path or config.source_path, {k.replace("__", "."): v for k, v in patch.items()})


def _fixture(name: str, tmp_path: Path) -> Path:
    target = tmp_path / "config.json"
    shutil.copyfile(FIXTURES / name, target)
    return target


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _leaves(tree: Any, prefix: tuple = ()) -> dict[tuple, Any]:
    if isinstance(tree, dict) and tree:
        return {k: v for key, value in tree.items() for k, v in _leaves(value, prefix + (key,)).items()}
    return {prefix: tree}


# ------------------------------------------------------------------------------ defaults and paths


def test_missing_file_gives_post4_defaults_and_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "nope" / "config.json"
    config = load_config(path)
    d = config.agents.defaults
    assert (d.workspace, d.model, d.provider) == ("~/.nanobot/workspace", "anthropic/claude-opus-4-5", "auto")
    assert (d.max_tokens, d.temperature, d.max_tool_iterations, d.memory_window) == (8192, 0.1, 40, 100)
    assert d.reasoning_effort is None
    assert (config.channels.send_progress, config.channels.send_tool_hints) == (True, False)
    assert (config.gateway.host, config.gateway.port) == ("0.0.0.0", 18790)
    assert (config.gateway.heartbeat.enabled, config.gateway.heartbeat.interval_s) == (True, 1800)
    t = config.tools
    assert (t.web.proxy, t.web.search.max_results, t.exec.timeout, t.exec.path_append) == (None, 5, 60, "")
    assert (t.restrict_to_workspace, t.mcp_servers) == (False, {})
    desktop = AppSettings()
    assert (desktop.theme, desktop.close_to_tray, desktop.start_at_login, desktop.notifications) == (
        "system", True, False, True)
    assert config.providers.openai.api_key.get_secret_value() == ""
    assert config.providers.openai.api_base is None and config.providers.openai.extra_headers is None
    assert config.source_path == path
    assert not path.parent.exists()


def test_default_paths_follow_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_config_path() == tmp_path / ".nanobot" / "config.json"
    assert load_config().source_path == tmp_path / ".nanobot" / "config.json"
    custom = tmp_path / "elsewhere" / "bot.json"
    assert data_dir(custom) == tmp_path / "elsewhere"
    assert cron_store_path(custom) == tmp_path / "elsewhere" / "cron" / "jobs.json"
    assert logs_dir(custom) == tmp_path / "elsewhere" / "logs"
    assert cron_store_path() == tmp_path / ".nanobot" / "cron" / "jobs.json"


def test_workspace_path_expands_home_without_creating(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    config = Config()
    assert config.workspace_path == tmp_path / ".nanobot" / "workspace"
    assert not config.workspace_path.exists()


def test_tool_approval_is_allow_when_unset() -> None:
    assert DEFAULT_TOOL_APPROVAL == {"exec": "ask", "write_file": "ask", "edit_file": "ask"}
    app = AppSettings.model_validate({"toolApproval": {"exec": "deny"}})
    assert app.tool_approval_for("exec") == "deny"
    assert app.tool_approval_for("read_file") == "allow"


# ------------------------------------------------------------------------- the three fixture files


def test_post4_onboard_file_loads(tmp_path: Path) -> None:
    config = load_config(_fixture("post4_onboard.json", tmp_path))
    assert config.agents.defaults.model == "deepseek/deepseek-chat"
    assert config.providers.openrouter.api_key.get_secret_value() == "sk-or-v1-fixture"
    assert config.providers.vllm.api_base == "http://localhost:8000/v1"
    assert config.providers.aihubmix.extra_headers == {"APP-Code": "fixture-app-code"}
    assert config.tools.web.search.api_key.get_secret_value() == "brave-fixture-key"
    server = config.tools.mcp_servers["filesystem"]
    assert (server.command, server.args[0], server.tool_timeout) == ("npx", "-y", 30)
    telegram = config.channels.model_extra["telegram"]
    assert telegram["enabled"] is True and telegram["allowFrom"] == ["alice"]


def test_post4_patch_changes_only_the_patched_key(tmp_path: Path) -> None:
    path = _fixture("post4_onboard.json", tmp_path)
    original = json.loads(path.read_text(encoding="utf-8"))
    save_config(load_config(path), agents__defaults__temperature=0.4)
    saved = json.loads(path.read_text(encoding="utf-8"))
    original["agents"]["defaults"]["temperature"] = 0.4
    assert saved == original
    assert list(saved) == ["agents", "channels", "providers", "gateway", "tools"]


def test_snake_case_file_loads_and_saves_as_camel_case(tmp_path: Path) -> None:
    path = _fixture("snake_case.json", tmp_path)
    config = load_config(path)
    d = config.agents.defaults
    assert (d.max_tokens, d.temperature, d.max_tool_iterations, d.memory_window) == (4096, 0.5, 12, 60)
    assert d.reasoning_effort == "low" and d.model_extra["disabled_skills"] == ["weather"]
    assert (config.channels.send_progress, config.channels.send_tool_hints) == (False, True)
    assert config.providers.azure_openai.extra_headers == {"x-team": "blue"}
    assert config.gateway.heartbeat.interval_s == 600 and config.tools.exec.path_append == "/opt/bin"
    assert config.tools.restrict_to_workspace is True
    assert config.tools.mcp_servers["remote"].tool_timeout == 45
    assert config.model_extra["desktop"]["theme"] == "dark"  # an old app's block: kept, unused (moved on open)

    save_config(config, agents__defaults__maxTokens=2048, tools__exec__pathAppend="/usr/local/bin")
    saved = json.loads(path.read_text(encoding="utf-8"))
    # the patch is written in the spelling the file already uses; nothing else is renamed
    assert saved["agents"]["defaults"]["max_tokens"] == 2048 and "maxTokens" not in saved["agents"]["defaults"]
    assert saved["tools"]["exec"] == {"timeout": 120, "path_append": "/usr/local/bin"}
    assert saved["providers"]["azure_openai"]["api_key"] == "azure-fixture-key"
    assert load_config(path).agents.defaults.max_tokens == 2048


def test_v0_3_5_keys_survive_a_round_trip(tmp_path: Path) -> None:
    path = _fixture("v0_3_5.json", tmp_path)
    original = json.loads(path.read_text(encoding="utf-8"))
    config = load_config(path)
    assert config.agents.defaults.model_extra["disabledSkills"] == ["github"]
    assert config.agents.defaults.model_extra["contextWindowTokens"] == 200000
    save_config(config, agents__defaults__temperature=0.3)  # an edit in the settings dialog
    saved = json.loads(path.read_text(encoding="utf-8"))
    original["agents"]["defaults"]["temperature"] = 0.3
    saved_leaves = _leaves(saved)
    for key, value in _leaves(original).items():
        assert saved_leaves.get(key, "<missing>") == value, key
    assert saved["api"] == {"enabled": False, "host": "127.0.0.1", "port": 8900}
    assert saved["providers"]["mistral"] == {"apiKey": "mistral-fixture", "apiBase": None}
    assert saved["tools"]["mcpServers"]["gh"]["enabledTools"] == ["*"]


def test_a_new_config_holds_exactly_post4_keys_camel_case_indent_2_utf8(tmp_path: Path) -> None:
    path = tmp_path / "out" / "config.json"
    config, changed = patch_config_file(path, {"agents.defaults.workspace": "~/Arbeitsbereich-工作区"})
    data = path.read_bytes()
    assert "工作区".encode() in data and b"\\u" not in data
    assert data.startswith(b'{\n  "agents": {\n    "defaults": {\n      "workspace"')
    assert b'"maxToolIterations": 40' in data and b"max_tool" not in data
    assert list(json.loads(data)) == ["agents", "channels", "providers", "gateway", "tools"]
    assert b"desktop" not in data and b"approval" not in data and b"disabledSkills" not in data
    assert [p.name for p in path.parent.iterdir()] == ["config.json"]
    assert config.source_path == path and changed == ["agents.defaults.workspace"]


def test_a_patch_keeps_the_files_own_formatting(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{\n    "agents": {\n        "defaults": {\n            "model": "openai/gpt-4o"\n        }\n    }\n}',
                    encoding="utf-8")  # 4 spaces, no final newline (as `json.dump` leaves it)
    save_config(load_config(path), agents__defaults__maxTokens=1000)
    assert path.read_text(encoding="utf-8") == (
        '{\n    "agents": {\n        "defaults": {\n            "model": "openai/gpt-4o",\n'
        '            "maxTokens": 1000\n        }\n    }\n}')


def test_legacy_exec_restrict_to_workspace_moves_up(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.json", {"tools": {"exec": {"timeout": 5, "restrictToWorkspace": True}}})
    config = load_config(path)
    assert config.tools.restrict_to_workspace is True and config.tools.exec.timeout == 5
    save_config(config, tools__exec__timeout=6)  # the CLI moves it on load, as we do: the file keeps it
    assert json.loads(path.read_text())["tools"] == {"exec": {"timeout": 6, "restrictToWorkspace": True}}


def test_top_level_restrict_to_workspace_wins_over_legacy_one(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.json",
                  {"tools": {"restrictToWorkspace": False, "exec": {"restrict_to_workspace": True}}})
    assert load_config(path).tools.restrict_to_workspace is False


# ---------------------------------------------------------------------------- env overrides


def test_env_applies_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NANOBOT_AGENTS__DEFAULTS__MODEL", "deepseek/deepseek-chat")
    monkeypatch.setenv("NANOBOT_AGENTS__DEFAULTS__MAX_TOKENS", "2048")
    monkeypatch.setenv("NANOBOT_PROVIDERS__OPENAI__API_KEY", "sk-env")
    monkeypatch.setenv("NANOBOT_GATEWAY__HEARTBEAT__INTERVAL_S", "60")
    config = load_config(tmp_path / "config.json")
    assert config.agents.defaults.model == "deepseek/deepseek-chat"
    assert config.agents.defaults.max_tokens == 2048
    assert config.providers.openai.api_key.get_secret_value() == "sk-env"
    assert config.gateway.heartbeat.interval_s == 60


@pytest.mark.parametrize("spelling", ["apiKey", "api_key"])
def test_values_in_the_file_win_over_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str) -> None:
    path = _write(tmp_path / "config.json", {"agents": {"defaults": {"model": "file/model"}},
                                             "providers": {"openai": {spelling: "sk-file"}}})
    monkeypatch.setenv("NANOBOT_AGENTS__DEFAULTS__MODEL", "env/model")
    monkeypatch.setenv("NANOBOT_PROVIDERS__OPENAI__API_KEY", "sk-env")
    monkeypatch.setenv("NANOBOT_PROVIDERS__OPENAI__API_BASE", "http://127.0.0.1:1/v1")
    config = load_config(path)
    assert config.agents.defaults.model == "file/model"
    assert config.providers.openai.api_key.get_secret_value() == "sk-file"
    assert config.providers.openai.api_base == "http://127.0.0.1:1/v1"  # the file lacked it


def test_env_structured_values_and_channel_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NANOBOT_TOOLS__MCP_SERVERS", '{"srv": {"command": "x", "tool_timeout": 9}}')
    monkeypatch.setenv("NANOBOT_CHANNELS__TELEGRAM__ALLOW_FROM", '["bob"]')
    monkeypatch.setenv("NANOBOT_CHANNELS__TELEGRAM__TOKEN", "123:abc")
    monkeypatch.setenv("NANOBOT_NOT_A_SETTING", "ignored")
    config = load_config(tmp_path / "config.json")
    assert config.tools.mcp_servers["srv"].tool_timeout == 9
    assert config.channels.model_extra["telegram"] == {"allowFrom": ["bob"], "token": "123:abc"}
    assert "notASetting" not in config.model_dump(by_alias=True) and "not_a_setting" not in config.model_dump()


def test_env_only_values_are_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "config.json", {"agents": {"defaults": {"temperature": 0.7}}, "custom": {"x": 1}})
    monkeypatch.setenv("NANOBOT_PROVIDERS__OPENAI__API_KEY", "sk-env-secret")
    monkeypatch.setenv("NANOBOT_AGENTS__DEFAULTS__MODEL", "env/model")
    monkeypatch.setenv("NANOBOT_TOOLS__MCP_SERVERS__SRV__COMMAND", "env-cmd")
    config = load_config(path)
    save_config(config, agents__defaults__maxTokens=123)
    text = path.read_text(encoding="utf-8")
    assert "sk-env-secret" not in text and "env/model" not in text and "env-cmd" not in text
    saved = json.loads(text)
    assert "providers" not in saved and "model" not in saved["agents"]["defaults"]
    assert saved["agents"]["defaults"]["maxTokens"] == 123 and saved["custom"] == {"x": 1}
    assert "tools" not in saved
    assert load_config(path).providers.openai.api_key.get_secret_value() == "sk-env-secret"  # env still fills it
    save_config(config, agents__defaults__maxTokens=124)  # a second save keeps leaving them out
    assert "sk-env-secret" not in path.read_text(encoding="utf-8")
    monkeypatch.delenv("NANOBOT_PROVIDERS__OPENAI__API_KEY")
    assert load_config(path).providers.openai.api_key.get_secret_value() == ""


def test_env_value_changed_in_the_app_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.json"
    monkeypatch.setenv("NANOBOT_PROVIDERS__OPENAI__API_KEY", "sk-env")
    monkeypatch.setenv("NANOBOT_PROVIDERS__OPENAI__API_BASE", "http://127.0.0.1:2/v1")
    config = load_config(path)
    save_config(config, providers__openai__apiKey="sk-typed-in-settings")
    openai = json.loads(path.read_text())["providers"]["openai"]
    assert openai["apiKey"] == "sk-typed-in-settings"
    assert openai["apiBase"] is None  # a new file gets post4's defaults, never the env's value


def test_bad_env_value_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NANOBOT_AGENTS__DEFAULTS__MAX_TOKENS", "lots")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "config.json")
    assert str(info.value).startswith("environment variable NANOBOT_AGENTS__DEFAULTS__MAX_TOKENS: "
                                      "agents.defaults.maxTokens: Input should be a valid integer")
    assert info.value.field == "agents.defaults.maxTokens"
    path = _write(tmp_path / "config.json", {"agents": {"defaults": {"maxTokens": "also bad"}}})
    with pytest.raises(ConfigError, match=r"^/.*config\.json: agents\.defaults\.maxTokens: .*got \"also bad\""):
        load_config(path)  # the file's value is used (and blamed), not the env's
    monkeypatch.setenv("NANOBOT_AGENTS__DEFAULTS__MAX_TOKENS", "5")
    monkeypatch.setenv("NANOBOT_TOOLS__MCP_SERVERS", "{not json")
    with pytest.raises(ConfigError, match="NANOBOT_TOOLS__MCP_SERVERS: not valid JSON"):
        load_config(tmp_path / "config.json")


# ------------------------------------------------------------------ errors leave the file untouched


BAD_FILES = {
    "missing comma": (b'{\n  "agents": {\n    "defaults": {\n      "model": "x"\n      "maxTokens": 5\n'
                      b'    }\n  }\n}\n', "line 5, column 7: Expecting ',' delimiter", (5, 7), None),
    "trailing comma": (b'{"agents": {},}', "line 1, column 15: Expecting property name", (1, 15), None),
    "empty file": (b"", "line 1, column 1: Expecting value", (1, 1), None),
    "not an integer": (b'{"agents": {"defaults": {"maxTokens": "lots"}}}',
                       'agents.defaults.maxTokens: Input should be a valid integer', (None, None),
                       "agents.defaults.maxTokens"),
    "snake spelling, bad value": (b'{"agents": {"defaults": {"max_tokens": [1]}}}',
                                  "agents.defaults.maxTokens: Input should be a valid integer", (None, None),
                                  "agents.defaults.maxTokens"),
    "null block": (b'{"gateway": {"heartbeat": null}}', "gateway.heartbeat: Input should be", (None, None),
                   "gateway.heartbeat"),
    "block is a list": (b'{"gateway": []}', "gateway: Input should be", (None, None), "gateway"),
    "top level list": (b"[1, 2]", "top level must be a JSON object", (None, None), None),
    "top level string": (b'"hello"', "found a string", (None, None), None),
    "not UTF-8": (b'{"agents": {"defaults": {\n"workspace": "caf\xe9"}}}', "line 2: not UTF-8", (2, None), None),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_file_raises_and_is_left_byte_for_byte(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    content, expected, (line, column), field = BAD_FILES[case]
    path = default_config_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load_config()
    error = info.value
    assert str(error).startswith("~/.nanobot/config.json"), str(error)
    assert expected in str(error)
    assert "\n" not in str(error)
    assert (error.path, error.line, error.column, error.field) == (path, line, column, field)
    assert path.read_bytes() == content
    assert [p.name for p in path.parent.iterdir()] == ["config.json"]


def test_validation_error_shows_the_bad_value(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.json", {"agents": {"defaults": {"maxTokens": "lots"}}})
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).endswith('(got "lots")')


def test_bad_secret_value_is_not_echoed(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.json", {"providers": {"openai": {"apiKey": ["sk-do-not-print"]}}})
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.field == "providers.openai.apiKey"
    assert "sk-do-not-print" not in str(info.value)


def test_unreadable_path_is_a_config_error(tmp_path: Path) -> None:
    folder = tmp_path / "config.json"
    folder.mkdir()
    with pytest.raises(ConfigError, match="cannot be read"):
        load_config(folder)


def test_utf8_bom_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b'\xef\xbb\xbf{"agents": {"defaults": {"model": "openai/gpt-4o"}}}')
    assert load_config(path).agents.defaults.model == "openai/gpt-4o"


# ----------------------------------------------------------------------------------- secrets


def test_secrets_stay_out_of_repr_str_dumps_and_logs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    config = load_config(_fixture("post4_onboard.json", tmp_path))
    config.tools.mcp_servers["filesystem"].env["GITHUB_TOKEN"] = "ghp-secret-value"
    secrets = ["sk-or-v1-fixture", "sk-deepseek-fixture", "brave-fixture-key", "telegram-fixture-token",
               "ghp-secret-value"]
    shown = repr(config) + str(config) + repr(config.providers.openrouter) + repr(resolve_provider(config))
    for secret in secrets:
        assert secret not in shown
    dumped = json.dumps(config.model_dump(mode="json"))  # apiKeys stay masked in plain dumps too
    assert "sk-or-v1-fixture" not in dumped and "brave-fixture-key" not in dumped
    save_config(config, agents__defaults__maxTokens=5)
    assert "sk-or-v1-fixture" in config.source_path.read_text()  # the file keeps the real key
    assert not any(secret in caplog.text for secret in secrets)


def test_unknown_secret_looking_keys_are_masked_in_repr() -> None:
    config = Config.model_validate({"tools": {"webhookToken": "tok-123", "maxTokens": 5},
                                    "channels": {"slack": {"botToken": "xoxb-1", "dm": {"appSecret": "s-2"}}}})
    shown = repr(config)
    assert "tok-123" not in shown and "xoxb-1" not in shown and "s-2" not in shown
    assert "maxTokens=5" in shown  # "…Tokens" counts are not secrets


def test_a_patched_key_is_stored_as_secret(tmp_path: Path) -> None:
    config, _ = patch_config_file(tmp_path / "c.json", {"providers.deepseek.apiKey": "sk-new"})
    assert "sk-new" not in repr(config) and config.providers.deepseek.api_key.get_secret_value() == "sk-new"
    assert json.loads((tmp_path / "c.json").read_text())["providers"]["deepseek"]["apiKey"] == "sk-new"


# --------------------------------------------------------------------------- provider resolution


def _config(providers: dict[str, dict[str, Any]], model: str, provider: str = "auto") -> Config:
    return Config.model_validate({"agents": {"defaults": {"model": model, "provider": provider}},
                                  "providers": providers})


K = {"apiKey": "k"}
RESOLUTION = [
    # providers with settings, model, forced provider -> name, api base, model sent
    ({"openrouter": K}, "anthropic/claude-opus-4-5", "auto",
     "openrouter", "https://openrouter.ai/api/v1", "anthropic/claude-opus-4-5"),
    ({"openrouter": K}, "openrouter/anthropic/claude-x", "auto",
     "openrouter", "https://openrouter.ai/api/v1", "anthropic/claude-x"),
    ({"openrouter": K, "deepseek": K}, "deepseek/deepseek-chat", "auto",
     "deepseek", "https://api.deepseek.com/v1", "deepseek-chat"),
    ({"openrouter": K, "deepseek": K}, "deepseek-chat", "auto", "deepseek", "https://api.deepseek.com/v1",
     "deepseek-chat"),
    ({"openrouter": K}, "deepseek/deepseek-chat", "auto",  # deepseek has no key: the gateway serves it as-is
     "openrouter", "https://openrouter.ai/api/v1", "deepseek/deepseek-chat"),
    ({"openai": K, "anthropic": K}, "claude-sonnet-4", "auto",
     "anthropic", "https://api.anthropic.com/v1/", "claude-sonnet-4"),
    ({"openai": K, "anthropic": K}, "anthropic/claude-sonnet-4", "auto",
     "anthropic", "https://api.anthropic.com/v1/", "claude-sonnet-4"),
    ({"openai": K, "openrouter": K}, "gpt-4o", "auto", "openai", "https://api.openai.com/v1", "gpt-4o"),
    ({"openai": K, "openrouter": K}, "mistral-large", "auto",  # fallback: gateways first in registry order
     "openrouter", "https://openrouter.ai/api/v1", "mistral-large"),
    ({"openai": {"apiKey": "k", "apiBase": "http://127.0.0.1:7/v1"}}, "openai/gpt-4o", "auto",
     "openai", "http://127.0.0.1:7/v1", "gpt-4o"),
    ({"gemini": K}, "gemini/gemini-2.0-flash", "auto",
     "gemini", "https://generativelanguage.googleapis.com/v1beta/openai/", "gemini-2.0-flash"),
    ({"groq": K, "openai": K}, "groq/llama-3.3-70b", "auto", "groq", "https://api.groq.com/openai/v1", "llama-3.3-70b"),
    ({"zhipu": K, "openai": K}, "glm-4.6", "auto", "zhipu", "https://open.bigmodel.cn/api/paas/v4", "glm-4.6"),
    ({"zhipu": K}, "zai/glm-4.6", "auto", "zhipu", "https://open.bigmodel.cn/api/paas/v4", "glm-4.6"),
    ({"dashscope": K, "openai": K}, "qwen-max", "auto",
     "dashscope", "https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-max"),
    ({"moonshot": K, "openai": K}, "kimi-k2", "auto", "moonshot", "https://api.moonshot.ai/v1", "kimi-k2"),
    ({"minimax": K}, "minimax/MiniMax-M2", "auto", "minimax", "https://api.minimax.io/v1", "MiniMax-M2"),
    ({"siliconflow": K}, "Qwen/Qwen3-8B", "auto", "siliconflow", "https://api.siliconflow.cn/v1", "Qwen/Qwen3-8B"),
    ({"volcengine": K}, "doubao-seed", "auto", "volcengine", "https://ark.cn-beijing.volces.com/api/v3",
     "doubao-seed"),
    ({"aihubmix": K}, "anthropic/claude-x", "auto", "aihubmix", "https://aihubmix.com/v1", "claude-x"),
    # nanobot 0.3.x's local entries (extras to post4's schema): a base URL is enough
    ({"ollama": {"apiBase": "http://127.0.0.1:11434/v1"}}, "ollama/llama3", "auto", "ollama",
     "http://127.0.0.1:11434/v1", "llama3"),
    ({"lmStudio": {"apiKey": None, "apiBase": "http://127.0.0.1:1234/v1"}}, "qwen3-8b", "auto", "lm_studio",
     "http://127.0.0.1:1234/v1", "qwen3-8b"),
    ({"vllm": {"apiKey": "no-key", "apiBase": "http://127.0.0.1:8001/v1"}}, "meta-llama/Llama-3.1-8B", "auto",
     "vllm", "http://127.0.0.1:8001/v1", "meta-llama/Llama-3.1-8B"),
    ({"custom": {"apiKey": "no-key", "apiBase": "http://127.0.0.1:9/v1"}}, "llama3.2", "auto", "custom",
     "http://127.0.0.1:9/v1", "llama3.2"),
    ({"openai": K}, "llama3.2", "ollama", "ollama", "http://localhost:11434/v1", "llama3.2"),
    ({"openai": K}, "ollama/llama3.2", "ollama", "ollama", "http://localhost:11434/v1", "llama3.2"),
    ({}, "my-model", "custom", "custom", "http://localhost:8000/v1", "my-model"),
    ({"custom": {"apiBase": "http://127.0.0.1:9/v1"}}, "my-model", "custom", "custom", "http://127.0.0.1:9/v1",
     "my-model"),
    ({"azureOpenai": {"apiKey": "k", "apiBase": "https://x.openai.azure.com"}}, "my-deployment", "azureOpenai",
     "azure_openai", "https://x.openai.azure.com", "my-deployment"),
    ({"deepseek": K, "openai": K}, "gpt-4o", "deepseek", "deepseek", "https://api.deepseek.com/v1", "gpt-4o"),
]


@pytest.mark.parametrize("providers, model, forced, name, base, sent", RESOLUTION)
def test_resolve_provider(providers: dict, model: str, forced: str, name: str, base: str, sent: str) -> None:
    resolved = resolve_provider(_config(providers, model, forced))
    assert (resolved.name, resolved.api_base, resolved.model) == (name, base, sent)
    assert resolved.api_key  # never empty: AsyncOpenAI refuses an empty key
    assert resolved.label


def test_resolved_provider_carries_key_headers_and_label() -> None:
    config = _config({"deepseek": {"apiKey": "sk-ds", "extraHeaders": {"X-A": "1"}}}, "deepseek-chat")
    assert resolve_provider(config) == ResolvedProvider(
        name="deepseek", api_key="sk-ds", api_base="https://api.deepseek.com/v1", model="deepseek-chat",
        extra_headers={"X-A": "1"}, label="DeepSeek", entry="providers.deepseek")
    assert resolve_provider(config, model="deepseek/deepseek-reasoner").model == "deepseek-reasoner"


RESOLUTION_ERRORS = [
    ({}, "anthropic/claude-opus-4-5", "auto", "apiKey", "providers"),
    ({"vllm": {"apiBase": "http://127.0.0.1:8001/v1"}}, "m", "auto", "apiKey", "providers"),  # post4 needs a key
    ({"custom": {"apiKey": None, "apiBase": None}}, "m", "auto", "apiKey", "providers"),  # 0.3.x nulls: not set
    ({}, "gpt-4o", "openai_codex", "OAuth", "providers.openaiCodex"),
    ({"githubCopilot": K}, "github-copilot/gpt-4o", "auto", "OAuth", "providers.githubCopilot"),
    ({"azure_openai": K}, "dep", "azure_openai", "providers.azureOpenai.apiBase", "providers.azureOpenai.apiBase"),
    ({"openai": K}, "deepseek-chat", "deepseek", "providers.deepseek.apiKey", "providers.deepseek.apiKey"),
    ({"openai": K}, "x", "nonsense", "unknown provider 'nonsense'", "agents.defaults.provider"),
]


@pytest.mark.parametrize("providers, model, forced, says, field", RESOLUTION_ERRORS)
def test_resolve_provider_errors_say_what_to_set(providers: dict, model: str, forced: str, says: str,
                                                 field: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_provider(_config(providers, model, forced))
    assert says in str(info.value) and info.value.field == field


def test_provider_presets_for_the_settings_dialog() -> None:
    names = [preset.name for preset in PROVIDER_PRESETS]
    assert names[:8] == ["openai", "openrouter", "deepseek", "ollama", "lmstudio", "vllm", "llamacpp", "custom"]
    assert "openai_codex" not in names and "github_copilot" not in names and len(set(names)) == len(names)
    assert tuple(PROVIDER_PRESETS[3]) == ("ollama", "Ollama", "http://localhost:11434/v1", False, "custom")
    assert PROVIDER_PRESETS[0].needs_key is True and PROVIDER_PRESETS[7].label == "Custom (OpenAI-compatible)"
    post4_names = {"custom", "azure_openai", "anthropic", "openai", "openrouter", "deepseek", "groq", "zhipu",
                   "dashscope", "vllm", "gemini", "moonshot", "minimax", "aihubmix", "siliconflow", "volcengine"}
    for preset in PROVIDER_PRESETS:  # every preset writes an entry nanobot 0.1.4.post4 knows, and resolves
        assert preset.entry in post4_names
        config = _config({preset.entry: {"apiKey": "k", "apiBase": preset.api_base or "https://x.example/v1"}},
                         "some-model", preset.entry)
        assert resolve_provider(config).name == preset.entry


def test_file_keys_are_matched_exactly_like_the_cli_does(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.json", {"agents": {"defaults": {"MaxTokens": 5, "max_tokens": 7}}})
    config = load_config(path)
    assert config.agents.defaults.max_tokens == 7
    save_config(config, agents__defaults__temperature=0.2)
    assert json.loads(path.read_text())["agents"]["defaults"]["MaxTokens"] == 5  # kept as an unknown key
