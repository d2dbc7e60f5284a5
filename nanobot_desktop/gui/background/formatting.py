"""Small formatters and colours shared by the background-task panels (heartbeat, scheduled, subagents).

Times are shown in the person's own time zone (the computer's), with its abbreviation where a time
stands alone, so "next run 09:00 CET" cannot be read as the server's or a job's zone.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtGui import QColor, QPalette

from nanobot_desktop.gui.shell.theme import is_dark


def format_clock(moment: datetime | None, now: datetime | None = None) -> str:
    """"14:05:12" today, "Mon 14:05" within a week, else "2026-11-03 14:05"."""
    if moment is None:
        return "—"
    now = now or datetime.now(moment.tzinfo)
    days = abs((now.date() - moment.date()).days)
    if days == 0:
        return moment.strftime("%H:%M:%S")
    if days < 7:
        return moment.strftime("%a %H:%M")
    return moment.strftime("%Y-%m-%d %H:%M")


def format_local_time(moment: datetime, now: datetime | None = None) -> str:
    """The moment in the computer's zone with the zone's name: "14:35 CET", "Mon 09:00 CET"."""
    local = moment.astimezone()
    now = (now or datetime.now()).astimezone()
    days = (local.date() - now.date()).days
    if days == 0:
        text = local.strftime("%H:%M")
    elif 0 < days < 7:
        text = local.strftime("%a %H:%M")
    else:
        text = local.strftime("%Y-%m-%d %H:%M")
    return f"{text} {local.strftime('%Z')}".strip()


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 90:
        return f"{minutes} min {rest:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def error_color(palette: QPalette) -> QColor:
    """A red that reads on the palette's base (Fusion's BrightText is white in the light theme)."""
    return QColor("#ff7b72") if is_dark(palette) else QColor("#c62828")


def ok_color(palette: QPalette) -> QColor:
    return QColor("#5cc878") if is_dark(palette) else QColor("#2e7d32")


def warning_color(palette: QPalette) -> QColor:
    return QColor("#e3b341") if is_dark(palette) else QColor("#a15c00")


def muted_color(palette: QPalette) -> QColor:
    text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
    return QColor((text.red() + base.red()) // 2, (text.green() + base.green()) // 2, (text.blue() + base.blue()) // 2)
