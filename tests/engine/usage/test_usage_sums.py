"""The Usage page's sums (UsageReader.summary, grouped in SQL) against a plain row-by-row sum of the same
record, read straight from both files: the app's rows, some mirrored into nanobot 0.3.5's file, and the
CLI's own; estimates, failures, models without a price, cache counts reported and not, over six weeks.
"""

from __future__ import annotations

import random
import sqlite3
import time
from dataclasses import fields
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.usage.prices import DEFAULT_PRICES, ModelPrice, price_for, price_table
from nanobot_desktop.engine.usage.reader import CHART_DAYS, Totals, UsageReader, UsageSummary
from nanobot_desktop.engine.usage.store import APP_FILE, CLI_COLUMNS, CLI_FILE, UsageRow, UsageWriter

MODELS = ("gpt-4o-mini", "openai/gpt-4.1", "gpt-4o-2024-08-06", "claude-sonnet-4", "my-local-model", "qwen3:8b")
KINDS = ("chat", "heartbeat", "cron", "subagent", "consolidation")
CLI_SOURCES = ("user", "api", "cron", "dream", "system")
REASONS = ("stop", "stop", "tool_calls", "length", "error", "cancelled")


def cli_table(path: Path) -> None:
    """nanobot 0.3.5's file as its store creates it (store.CLI_COLUMNS, WAL, user_version 1)."""
    with sqlite3.connect(path) as connection:
        columns = ", ".join("id INTEGER PRIMARY KEY" if name == "id" else name for name in CLI_COLUMNS)
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(f"CREATE TABLE llm_calls ({columns})")
        connection.execute("CREATE INDEX llm_calls_started_at_idx ON llm_calls(started_at_ms)")
        connection.execute("PRAGMA user_version = 1")
    connection.close()


def seed(folder: Path, rng: random.Random, now_ms: int) -> None:
    """1,200 calls over the 45 days before `now_ms`: the app's alone, then mirrored into the CLI's file,
    and the CLI's own."""

    def app_row() -> UsageRow:
        cached = rng.choice((None, None, 0, 300, 2_000))
        return UsageRow(now_ms - rng.randrange(45 * 86_400_000), rng.randrange(100, 9_000), "custom", rng.choice(MODELS),
                        rng.choice(KINDS), rng.choice(("desktop:a", "desktop:b", "cron:job", "heartbeat")),
                        rng.choice(REASONS), rng.randrange(2_500, 30_000), rng.randrange(0, 3_000),
                        cache_read_tokens=cached, cache_write_tokens=rng.choice((None, 0, 128)),
                        estimated=rng.random() < 0.2)

    writer = UsageWriter(folder)
    writer.write(sorted((app_row() for _ in range(400)), key=lambda row: row.started_at_ms), {})
    cli_table(folder / CLI_FILE)
    writer.write(sorted((app_row() for _ in range(400)), key=lambda row: row.started_at_ms), {})
    assert writer.cli_note == ""  # the second half is mirrored into the CLI's file
    marks = ", ".join("?" for _ in CLI_COLUMNS[1:])
    own = []
    for _ in range(400):
        inp, out = rng.randrange(100, 20_000), rng.randrange(0, 2_000)
        estimated = rng.random() < 0.2
        own.append((now_ms - rng.randrange(45 * 86_400_000), 900, "openai", rng.choice(MODELS), rng.choice(CLI_SOURCES),
                    1, rng.choice(REASONS), inp, out, inp + out, rng.choice((None, 0, 64)), rng.choice((None, 16)),
                    0 if estimated else inp + out, inp + out if estimated else 0, None, None, None, None, None, None))
    with sqlite3.connect(folder / CLI_FILE) as connection:
        connection.executemany(f"INSERT INTO llm_calls ({', '.join(CLI_COLUMNS[1:])}) VALUES ({marks})", own)
    connection.close()


def every_call(folder: Path) -> list[dict[str, Any]]:
    """Both files row by row, the CLI's rows that are the app's own (an app row names them) left out."""
    names = ("started_at_ms", "model", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
             "estimated_tokens", "finish_reason")
    with sqlite3.connect(folder / APP_FILE) as app:
        rows = [dict(zip((*names, "kind", "session_key", "cli_id"), row, strict=True))
                for row in app.execute(f"SELECT {', '.join(names)}, kind, session_key, cli_id FROM calls")]
    app.close()
    mirrored = {(row["cli_id"], row["started_at_ms"]) for row in rows if row["cli_id"] is not None}
    with sqlite3.connect(folder / CLI_FILE) as cli:
        for row in cli.execute(f"SELECT id, {', '.join(names)}, source FROM llm_calls"):
            if (row[0], row[1]) not in mirrored:
                rows.append({**dict(zip(names, row[1:-1], strict=True)), "kind": f"cli:{row[-1]}", "session_key": ""})
    cli.close()
    return rows


def one_call(row: dict[str, Any], prices: dict[str, ModelPrice]) -> Totals:
    inp, out, read, write = row["input_tokens"], row["output_tokens"], row["cache_read_tokens"], row["cache_write_tokens"]
    totals = Totals(1, inp, out, read or 0, write or 0, inp if read is not None else 0, int((row["estimated_tokens"] or 0) > 0),
                    int(row["finish_reason"] in ("error", "cancelled")))
    price = price_for(row["model"], prices)
    if price is None:
        totals.unpriced_calls = 1
    else:
        totals.cost = price.cost(inp, out, read, write)
    return totals


def row_by_row(rows: list[dict[str, Any]], prices: dict[str, ModelPrice], today: date) -> UsageSummary:
    """What the page should show, one call at a time."""
    summary = UsageSummary(today)
    chart_start = today - timedelta(days=CHART_DAYS - 1)
    summary.days = {chart_start + timedelta(days=n): {} for n in range(CHART_DAYS)}
    models: dict[str, Totals] = {}
    sessions: dict[str, Totals] = {}
    for row in rows:
        day = datetime.fromtimestamp(row["started_at_ms"] / 1000).date()
        totals = one_call(row, prices)
        if day >= today.replace(day=1):
            summary.calendar_month.add(totals)
        if not chart_start <= day <= today:
            continue
        for period, first in ((summary.month, chart_start), (summary.week, today - timedelta(days=6)), (summary.day, today)):
            if day >= first:
                period.add(totals)
        summary.days[day].setdefault(row["kind"], Totals()).add(totals)
        models.setdefault(row["model"], Totals()).add(totals)
        if row["session_key"]:
            sessions.setdefault(row["session_key"], Totals()).add(totals)
    summary.by_model = sorted(models.items())
    summary.by_session = sorted(sessions.items())
    return summary


def same(got: Totals, expected: Totals) -> bool:
    """Equal counts, and costs equal but for the order floating-point sums were added in."""
    return all(getattr(got, f.name) == pytest.approx(getattr(expected, f.name), rel=1e-9, abs=1e-12) for f in fields(Totals))


@pytest.mark.parametrize(("seed_value", "zone", "now"), [
    (1, None, None),
    (2, None, None),
    # A clock change in the 30 days: days are no longer 24 h, and SQLite's localtime says which day a call is in.
    (3, "Europe/Berlin", datetime(2026, 4, 10, 12, 0)),
    (4, "America/New_York", datetime(2026, 11, 20, 23, 30)),
])
def test_the_sql_sums_equal_a_row_by_row_sum_of_both_files(tmp_path, monkeypatch, seed_value, zone, now):
    if zone is not None:
        monkeypatch.setenv("TZ", zone)
        time.tzset()
    try:
        check_sums(tmp_path, seed_value, now)
    finally:
        monkeypatch.undo()
        time.tzset()


def check_sums(folder: Path, seed_value: int, now: datetime | None) -> None:
    now_ms = int((now.timestamp() if now is not None else time.time()) * 1000)
    seed(folder, random.Random(seed_value), now_ms)
    prices = price_table({"qwen3:8b": ModelPrice(0.0, 0.0)})  # a local model priced free; my-local-model has none
    assert price_for("my-local-model", prices) is None and "gpt-4o" in DEFAULT_PRICES
    today = datetime.fromtimestamp(now_ms / 1000).date()
    rows = every_call(folder)
    assert len(rows) == 1_200  # the 400 mirrored rows counted once
    expected = row_by_row(rows, prices, today)
    got = UsageReader(folder).summary(prices, today)

    assert got.notes == []
    for period in ("day", "week", "month", "calendar_month"):
        assert same(getattr(got, period), getattr(expected, period)), period
    assert got.month.calls > 500 and got.month.estimated_calls and got.month.failed_calls and got.month.unpriced_calls
    assert got.month.cache_observed_input < got.month.input_tokens and got.month.cache_write_tokens
    assert got.days.keys() == expected.days.keys()
    for day, by_source in expected.days.items():
        assert got.days[day].keys() == by_source.keys(), day
        assert all(same(got.days[day][source], totals) for source, totals in by_source.items()), day
    for mine, theirs in ((got.by_model, expected.by_model), (got.by_session, expected.by_session)):
        assert sorted(key for key, _ in mine) == [key for key, _ in theirs]
        assert all(same(dict(mine)[key], totals) for key, totals in theirs)
    assert [totals.tokens for _, totals in got.by_session] == sorted((t.tokens for _, t in got.by_session), reverse=True)


def check_same(got: UsageSummary, expected: UsageSummary) -> None:
    for period in ("day", "week", "month", "calendar_month"):
        assert same(getattr(got, period), getattr(expected, period)), period
    assert {day: sorted(by_source) for day, by_source in got.days.items()} == {
        day: sorted(by_source) for day, by_source in expected.days.items()}
    for day, by_source in expected.days.items():
        assert all(same(got.days[day][source], totals) for source, totals in by_source.items()), day
    for mine, theirs in ((got.by_model, expected.by_model), (got.by_session, expected.by_session)):
        assert sorted(key for key, _ in mine) == sorted(key for key, _ in theirs)
        assert all(same(dict(mine)[key], totals) for key, totals in theirs)


@pytest.mark.parametrize("restarted", [False, True], ids=["same reader", "a new reader each time, summary file kept"])
def test_a_reader_read_again_after_appends_deletions_and_a_replaced_file_adds_up_as_a_fresh_one(tmp_path, restarted):
    """The reader keeps its groupings and reads only the rows written since (group_cache.py), in memory
    and, across restarts, in its summary file (summary_file.py): after each kind of change its sums are
    those of a reader that never read the files, and of the rows one by one."""
    rng = random.Random(5)
    now_ms = int(time.time() * 1000)
    seed(tmp_path, rng, now_ms)
    prices = price_table({})
    today = date.today()
    summary_file = tmp_path / "cache" / "usage.sqlite3"
    reader = UsageReader(tmp_path, summary_file)
    writer = UsageWriter(tmp_path)

    def agrees() -> UsageSummary:
        nonlocal reader
        if restarted:
            reader.close()
            reader = UsageReader(tmp_path, summary_file)
        got = reader.summary(prices, today)
        check_same(got, UsageReader(tmp_path).summary(prices, today))
        check_same(got, row_by_row(every_call(tmp_path), prices, today))
        return got

    first = agrees()
    assert agrees().month == first.month  # nothing written: the same sums

    def call(minutes_ago: int, model: str = "gpt-4.1", kind: str = "cron", session: str = "desktop:new") -> UsageRow:
        return UsageRow(now_ms - minutes_ago * 60_000, 500, "custom", model, kind, session, "stop", 4_000, 300,
                        cache_read_tokens=1_000)

    # The app's calls, mirrored into the CLI's file, one in a conversation and a model never seen before.
    writer.write([call(3), call(2, "brand-new-model", "chat", "desktop:z")], {})
    assert agrees().month.calls == first.month.calls + 2

    # The CLI's own calls.
    with sqlite3.connect(tmp_path / CLI_FILE) as connection:
        connection.execute(f"INSERT INTO llm_calls ({', '.join(CLI_COLUMNS[1:])}) VALUES ({', '.join('?' for _ in CLI_COLUMNS[1:])})",
                           call(1, kind="chat").cli_values("api"))
    connection.close()
    assert agrees().month.calls == first.month.calls + 3

    # The app's copy in the CLI's file read before the app's own row is written (the writer's order):
    # counted as the CLI's then, and as the app's (once) after.
    mirrored = call(1, "gpt-4o-mini", "heartbeat", "heartbeat")
    with sqlite3.connect(tmp_path / CLI_FILE) as connection:
        cli_id = connection.execute(f"INSERT INTO llm_calls ({', '.join(CLI_COLUMNS[1:])}) VALUES "
                                    f"({', '.join('?' for _ in CLI_COLUMNS[1:])})", mirrored.cli_values("system")).lastrowid
    connection.close()
    assert "cli:system" in agrees().days[today]
    writer.write([mirrored], {0: int(cli_id or 0)})
    got = agrees()
    assert got.month.calls == first.month.calls + 4 and "heartbeat" in got.days[today]

    # Retention deleting calls of the period, in each file.
    for file, table in ((APP_FILE, "calls"), (CLI_FILE, "llm_calls")):
        with sqlite3.connect(tmp_path / file) as connection:
            connection.execute(f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table} WHERE started_at_ms > ? "
                               "ORDER BY rowid LIMIT 5)", (now_ms - 20 * 86_400_000,))
        connection.close()
        agrees()

    # The CLI's file replaced by another (a backup put back, say) with the same calls, counted differently:
    # the same ids and as many rows, so only the file tells them apart.
    before = agrees().month.input_tokens
    with sqlite3.connect(tmp_path / CLI_FILE) as connection:
        old_rows = connection.execute(f"SELECT {', '.join(CLI_COLUMNS)} FROM llm_calls ORDER BY id").fetchall()
    connection.close()
    (tmp_path / CLI_FILE).rename(tmp_path / "old-cli.sqlite3")
    cli_table(tmp_path / CLI_FILE)
    with sqlite3.connect(tmp_path / CLI_FILE) as connection:
        tokens = CLI_COLUMNS.index("input_tokens")
        connection.executemany(f"INSERT INTO llm_calls ({', '.join(CLI_COLUMNS)}) VALUES ({', '.join('?' for _ in CLI_COLUMNS)})",
                               [(*row[:tokens], row[tokens] + 7, *row[tokens + 1:]) for row in old_rows])
    connection.close()
    assert agrees().month.input_tokens > before
    reader.close()
    assert summary_file.is_file()


def test_a_call_written_while_a_grouping_is_read_is_counted_once(tmp_path):
    """The grouping and the marks it is kept with come from one snapshot: a row a writer commits between
    the two reads is not in the sums of the first and then added again by the next."""
    from nanobot_desktop.engine.usage.group_cache import GroupCache, Span

    path = tmp_path / "calls.sqlite3"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("CREATE TABLE calls (id INTEGER PRIMARY KEY, started_at_ms INTEGER NOT NULL, tokens INTEGER)")
    writer.execute("CREATE INDEX calls_started_at_idx ON calls(started_at_ms)")
    writer.executemany("INSERT INTO calls (started_at_ms, tokens) VALUES (?, ?)", [(100, 1), (200, 2), (300, 3)])
    reading = sqlite3.connect(":memory:", isolation_level=None)
    reading.execute("ATTACH DATABASE ? AS app", (str(path),))
    cache = GroupCache()
    sneak = [(400, 10)]  # committed by the writer while the first grouping is being read

    def run(span: Span) -> list[tuple[Any, ...]]:
        while sneak:
            writer.execute("INSERT INTO calls (started_at_ms, tokens) VALUES (?, ?)", sneak.pop())
        above = f" AND rowid > {span.after['app']}" if span.after else ""
        return reading.execute(f"SELECT 'all', COUNT(*), SUM(tokens) FROM app.calls WHERE started_at_ms >= 0{above} "
                               "GROUP BY 1").fetchall()

    tables = {"app": ("app.calls", path)}
    assert cache.grouped("all", reading, 0, tables, 1, run) == [("all", 3, 6)]  # as of the snapshot
    assert cache.grouped("all", reading, 0, tables, 1, run) == [("all", 4, 16)]  # the sneaked row, once
    writer.execute("INSERT INTO calls (started_at_ms, tokens) VALUES (500, 100)")
    assert cache.grouped("all", reading, 0, tables, 1, run) == [("all", 5, 116)]
    writer.close()
    reading.close()


def test_a_restarted_reader_takes_its_sums_from_the_summary_file_and_reads_only_the_rows_written_since(tmp_path):
    """What makes the first open after a start cheap: a new reader with the summary file does not read the
    period again. Shown by a row changed in place (which neither nanobot nor the app ever does, so the
    marks cannot see it): the sums still count it as it was, until a new row is added and is counted too."""
    now_ms = int(time.time() * 1000)
    seed(tmp_path, random.Random(6), now_ms)
    prices, today = price_table({}), date.today()
    summary_file = tmp_path / "cache" / "usage.sqlite3"
    first = UsageReader(tmp_path, summary_file)
    before = first.summary(prices, today)
    first.close()
    with sqlite3.connect(tmp_path / APP_FILE) as connection:
        connection.execute("UPDATE calls SET input_tokens = input_tokens + 1000000 WHERE rowid = "
                           "(SELECT max(rowid) FROM calls)")
    connection.close()
    assert UsageReader(tmp_path).summary(prices, today).month.input_tokens == before.month.input_tokens + 1_000_000
    again = UsageReader(tmp_path, summary_file)
    assert again.summary(prices, today).month.input_tokens == before.month.input_tokens
    UsageWriter(tmp_path).write([UsageRow(now_ms - 60_000, 500, "custom", "gpt-4.1", "chat", "desktop:a", "stop", 4_000, 300)], {})
    after = again.summary(prices, today)
    again.close()
    assert (after.month.calls, after.month.input_tokens) == (before.month.calls + 1, before.month.input_tokens + 4_000)


def test_a_summary_kept_from_days_before_adds_up_as_a_fresh_read_when_the_period_has_moved_on(tmp_path):
    """A new day: the 30 days start later. The kept groupings drop the days that left the period and take
    the calls that left it off the conversations' sums, then add what was written since, read by a new
    reader each day (the app started again): the same sums as a reader that never read the files."""
    now_ms = int(time.time() * 1000)
    seed(tmp_path, random.Random(8), now_ms)
    prices, today = price_table({}), date.today()
    summary_file = tmp_path / "cache" / "usage.sqlite3"
    writer = UsageWriter(tmp_path)
    for later in (0, 1, 2, 9, 40):  # 40: every kept day has left the period
        day = today + timedelta(days=later)
        writer.write([UsageRow(now_ms + later * 86_400_000 - 60_000, 500, "custom", "gpt-4.1", "cron", "desktop:b",
                               "stop", 4_000 + later, 300, cache_read_tokens=100)], {})
        reader = UsageReader(tmp_path, summary_file)
        got = reader.summary(prices, day)
        reader.close()
        check_same(got, UsageReader(tmp_path).summary(prices, day))
        check_same(got, row_by_row(every_call(tmp_path), prices, day))
        assert got.day.calls >= 1 and (later == 40 or got.month.calls > 100)


def test_a_summary_kept_in_another_time_zone_is_read_again(tmp_path, monkeypatch):
    """Days start at other hours after a move to another time zone: a grouping by day kept from before
    is not extended but read again."""
    now_ms = int(time.time() * 1000)
    seed(tmp_path, random.Random(9), now_ms)
    prices = price_table({})
    summary_file = tmp_path / "cache" / "usage.sqlite3"
    try:
        for zone in ("Asia/Tokyo", "America/Los_Angeles", "Asia/Kolkata"):
            monkeypatch.setenv("TZ", zone)
            time.tzset()
            today = datetime.fromtimestamp(now_ms / 1000).date()
            reader = UsageReader(tmp_path, summary_file)
            got = reader.summary(prices, today)
            reader.close()
            check_same(got, row_by_row(every_call(tmp_path), prices, today))
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_damaged_summary_file_is_made_anew_and_the_sums_stay_right(tmp_path):
    now_ms = int(time.time() * 1000)
    seed(tmp_path, random.Random(10), now_ms)
    prices, today = price_table({}), date.today()
    summary_file = tmp_path / "cache" / "usage.sqlite3"
    summary_file.parent.mkdir()
    summary_file.write_bytes(b"not a database, " * 1000)
    expected = row_by_row(every_call(tmp_path), prices, today)
    reader = UsageReader(tmp_path, summary_file)
    check_same(reader.summary(prices, today), expected)
    reader.close()
    assert summary_file.read_bytes().startswith(b"SQLite format 3\x00")
    reader = UsageReader(tmp_path, summary_file)
    check_same(reader.summary(prices, today), expected)
    reader.close()


def test_two_readers_keeping_one_summary_file_leave_it_right_for_a_third(tmp_path):
    """The app and a headless run (each with a budget to check) keep their sums in the same file; each saves
    only what changed since it last saved, unless the other saved since: a third reader that trusts the file
    adds up as a fresh one."""
    now_ms = int(time.time() * 1000)
    seed(tmp_path, random.Random(12), now_ms)
    prices, today = price_table({}), date.today()
    summary_file = tmp_path / "cache" / "usage.sqlite3"
    writer = UsageWriter(tmp_path)
    first, second = UsageReader(tmp_path, summary_file), UsageReader(tmp_path, summary_file)
    for n, reader in enumerate((first, second, first, second, first)):
        writer.write([UsageRow(now_ms - 60_000 + n, 500, "custom", "gpt-4.1", "chat", f"desktop:r{n % 2}", "stop",
                               1_000 * (n + 1), 10)], {})
        reader.summary(prices, today)
    # A conversation only the second reader saw: its one call is gone (deleted by hand, say) when the first
    # reads again (the calls after its mark: one more), so the first's sums have no such conversation; nor may
    # the file once the first has saved them.
    writer.write([UsageRow(now_ms - 30_000, 500, "custom", "gpt-4.1", "chat", "desktop:short-lived", "stop", 9, 9)], {})
    assert "desktop:short-lived" in dict(second.summary(prices, today).by_session)
    with sqlite3.connect(tmp_path / APP_FILE) as connection:
        connection.execute("DELETE FROM calls WHERE session_key = 'desktop:short-lived'")
    connection.close()
    writer.write([UsageRow(now_ms - 20_000, 500, "custom", "gpt-4.1", "chat", "desktop:r0", "stop", 7, 7)], {})
    assert "desktop:short-lived" not in dict(first.summary(prices, today).by_session)
    first.close()
    second.close()
    third = UsageReader(tmp_path, summary_file)
    got = third.summary(prices, today)
    third.close()
    check_same(got, row_by_row(every_call(tmp_path), prices, today))


def test_the_conversations_sums_follow_a_change_of_prices(tmp_path):
    """The conversations' sums are priced call by call as they are read (kept with the prices they were
    priced with): other prices, and the same reader adds up as a fresh one with those."""
    now_ms = int(time.time() * 1000)
    seed(tmp_path, random.Random(13), now_ms)
    today = date.today()
    summary_file = tmp_path / "cache" / "usage.sqlite3"
    reader = UsageReader(tmp_path, summary_file)
    for prices in (price_table({}), price_table({"my-local-model": ModelPrice(1.0, 2.0, 0.5)}),
                   price_table({"my-local-model": ModelPrice(1.0, 2.0, 0.5), "gpt-4o-mini": ModelPrice(9.0, 9.0)}),
                   price_table({})):
        got = reader.summary(prices, today)
        check_same(got, row_by_row(every_call(tmp_path), prices, today))
        check_same(got, UsageReader(tmp_path).summary(prices, today))
    reader.close()
    restarted = UsageReader(tmp_path, summary_file)
    check_same(restarted.summary(price_table({}), today), row_by_row(every_call(tmp_path), price_table({}), today))
    restarted.close()


def test_a_summary_file_that_cannot_be_made_leaves_the_sums_right(tmp_path, caplog):
    """The cache folder is not writable (here: a file where its folder should be): the reader says so once
    in the log and reads the period from the usage files, as without a summary file."""
    now_ms = int(time.time() * 1000)
    seed(tmp_path, random.Random(14), now_ms)
    prices, today = price_table({}), date.today()
    (tmp_path / "cache").write_text("not a folder", encoding="utf-8")
    reader = UsageReader(tmp_path, tmp_path / "cache" / "usage.sqlite3")
    with caplog.at_level("WARNING", logger="nanobot_desktop.engine.usage.summary_file"):
        for _ in range(2):
            check_same(reader.summary(prices, today), row_by_row(every_call(tmp_path), prices, today))
    reader.close()
    assert [record.getMessage().split(" (")[0] for record in caplog.records] == [
        f"usage summary {tmp_path / 'cache' / 'usage.sqlite3'} cannot be kept"]
    assert (tmp_path / "cache").read_text(encoding="utf-8") == "not a folder"
