"""Small formatters and colours shared by the background-task panels (heartbeat, scheduled, subagents).

The app-wide ones (format_clock, format_duration, the ok/error/muted colours) live in gui/common/
and are re-exported here; what only these panels use (local time with its zone, the warning colour)
is defined here.

Times are shown in the person's own time zone (the computer's), with its abbreviation where a time
stands alone, so "next run 09:00 CET" cannot be read as the server's or a job's zone.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QLocale
from PySide6.QtGui import QColor, QPalette

from nanobot_desktop.gui.common.design import theme_colors
from nanobot_desktop.gui.common.formatting import format_clock, format_duration
from nanobot_desktop.gui.common.i18n import ui_locale
from nanobot_desktop.gui.common.palette import error_color, is_dark, muted_color, ok_color

__all__ = ["error_color", "format_clock", "format_duration", "format_local_time", "muted_color", "ok_color",
           "warning_color"]


def format_local_time(moment: datetime, now: datetime | None = None) -> str:
    """The moment in the computer's zone with the zone's name: "14:35 CET", "Mon 09:00 CET"."""
    local = moment.astimezone()
    now = (now or datetime.now()).astimezone()
    days = (local.date() - now.date()).days
    if days == 0:
        text = local.strftime("%H:%M")
    elif 0 < days < 7:
        weekday = ui_locale().dayName(local.isoweekday(), QLocale.FormatType.ShortFormat)  # the UI language's
        text = f"{weekday} {local.strftime('%H:%M')}"
    else:
        text = local.strftime("%Y-%m-%d %H:%M")
    return f"{text} {local.strftime('%Z')}".strip()


def warning_color(palette: QPalette) -> QColor:
    return QColor(theme_colors(is_dark(palette)).warning)

