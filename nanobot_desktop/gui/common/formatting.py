"""How times and durations read everywhere in the window (chat tool cards, inspector, background panels).

One `format_duration` for all of them, so "how long did it take" reads the same in the chat, the
inspector and the heartbeat timeline: "31 ms", "2.4 s", "42 s", "3 min 05 s", "2 h 05 min".
The units are translated and the decimal point and weekday names follow the UI's QLocale.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QLocale

from nanobot_desktop.gui.common.i18n import translate, ui_locale

NO_VALUE = "—"


def format_duration(seconds: float | None, *, missing: str = NO_VALUE) -> str:
    """A duration at the precision a person needs; `missing` when there is none (still running)."""
    if seconds is None:
        return missing
    seconds = max(0.0, seconds)
    if seconds < 0.9995:  # 0.9996 s would read "1000 ms"
        return translate("Duration", "{ms} ms").format(ms=round(seconds * 1000))
    if seconds < 9.95:  # below this, one decimal still rounds to under 10.0
        return translate("Duration", "{s} s").format(s=ui_locale().toString(seconds, "f", 1))
    if seconds < 89.5:
        return translate("Duration", "{s} s").format(s=round(seconds))
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 90:
        return translate("Duration", "{min} min {s} s").format(min=minutes, s=f"{rest:02d}")
    return translate("Duration", "{h} h {min} min").format(h=minutes // 60, min=f"{minutes % 60:02d}")


def format_clock(moment: datetime | None, now: datetime | None = None) -> str:
    """"14:05:12" today, "Mon 14:05" within a week, else "2026-11-03 14:05"."""
    if moment is None:
        return NO_VALUE
    now = now or datetime.now(moment.tzinfo)
    days = abs((now.date() - moment.date()).days)
    if days == 0:
        return moment.strftime("%H:%M:%S")
    if days < 7:
        weekday = ui_locale().dayName(moment.isoweekday(), QLocale.FormatType.ShortFormat)
        return f"{weekday} {moment.strftime('%H:%M')}"
    return moment.strftime("%Y-%m-%d %H:%M")


def home_relative(path: str) -> str:
    """`path` with the home folder written `~` (a status bar has no room for /home/someone/…)."""
    from pathlib import Path

    home = str(Path.home())
    if home not in ("", "/") and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")):]
    return path
