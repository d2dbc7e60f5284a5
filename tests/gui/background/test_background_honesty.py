"""Heartbeat and Scheduled panels tell the truth: every tick says why, the editor says what the next
tick will send, missed runs and never-firing jobs are shown, with a real engine and the loopback fake."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from nanobot_desktop.engine.background.cron import CronSchedule
from nanobot_desktop.gui.background.cron_view import CronJobsModel, CronView
from nanobot_desktop.gui.background.heartbeat_model import TickDelegate
from nanobot_desktop.gui.background.heartbeat_view import HeartbeatView
from tests.fake_openai import text_reply, tool_calls_reply
from tests.gui.background.test_background_views import add_panel

LEFT = Qt.MouseButton.LeftButton
HOUR_MS = 3_600_000


@pytest.fixture
def tray_use_dbus() -> bool:
    """These panels' tray never starts a D-Bus notifier."""
    return False


def app_file(engine) -> dict:
    """desktop.json, where the app keeps its own settings (the missed-run rules among them)."""
    return json.loads((engine.config_path.parent / "desktop.json").read_text(encoding="utf-8"))


def wait_tick(qtbot, view: HeartbeatView, count: int) -> None:
    qtbot.waitUntil(lambda: view.model.rowCount() == count and view.run_button.isEnabled(), timeout=10000)


def run_once(qtbot, view: HeartbeatView) -> None:
    count = view.model.rowCount()
    qtbot.mouseClick(view.run_button, LEFT)
    wait_tick(qtbot, view, count + 1)


def test_the_timeline_shows_skipped_decided_skip_ran_and_failed_ticks(qtbot, panel_env, fake_openai, tmp_path):
    engine, bridge, _window, _tray, panels = panel_env
    engine.config.agents.defaults.max_tool_iterations = 3
    hb = engine.workspace.heartbeat_file
    view = add_panel(qtbot, panels, HeartbeatView(engine, bridge))
    view.resize(1100, 640)
    qtbot.waitUntil(lambda: not view.editor.is_loading, timeout=5000)

    run_once(qtbot, view)  # the untouched template: skipped, no model call
    assert fake_openai.requests == []

    hb.write_text("Please water the plants every morning.\n" + hb.read_text(encoding="utf-8"), encoding="utf-8")
    view.editor.reload()
    qtbot.waitUntil(lambda: view.editor.text().startswith("Please water"), timeout=5000)
    qtbot.waitUntil(lambda: view.next_tick_hint.text_lines == (0,), timeout=3000)
    fake_openai.add(tool_calls_reply([("heartbeat", {"action": "skip"})],
                                     content="It is evening; the plants were watered this morning."))
    run_once(qtbot, view)

    fake_openai.add(tool_calls_reply([("heartbeat", {"action": "run", "tasks": "Water the plants"})]))
    fake_openai.add(tool_calls_reply([("list_dir", {"path": "."})]))
    fake_openai.add(text_reply("Reminder sent: water the plants."))
    run_once(qtbot, view)

    fake_openai.add_error(401, "Incorrect API key provided")
    run_once(qtbot, view)

    kinds = [view.model.record(row).decision for row in range(4)]
    assert kinds == ["error", "run", "skip", "skipped"]  # newest first
    lines = [[text for _kind, text in TickDelegate.lines(view.model.record(row))] for row in range(4)]
    assert any("API key" in text for text in lines[0])
    assert "Tools: list_dir . → ok" in lines[1] and "Reminder sent: water the plants." in lines[1]
    assert lines[2][0] == "“It is evening; the plants were watered this morning.”"
    assert lines[3] == ["HEARTBEAT.md holds only headings, comments and template lines"]
    view.timeline.setCurrentIndex(view.model.index(1))
    assert "Tools: list_dir . → ok" in view.details.toPlainText()
    assert view.grab().save(str(tmp_path / "heartbeat-timeline.png"))  # looked at by hand (--basetemp)


def test_the_editor_says_live_what_the_next_tick_sends(qtbot, panel_env):
    engine, bridge, _window, _tray, panels = panel_env
    view = add_panel(qtbot, panels, HeartbeatView(engine, bridge))
    qtbot.waitUntil(lambda: not view.editor.is_loading, timeout=5000)
    hint = view.next_tick_hint
    qtbot.waitUntil(lambda: "skips without asking the model" in hint.text(), timeout=3000)
    assert "template lines" in hint.text() and hint.text_lines == ()

    edit = view.editor.text_edit
    edit.moveCursor(edit.textCursor().MoveOperation.Start)
    qtbot.keyClicks(edit, "Water the plants every morning.")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "sends this file to the model" in hint.text(), timeout=3000)
    assert hint.text_lines == (0,) and "line 1" in hint.text()
    assert len(edit.extraSelections()) == 1
    assert edit.extraSelections()[0].cursor.block().text() == "Water the plants every morning."

    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: "the file is empty" in hint.text().lower() or "is empty" in hint.text(), timeout=3000)
    assert edit.extraSelections() == []


def test_status_names_the_time_zone_of_the_next_check(qtbot, panel_env):
    engine, bridge, _window, _tray, panels = panel_env
    engine.heartbeat.enabled = True
    started = asyncio.ensure_future(engine.heartbeat.start())
    qtbot.waitUntil(started.done, timeout=3000)
    view = add_panel(qtbot, panels, HeartbeatView(engine, bridge))
    next_at = engine.heartbeat.next_tick_at.astimezone()
    # Near midnight the next check falls on the next day and the label leads with the weekday.
    clock = re.escape(f"{next_at.strftime('%H:%M')} {next_at.strftime('%Z')}")
    weekday = re.escape(next_at.strftime('%a'))
    assert re.search(rf"Next check at ({weekday} )?{clock}", view.status_label.text()), view.status_label.text()


def _write_jobs(path: Path, jobs: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "jobs": jobs}, indent=2), encoding="utf-8")


def _job(job_id: str, name: str, schedule: dict, next_run_ms: int | None) -> dict:
    return {"id": job_id, "name": name, "enabled": True,
            "schedule": {"kind": "every", "atMs": None, "everyMs": None, "expr": None, "tz": None, **schedule},
            "payload": {"kind": "agent_turn", "message": name, "deliver": False, "channel": None, "to": None},
            "state": {"nextRunAtMs": next_run_ms, "lastRunAtMs": None, "lastStatus": None, "lastError": None},
            "createdAtMs": 0, "updatedAtMs": 0, "deleteAfterRun": False}


def test_missed_jobs_are_listed_and_caught_up_per_rule_after_start(qtbot, panel_env, fake_openai):
    engine, bridge, _window, _tray, panels = panel_env
    now = int(time.time() * 1000)
    _write_jobs(engine.cron.store_path, [
        _job("catchup1", "Morning summary", {"kind": "every", "everyMs": 24 * HOUR_MS}, now - 2 * HOUR_MS),
        _job("skipme01", "Hourly check", {"kind": "every", "everyMs": HOUR_MS}, now - 3 * HOUR_MS - 60_000),
    ])
    engine.set_missed_rule("skipme01", "skip")
    assert app_file(engine)["missedRuns"] == {"skipme01": "skip"}
    fake_openai.respond_with(lambda body: text_reply("Here is your summary."))
    view = add_panel(qtbot, panels, CronView(engine, bridge))
    assert "run once" in view.missed_label.text() or "once now" in view.missed_label.text()

    started = asyncio.ensure_future(engine.cron.start())
    qtbot.waitUntil(started.done, timeout=3000)
    caught = asyncio.ensure_future(engine.cron.wait_for_catch_up())
    qtbot.waitUntil(caught.done, timeout=10000)
    view.refresh()

    skipped_row, caught_row = view.model.row_of("skipme01"), view.model.row_of("catchup1")
    assert view.model.index(skipped_row, CronJobsModel.LAST).data().startswith("missed 4 runs, skipped — ")
    tip = view.model.index(skipped_row, CronJobsModel.LAST).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("missed 4 runs (first due ") and tip.endswith("the job's rule: skip")
    assert view.model.index(caught_row, CronJobsModel.LAST).data().startswith("ok at ")
    assert len(fake_openai.requests) == 1  # only the run-once job ran

    view.select_job("catchup1")
    details = view.details.toPlainText()
    assert "MISSED  missed 1 run" in details and "the job's rule: run once now" in details
    assert "ok (catch-up)" in details and "Here is your summary." in details
    assert "If runs were missed: run once now (the default)" in details
    view.select_job("skipme01")
    assert "the job's rule: skip" in view.details.toPlainText()


def test_a_job_that_can_never_fire_is_marked(qtbot, panel_env):
    engine, bridge, _window, _tray, panels = panel_env
    job = engine.cron.add_job("Feb 31", CronSchedule(kind="cron", expr="0 9 31 2 *"), "never")
    view = add_panel(qtbot, panels, CronView(engine, bridge))
    cell = view.model.index(view.model.row_of(job.id), CronJobsModel.NEXT).data()
    assert cell == "never — no date matches the schedule"


def test_the_missed_rule_is_set_in_the_form_and_saved_with_the_app_settings(qtbot, panel_env):
    engine, bridge, _window, _tray, panels = panel_env
    job = engine.cron.add_job("Backup", CronSchedule(kind="every", every_ms=HOUR_MS), "back up ~/notes")
    view = add_panel(qtbot, panels, CronView(engine, bridge))
    view.select_job(job.id)
    qtbot.mouseClick(view.edit_button, LEFT)
    combo = view.form.missed_combo
    assert combo.currentText() == "Default (run once now)"
    combo.setCurrentIndex(combo.findData("skip"))
    qtbot.mouseClick(view.form.save_button, LEFT)
    assert not view.form_open
    assert engine.missed_rule(job.id) == "skip"
    assert app_file(engine)["missedRuns"] == {job.id: "skip"}
    assert "If runs were missed: skip" in view.details.toPlainText()


def test_a_late_tick_shows_what_was_missed(qtbot, panel_env):
    from dataclasses import replace

    engine, bridge, _window, _tray, panels = panel_env
    view = add_panel(qtbot, panels, HeartbeatView(engine, bridge))
    run_once(qtbot, view)
    late = replace(view.model.record(0), trigger="timer", note="5 checks missed while the computer slept "
                                                                "(due 09:30 UTC); checking once now")
    assert [text for _kind, text in TickDelegate.lines(late)][0].startswith("5 checks missed")
    view.model.sync([view.model.record(0), late])
    view.timeline.setCurrentIndex(view.model.index(0))
    assert "Late: 5 checks missed while the computer slept" in view.details.toPlainText()


def test_deleting_a_job_forgets_its_missed_run_rule(qtbot, panel_env):
    engine, bridge, _window, _tray, panels = panel_env
    job = engine.cron.add_job("Backup", CronSchedule(kind="every", every_ms=HOUR_MS), "back up ~/notes")
    engine.set_missed_rule(job.id, "skip")
    view = add_panel(qtbot, panels, CronView(engine, bridge))
    view.select_job(job.id)
    qtbot.mouseClick(view.delete_button, LEFT)
    qtbot.mouseClick(view.delete_button, LEFT)  # the second click confirms
    assert engine.cron.list_jobs(include_disabled=True) == []
    assert app_file(engine)["missedRuns"] == {}
