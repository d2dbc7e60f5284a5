"""Adding up the usage record: the app's rows and the nanobot CLI's, as one picture.

An in-memory SQLite connection attaches both files (each only when it exists: reading never creates
one) and reads each through a SELECT of its own, the CLI's rows that the app wrote itself left out
(they are in the app's file with their conversation). A CLI file with a schema the app does not write is
still read, as long as it has the columns a sum needs; a damaged one is left out with a note.

The sums are grouped in SQL by day, source and model (a few hundred groups for a month, however many
calls), each file apart and on a thread of its own, and the costs are worked out from those groups,
since prices are per model; the conversations' are priced call by call in SQL as they are grouped. No
Python loop goes over the calls (bench/usage_page.py), and the groupings are kept (group_cache.py,
summary_file.py) and extended by the calls recorded since.
"""

from __future__ import annotations

import hashlib
import json
import operator
import sqlite3
import threading
import time
from itertools import pairwise
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.usage.group_cache import Days, GroupCache, Span
from nanobot_desktop.engine.usage.prices import PER_TOKENS, ModelPrice, price_for
from nanobot_desktop.engine.usage.store import BUSY_TIMEOUT_MS, READ_COLUMNS
from nanobot_desktop.engine.usage.store_errors import APP_FILE, CLI_FILE

CHART_DAYS = 30
_COLUMNS = ("started_at_ms", "duration_ms", "provider", "model", "kind", "session_key", "input_tokens", "output_tokens",
            "cache_read_tokens", "cache_write_tokens", "estimated_tokens", "finish_reason", "error_kind")
_DAY_MS = 86_400_000
# The sums a Totals needs, in its order. SUM of a comparison counts the rows where it holds; COALESCE
# (once a group) makes a sum no row had 0. Plain SUMs rather than SUM(CASE ...): they cost a third less
# per row, and every row of the 30 days goes through them.
_SUM_TERMS = tuple(f"COALESCE({term}, 0)" for term in (
    "COUNT(*)", "SUM(input_tokens)", "SUM(output_tokens)", "SUM(cache_read_tokens)", "SUM(cache_write_tokens)",
    "SUM(iif(cache_read_tokens IS NULL, 0, input_tokens))", "SUM(estimated_tokens > 0)",
    "SUM(finish_reason IN ('error', 'cancelled'))"))
_SUMS = ", ".join(_SUM_TERMS)


@dataclass
class Totals:
    """Sums over some calls. `cost` counts only priced calls; `unpriced_calls` says how many had no
    price (then the cost is a lower bound, and with no priced call at all there is "no price")."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_observed_input: int = 0
    """Input tokens of the calls whose endpoint said how many were cached (the cache share's base)."""
    estimated_calls: int = 0
    failed_calls: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def priced(self) -> bool:
        """Whether any call had a price (False: show "no price", not $0)."""
        return self.calls > self.unpriced_calls

    @property
    def cached_share(self) -> float | None:
        """The share of input served from the prompt cache, where the endpoint reported it (None: never said)."""
        return self.cache_read_tokens / self.cache_observed_input if self.cache_observed_input else None

    def add(self, other: "Totals") -> None:
        # Spelled out (not a loop over the field names): this runs for every group the page adds up.
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.cache_observed_input += other.cache_observed_input
        self.estimated_calls += other.estimated_calls
        self.failed_calls += other.failed_calls
        self.cost += other.cost
        self.unpriced_calls += other.unpriced_calls


@dataclass
class UsageSummary:
    """What the Usage page shows (and the budget checks), for the CHART_DAYS days up to `today`."""

    today: date
    day: Totals = field(default_factory=Totals)
    week: Totals = field(default_factory=Totals)
    month: Totals = field(default_factory=Totals)
    """The last 30 days (today included)."""
    calendar_month: Totals = field(default_factory=Totals)
    """Since the first of this month (the monthly budget's period)."""
    days: dict[date, dict[str, Totals]] = field(default_factory=dict)
    """Day -> source -> totals, for every one of the 30 days (empty dicts for quiet days)."""
    by_model: list[tuple[str, Totals]] = field(default_factory=list)
    by_session: list[tuple[str, Totals]] = field(default_factory=list)
    """Conversations by tokens; the CLI's calls (which name none) are not in it."""
    notes: list[str] = field(default_factory=list)
    """What could not be read (a damaged CLI file, ...), for the page to say."""


def _midnight_ms(day: date) -> int:
    """The start of `day` in local time, in epoch milliseconds."""
    return int(time.mktime(day.timetuple()) * 1000)


def _day_term(midnights: Sequence[int]) -> tuple[str, Days]:
    """The SQL of a call's day (the local midnight starting it, in epoch ms) over the period whose days
    start at `midnights` (tomorrow's last), and the Days of a grouping by it. While every day of the
    period is 24 h long (no clock change in it), by integer division: several times cheaper than
    SQLite's localtime conversion. Otherwise by comparing with each midnight. A call after the last
    midnight (a clock ahead) is in whole days after it."""
    last = midnights[-1]
    later = f"{last} + (started_at_ms - {last}) / {_DAY_MS} * {_DAY_MS}"
    if all(b - a == _DAY_MS for a, b in pairwise(midnights)):
        term = f"{midnights[0]} + (started_at_ms - {midnights[0]}) / {_DAY_MS} * {_DAY_MS}"
    else:
        branches = " ".join(f"WHEN started_at_ms < {b} THEN {a}" for a, b in pairwise(midnights))
        term = f"CASE {branches} ELSE {later} END"
    return term, Days(0, frozenset(midnights), last)


Select = Callable[[Span], str]
"""A file's SELECT of the calls in a span (a period, and rowids by part)."""


def _column_names(connection: sqlite3.Connection, table: str, schema: str) -> set[str]:
    """A table's columns in one row (see `run` in UsageReader._grouped: a row per column would take the
    GIL back once a column)."""
    (names,) = connection.execute("SELECT json_group_array(name) FROM pragma_table_info(?, ?)", (table, schema)).fetchone()
    return set(json.loads(names))


def _within(span: Span, part: str, alias: str = "") -> str:
    """The WHERE terms of `span` for one part's table (`alias`: its name in the SELECT, with a dot)."""
    terms = f"{alias}started_at_ms >= {int(span.since_ms)}"
    if span.until_ms is not None:
        terms += f" AND {alias}started_at_ms < {int(span.until_ms)}"
    if part in span.after:
        terms += f" AND {alias}rowid > {int(span.after[part])}"
    if part in span.upto:
        terms += f" AND {alias}rowid <= {int(span.upto[part])}"
    return terms


class _PriceMemo:
    """`price_for` once per model name (it may try every entry of the table) over a summary's groups.
    Thread-safe enough: a model looked up twice at once is looked up twice, to the same price."""

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._prices = prices
        self._found: dict[str, ModelPrice | None] = {}
        self.fingerprint = hashlib.sha256(repr(sorted(prices.items())).encode("utf-8")).hexdigest()[:16]
        """Which prices: sums priced with others are read again."""

    def __call__(self, model: str) -> ModelPrice | None:
        if model not in self._found:
            self._found[model] = price_for(model, self._prices)
        return self._found[model]


def _price_terms(prices: Mapping[str, ModelPrice | None], values: list[Any]) -> list[str]:
    """The SQL of a group's cost (US dollars, priced calls only) and of its calls without a price, as
    ModelPrice.cost works it out, call by call; `values` gets the models and prices the terms name."""
    priced = [(model, price) for model, price in prices.items() if price is not None]
    if not priced:
        return ["0.0", "COUNT(*)"]
    tokens, out = "COALESCE(input_tokens, 0)", "COALESCE(output_tokens, 0)"
    read, write = "COALESCE(cache_read_tokens, 0)", "COALESCE(cache_write_tokens, 0)"
    rate = f"WHEN ? THEN max(0, {tokens} - {read} - {write}) * ? + {out} * ? + {read} * ? + {write} * ?"
    for model, price in priced:
        values += [model, price.input, price.output, price.input if price.cache_read is None else price.cache_read,
                   price.input if price.cache_write is None else price.cache_write]
    cost = f"COALESCE(SUM(CASE model {' '.join(rate for _ in priced)} ELSE 0 END), 0) / {PER_TOKENS}.0"
    values += [model for model, _price in priced]
    unpriced = f"SUM(model NOT IN ({', '.join('?' for _ in priced)}))"
    return [cost, unpriced]


def _priced(values: Sequence[int], price: ModelPrice | None) -> tuple[Any, ...]:
    """A group's _SUMS with its cost (or its calls counted as unpriced): the fields of Totals, in order.
    Plain tuples while the groups are added up (`_add`), Totals only for what the page shows: the sums
    are on the way from the reading threads to the page, so they are kept to a few µs a group."""
    if price is None:
        return (*values, 0.0, values[0])
    return (*values, price.cost(values[1], values[2], values[3], values[4]), 0)


def _add(into: dict[Any, list[Any]], key: Any, sums: Sequence[Any]) -> None:
    known = into.get(key)
    into[key] = list(sums) if known is None else list(map(operator.add, known, sums))


def _totals(values: Sequence[int], price: ModelPrice | None) -> Totals:
    """A group's Totals from its _SUMS, priced."""
    return Totals(*_priced(values, price))


class UsageReader:
    """Reads the record of one config folder (blocking: call it from an executor). With `summary_path`
    (summary_file.py), the page's groupings are kept there between runs too."""

    def __init__(self, folder: Path, summary_path: Path | None = None) -> None:
        from nanobot_desktop.engine.usage.summary_file import SummaryFile

        self.folder = folder
        self._summary_file = SummaryFile(summary_path) if summary_path is not None else None
        self._cache = GroupCache(self._summary_file)

    def close(self) -> None:
        """Let go of the summary file (the engine's shutdown)."""
        if self._summary_file is not None:
            self._summary_file.close()

    def _connect(self, *, app_only: bool = False) -> tuple[sqlite3.Connection, dict[str, Select], list[str]]:
        """The connection, a SELECT per file that is there ("app", "cli"; only the app's with `app_only`) of
        the calls of a span in the columns _COLUMNS, and notes on what was left out. The CLI's part leaves
        out the rows the app wrote itself (they are in the app's part, with their conversation)."""
        connection = sqlite3.connect(":memory:", timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                     check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        notes: list[str] = []
        parts: dict[str, Select] = {}
        app = self.folder / APP_FILE
        if app.is_file():
            try:
                connection.execute("ATTACH DATABASE ? AS app", (str(app),))
                if "kind" in _column_names(connection, "calls", "app"):
                    parts["app"] = lambda span: (
                        "SELECT started_at_ms, duration_ms, provider, model, kind, session_key, input_tokens, "
                        "output_tokens, cache_read_tokens, cache_write_tokens, estimated_tokens, finish_reason, "
                        f"error_kind FROM app.calls WHERE {_within(span, 'app')}")
                else:
                    notes.append(f"{app} has no usage table the app knows; it is left out")
            except sqlite3.DatabaseError as error:
                notes.append(f"{app} cannot be read ({error}); it is left out")
        cli = self.folder / CLI_FILE
        if cli.is_file() and not app_only:
            try:
                connection.execute("ATTACH DATABASE ? AS cli", (str(cli),))
                columns = _column_names(connection, "llm_calls", "cli")
                missing = [name for name in READ_COLUMNS if name not in columns]
                if missing:
                    notes.append(f"{cli} lacks the columns {', '.join(missing)}; the CLI's calls are left out")
                else:
                    error_kind = "error_kind" if "error_kind" in columns else "NULL"
                    mine = ("AND NOT EXISTS (SELECT 1 FROM app.calls m WHERE m.cli_id = c.id "
                            "AND m.started_at_ms = c.started_at_ms)") if "app" in parts and "id" in columns else ""
                    parts["cli"] = lambda span: (
                        "SELECT started_at_ms, duration_ms, provider, model, 'cli:' || source AS kind, '' AS session_key, "
                        "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, estimated_tokens, "
                        f"finish_reason, {error_kind} AS error_kind FROM cli.llm_calls c "
                        f"WHERE {_within(span, 'cli', 'c.')} {mine}")
            except sqlite3.DatabaseError as error:
                notes.append(f"{cli} cannot be read ({error}); the CLI's calls are left out")
        connection.execute("PRAGMA query_only = ON")
        return connection, parts, notes

    def _open(self, since_ms: int = 0, *, app_only: bool = False) -> tuple[sqlite3.Connection, str, list[str]]:
        """As `_connect`, with a WITH clause naming `rows_`: both files' calls as one table."""
        connection, parts, notes = self._connect(app_only=app_only)
        rows = (" UNION ALL ".join(select(Span(int(since_ms))) for select in parts.values())
                or f"SELECT {', '.join('NULL' for _ in _COLUMNS)} WHERE 0")
        return connection, f"WITH rows_({', '.join(_COLUMNS)}) AS ({rows}) ", notes

    def _grouped(self, since_ms: int, part: str, keys: Mapping[str, str], into: list[Any],
                 notes: list[str] | None = None, days: Days | None = None, priced: _PriceMemo | None = None) -> None:
        """Add to `into` the sums of one file's calls since `since_ms` grouped by `keys` (name -> a column of
        _COLUMNS or an expression over them, such as the day's): read once, then extended by the rows written
        since (GroupCache, on disk too when the reader has a summary file). The page's three groupings each
        read on a thread of their own: SQLite lets go of the GIL while it works, so they share the cores.
        `priced`: each call priced in SQL, its cost and whether it had no price summed with the rest (the
        groups then need no model: the conversations' 3,000 groups by model became 500)."""
        connection, parts, found = self._connect(app_only=part == "app")
        if notes is not None:
            notes += found
        where = "WHERE session_key != '' " if "session_key" in keys else ""
        groups = ", ".join(map(str, range(1, len(keys) + 1)))
        width = len(keys) + len(_SUM_TERMS) + (2 if priced is not None else 0)
        names = ", ".join([f"k{n}" for n in range(len(keys))] + [f"s{n}" for n in range(width - len(keys))])

        def run(span: Span) -> list[Any]:
            terms, values = list(_SUM_TERMS), list[Any]()
            if priced is not None:
                models = [model for (model,) in connection.execute(f"SELECT DISTINCT model FROM ({parts[part](span)})")]
                terms += _price_terms({model: priced(model) for model in models}, values)
            named = [f"{term} AS k{n}" for n, term in enumerate(keys.values())] + [f"{term} AS s{n}" for n, term in enumerate(terms)]
            # All the groups in one row (a JSON array): fetching a row takes the GIL back, and while the GUI
            # thread runs Python (the chart being built) each take can wait out its switch interval (5 ms).
            # Over the bench's 3,000 groups that was 220-440 ms against 70 ms, here 80-110 ms.
            (groups_json,) = connection.execute(
                f"SELECT json_group_array(json_array({names})) FROM (SELECT {', '.join(named)} "
                f"FROM ({parts[part](span)}) {where}GROUP BY {groups})", values).fetchone()
            return list(json.loads(groups_json))

        try:
            if part in parts:
                # What the grouping depends on: its own file, and for the CLI's the app's (its mirrored rows).
                tables: dict[str, tuple[str, Path]] = {
                    name: (table, self.folder / file) for name, table, file in (
                        ("app", "app.calls", APP_FILE), ("cli", "cli.llm_calls", CLI_FILE))
                    if name in parts and (name == part or part == "cli")}
                key = (part, *keys) if priced is None else (part, *keys, "priced", priced.fingerprint)
                into += self._cache.grouped(key, connection, since_ms, tables, len(keys), run,
                                            (lambda lasts: self._mirrors_nothing_old(connection, lasts)) if part == "cli" else None,
                                            days)
        except (sqlite3.DatabaseError, OSError) as error:
            if notes is not None:
                notes.append(f"the usage record cannot be read ({error})")
        finally:
            connection.close()

    @staticmethod
    def _mirrors_nothing_old(connection: sqlite3.Connection, lasts: Mapping[str, int]) -> bool:
        """Whether no app row written since names a CLI row read before: that row, counted as the CLI's
        then (the app writes the CLI's copy first), is the app's own and must be left out now."""
        if "app" not in lasts:
            return True
        with suppress(sqlite3.OperationalError):  # a CLI file without an id column: nothing is mirrored in it
            # By the app's rowids (the few rows since): the planner otherwise walks its cli_id index (2-3 ms).
            return connection.execute(f"SELECT 1 FROM app.calls m NOT INDEXED JOIN cli.llm_calls c ON c.id = m.cli_id "
                                      f"WHERE m.rowid > {int(lasts['app'])} AND c.rowid <= {int(lasts['cli'])} "
                                      "LIMIT 1").fetchone() is None
        return False

    def summary(self, prices: Mapping[str, ModelPrice], today: date | None = None) -> UsageSummary:
        today = today or date.today()
        summary = UsageSummary(today)
        first = min(today - timedelta(days=CHART_DAYS - 1), today.replace(day=1))
        midnights = [_midnight_ms(first + timedelta(days=n)) for n in range((today - first).days + 2)]
        day, days = _day_term(midnights)
        chart_start = today - timedelta(days=CHART_DAYS - 1)
        # Each file grouped by day, source and model (a few hundred groups for a month, however many
        # calls; the costs are worked out from those groups, since prices are per model), and the
        # conversations (only the app's rows name one) over the 30 days, priced call by call in SQL.
        grouped: list[Any] = []
        app_days: list[Any] = []
        sessions: list[Any] = []
        app_notes: list[str] = []
        by_day = {"day": day, "kind": "kind", "model": "model"}
        price_of = _PriceMemo(prices)
        readings = [threading.Thread(target=self._grouped, name=f"usage-{name}", args=args) for name, args in (
            ("app", (midnights[0], "app", by_day, app_days, app_notes, days)),
            ("sessions", (_midnight_ms(chart_start), "app", {"session_key": "session_key"}, sessions, None, None, price_of)))]
        for reading in readings:
            reading.start()
        self._grouped(midnights[0], "cli", by_day, grouped, summary.notes, days)
        for reading in readings:
            reading.join()
        grouped += app_days
        summary.notes += [note for note in app_notes if note not in summary.notes]
        # Days as numbers from `first` while the groups are added up; the Totals of a group go into its
        # day, its day and source, its model: the periods are then added up from the days.
        number = {midnight: n for n, midnight in enumerate(midnights)}
        last = len(midnights) - 1  # a day after it (a clock ahead) counts on in whole days
        grouped = [(number[d] if d in number else last + (d - midnights[-1]) // _DAY_MS, *rest) for d, *rest in grouped]
        chart_from, week_from, today_n = ((day_ - first).days for day_ in (chart_start, today - timedelta(days=6), today))
        per_day: dict[int, list[Any]] = {}
        by_source: dict[tuple[int, str], list[Any]] = {}
        models: dict[str, list[Any]] = {}
        for n, kind, model, *values in grouped:
            sums = _priced(values, price_of(model))
            _add(per_day, n, sums)
            if chart_from <= n <= today_n:
                _add(by_source, (n, kind), sums)
                _add(models, model, sums)
        month_from = (today.replace(day=1) - first).days
        for n, day_sums in per_day.items():
            totals = Totals(*day_sums)
            if n >= month_from:
                summary.calendar_month.add(totals)
            if chart_from <= n <= today_n:
                for period, since in ((summary.month, chart_from), (summary.week, week_from), (summary.day, today_n)):
                    if n >= since:
                        period.add(totals)
        summary.days = {chart_start + timedelta(days=n): {} for n in range(CHART_DAYS)}
        for (n, kind), source_sums in by_source.items():
            summary.days[first + timedelta(days=n)][kind] = Totals(*source_sums)
        summary.by_model = sorted(((model, Totals(*sums)) for model, sums in models.items()), key=lambda item: -item[1].tokens)
        summary.by_session = sorted(((key, Totals(*sums)) for key, *sums in sessions), key=lambda item: -item[1].tokens)
        return summary

    def session_totals(self, session_key: str, prices: Mapping[str, ModelPrice]) -> Totals:
        """Everything recorded for one conversation (the inspector's turn header)."""
        totals = Totals()
        connection, rows, _notes = self._open()
        try:
            for model, *values in connection.execute(
                    f"{rows}SELECT model, {_SUMS} FROM rows_ WHERE session_key = ? GROUP BY model", (session_key,)):
                totals.add(_totals(values, price_for(model, prices)))
        except sqlite3.DatabaseError:
            pass  # a record that cannot be read shows no total rather than a wrong one
        finally:
            connection.close()
        return totals

    def count(self) -> int:
        connection, rows, _notes = self._open()
        try:
            return int(connection.execute(f"{rows}SELECT COUNT(*) FROM rows_").fetchone()[0])
        finally:
            connection.close()

    def export_csv(self, prices: Mapping[str, ModelPrice]) -> str:
        """Every recorded call, oldest first, one CSV line each (cost empty where there is no price)."""
        import csv  # only here: not part of the app's start
        import io

        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["started", "duration_ms", "source", "session", "provider", "model", "input_tokens",
                         "output_tokens", "cache_read_tokens", "cache_write_tokens", "estimated", "finish_reason",
                         "error_kind", "cost_usd"])
        for row in self._rows():
            started, duration, provider, model, kind, session, inp, out_tokens, read, write, estimated, reason, kind_error = row
            price = price_for(model, prices)
            cost = "" if price is None else f"{price.cost(inp or 0, out_tokens or 0, read, write):.6f}"
            writer.writerow([datetime.fromtimestamp(started / 1000).astimezone().isoformat(timespec="seconds"),
                             duration, kind, session, provider, model, inp, out_tokens,
                             "" if read is None else read, "" if write is None else write,
                             "yes" if (estimated or 0) > 0 else "no", reason, kind_error or "", cost])
        return out.getvalue()

    def _rows(self) -> Iterator[tuple[Any, ...]]:
        connection, rows, _notes = self._open()
        try:
            yield from connection.execute(f"{rows}SELECT * FROM rows_ ORDER BY started_at_ms")
        finally:
            connection.close()
