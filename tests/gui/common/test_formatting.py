"""The one `format_duration` every panel uses (chat tool cards, inspector, heartbeat, cron, subagents)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from nanobot_desktop.gui.common.formatting import format_clock, format_duration


@pytest.mark.parametrize(("seconds", "text"), [
    (0.0, "0 ms"),
    (0.031, "31 ms"),
    (0.9994, "999 ms"),
    (0.9996, "1.0 s"),  # never "1000 ms"
    (2.0, "2.0 s"),
    (9.94, "9.9 s"),
    (9.96, "10 s"),  # never "10.0 s"
    (42.4, "42 s"),
    (89.4, "89 s"),
    (89.6, "1 min 30 s"),
    (185, "3 min 05 s"),
    (89 * 60 + 59.4, "89 min 59 s"),
    (90 * 60, "1 h 30 min"),
    (2 * 3600 + 5 * 60, "2 h 05 min"),
    (-0.5, "0 ms"),  # a clock step backwards is not a negative duration
])
def test_durations_read_at_the_precision_a_person_needs(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_a_missing_duration_is_a_dash_or_what_the_caller_asks_for() -> None:
    assert format_duration(None) == "—"
    assert format_duration(None, missing="") == ""
    assert format_duration(0.5, missing="") == "500 ms"


def test_clock_today_this_week_and_older() -> None:
    now = datetime(2026, 11, 24, 15, 0, 0)
    assert format_clock(None) == "—"
    assert format_clock(datetime(2026, 11, 24, 14, 5, 12), now) == "14:05:12"
    assert format_clock(now - timedelta(days=2, hours=1), now) == "Sun 14:00"
    assert format_clock(datetime(2026, 11, 3, 14, 5), now) == "2026-11-03 14:05"
