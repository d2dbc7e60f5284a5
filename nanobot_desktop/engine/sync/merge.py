"""Which lines of one version of an append-only file the other lacks: the rule every merge of a sync
conflict copy uses (sessions, history.jsonl), kept apart from the files so it can be tested alone."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any


def identity(message: dict[str, Any]) -> str:
    """The same message, however its JSON was spaced or its keys ordered."""
    return json.dumps(message, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def missing_messages(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of `theirs` that `ours` lacks (counted: a message repeated in theirs but once in ours
    counts once more), ordered by their timestamps; messages without one keep their place after the one
    before them."""
    have = Counter(identity(message) for message in ours)
    missing: list[tuple[str, int, dict[str, Any]]] = []
    last_stamp = ""
    for number, message in enumerate(theirs):
        key = identity(message)
        stamp = message.get("timestamp")
        last_stamp = stamp if isinstance(stamp, str) and stamp else last_stamp
        if have[key] > 0:
            have[key] -= 1
            continue
        missing.append((last_stamp, number, message))
    missing.sort(key=lambda item: (item[0], item[1]))
    return [message for _stamp, _number, message in missing]
