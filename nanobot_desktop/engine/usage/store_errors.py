"""The usage files' names and the one error of writing them: what the recorder needs before its first
row, without the store's module (kept out of the app's start)."""

from __future__ import annotations

CLI_FILE = "llm_usage.sqlite3"
"""nanobot 0.3.5's usage record, beside its config."""
APP_FILE = "desktop-usage.sqlite3"
"""The app's own, beside it."""


class UsageFileError(Exception):
    """A usage file cannot be written now. `lasting` is False for a lock (try again soon) and True for a
    damaged file or a schema the app does not know (nothing changes until a person acts)."""

    def __init__(self, message: str, *, lasting: bool) -> None:
        super().__init__(message)
        self.lasting = lasting
