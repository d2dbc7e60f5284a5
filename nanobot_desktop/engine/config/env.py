"""`NANOBOT_*` environment variables: they fill keys the file lacks, and are never written back."""

from __future__ import annotations

import copy
import json
from typing import Any, get_args, get_origin

from pydantic.alias_generators import to_camel

from nanobot_desktop.engine.config.errors import ConfigError
from nanobot_desktop.engine.config.keys import find_field, is_model, normalise, unwrap
from nanobot_desktop.engine.config.models import ChannelsConfig, Config

ENV_PREFIX = "NANOBOT_"


def _env_value(name: str, raw: str, annotation: Any, free_form: bool) -> Any:
    annotation = unwrap(annotation)
    structured = is_model(annotation) or get_origin(annotation) in (dict, list) or annotation in (dict, list)
    if structured or (free_form and raw.lstrip()[:1] in ("{", "[")):
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"environment variable {name}: not valid JSON ({exc.msg}, column {exc.colno})",
                              field=name) from None
    return raw


def env_tree(environ: dict[str, str]) -> tuple[dict[str, Any], dict[tuple[str, ...], str]]:
    """NANOBOT_A__B__C=value -> {"a": {"b": {"c": value}}} with keys resolved to the file's spelling,
    and where each variable went (for error messages). Variables naming no known setting are
    ignored, as pydantic-settings does."""
    tree: dict[str, Any] = {}
    names: dict[tuple[str, ...], str] = {}
    for name in sorted(environ):
        if not name.upper().startswith(ENV_PREFIX):
            continue
        segments = name[len(ENV_PREFIX):].split("__")
        if not all(segments):
            continue
        keys: list[str] = []
        annotation: Any = Config
        free_form = False
        for segment in segments:
            annotation = unwrap(annotation)
            if free_form:
                keys.append(to_camel(segment.lower()))
            elif is_model(annotation):
                found = find_field(annotation, segment, any_case=True)
                if found:
                    keys.append(found[0])
                    annotation = found[2]
                elif annotation is ChannelsConfig:  # channel blocks are free-form, camelCase inside
                    keys.append(to_camel(segment.lower()))
                    free_form, annotation = True, Any
                else:
                    break
            elif get_origin(annotation) is dict:
                keys.append(segment.lower())
                annotation = get_args(annotation)[1]
            else:
                break
        else:
            node = tree
            for key in keys[:-1]:
                node = node.setdefault(key, {}) if isinstance(node.get(key, {}), dict) else {}
            node[keys[-1]] = _env_value(name, environ[name], annotation, free_form)
            names[tuple(keys)] = name
    return normalise(tree, Config), names


def fill_missing(target: dict[str, Any], env: dict[str, Any], path: tuple[str, ...] = (),
                 inserted: list[tuple[str, ...]] | None = None) -> list[tuple[str, ...]]:
    """Values in the file win: env values only go where the file has no such key (or null)."""
    inserted = [] if inserted is None else inserted
    for key, value in env.items():
        if key not in target or target[key] is None:
            target[key] = copy.deepcopy(value)
            inserted.append(path + (key,))
        elif isinstance(target[key], dict) and isinstance(value, dict):
            fill_missing(target[key], value, path + (key,), inserted)
    return inserted
