"""JSON `null` where the models want a value: how nanobot 0.3.x writes its config, kept as written.

`nanobot onboard` of 0.3.5 writes every unused provider as `{"apiKey": null, "apiBase": null, …}`.
The models here (post4's) want a string there, so such a file would not load at all. Instead, a null
under a field that does not accept None is taken out before validation (the field gets its default)
and remembered; saving puts `null` back wherever the value is still that default, so the file keeps
the CLI's shape and only what the user changed differs.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

NullPath = tuple[str, ...]


def _accepts_none(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _accepts_none(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return type(None) in get_args(annotation)
    return annotation is Any or annotation is None or annotation is type(None)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _model_of(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        return _model_of(rest[0]) if len(rest) == 1 else None
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def take_nulls(data: dict[str, Any], model: type[BaseModel], prefix: NullPath = ()) -> list[NullPath]:
    """Remove (in place) each null whose field cannot hold None; returns where they were."""
    found: list[NullPath] = []
    for key in list(data):
        value = data[key]
        field = next((info for name, info in model.model_fields.items() if key in (name, info.alias)), None)
        if field is None:
            continue  # unknown keys are kept exactly, nulls included
        if value is None and not _accepts_none(field.annotation):
            del data[key]
            found.append((*prefix, key))
        elif isinstance(value, dict) and (sub := _model_of(field.annotation)) is not None:
            found += take_nulls(value, sub, (*prefix, key))
    return found


def put_nulls(dump: dict[str, Any], nulls: list[NullPath], defaults: dict[str, Any]) -> None:
    """Write `null` back at each remembered place whose value is still the default (`defaults` is the
    dump of a default config)."""
    for path in nulls:
        parent: Any = dump
        default: Any = defaults
        for part in path[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
            default = default.get(part) if isinstance(default, dict) else None
        if not isinstance(parent, dict) or path[-1] not in parent:
            continue
        fallback = default.get(path[-1]) if isinstance(default, dict) else None
        if parent[path[-1]] == fallback:
            parent[path[-1]] = None
