"""The usage record on disk: nanobot 0.3.5's `llm_usage.sqlite3` when it is there, and a file of the app's own.

nanobot 0.3.5 keeps a content-free row per model call in `<config dir>/llm_usage.sqlite3` (SQLite in
WAL mode, `PRAGMA user_version = 1`, one table `llm_calls`; see CLI_COLUMNS), written by its gateway.
When that file exists with exactly that schema, the app adds its own calls to it, in its vocabulary
(source user/cron/dream/system, its finish reasons and error kinds) and with its retention (400 days or
100,000 rows), so the CLI's WebUI and the app's Usage page add up to one picture. A file with another
`user_version` or other columns is only read, never written: a newer nanobot may mean something else.

What 0.3.5's rows deliberately leave out (the conversation, and which of the app's background
services made the call) goes into `<config dir>/desktop-usage.sqlite3`: every call the app makes has
a row there, with the same columns plus `kind`, `session_key` and `cli_id` (the id of the same call's
row in llm_usage.sqlite3, when it was written there too). Reading adds the app's rows to the CLI's rows
that are not the app's own (`UsageReader`), so nothing is counted twice.

Everything here is synchronous and blocking: it runs on the recorder's own thread (recorder.py) or
in an executor, never on the event loop.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from nanobot_desktop.engine.usage.store_errors import APP_FILE, CLI_FILE, UsageFileError

CLI_SCHEMA_VERSION = 1
APP_SCHEMA_VERSION = 1
MAX_DAYS_RETAINED = 400
MAX_CALLS_RETAINED = 100_000
BUSY_TIMEOUT_MS = 250  # as 0.3.5: a writer waits this long for a lock, then the row waits in memory

# 0.3.5's table, column by column (llm_usage/store.py), in its order.
CLI_COLUMNS = ("id", "started_at_ms", "duration_ms", "provider", "model", "source", "stream", "finish_reason",
               "input_tokens", "output_tokens", "total_tokens", "cache_read_tokens", "cache_write_tokens",
               "reported_tokens", "estimated_tokens", "generation_ms", "measured_output_tokens", "ttft_ms",
               "timed_requests", "error_status_code", "error_kind")
_CLI_TYPES = {"id": "INTEGER PRIMARY KEY", "provider": "TEXT NOT NULL", "model": "TEXT NOT NULL",
              "source": "TEXT NOT NULL", "finish_reason": "TEXT NOT NULL", "error_kind": "TEXT",
              "started_at_ms": "INTEGER NOT NULL", "duration_ms": "INTEGER NOT NULL", "stream": "INTEGER NOT NULL"}
_ROW_COLUMNS = CLI_COLUMNS[1:]
READ_COLUMNS = ("started_at_ms", "duration_ms", "provider", "model", "source", "finish_reason", "input_tokens",
                "output_tokens", "cache_read_tokens", "cache_write_tokens", "estimated_tokens")
"""What reading needs of a CLI file; a file without these columns is left out of the picture (and said so)."""

_FINISH_REASONS = frozenset({"cancelled", "content_filter", "error", "function_call", "length", "refusal", "stop",
                             "tool_calls"})
# The app's failure kinds (ProviderError.kind) in 0.3.5's error_kind vocabulary.
_ERROR_KINDS = {"auth": "authentication", "model_not_found": "invalid_request", "unreachable": "connection",
                "timeout": "timeout", "rate_limit": "rate_limit", "server": "server_error",
                "bad_request": "invalid_request", "cancelled": "cancelled", "empty": "empty", "cut": "connection",
                "stalled": "timeout", "malformed": "http", "not_an_api": "http"}


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One model call, as the record keeps it. Tokens as the endpoint reported them; `input_tokens`
    includes the cached ones; a cache count of None means the endpoint did not say."""

    started_at_ms: int
    duration_ms: int
    provider: str
    model: str
    kind: str
    """What made the call: chat, consolidation, heartbeat, cron, subagent (engine/usage/source.py)."""
    session_key: str
    finish_reason: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    estimated: bool = False
    error_status_code: int | None = None
    error_kind: str | None = None

    def cli_values(self, cli_source: str) -> tuple[object, ...]:
        """The row's values for CLI_COLUMNS[1:], in 0.3.5's vocabulary."""
        total = self.input_tokens + self.output_tokens
        reason = self.finish_reason.strip().lower()
        status = self.error_status_code if self.error_status_code and 100 <= self.error_status_code <= 599 else None
        kind = _ERROR_KINDS.get(self.error_kind, "other") if self.error_kind else None
        return (self.started_at_ms, self.duration_ms, (self.provider or "custom")[:120], (self.model or "unknown")[:240],
                cli_source, 1, reason if reason in _FINISH_REASONS else "other", self.input_tokens, self.output_tokens,
                total, self.cache_read_tokens, self.cache_write_tokens, 0 if self.estimated else total,
                total if self.estimated else 0, None, None, None, None, status, kind)


def describe_sqlite_error(path: Path, error: sqlite3.Error) -> UsageFileError:
    """Locked (transient) or damaged (lasting), in words a person can act on."""
    text = str(error)
    if isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return UsageFileError(f"{path.name} is locked by another program; the rows wait in memory", lasting=False)
    if isinstance(error, sqlite3.DatabaseError) and not isinstance(error, sqlite3.OperationalError):
        return UsageFileError(f"{path} is damaged ({text}); it is left as it is", lasting=True)
    return UsageFileError(f"{path} cannot be written ({text})", lasting=False)


def _connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    if read_only:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                                     isolation_level=None, check_same_thread=False)
    else:
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                     check_same_thread=False)
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return connection


def table_columns(connection: sqlite3.Connection, table: str, schema: str = "main") -> list[str]:
    return [row[1] for row in connection.execute(f"PRAGMA {schema}.table_info({table})")]


def cli_schema_problem(connection: sqlite3.Connection, schema: str = "main") -> str:
    """"" when the CLI file is 0.3.5's schema exactly (the app may write it), else what differs."""
    version = connection.execute(f"PRAGMA {schema}.user_version").fetchone()[0]
    columns = table_columns(connection, "llm_calls", schema)
    if version != CLI_SCHEMA_VERSION:
        return f"its schema version is {version}, not {CLI_SCHEMA_VERSION} (nanobot 0.3.5's)"
    if tuple(columns) != CLI_COLUMNS:
        extra = sorted(set(columns) - set(CLI_COLUMNS))
        missing = sorted(set(CLI_COLUMNS) - set(columns))
        return f"its llm_calls table differs from nanobot 0.3.5's (extra: {extra or 'none'}, missing: {missing or 'none'})"
    return ""


def _app_schema(connection: sqlite3.Connection) -> None:
    """Create the app's table, or refuse a file made by something else."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if version not in (0, APP_SCHEMA_VERSION) or (version == 0 and tables):
        raise UsageFileError(f"it has an unknown schema (version {version}, tables {sorted(tables)}); "
                             "it is read only", lasting=True)
    if version == APP_SCHEMA_VERSION:
        return
    columns = ", ".join(f"{name} {_CLI_TYPES.get(name, 'INTEGER')}" for name in CLI_COLUMNS)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.executescript(f"""
        BEGIN;
        CREATE TABLE calls ({columns}, kind TEXT NOT NULL, session_key TEXT NOT NULL DEFAULT '', cli_id INTEGER);
        CREATE INDEX calls_started_at_idx ON calls(started_at_ms);
        CREATE INDEX calls_cli_id_idx ON calls(cli_id, started_at_ms);  -- covers the reader's anti-join
        PRAGMA user_version = {APP_SCHEMA_VERSION};
        COMMIT;
    """)


def _prune(connection: sqlite3.Connection, table: str) -> None:
    """0.3.5's retention: 400 days, then the newest 100,000 rows."""
    cutoff_ms = int((time.time() - MAX_DAYS_RETAINED * 86_400) * 1000)
    connection.execute(f"DELETE FROM {table} WHERE started_at_ms < ?", (cutoff_ms,))
    connection.execute(f"DELETE FROM {table} WHERE id <= COALESCE((SELECT id FROM {table} ORDER BY id DESC "
                       "LIMIT 1 OFFSET ?), -1)", (MAX_CALLS_RETAINED,))


class UsageWriter:
    """Writes rows into both files (see the module docstring). One instance per config folder, used
    from one thread at a time."""

    PRUNE_EVERY = 1024  # rows written between retention passes (and one at the first write)

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.cli_path = folder / CLI_FILE
        self.app_path = folder / APP_FILE
        self._since_prune: int | None = None
        self.cli_note = ""
        """Why the CLI file is not written ("" when it is, or when there is none)."""

    def write(self, rows: list[UsageRow], cli_ids: dict[int, int]) -> int:
        """Write `rows` in order; returns how many were written (all, or raises for the first that
        could not be). `cli_ids` maps a row's index to its id in the CLI file when that part is
        already done (a retry must not add it twice); it is filled in as rows are mirrored."""
        cli = self._open_cli()
        try:
            app = self._open_app()
            try:
                if cli is not None:  # each mirrored row is committed there at once and remembered in cli_ids
                    for index, row in enumerate(rows):
                        if index not in cli_ids:
                            cli_ids[index] = self._insert_cli(cli, row)
                app.execute("BEGIN IMMEDIATE")  # the app's rows: all of the batch or none
                try:
                    for index, row in enumerate(rows):
                        self._insert_app(app, row, cli_ids.get(index))
                    app.execute("COMMIT")
                except BaseException:
                    app.execute("ROLLBACK")
                    raise
                self._maybe_prune(app, cli, len(rows))
            except sqlite3.Error as error:
                raise describe_sqlite_error(self.app_path, error) from None
            finally:
                app.close()
        finally:
            if cli is not None:
                cli.close()
        return len(rows)

    def _open_cli(self) -> sqlite3.Connection | None:
        """The CLI file for writing, or None (there is none, or it is not 0.3.5's: `cli_note` says why)."""
        self.cli_note = ""
        if not self.cli_path.is_file():
            return None
        try:
            connection = _connect(self.cli_path)
            problem = cli_schema_problem(connection)
        except sqlite3.Error as error:
            self.cli_note = str(describe_sqlite_error(self.cli_path, error))
            return None
        if problem:
            connection.close()
            self.cli_note = f"{self.cli_path} is not written: {problem}"
            return None
        return connection

    def _insert_cli(self, connection: sqlite3.Connection, row: UsageRow) -> int:
        from nanobot_desktop.engine.usage.source import CLI_SOURCE

        marks = ", ".join("?" for _ in _ROW_COLUMNS)
        try:
            cursor = connection.execute(f"INSERT INTO llm_calls ({', '.join(_ROW_COLUMNS)}) VALUES ({marks})",
                                        row.cli_values(CLI_SOURCE.get(row.kind, "system")))
        except sqlite3.Error as error:
            raise describe_sqlite_error(self.cli_path, error) from None
        return int(cursor.lastrowid or 0)

    def _open_app(self) -> sqlite3.Connection:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            connection = _connect(self.app_path)
        except (OSError, sqlite3.Error) as error:
            raise UsageFileError(f"{self.app_path} cannot be opened ({error})", lasting=False) from None
        try:
            _app_schema(connection)
        except UsageFileError as error:
            connection.close()
            raise UsageFileError(f"{self.app_path}: {error}", lasting=error.lasting) from None
        except sqlite3.Error as error:
            connection.close()
            raise describe_sqlite_error(self.app_path, error) from None
        return connection

    @staticmethod
    def _insert_app(connection: sqlite3.Connection, row: UsageRow, cli_id: int | None) -> None:
        from nanobot_desktop.engine.usage.source import CLI_SOURCE

        names = (*_ROW_COLUMNS, "kind", "session_key", "cli_id")
        marks = ", ".join("?" for _ in names)
        connection.execute(f"INSERT INTO calls ({', '.join(names)}) VALUES ({marks})",
                           (*row.cli_values(CLI_SOURCE.get(row.kind, "system")), row.kind, row.session_key, cli_id))

    def _maybe_prune(self, app: sqlite3.Connection, cli: sqlite3.Connection | None, written: int) -> None:
        if self._since_prune is not None and self._since_prune + written < self.PRUNE_EVERY:
            self._since_prune += written
            return
        self._since_prune = 0
        _prune(app, "calls")
        if cli is not None:
            try:
                _prune(cli, "llm_calls")
            except sqlite3.Error:
                pass  # the CLI prunes its own file too; a lock now is no reason to fail a row already written
