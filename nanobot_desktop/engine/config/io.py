"""Reading and writing config.json: precise errors, patches instead of rewrites, symlinks kept.

The file is shared with the nanobot CLI, so a save changes only the keys a patch names: everything
else — keys the app does not know, `null`s a newer CLI wrote, values that came from `NANOBOT_*`
variables (never written) — stays exactly as it was. A save goes through a symlinked config to its
target (the link stays), and a read-only config is refused with a message instead of replaced.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from nanobot_desktop.engine.config.env import env_tree, fill_missing
from nanobot_desktop.engine.config.errors import ConfigError, display_path
from nanobot_desktop.engine.config.keys import MISSING, canonical_path, get_path, normalise
from nanobot_desktop.engine.config.models import SECRET_KEY, Config
from nanobot_desktop.engine.config.paths import default_config_path
from nanobot_desktop.engine.workspace import atomic_write_text

DELETE: Any = object()  # a patch value that removes the key

log = logging.getLogger(__name__)


MAX_DEPTH = 64  # a real config is about 6 levels deep; deeper input only costs recursion everywhere


def _too_deep(data: Any) -> bool:
    """Nesting deeper than MAX_DEPTH, measured without recursion."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return False


def read_json_object(path: Path) -> dict[str, Any]:
    """The file's JSON object, or ConfigError naming file, line and problem (never a traceback)."""
    shown = display_path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot be read ({exc.strerror or exc})", path=path) from None
    try:
        text = raw.decode("utf-8-sig")  # a BOM (Windows Notepad) is tolerated
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{shown} line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                          f"{exc.start})", path=path, line=line) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{shown} line {exc.lineno}, column {exc.colno}: {exc.msg}", path=path,
                          line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise ConfigError(f"{shown}: nested too deeply to be a config (brackets inside brackets, "
                          "hundreds of levels)", path=path) from None
    if _too_deep(data):
        raise ConfigError(f"{shown}: nested more than {MAX_DEPTH} levels deep, which no config is (brackets "
                          "inside brackets)", path=path)
    if not isinstance(data, dict):
        found = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(data), "a number")
        raise ConfigError(f"{shown}: the top level must be a JSON object {{…}}, found {found}", path=path)
    return data


def validation_error(exc: ValidationError, path: Path,
                     env_names: Mapping[tuple[str, ...], str] | None = None) -> ConfigError:
    """One line for the first problem; names the env variable when the bad value came from one."""
    errors = exc.errors()
    first = errors[0]
    loc = tuple(str(part) for part in first["loc"])
    dotted = ".".join(loc) or "(top level)"
    message = first["msg"]
    if first["type"] != "missing":
        shown_input = "…" if loc and SECRET_KEY.search(loc[-1]) else json.dumps(first.get("input"), default=str)
        message += f" (got {shown_input[:80]})"
    source = display_path(path)
    for env_path, name in sorted((env_names or {}).items(), key=lambda item: -len(item[0])):
        if loc[: len(env_path)] == env_path:
            source = f"environment variable {name}"
            break
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return ConfigError(f"{source}: {dotted}: {message}{more}", path=path, field=dotted)


def migrate_exec_restrict(data: dict[str, Any]) -> None:
    """As the original: `tools.exec.restrictToWorkspace` moves up to `tools.restrictToWorkspace`."""
    tools = data.get("tools")
    exec_cfg = tools.get("exec") if isinstance(tools, dict) else None
    if not isinstance(tools, dict) or not isinstance(exec_cfg, dict):
        return
    for key in ("restrictToWorkspace", "restrict_to_workspace"):
        if key in exec_cfg and "restrictToWorkspace" not in tools and "restrict_to_workspace" not in tools:
            tools["restrictToWorkspace"] = exec_cfg.pop(key)


def validate_model(model: type[BaseModel], data: dict[str, Any], path: Path,
                   env_names: Mapping[tuple[str, ...], str] | None = None) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, path, env_names) from None
    except RecursionError:
        raise ConfigError(f"{display_path(path)}: nested too deeply to be a config", path=path) from None


def config_from_data(file_data: dict[str, Any], path: Path, environ: Mapping[str, str] | None = None) -> Config:
    """Build the Config for these file contents, `NANOBOT_*` variables filling what the file lacks."""
    data = normalise(copy.deepcopy(file_data), Config)
    migrate_exec_restrict(data)
    env, env_names = env_tree(dict(os.environ if environ is None else environ))
    inserted = fill_missing(data, env)
    used = {p: n for p, n in env_names.items() if any(p[: len(i)] == i for i in inserted)}
    config: Config = validate_model(Config, data, path, used)
    config._source_path = path
    return config


def load_config(path: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Read config.json (missing -> defaults). Anything wrong raises ConfigError; nothing is written."""
    path = Path(path).expanduser() if path is not None else default_config_path()
    return config_from_data(read_json_object(path) if path.exists() else {}, path, environ)


def dump_like(data: Mapping[str, Any], original: str | None) -> str:
    """JSON text in the style of the file it replaces (indent, trailing newline, \\u escapes), so a
    file the CLI wrote (`json.dumps(indent=2, ensure_ascii=False)`) changes only where keys changed."""
    indent, newline, ascii_only = 2, True, False
    if original is not None:
        found = re.search(r"^\{[ \t]*\r?\n([ \t]+)\S", original)
        indent = len(found.group(1)) if found and found.group(1).strip(" ") == "" else indent
        newline = original.endswith("\n")
        ascii_only = "\\u" in original and original.isascii()
    return json.dumps(data, indent=indent, ensure_ascii=ascii_only) + ("\n" if newline else "")


def write_json_file(path: Path, data: Mapping[str, Any], original: str | None = None) -> None:
    """Atomic write through a symlink to its target; a read-only file is refused, not replaced."""
    shown = display_path(path)
    target = Path(os.path.realpath(path))
    if target.exists() and not os.access(target, os.W_OK):
        raise ConfigError(f"{shown} is read-only: nothing was saved (make the file writable to save "
                          "settings)", path=path)
    text = dump_like(data, original)
    try:
        atomic_write_text(target, text)
    except OSError as exc:
        raise ConfigError(f"{shown}: could not be saved ({exc.strerror or exc})", path=path) from None


def apply_patch(data: dict[str, Any], root: type[BaseModel], patch: Mapping[str, Any]) -> list[str]:
    """Set (or DELETE) each dotted path in the raw file data, in the spelling the file already uses
    for a key (snake_case stays snake_case), camelCase for new keys. Returns the canonical paths."""
    changed: list[str] = []
    for dotted, value in patch.items():
        camel, snake = canonical_path(root, dotted)
        node = data
        for index, (key_c, key_s) in enumerate(zip(camel, snake, strict=True)):
            key = key_s if key_s in node and key_c not in node else key_c
            if index == len(camel) - 1:
                if value is DELETE:
                    node.pop(key, None)
                else:
                    node[key] = copy.deepcopy(value)
            else:
                child = node.get(key)
                if not isinstance(child, dict):
                    if value is DELETE:
                        break
                    child = node[key] = {}
                node = child
        changed.append(".".join(camel))
    return changed


def patch_config_file(path: Path, patch: Mapping[str, Any],
                      environ: Mapping[str, str] | None = None) -> tuple[Config, list[str]]:
    """Apply `patch` to config.json as it is on disk now, validate, write; (new config, paths).
    An invalid result raises ConfigError and leaves the file as it was."""
    path = Path(path).expanduser()
    original = read_text_or_none(path)
    data = read_json_object(path) if original is not None else default_config_data()
    changed = apply_patch(data, Config, patch)
    drop_removed_keys(data)
    config = config_from_data(data, path, environ)
    write_json_file(path, data, original)
    return config, changed


# Keys nanobot 0.3.5 removed (it reports them as unknown and drops them when it saves); no version reads them.
REMOVED_KEYS = (("agents", "defaults", "contextBlockLimit"), ("agents", "defaults", "failOnToolError"),
                ("agents", "defaults", "consolidationRatio"), ("gateway", "heartbeat", "keepRecentMessages"))


def drop_removed_keys(data: dict[str, Any]) -> list[str]:
    """Leave out of a config about to be saved the keys 0.3.5 removed (either spelling); their paths."""
    dropped: list[str] = []
    for *parents, name in REMOVED_KEYS:
        node: Any = data
        for parent in parents:
            node = node.get(parent) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            continue
        snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)
        for key in (name, snake):
            if key in node:
                del node[key]
                dropped.append(".".join([*parents, key]))
    if dropped:
        log.info("not saving keys nanobot 0.3.5 removed: %s", ", ".join(dropped))
    return dropped


def read_text_or_none(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8-sig", errors="replace")
    except FileNotFoundError:
        return None
    except OSError:
        return ""


def default_config_data() -> dict[str, Any]:
    """A new config.json: every key nanobot 0.1.4.post4 writes itself (and nothing else)."""
    dump: dict[str, Any] = Config().model_dump(mode="json", by_alias=True, context={"reveal_secrets": True})
    return dump


def config_value(config: Config, dotted: str) -> Any:
    """The value at a dotted path in the loaded config (MISSING when there is none)."""
    camel, _ = canonical_path(Config, dotted)
    dump = config.model_dump(mode="json", by_alias=True, context={"reveal_secrets": True})
    return get_path(dump, camel)


__all__ = ["DELETE", "MISSING", "apply_patch", "config_from_data", "config_value", "default_config_data",
           "load_config", "patch_config_file", "read_json_object", "validation_error", "write_json_file"]
