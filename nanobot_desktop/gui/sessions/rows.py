"""What the session list shows, as plain functions the model uses: channel groups and their order,
branches arranged under their origins, the time column's text, and how many row moves a new listing
would take (split from model.py to keep it readable)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from PySide6.QtCore import QT_TRANSLATE_NOOP, QLocale

from nanobot_desktop.engine import SessionInfo
from nanobot_desktop.gui.common.i18n import translate, ui_locale

GROUP_ORDER = ("desktop", "cli", "heartbeat", "cron", "subagent", "system")
GROUP_TITLES = {"desktop": QT_TRANSLATE_NOOP("Sessions", "Desktop"),
                "cli": QT_TRANSLATE_NOOP("Sessions", "Command line"),
                "heartbeat": QT_TRANSLATE_NOOP("Sessions", "Heartbeat"),
                "cron": QT_TRANSLATE_NOOP("Sessions", "Scheduled"),
                "subagent": QT_TRANSLATE_NOOP("Sessions", "Subagents"),
                "system": QT_TRANSLATE_NOOP("Sessions", "System"),
                "archived": QT_TRANSLATE_NOOP("Sessions", "Archived")}


def group_title(channel: str) -> str:
    """Heading of a channel's group, in the UI language; channels the nanobot CLI writes (telegram,
    slack, ...) are names and get their own name, capitalised."""
    if channel in GROUP_TITLES:
        return translate("Sessions", GROUP_TITLES[channel])
    return channel[:1].upper() + channel[1:] if channel else translate("Sessions", "Other")


def group_rank(channel: str) -> tuple[int, str]:
    if channel == "archived":  # conversations /new put aside: below every channel
        return (len(GROUP_ORDER) + 1, "")
    return (GROUP_ORDER.index(channel) if channel in GROUP_ORDER else len(GROUP_ORDER), channel)


@dataclass
class Arrangement:
    """What the list shows, in display order: (channel, its top-level sessions newest first) per
    group, and origin key → the branches shown under it. Made in the executor (`arrange_listing`), so
    the GUI thread only hands it to the model."""

    groups: list[tuple[str, list[SessionInfo]]] = field(default_factory=list)
    branches: dict[str, list[SessionInfo]] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    """With branches hidden: each branch's key → the key of the row that stands for its conversation."""
    latest: dict[str, str] = field(default_factory=dict)
    """With branches hidden: a conversation's row key → its most recently active version (opened from the row)."""
    texts: dict[str, list[str]] = field(default_factory=dict)
    """Channel → its rows' searchable texts, in their order, when the listing brings them (filter.fold_listing)."""


def arrange_listing(infos: list[SessionInfo], show_branches: bool = False) -> Arrangement:
    """The list's groups (in GROUP_ORDER) and branches from a listing ordered newest first.

    A branch made by Edit or Regenerate is a version of its conversation, shown inside it (the chat's
    "‹ 2/3 ›"), so by default it has no row of its own: its conversation's row stands for it, takes
    its place in the order and its latest preview and time. `show_branches` lists them under it."""
    top, branches = arrange(infos)
    versions: dict[str, str] = {}
    latest: dict[str, str] = {}
    if branches and not show_branches:
        newest = {root: max(children, key=lambda info: info.updated_at)
                  for root, children in branches.items()}
        for position, info in enumerate(top):
            children = branches.get(info.key)
            if children is None:
                continue
            versions.update((child.key, info.key) for child in children)
            last = newest[info.key]
            if last.updated_at > info.updated_at:
                latest[info.key] = last.key
                top[position] = replace(info, updated_at=last.updated_at, preview=last.preview,
                                        message_count=last.message_count)
        branches = {}
    groups: dict[str, list[SessionInfo]] = {}
    for info in top:
        rows = groups.get(info.channel)
        if rows is None:
            rows = groups[info.channel] = []
        rows.append(info)
    return Arrangement([(channel, groups[channel]) for channel in sorted(groups, key=group_rank)], branches,
                       versions, latest)


def arrange(infos: list[SessionInfo]) -> tuple[list[SessionInfo], dict[str, list[SessionInfo]]]:
    """(top-level rows, origin key → branches) from a listing ordered newest first.

    A branch goes under the top-level session it descends from (a branch of a branch too: the tree
    is two levels deep); a branch whose origin is not listed (deleted) stays top-level. A family
    takes the place of its most recently active member; branches are in the order they were made.
    Two files with one key (post4's name collisions): the newest is shown. Per-row work is kept to a
    dict build: 20,000 sessions with a handful of branches.
    """
    by_key: dict[str, SessionInfo] = {}
    for info in infos:
        if info.key not in by_key:
            by_key[info.key] = info
    roots: dict[str, str] = {}  # only the branches whose origin is listed
    for key, info in by_key.items():
        if not info.branch_of or info.branch_of not in by_key:
            continue
        root, seen = key, {key}
        while (origin := by_key[root].branch_of) and origin in by_key and origin not in seen:
            seen.add(origin)
            root = origin
        if root != key:
            roots[key] = root
    if not roots:
        return list(by_key.values()), {}
    top: list[SessionInfo] = []
    placed: set[str] = set()
    branches: dict[str, list[SessionInfo]] = {}
    for key, info in by_key.items():
        root = roots.get(key, key)
        if root not in placed:
            placed.add(root)
            top.append(by_key[root])
        if root != key:
            branches.setdefault(root, []).append(info)
    for children in branches.values():
        children.sort(key=lambda info: (info.created_at, info.key))
    return top, branches


def format_when(stamp: str, now: datetime | None = None) -> str:
    """"14:05" today, "Mon 14:05" this week, "2026-03-08" before (for the list's right column); the
    weekday in the UI language (QLocale: "周一 14:05"), the date in ISO form, short in every language."""
    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone().replace(tzinfo=None)
    now = now or datetime.now()
    if moment.date() == now.date():
        return moment.strftime("%H:%M")
    if 0 < (now.date() - moment.date()).days < 7:
        day = ui_locale().dayName(moment.isoweekday(), QLocale.FormatType.ShortFormat)
        return translate("Sessions", "{weekday} {time}").format(weekday=day, time=moment.strftime("%H:%M"))
    return moment.strftime("%Y-%m-%d")


MAX_MOVES = 2
"""More row moves than this in one listing and the model resets instead: a reset costs the view one
pass over the rows, a few moves cost about as much."""


def moves_needed(shown: list[str], wanted: list[str], limit: int = MAX_MOVES) -> int:
    """How many row moves the in-place sync would make (counting stops just past `limit`)."""
    if not shown:
        return 0
    wanted_keys = set(wanted)
    rows = [key for key in shown if key in wanted_keys]
    present = set(rows)
    moves = 0
    for position, key in enumerate(wanted):
        if key not in present:
            rows.insert(position, key)
        elif rows[position] != key:
            rows.insert(position, rows.pop(rows.index(key, position + 1)))
            moves += 1
            if moves > limit:
                break
    return moves
