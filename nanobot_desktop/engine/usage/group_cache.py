"""The Usage page's grouped sums, kept between reads (and between runs) and extended by the rows written since.

Both usage files only grow at the end (a row per call, appended; the app never updates one, nor does
nanobot 0.3.5) and lose rows only to retention, which deletes the oldest. So a grouping read once is
still right while each file it read holds the same rows of the period up to the highest rowid seen
then: the rows after it are read and their sums added to the groups. When the period starts later
(a new day: the 30 days moved on), the days that left it are dropped from a grouping by day, and the
rows that left it are read and taken off the sums of any other grouping. Anything else (a file
replaced, rows of the period deleted, the period starting earlier, another time zone) reads the
period again. Reading again costs what the first read did (bench/usage_page.py), so the page
opened, refreshed after a turn's calls, or the budget checked after each write, reads a few rows
instead of a month's.

Kept in memory per reader and, given a Keeper (summary_file.py), in the app's cache folder too, so the first
open after a start reads what was added since the last one rather than the whole period. Nothing is
written into either usage file for it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Collection, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

Rows = list[tuple[Any, ...]]
Sums = list[Any]
"""A group's sums: counts, and a cost (float) where the grouping prices its calls."""
Groups = dict[tuple[Any, ...], Sums]
MAX_ENTRIES = 8
"""Groupings kept (the page reads three; a new day's period is a new key)."""


@dataclass(frozen=True)
class FileMark:
    """Where a table stood when it was read: which file, its highest rowid and that row's start (a file
    put back from elsewhere is told apart even where the inode is reused), its rows in the period."""

    identity: tuple[int, int]
    last_rowid: int
    last_started_ms: int
    period_rows: int


@dataclass(frozen=True)
class Span:
    """The rows a grouping reads: started at or after `since_ms` (and before `until_ms`, if given), and
    by table name, a rowid above `after[name]` and at most `upto[name]` (where named)."""

    since_ms: int
    until_ms: int | None = None
    after: Mapping[str, int] = field(default_factory=dict)
    upto: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Days:
    """A grouping by day: which key column holds the day (the local midnight starting it, in epoch ms),
    and the midnights of the period as they are now (a group of another day means another time zone)."""

    column: int
    midnights: Collection[int]
    last: int
    """The last midnight of the period (tomorrow's): a day from it on is in the future, not unknown."""


@dataclass
class Entry:
    since_ms: int
    marks: dict[str, FileMark]
    groups: Groups


Run = Callable[[Span], Rows]


class Keeper(Protocol):
    """Where groupings are kept between runs (summary_file.SummaryFile)."""

    def load(self, key: Hashable) -> Entry | None: ...

    def save(self, key: Hashable, entry: Entry) -> None: ...


def file_mark(connection: sqlite3.Connection, table: str, path: Path, since_ms: int) -> FileMark:
    """max(rowid) from the edge of the table's b-tree, the period's count from its time index (no row read)."""
    stat = os.stat(path)
    last, started, count = connection.execute(
        f"SELECT COALESCE(max(rowid), 0), COALESCE(started_at_ms, 0), (SELECT count(*) FROM {table} "
        f"WHERE started_at_ms >= {int(since_ms)}) FROM {table}").fetchone()
    return FileMark((stat.st_dev, stat.st_ino), int(last), int(started), int(count))


class GroupCache:
    """Grouped sums by a caller's key (which says the grouping); thread-safe."""

    def __init__(self, disk: Keeper | None = None) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Hashable, Entry] = {}
        self._disk = disk

    def grouped(self, key: Hashable, connection: sqlite3.Connection, since_ms: int, tables: Mapping[str, tuple[str, Path]],
                width: int, run: Run, still_valid: Callable[[Mapping[str, int]], bool] | None = None,
                days: Days | None = None) -> Rows:
        """The rows (`width` key columns, then sums; the first sum a count of calls) of
        `run(Span(since_ms))`, which groups the calls of the `tables` (name -> (SQL table, file)) it reads,
        keeping to the span it is given. `still_valid(last_rowids)` may veto extending (a grouping that
        depends on more than its own rows, such as the CLI's rows the app's mirror). `days`: the
        grouping is by day (see Days).

        One read transaction: the marks and the rows come from the same snapshot of each file, so a row
        written meanwhile is in neither (and read next time) rather than in the sums and after the mark."""
        connection.execute("BEGIN")
        try:
            return self._grouped(key, connection, since_ms, tables, width, run, still_valid, days)
        finally:
            connection.execute("ROLLBACK")  # nothing was written: only the read snapshot ends

    def _grouped(self, key: Hashable, connection: sqlite3.Connection, since_ms: int, tables: Mapping[str, tuple[str, Path]],
                 width: int, run: Run, still_valid: Callable[[Mapping[str, int]], bool] | None,
                 days: Days | None) -> Rows:
        marks = {name: file_mark(connection, table, path, since_ms) for name, (table, path) in tables.items()}
        with self._lock:
            entry = self._entries.get(key)
        if entry is None and self._disk is not None:
            entry = self._disk.load(key)
        if entry is not None and entry.since_ms <= since_ms and entry.marks.keys() == marks.keys():
            if entry.since_ms == since_ms and entry.marks == marks:
                self._remember(key, entry)
                return _rows(entry.groups)
            lasts = {name: mark.last_rowid for name, mark in entry.marks.items()}
            if (self._only_appended(connection, tables, entry, marks, since_ms) and (still_valid is None or still_valid(lasts))
                    and (days is None or _known_days(entry.groups, days, since_ms))):
                # A group's sums are replaced, never changed in place: the groups nothing was added to are
                # the same lists as the entry's (SummaryFile.save writes only the others).
                groups = dict(entry.groups)
                if since_ms > entry.since_ms:  # the period moved on: what left it goes
                    if days is not None:
                        groups = {group: sums for group, sums in groups.items() if group[days.column] >= since_ms}
                    else:
                        _add(groups, run(Span(entry.since_ms, since_ms, upto=lasts)), width, -1)
                        groups = {group: sums for group, sums in groups.items() if sums[0]}
                _add(groups, run(Span(since_ms, after=lasts)), width, 1)
                return self._keep(key, Entry(since_ms, marks, groups))
        rows = run(Span(since_ms))
        self._keep(key, Entry(since_ms, marks, {tuple(row[:width]): list(row[width:]) for row in rows}))
        return rows

    @staticmethod
    def _only_appended(connection: sqlite3.Connection, tables: Mapping[str, tuple[str, Path]], entry: Entry,
                       marks: Mapping[str, FileMark], since_ms: int) -> bool:
        """Whether each file still holds exactly the period's rows it held up to the rowid seen then."""
        for name, old in entry.marks.items():
            new = marks[name]
            if new.identity != old.identity or new.last_rowid < old.last_rowid:
                return False
            table, since = tables[name][0], int(entry.since_ms)
            last_started = f"(SELECT started_at_ms FROM {table} WHERE rowid = {old.last_rowid})"
            if since == int(since_ms):  # `marks` counted the same period
                # The period's rows up to the old mark are those now less the few after it (read by rowid).
                (later, started) = connection.execute(
                    f"SELECT count(*), {last_started} FROM {table} NOT INDEXED "
                    f"WHERE rowid > {old.last_rowid} AND started_at_ms >= {since}").fetchone()
                count = new.period_rows - later
            else:
                (count, started) = connection.execute(
                    f"SELECT count(*), {last_started} FROM {table} "
                    f"WHERE started_at_ms >= {since} AND rowid <= {old.last_rowid}").fetchone()
            if count != old.period_rows or (old.last_rowid and started != old.last_started_ms):
                return False
        return True

    def _remember(self, key: Hashable, entry: Entry) -> None:
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = entry
            while len(self._entries) > MAX_ENTRIES:  # groupings no longer asked for: the oldest kept go first
                del self._entries[next(iter(self._entries))]

    def _keep(self, key: Hashable, entry: Entry) -> Rows:
        self._remember(key, entry)
        if self._disk is not None:
            self._disk.save(key, entry)
        return _rows(entry.groups)


def _add(groups: Groups, rows: Rows, width: int, sign: int) -> None:
    """Add (sign 1) or take off (-1) each row's sums to its group's, in a new list."""
    for row in rows:
        group = tuple(row[:width])
        known = groups.get(group)
        values = row[width:]
        groups[group] = ([sign * value for value in values] if known is None
                         else [total + sign * value for total, value in zip(known, values, strict=True)])


def _known_days(groups: Mapping[tuple[Any, ...], Sums], days: Days, since_ms: int) -> bool:
    """Whether every group's day still in the period starts at one of its midnights (or after the last
    one): not so after a move to another time zone, whose days start at other hours."""
    column = days.column
    return all(group[column] in days.midnights or group[column] >= days.last
               for group in groups if group[column] >= since_ms)


def _rows(groups: Mapping[tuple[Any, ...], Sums]) -> Rows:
    return [(*group, *sums) for group, sums in groups.items()]
