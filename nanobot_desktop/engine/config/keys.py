"""Walking the models by key name: snake_case and camelCase spellings, dotted paths, typed leaves."""

from __future__ import annotations

import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

MISSING: Any = object()


def unwrap(annotation: Any) -> Any:
    """`X | None` and `Annotated[X, …]` -> X, so walkers see the model/dict/list underneath."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            rest = [a for a in get_args(annotation) if a is not type(None)]
            if len(rest) != 1:
                return annotation
            annotation = rest[0]
        else:
            return annotation


def is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def find_field(model: type[BaseModel], key: str, any_case: bool = False) -> tuple[str, str, Any] | None:
    """(alias, python name, annotation) of the field spelled `key` (snake or camel; any case for env)."""
    for name, info in model.model_fields.items():
        alias = info.alias or name
        if key in (name, alias) or (any_case and key.lower() in (name.lower(), alias.lower())):
            return alias, name, info.annotation
    return None


def child_annotation(annotation: Any, key: str) -> tuple[str, Any]:
    """The canonical spelling of `key` under `annotation`, and the annotation of its value."""
    annotation = unwrap(annotation)
    if is_model(annotation):
        found = find_field(annotation, key)
        if found:
            return found[0], found[2]
        return key, Any
    if get_origin(annotation) is dict:
        return key, get_args(annotation)[1]
    return key, Any


def normalise(data: Any, annotation: Any) -> Any:
    """Rename known snake_case keys to their camelCase alias (unknown keys untouched) so the env
    merge speaks one spelling. If both spellings are present, both are kept."""
    annotation = unwrap(annotation)
    if not isinstance(data, dict):
        return data
    if is_model(annotation):
        out: dict[str, Any] = {}
        for key, value in data.items():
            found = find_field(annotation, key) if isinstance(key, str) else None
            if found and (key == found[0] or found[0] not in data):
                out[found[0]] = normalise(value, found[2])
            else:
                out[key] = value
        return out
    if get_origin(annotation) is dict:
        value_type = get_args(annotation)[1]
        return {k: normalise(v, value_type) for k, v in data.items()}
    return data


def get_path(tree: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return MISSING
        tree = tree[key]
    return tree


def canonical_path(root: type[BaseModel], dotted: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """"tools.restrict_to_workspace" -> (("tools", "restrictToWorkspace"), the snake spellings too)."""
    annotation: Any = root
    camel: list[str] = []
    snake: list[str] = []
    for key in dotted.split("."):
        if not key:
            raise ValueError(f"not a settings path: {dotted!r}")
        alias, child = child_annotation(annotation, key)
        found = find_field(unwrap(annotation), key) if is_model(unwrap(annotation)) else None
        camel.append(alias)
        snake.append(found[1] if found else key)
        annotation = child
    return tuple(camel), tuple(snake)
