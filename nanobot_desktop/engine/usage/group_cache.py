"""The Usage page's grouped sums, kept between reads and extended by the rows written since.

Both usage files only grow at the end (a row per call, appended; the app never updates one, nor does
nanobot 0.3.5) and lose rows only to retention, which deletes the oldest. So a grouping read once is
still right while each file it read holds the same rows of the period up to the highest rowid seen
then: the rows after it are read and their sums added to the groups. Anything else (a file
replaced, rows of the period deleted, a new day's period) reads the period again. Reading again
costs what the first read did (bench/usage_page.py), so the page re-opened, refreshed after a
turn's calls, or the budget checked after each write, reads a few rows instead of a month's.

In memory only, per reader: nothing is written into either file for it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Rows = list[tuple[Any, ...]]
MAX_ENTRIES = 8
"""Groupings kept (the page reads three; a new day's period is a new key)."""


@dataclass(frozen=True)
class FileMark:
    """Where a table stood when it was read: which file, its highest rowid, its rows in the period."""

    identity: tuple[int, int]
    last_rowid: int
    period_rows: int


@dataclass
class _Entry:
    since_ms: int
    marks: dict[str, FileMark]
    groups: dict[tuple[Any, ...], list[int]]


def file_mark(connection: sqlite3.Connection, table: str, path: Path, since_ms: int) -> FileMark:
    """max(rowid) from the edge of the table's b-tree, the period's count from its time index (no row read)."""
    stat = os.stat(path)
    last, count = connection.execute(f"SELECT COALESCE(max(rowid), 0), (SELECT count(*) FROM {table} "
                                     f"WHERE started_at_ms >= {int(since_ms)}) FROM {table}").fetchone()
    return FileMark((stat.st_dev, stat.st_ino), int(last), int(count))


class GroupCache:
    """Grouped sums by a caller's key (which says the grouping and the period); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Hashable, _Entry] = {}

    def grouped(self, key: Hashable, connection: sqlite3.Connection, since_ms: int, tables: Mapping[str, tuple[str, Path]],
                width: int, run: Callable[[Mapping[str, int]], Rows],
                still_valid: Callable[[Mapping[str, int]], bool] | None = None) -> Rows:
        """The rows (`width` key columns, then sums) of `run({})`, which groups the period's calls of the
        `tables` (name -> (SQL table, file)) it reads. `run(after)` must read only the rows whose rowid is
        above `after[name]` in each named table. `still_valid(last_rowids)` may veto extending (a grouping
        that depends on more than its own rows, such as the CLI's rows the app's mirror).

        One read transaction: the marks and the rows come from the same snapshot of each file, so a row
        written meanwhile is in neither (and read next time) rather than in the sums and after the mark."""
        connection.execute("BEGIN")
        try:
            return self._grouped(key, connection, since_ms, tables, width, run, still_valid)
        finally:
            connection.execute("ROLLBACK")  # nothing was written: only the read snapshot ends

    def _grouped(self, key: Hashable, connection: sqlite3.Connection, since_ms: int, tables: Mapping[str, tuple[str, Path]],
                 width: int, run: Callable[[Mapping[str, int]], Rows],
                 still_valid: Callable[[Mapping[str, int]], bool] | None) -> Rows:
        marks = {name: file_mark(connection, table, path, since_ms) for name, (table, path) in tables.items()}
        with self._lock:
            entry = self._entries.get(key)
        if entry is not None and entry.since_ms == since_ms and entry.marks.keys() == marks.keys():
            if entry.marks == marks:
                return _rows(entry.groups)
            lasts = {name: mark.last_rowid for name, mark in entry.marks.items()}
            if self._only_appended(connection, tables, entry, marks, since_ms) and (still_valid is None or still_valid(lasts)):
                groups = {group: list(sums) for group, sums in entry.groups.items()}
                for row in run(lasts):
                    sums = groups.setdefault(tuple(row[:width]), [0] * (len(row) - width))
                    for index, value in enumerate(row[width:]):
                        sums[index] += value
                return self._keep(key, _Entry(since_ms, marks, groups))
        rows = run({})
        self._keep(key, _Entry(since_ms, marks, {tuple(row[:width]): list(row[width:]) for row in rows}))
        return rows

    @staticmethod
    def _only_appended(connection: sqlite3.Connection, tables: Mapping[str, tuple[str, Path]], entry: _Entry,
                       marks: Mapping[str, FileMark], since_ms: int) -> bool:
        """Whether each file still holds exactly the period's rows it held up to the rowid seen then."""
        for name, old in entry.marks.items():
            new = marks[name]
            if new.identity != old.identity or new.last_rowid < old.last_rowid:
                return False
            (count,) = connection.execute(f"SELECT count(*) FROM {tables[name][0]} WHERE started_at_ms >= "
                                          f"{int(since_ms)} AND rowid <= {old.last_rowid}").fetchone()
            if count != old.period_rows:
                return False
        return True

    def _keep(self, key: Hashable, entry: _Entry) -> Rows:
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = entry
            while len(self._entries) > MAX_ENTRIES:  # yesterday's periods: the oldest kept go first
                del self._entries[next(iter(self._entries))]
        return _rows(entry.groups)


def _rows(groups: Mapping[tuple[Any, ...], list[int]]) -> Rows:
    return [(*group, *sums) for group, sums in groups.items()]
