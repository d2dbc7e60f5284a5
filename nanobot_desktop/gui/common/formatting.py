"""How times and durations read everywhere in the window (chat tool cards, inspector, background panels).

One `format_duration` for all of them, so "how long did it take" reads the same in the chat, the
inspector and the heartbeat timeline: "31 ms", "2.4 s", "42 s", "3 min 05 s", "2 h 05 min".
"""

from __future__ import annotations

from datetime import datetime

NO_VALUE = "—"


def format_duration(seconds: float | None, *, missing: str = NO_VALUE) -> str:
    """A duration at the precision a person needs; `missing` when there is none (still running)."""
    if seconds is None:
        return missing
    seconds = max(0.0, seconds)
    if seconds < 0.9995:  # 0.9996 s would read "1000 ms"
        return f"{seconds * 1000:.0f} ms"
    if seconds < 9.95:  # below this, one decimal still rounds to under 10.0
        return f"{seconds:.1f} s"
    if seconds < 89.5:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 90:
        return f"{minutes} min {rest:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def format_clock(moment: datetime | None, now: datetime | None = None) -> str:
    """"14:05:12" today, "Mon 14:05" within a week, else "2026-11-03 14:05"."""
    if moment is None:
        return NO_VALUE
    now = now or datetime.now(moment.tzinfo)
    days = abs((now.date() - moment.date()).days)
    if days == 0:
        return moment.strftime("%H:%M:%S")
    if days < 7:
        return moment.strftime("%a %H:%M")
    return moment.strftime("%Y-%m-%d %H:%M")
