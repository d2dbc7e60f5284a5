"""The Usage page over a real engine and a seeded usage record: totals, the chart's numbers per day and
source, the tables and their click-through, the budget notice, CSV export, prices, light and dark
screenshots; and QtCharts staying out of the process until the page is first shown."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
import time
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from nanobot_desktop.engine.usage.store import UsageRow, UsageWriter
from nanobot_desktop.gui.background.usage_chart import SOURCE_COLORS
from nanobot_desktop.gui.background.usage_model import chart_data
from nanobot_desktop.gui.background.usage_view import UsageView
from nanobot_desktop.gui.common.theme import dark_palette, light_palette
from tests.fake_openai import write_fake_config

REPO = Path(__file__).resolve().parents[3]
LEFT = Qt.MouseButton.LeftButton


def at(days_ago: int, hour: int = 12) -> int:
    """Milliseconds of local noon (or `hour`) `days_ago` days before today."""
    day = date.today() - timedelta(days=days_ago)
    return int(datetime(day.year, day.month, day.day, hour).timestamp() * 1000)


def row(days_ago: int, kind: str, model: str, inp: int, out: int, session: str = "", read: int | None = None) -> UsageRow:
    return UsageRow(at(days_ago), 1000, "custom", model, kind, session, "stop", inp, out, cache_read_tokens=read)


SEEDED_WEEK = [
    # today: a chat on gpt-4o-mini (priced by default), half its input from the cache
    row(0, "chat", "gpt-4o-mini", 10_000, 1_000, "desktop:one", read=5_000),
    row(0, "heartbeat", "gpt-4o-mini", 2_000, 100, "heartbeat", read=0),
    # yesterday: a scheduled job on a model without a price
    row(1, "cron", "local-llama", 4_000, 400, "cron:daily"),
    # three days ago: consolidation and a subagent
    row(3, "consolidation", "gpt-4o-mini", 3_000, 300, "desktop:one"),
    row(3, "subagent", "gpt-4o-mini", 1_000, 1_000, "desktop:two"),
    # six days ago: a chat; and ten days ago (outside the week, inside the 30 days)
    row(6, "chat", "gpt-4o-mini", 500, 50, "desktop:two"),
    row(10, "chat", "gpt-4o-mini", 7_000, 700, "desktop:old"),
]


def seed(engine, rows=SEEDED_WEEK) -> None:
    UsageWriter(engine.config_path.parent).write(list(rows), {})


def open_page(qtbot, panels, engine, bridge) -> UsageView:
    view = UsageView(engine, bridge)
    qtbot.addWidget(view)
    panels.append(view)
    view.resize(1000, 760)
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.show()
    return view


def test_the_chart_and_totals_add_up_a_seeded_week(qtbot, panel_env, qtmodeltester):
    engine, bridge, _window, _tray, panels = panel_env
    seed(engine)
    view = open_page(qtbot, panels, engine, bridge)
    summary = view.summary
    assert summary is not None

    data = view.chart.data
    assert data == chart_data(summary, "tokens")
    assert len(data.days) == 30 and data.days[-1] == date.today()
    assert data.day_total(date.today()) == 10_000 + 1_000 + 2_000 + 100
    assert data.day_total(date.today() - timedelta(days=1)) == 4_400
    assert data.day_total(date.today() - timedelta(days=3)) == 3_300 + 2_000
    assert data.day_total(date.today() - timedelta(days=2)) == 0
    series = dict(data.series)
    assert list(series) == ["chat", "consolidation", "heartbeat", "cron", "subagent"]  # the app's order
    assert series["cron"][-2] == 4_400 and sum(series["chat"]) == 11_000 + 550 + 7_700
    assert data.total() == sum(r.input_tokens + r.output_tokens for r in SEEDED_WEEK)

    assert (summary.day.tokens, summary.day.calls) == (13_100, 2)
    assert (summary.week.tokens, summary.week.calls) == (13_100 + 4_400 + 5_300 + 550, 6)
    assert summary.month.calls == 7
    # gpt-4o-mini at $0.15 / $0.60 / $0.075 cached per million; local-llama has no price
    today_cost = (5_000 * 0.15 + 5_000 * 0.075 + 1_000 * 0.60 + 2_000 * 0.15 + 100 * 0.60) / 1e6
    assert summary.day.cost == pytest.approx(today_cost)
    assert view.day_card.tokens.text() == "13.1k tokens"
    assert view.week_card.cost.text().startswith("≥ $")  # a call without a price: the cost is a lower bound
    assert summary.month.cached_share == pytest.approx(5_000 / (10_000 + 2_000))
    assert "42 %" in view.cache_label.text()

    view.measure.setCurrentIndex(view.measure.findData("cost"))
    cost = view.chart.data
    assert cost.measure == "cost" and cost.day_total(date.today()) == pytest.approx(today_cost)
    assert "cron" not in dict(cost.series)  # its only call had no price: no bar, not a $0 bar

    qtmodeltester.check(view.models)
    models = [view.models.record_at(r) for r in range(view.models.rowCount())]
    assert [(m.key, m.totals.calls) for m in models] == [("gpt-4o-mini", 6), ("local-llama", 1)]
    assert view.models.data(view.models.index(1, view.models.COST)) == "no price"
    sessions = [view.sessions.record_at(r).key for r in range(view.sessions.rowCount())]
    assert sessions[0] == "desktop:one" and set(sessions) == {"desktop:one", "desktop:two", "desktop:old",
                                                              "heartbeat", "cron:daily"}

    # Click through: a double-click on a conversation asks the window to open it.
    rect = view.session_table.visualRect(view.sessions.index(0, 0))
    with qtbot.waitSignal(view.open_session_requested) as opened:
        qtbot.mouseClick(view.session_table.viewport(), LEFT, pos=rect.center())
        qtbot.mouseDClick(view.session_table.viewport(), LEFT, pos=rect.center())
    assert opened.args == ["desktop:one"]


def test_the_page_shown_again_with_nothing_new_keeps_its_chart_and_redraws_it_for_new_calls(qtbot, panel_env):
    """Re-opening the page reads the record again (the reader extends what it read); the chart's bars are
    built again only when what they show changed."""
    engine, bridge, _window, _tray, panels = panel_env
    seed(engine)
    view = open_page(qtbot, panels, engine, bridge)
    [bars] = view.chart.chart().series()
    view.hide()
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.show()
    assert view.chart.chart().series() == [bars] and view.summary.month.calls == 7
    seed(engine, [row(0, "cron", "gpt-4o-mini", 100, 10, "cron:daily")])
    view.hide()
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.show()
    assert view.summary.month.calls == 8
    [drawn] = view.chart.chart().series()  # the bars drawn now: today's stack has the new call
    assert sum(bar_set.at(29) for bar_set in drawn.barSets()) == 13_100 + 110


def test_an_empty_record_gets_an_axis_of_whole_tokens_and_cents(qtbot, panel_env):
    """No calls yet: the values axis still steps by at least a token (a cent for cost), so no two of its
    labels read the same (it once read 0, 0, 0, 1, 1, 1)."""
    engine, bridge, _window, _tray, panels = panel_env
    view = open_page(qtbot, panels, engine, bridge)
    assert view.summary.month.calls == 0
    for index, unit in ((view.measure.findData("tokens"), 1.0), (view.measure.findData("cost"), 0.01)):
        view.measure.setCurrentIndex(index)
        [_days, values] = view.chart.chart().axes()
        step = (values.max() - values.min()) / (values.tickCount() - 1)
        assert step >= unit, (values.min(), values.max(), values.tickCount())


def test_new_calls_refresh_the_page_and_the_clis_rows_count_too(qtbot, panel_env, fake_openai):
    engine, bridge, _window, _tray, panels = panel_env
    cli = engine.config_path.parent / "llm_usage.sqlite3"
    # A CLI file of 0.3.5's schema (made by the app's writer code path for the schema: the engine
    # test checks the real 0.3.5 writer); one call of the CLI's own.
    import sqlite3

    from nanobot_desktop.engine.usage.store import CLI_COLUMNS

    with sqlite3.connect(cli) as connection:
        columns = ", ".join(f"{name} INTEGER PRIMARY KEY" if name == "id" else name for name in CLI_COLUMNS)
        connection.execute(f"CREATE TABLE llm_calls ({columns})")
        connection.execute("INSERT INTO llm_calls (started_at_ms, duration_ms, provider, model, source, stream, "
                           "finish_reason, input_tokens, output_tokens, total_tokens, reported_tokens, estimated_tokens)"
                           " VALUES (?, 10, 'openai', 'gpt-4o', 'user', 1, 'stop', 900, 100, 1000, 1000, 0)", (at(0),))
        connection.execute("PRAGMA user_version = 1")
    view = open_page(qtbot, panels, engine, bridge)
    assert view.summary.day.calls == 1 and dict(view.chart.data.series).keys() == {"cli:user"}
    fake_openai.add_text("hello", usage=(300, 20), cache=(200, None))
    import asyncio

    turn = asyncio.ensure_future(engine.loop.process("desktop:a", "hi"))
    # The page reads the record again by itself once the turn's row is written (no refresh asked here).
    qtbot.waitUntil(lambda: turn.done() and view.summary.day.calls == 2, timeout=10_000)
    assert view.summary.day.calls == 2 and view.summary.day.input_tokens == 1_200
    assert dict(view.chart.data.series).keys() == {"chat", "cli:user"}
    assert [view.sessions.record_at(r).key for r in range(view.sessions.rowCount())] == ["desktop:a"]


def test_a_spent_budget_says_so_and_resume_lets_background_work_run(qtbot, panel_env, fake_openai):
    engine, bridge, _window, tray, panels = panel_env
    engine.update_config({"app.usagePrices.fake-model": {"input": 1000.0, "output": 1000.0},
                          "app.usageBudget.daily": 0.1})
    view = open_page(qtbot, panels, engine, bridge)
    assert not view.notice.isVisible()
    fake_openai.add_text("dear", usage=(500, 300))
    import asyncio

    turn = asyncio.ensure_future(engine.loop.process("desktop:a", "hi"))
    qtbot.waitUntil(lambda: view.resume_button.isVisible() and turn.done(), timeout=10_000)
    assert "daily usage budget of $0.10 is spent ($0.80)" in view.notice.text()
    assert ("Usage budget spent" in [title for title, _text, _key in tray.notifications_sent]
            or not engine.app_settings.notifications)
    qtbot.mouseClick(view.resume_button, LEFT)
    assert not view.resume_button.isVisible() and engine.usage.budget_hold() is None


def test_export_writes_every_call_as_csv(qtbot, panel_env, tmp_path):
    engine, bridge, _window, _tray, panels = panel_env
    seed(engine)
    view = open_page(qtbot, panels, engine, bridge)
    path = tmp_path / "out" / "usage.csv"
    path.parent.mkdir()
    task = view._work.spawn(view.export_csv(path))
    qtbot.waitUntil(task.done, timeout=10_000)
    with path.open(newline="", encoding="utf-8") as handle:
        lines = list(csv.DictReader(handle))
    assert len(lines) == len(SEEDED_WEEK)
    assert [line["source"] for line in lines][-2:] == ["heartbeat", "chat"] or len({line["source"] for line in lines}) == 5
    llama = next(line for line in lines if line["model"] == "local-llama")
    assert llama["cost_usd"] == "" and llama["input_tokens"] == "4000" and llama["session"] == "cron:daily"
    assert "Exported to" in view.notice.text()


def test_a_price_edited_in_the_dialog_is_saved_and_prices_the_calls(qtbot, panel_env):
    from nanobot_desktop.gui.background.usage_dialogs import PricesDialog

    engine, bridge, _window, _tray, panels = panel_env
    seed(engine)
    view = open_page(qtbot, panels, engine, bridge)
    view.open_prices()
    dialog = view.findChild(PricesDialog)
    qtbot.waitExposed(dialog)
    rows = {dialog.table.item(r, 0).text(): r for r in range(dialog.table.rowCount())}
    assert "local-llama" in rows  # a model seen in the record, offered with an empty price
    llama = rows["local-llama"]
    dialog.table.item(llama, 1).setText("abc")
    dialog.save()
    assert dialog.isVisible() and "must be a number" in dialog.error.text()
    dialog.table.item(llama, 1).setText("0")
    dialog.table.item(llama, 2).setText("0")
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        dialog.save()
    saved = json.loads((engine.config_path.parent / "desktop.json").read_text(encoding="utf-8"))
    assert saved["usagePrices"] == {"local-llama": {"input": 0.0, "output": 0.0}}
    assert view.summary.week.unpriced_calls == 0  # a local model the person says is free: $0, not "no price"
    assert not view.week_card.cost.text().startswith("≥")


def shot(qtbot, view: UsageView, path: Path) -> QImage:
    # QtCharts lays its axes out on a later turn of the event loop: wait until they hold their place.
    qtbot.waitUntil(lambda: view.chart.chart().plotArea().left() > 30 and view.chart.chart().legend().isVisible(),
                    timeout=5000)
    image = view.grab().toImage()
    image.save(str(path))
    return image


def has_color(image: QImage, color: str) -> bool:
    wanted = QColor(color)
    step = 3
    for y in range(0, image.height(), step):
        for x in range(0, image.width(), step):
            pixel = image.pixelColor(x, y)
            if abs(pixel.red() - wanted.red()) + abs(pixel.green() - wanted.green()) + abs(pixel.blue() - wanted.blue()) < 12:
                return True
    return False


def test_screenshots_in_light_and_dark_show_the_bars_in_the_themes_colours(qtbot, panel_env, tmp_path):
    engine, bridge, _window, _tray, panels = panel_env
    seed(engine)
    app = QApplication.instance()
    before = app.palette()
    try:
        app.setPalette(light_palette())
        view = open_page(qtbot, panels, engine, bridge)
        light = shot(qtbot, view, Path(os.environ.get("USAGE_SCREENSHOTS", tmp_path)) / "usage-light.png")
        app.setPalette(dark_palette())
        qtbot.waitUntil(lambda: view.chart.chart().backgroundBrush().color() == dark_palette().base().color(),
                        timeout=5000)
        dark = shot(qtbot, view, Path(os.environ.get("USAGE_SCREENSHOTS", tmp_path)) / "usage-dark.png")
    finally:
        app.setPalette(before)
    for image in (light, dark):
        for source in ("chat", "cron", "subagent"):
            assert has_color(image, SOURCE_COLORS[source]), source
    corner = (light.pixelColor(light.width() // 2, light.height() // 2 - 40), dark.pixelColor(dark.width() // 2,
                                                                                                dark.height() // 2 - 40))
    assert corner[0].lightness() != corner[1].lightness()


PROBE = textwrap.dedent("""
    import json, os, sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QMainWindow

    def check(window, turns=[0], checked=[]):
        turns[0] += 1
        panels = window.lifetime.panels
        if (panels is None or panels.pending) and turns[0] < 4000:
            QTimer.singleShot(5, lambda: check(window))
            return
        if checked:  # the window was shown more than once: one check is enough
            return
        checked.append(True)
        before = sorted(name for name in sys.modules if "QtCharts" in name or name.endswith("usage_chart"))
        window.docking.show_page("usage_view")  # the Usage page of the Agent area, as Ctrl+9 shows it
        shown(window, before)

    def shown(window, before, turns=[0]):
        # The chart is built with the page's first summary, read in an executor: wait for it (or give up).
        turns[0] += 1
        view = window.panel("usage_view")
        if (view is None or view.chart is None) and turns[0] < 4000:
            QTimer.singleShot(5, lambda: shown(window, before))
            return
        after = sorted(name for name in sys.modules if "QtCharts" in name or name.endswith("usage_chart"))
        print(json.dumps({"before": before, "after": after, "chart": view is not None and view.chart is not None}),
              flush=True)
        os._exit(0)

    show = QMainWindow.show

    def show_watched(window):
        show(window)
        QTimer.singleShot(0, lambda: check(window))

    QMainWindow.show = show_watched
    from nanobot_desktop.cli import run
    sys.exit(run(sys.argv[1:]))
""")


@pytest.mark.slow
def test_qtcharts_is_loaded_only_when_the_usage_page_is_first_shown(tmp_path):
    config = write_fake_config(tmp_path / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", tmp_path / "ws")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), XDG_RUNTIME_DIR=str(runtime),
               XDG_CONFIG_HOME=str(tmp_path / ".config"), XDG_CACHE_HOME=str(tmp_path / ".cache"))
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", PROBE, "--config", str(config), "--workspace", str(tmp_path / "ws")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["before"] == [], f"loaded with the empty window: {report['before']}"
    assert "PySide6.QtCharts" in report["after"] and report["chart"], report
    assert time.monotonic() - started < 120


def test_the_inspector_shows_the_conversations_recorded_total(qtbot, panel_env, fake_openai):
    import asyncio

    from nanobot_desktop.gui.inspector.panel import InspectorPanel

    engine, bridge, _window, _tray, _panels = panel_env
    engine.update_config({"app.usagePrices.fake-model": {"input": 2.0, "output": 10.0}})
    seed(engine, [row(1, "chat", "fake-model", 100_000, 1_000, "desktop:a")])  # an earlier run's call
    inspector = InspectorPanel(engine, bridge)
    qtbot.addWidget(inspector)
    inspector.set_session("desktop:a")
    qtbot.waitUntil(lambda: inspector.conversation_label.text() != "", timeout=10_000)
    assert inspector.conversation_label.text() == "This conversation: 101,000 tokens, $0.21 in 1 call"
    fake_openai.add_text("hello", usage=(50_000, 1_000))
    turn = asyncio.ensure_future(engine.loop.process("desktop:a", "hi"))
    qtbot.waitUntil(lambda: "2 calls" in inspector.conversation_label.text() and turn.done(), timeout=10_000)
    assert inspector.conversation_label.text() == "This conversation: 152,000 tokens, $0.32 in 2 calls"
    inspector.set_session("desktop:other")
    qtbot.waitUntil(lambda: inspector.conversation_label.text() == "", timeout=5000)
