"""What the Usage page writes for people: the values axis in the cards' compact numbers ("150k", not
"150000"), and the app's own runs named by what ran them ("Heartbeat", "Scheduled: …"), not by the
session keys the record keeps."""

from __future__ import annotations

from PySide6.QtCore import Qt

from nanobot_desktop.gui.background.usage_chart import values_axis_for
from tests.gui.background.test_usage_page import open_page, row, seed


def labels(axis) -> list[str]:
    return list(axis.categoriesLabels())


def test_the_values_axis_steps_roundly_and_reads_like_the_cards() -> None:
    tokens = values_axis_for(153_000, "tokens")
    assert labels(tokens) == ["0", "50k", "100k", "150k", "200k"]
    assert (tokens.min(), tokens.max(), tokens.tickCount()) == (0, 200_000, 5)
    assert labels(values_axis_for(2_400_000, "tokens"))[-1].endswith("M")
    assert labels(values_axis_for(900, "tokens")) == ["0", "200", "400", "600", "800", "1k"]
    assert all(label.startswith("$") for label in labels(values_axis_for(0.37, "cost")))
    for measure in ("tokens", "cost"):  # an empty month: distinct labels (it once read 0, 0, 0, 1, 1, 1)
        empty = labels(values_axis_for(0, measure))
        assert len(set(empty)) == len(empty) >= 2, empty


def test_the_app_s_own_runs_are_named_by_what_ran_them(qtbot, panel_env) -> None:
    engine, bridge, _window, _tray, panels = panel_env
    chat = engine.sessions.get_or_create("desktop:one")
    engine.sessions.append(chat, [{"role": "user", "content": "Plan the trip to Lisbon"},
                                  {"role": "assistant", "content": "Here is a plan."}])
    job = engine.sessions.get_or_create("cron:7f3a")
    engine.sessions.append(job, [{"role": "user", "content": "Summarise the inbox"},
                                 {"role": "assistant", "content": "Three new notes."}])
    seed(engine, [row(0, "chat", "gpt-4o-mini", 1_000, 100, "desktop:one"),
                  row(0, "heartbeat", "gpt-4o-mini", 2_000, 100, "heartbeat"),
                  row(1, "cron", "gpt-4o-mini", 3_000, 100, "cron:7f3a"),
                  row(1, "cron", "gpt-4o-mini", 4_000, 100, "cron:gone")])
    view = open_page(qtbot, panels, engine, bridge)
    model = view.session_table.model()
    names = {model.index(r, 0).data(Qt.ItemDataRole.DisplayRole) for r in range(model.rowCount())}
    assert names == {"Plan the trip to Lisbon", "Heartbeat", "Scheduled: Summarise the inbox", "Scheduled: gone"}
    [_days, values] = view.chart.chart().axes()
    assert all(not label.isdigit() or len(label) < 4 for label in values.categoriesLabels()), values.categoriesLabels()
