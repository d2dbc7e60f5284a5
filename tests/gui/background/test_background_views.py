"""Heartbeat, Scheduled and Subagents panels against a real engine and the loopback fake endpoint."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from nanobot_desktop.engine.background.cron import CronSchedule
from nanobot_desktop.engine.events import CronJobRan, SubagentFinished, SubagentStarted
from nanobot_desktop.gui.background.cron_view import CronJobsModel, CronView
from nanobot_desktop.gui.background.heartbeat_view import HeartbeatTimelineModel, HeartbeatView
from nanobot_desktop.gui.background.subagents_view import SubagentsModel, SubagentsView
from tests.fake_openai import text_reply, tool_calls_reply

TASKS = "# Heartbeat\n\n## Active Tasks\n\n- Summarise new mail every morning\n"
REPLY = "Two new mails from the team; nothing urgent."
LEFT = Qt.MouseButton.LeftButton




def route_heartbeat_to_run(fake_openai) -> None:
    """Phase 1 (the virtual heartbeat tool) answers `run`; the agent turn answers with REPLY."""
    def route(body):
        names = [tool["function"]["name"] for tool in body.get("tools") or []]
        if names == ["heartbeat"]:
            return tool_calls_reply([("heartbeat", {"action": "run", "tasks": "Summarise new mail"})])
        return text_reply(REPLY)

    fake_openai.respond_with(route)


def add_panel(qtbot, panels, panel):
    qtbot.addWidget(panel)
    panels.append(panel)
    panel.resize(900, 600)
    panel.show()
    return panel


def on_disk(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# --- heartbeat --------------------------------------------------------------------------------------

def test_heartbeat_with_tasks_runs_records_a_row_appends_the_session_and_notifies_once(
        qtbot, panel_env, fake_openai, qtmodeltester):
    engine, bridge, _window, tray, panels = panel_env
    engine.workspace.heartbeat_file.write_text(TASKS, encoding="utf-8")
    route_heartbeat_to_run(fake_openai)
    view = add_panel(qtbot, panels, HeartbeatView(engine, bridge))
    qtbot.waitUntil(lambda: not view.editor.is_loading, timeout=5000)
    states: list[str] = []
    tray.state_changed.connect(states.append)

    qtbot.mouseClick(view.run_button, LEFT)
    assert not view.run_button.isEnabled()  # disabled while the tick runs
    qtbot.waitUntil(lambda: view.model.rowCount() == 1 and view.run_button.isEnabled(), timeout=10000)

    tick = view.model.record(0)
    assert (tick.decision, tick.trigger, tick.result) == ("run", "manual", REPLY)
    assert view.model.index(0).data(HeartbeatTimelineModel.DecisionTextRole) == "ran"
    session_lines = engine.sessions.path_for("heartbeat").read_text(encoding="utf-8").splitlines()
    assert json.loads(session_lines[0])["_type"] == "metadata"
    contents = [json.loads(line).get("content") for line in session_lines[1:]]
    assert contents == ["Summarise new mail", REPLY]
    assert tray.notifications_sent == [("Heartbeat", REPLY, "heartbeat")]
    assert "running" in states
    qtbot.waitUntil(lambda: tray.state == "idle", timeout=3000)
    qtmodeltester.check(view.model)

    with qtbot.waitSignal(view.open_session_requested) as opened:
        qtbot.mouseClick(view.open_session_button, LEFT)
    assert opened.args == ["heartbeat"]


def test_empty_heartbeat_file_asks_no_model_and_sends_no_notification(qtbot, panel_env, fake_openai):
    engine, bridge, _window, tray, panels = panel_env
    engine.workspace.heartbeat_file.write_text("", encoding="utf-8")
    view = add_panel(qtbot, panels, HeartbeatView(engine, bridge))
    qtbot.waitUntil(lambda: not view.editor.is_loading, timeout=5000)

    qtbot.mouseClick(view.run_button, LEFT)
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=5000)
    assert view.model.index(0).data(HeartbeatTimelineModel.DecisionTextRole) == "skipped — file empty"
    assert fake_openai.requests == []
    assert tray.notifications_sent == []
    assert not engine.sessions.path_for("heartbeat").exists()


def test_run_now_saves_unsaved_heartbeat_edits_first(qtbot, panel_env, fake_openai):
    engine, bridge, _window, _tray, panels = panel_env
    engine.workspace.heartbeat_file.write_text("", encoding="utf-8")
    fake_openai.add_tool_calls([("heartbeat", {"action": "skip"})])
    view = add_panel(qtbot, panels, HeartbeatView(engine, bridge))
    qtbot.waitUntil(lambda: not view.editor.is_loading, timeout=5000)
    qtbot.keyClicks(view.editor.text_edit, "- water the plants")
    assert view.editor.is_dirty

    qtbot.mouseClick(view.run_button, LEFT)
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=5000)
    assert engine.workspace.heartbeat_file.read_text(encoding="utf-8") == "- water the plants"
    assert view.model.record(0).decision == "skip"
    assert "- water the plants" in fake_openai.requests[0]["messages"][1]["content"]


def test_interval_and_enabled_are_saved_to_config(qtbot, panel_env):
    engine, bridge, _window, _tray, panels = panel_env
    view = add_panel(qtbot, panels, HeartbeatView(engine, bridge))
    assert view.interval_spin.value() == 30 and not view.enabled_box.isChecked()

    view.interval_spin.lineEdit().selectAll()
    qtbot.keyClicks(view.interval_spin, "45")
    qtbot.keyClick(view.interval_spin, Qt.Key.Key_Return)
    assert on_disk(engine.config_path)["gateway"]["heartbeat"]["intervalS"] == 2700
    assert engine.heartbeat.interval_s == 2700

    qtbot.mouseClick(view.enabled_box, LEFT)
    heartbeat = on_disk(engine.config_path)["gateway"]["heartbeat"]
    assert heartbeat == {"enabled": True, "intervalS": 2700}
    assert engine.heartbeat.enabled
    assert on_disk(engine.config_path)["providers"]["custom"]["apiKey"] == "sk-test"  # the rest is kept


def test_the_heartbeat_panel_follows_a_change_saved_elsewhere(qtbot, panel_env):
    """Saved through the engine's one door (Settings, another panel): the panel shows it at once."""
    engine, bridge, _window, _tray, panels = panel_env
    view = add_panel(qtbot, panels, HeartbeatView(engine, bridge))
    engine.update_config({"gateway.heartbeat.enabled": True, "gateway.heartbeat.intervalS": 600})
    qtbot.waitUntil(lambda: view.enabled_box.isChecked() and view.interval_spin.value() == 10, timeout=5000)


# --- scheduled jobs ---------------------------------------------------------------------------------

@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_every_job_fires_while_the_window_is_hidden_and_its_row_updates(qtbot, panel_env, fake_openai, qtmodeltester):
    engine, bridge, window, tray, panels = panel_env
    fake_openai.respond_with(lambda body: text_reply("Plants watered."))
    view = CronView(engine, bridge)
    window.setCentralWidget(view)
    panels.append(view)
    window.hide()
    job = engine.cron.add_job("plants", CronSchedule(kind="every", every_ms=100), "Water the plants")
    view.refresh()
    row = view.model.row_of(job.id)
    assert view.model.index(row, CronJobsModel.LAST).data() == "never ran"

    with qtbot.waitSignal(bridge.engine_event, timeout=10000, check_params_cb=lambda e: isinstance(e, CronJobRan)):
        started = asyncio.ensure_future(engine.cron.start())
    qtbot.waitUntil(started.done)
    stopped = asyncio.ensure_future(engine.cron.stop())
    qtbot.waitUntil(stopped.done, timeout=5000)

    row = view.model.row_of(job.id)
    assert view.model.index(row, CronJobsModel.LAST).data().startswith("ok at ")
    assert not window.isVisible()  # a background run never pops the window up
    assert ("Scheduled: plants", "Plants watered.", f"cron:{job.id}") in tray.notifications_sent
    stored = on_disk(engine.cron.store_path)["jobs"][0]
    assert stored["state"]["lastStatus"] == "ok" and stored["schedule"]["everyMs"] == 100
    qtmodeltester.check(view.model)


def test_add_a_job_with_the_form_and_see_validation_errors_inline(qtbot, panel_env):
    engine, bridge, _window, _tray, panels = panel_env
    view = add_panel(qtbot, panels, CronView(engine, bridge))
    assert view.empty_label.isVisible()

    qtbot.mouseClick(view.add_button, LEFT)
    form = view.form
    assert view.form_open
    qtbot.keyClicks(form.name_edit, "Standup")
    form.kind_combo.setCurrentIndex(form.kind_combo.findData("cron"))
    qtbot.keyClicks(form.expr_edit, "0 25 * * *")
    qtbot.keyClicks(form.message_edit, "Remind me of the standup")
    qtbot.mouseClick(form.save_button, LEFT)
    assert form.error_label.isVisible() and "invalid cron expression '0 25 * * *'" in form.error_label.text()
    assert not engine.cron.store_path.exists()  # nothing written

    form.expr_edit.clear()
    qtbot.keyClicks(form.expr_edit, "30 9 * * 1-5")
    qtbot.keyClicks(form.tz_edit, "Mars/Olympus")
    qtbot.mouseClick(form.save_button, LEFT)
    assert "unknown timezone 'Mars/Olympus'" in form.error_label.text()

    form.tz_edit.clear()
    qtbot.keyClicks(form.tz_edit, "Europe/Berlin")
    qtbot.mouseClick(form.save_button, LEFT)
    assert not view.form_open
    stored = on_disk(engine.cron.store_path)
    assert stored["version"] == 1
    job = stored["jobs"][0]
    assert list(job) == ["id", "name", "enabled", "schedule", "payload", "state", "createdAtMs", "updatedAtMs",
                         "deleteAfterRun"]
    assert job["name"] == "Standup"
    assert job["schedule"] == {"kind": "cron", "atMs": None, "everyMs": None, "expr": "30 9 * * 1-5",
                               "tz": "Europe/Berlin"}
    assert job["payload"]["message"] == "Remind me of the standup"
    assert view.model.index(0, CronJobsModel.SCHEDULE).data() == "cron 30 9 * * 1-5 (Europe/Berlin)"
    assert view.selected_job_id() == job["id"]


def test_edit_disable_run_and_delete_a_job(qtbot, panel_env, fake_openai):
    engine, bridge, _window, _tray, panels = panel_env
    fake_openai.add_text("Done.")
    job = engine.cron.add_job("plants", CronSchedule(kind="every", every_ms=3_600_000), "Water the plants")
    view = add_panel(qtbot, panels, CronView(engine, bridge))
    view.select_job(job.id)

    qtbot.mouseClick(view.edit_button, LEFT)
    assert view.form.every_spin.value() == 1 and view.form.every_unit.currentText() == "hours"
    view.form.every_spin.setValue(2)
    qtbot.mouseClick(view.form.save_button, LEFT)
    assert on_disk(engine.cron.store_path)["jobs"][0]["schedule"]["everyMs"] == 7_200_000

    enabled_index = view.model.index(view.model.row_of(job.id), CronJobsModel.ENABLED)
    assert view.model.setData(enabled_index, Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    assert on_disk(engine.cron.store_path)["jobs"][0]["enabled"] is False
    assert view.toggle_button.text() == "Enable"
    qtbot.mouseClick(view.toggle_button, LEFT)
    assert on_disk(engine.cron.store_path)["jobs"][0]["enabled"] is True

    qtbot.mouseClick(view.run_button, LEFT)
    qtbot.waitUntil(lambda: view.model.index(0, CronJobsModel.LAST).data().startswith("ok at "), timeout=5000)
    assert "Done." in view.details.toPlainText()

    qtbot.mouseClick(view.delete_button, LEFT)
    assert view.delete_button.text() == "Click again to delete"
    assert len(on_disk(engine.cron.store_path)["jobs"]) == 1
    qtbot.mouseClick(view.delete_button, LEFT)
    assert on_disk(engine.cron.store_path)["jobs"] == []
    assert view.model.rowCount() == 0


def test_a_failed_runs_whole_error_is_in_the_last_run_tooltip(qtbot, panel_env, fake_openai):
    engine, bridge, _window, _tray, panels = panel_env
    fake_openai.add_error(401, "Incorrect API key provided")
    job = engine.cron.add_job("plants", CronSchedule(kind="every", every_ms=3_600_000), "Water the plants")
    view = add_panel(qtbot, panels, CronView(engine, bridge))
    view.select_job(job.id)
    qtbot.mouseClick(view.run_button, LEFT)
    last = lambda: view.model.index(view.model.row_of(job.id), CronJobsModel.LAST)  # noqa: E731
    qtbot.waitUntil(lambda: last().data().startswith("error at "), timeout=5000)
    tooltip = last().data(Qt.ItemDataRole.ToolTipRole)
    assert tooltip == last().data()
    assert tooltip.endswith(": The endpoint rejected the API key (401). Check the API key in Settings.")


def test_an_unreadable_jobs_file_is_reported_and_left_untouched(qtbot, panel_env):
    engine, bridge, _window, _tray, panels = panel_env
    engine.cron.store_path.parent.mkdir(parents=True, exist_ok=True)
    broken = b'{"version": 1, "jobs": [\n  {"id": "a1",}\n]}\n'
    engine.cron.store_path.write_bytes(broken)
    view = add_panel(qtbot, panels, CronView(engine, bridge))
    assert view.banner.isVisible() and "line 2" in view.banner.text()
    assert not view.add_button.isEnabled()
    assert engine.cron.store_path.read_bytes() == broken


# --- subagents ------------------------------------------------------------------------------------

def test_cancel_a_running_subagent_from_its_view(qtbot, panel_env, fake_openai, qtmodeltester):
    engine, bridge, _window, tray, panels = panel_env
    fake_openai.add_hang()
    view = add_panel(qtbot, panels, SubagentsView(engine, bridge))
    with qtbot.waitSignal(bridge.engine_event, check_params_cb=lambda e: isinstance(e, SubagentStarted)):
        engine.subagents.spawn("Survey the workspace", label="survey")
    qtbot.waitUntil(lambda: len(fake_openai.requests) == 1, timeout=5000)  # it is waiting on the model now
    assert view.model.index(0, SubagentsModel.STATUS).data() == "running…"
    assert tray.state == "running"

    view.select_task(engine.subagents.list()[0].task_id)
    assert view.cancel_button.isEnabled()
    assert "user: Survey the workspace" in view.transcript.toPlainText()
    with qtbot.waitSignal(bridge.engine_event, timeout=5000, check_params_cb=lambda e: isinstance(e, SubagentFinished)):
        qtbot.mouseClick(view.cancel_button, LEFT)
    qtbot.waitUntil(lambda: view.model.index(0, SubagentsModel.STATUS).data() == "cancelled", timeout=5000)
    assert engine.subagents.list()[0].status == "cancelled"
    assert not view.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: tray.state == "idle", timeout=3000)
    qtmodeltester.check(view.model)


def test_a_finished_subagent_shows_its_tool_calls_and_result(qtbot, panel_env, fake_openai, tmp_path):
    engine, bridge, _window, _tray, panels = panel_env
    (engine.workspace.root / "notes.txt").write_text("hello", encoding="utf-8")
    fake_openai.add_tool_calls([("read_file", {"path": "notes.txt"})])
    fake_openai.add_text("The note says hello.")
    fake_openai.add_text("Your note says hello.")  # the main agent's summary of the announcement
    view = add_panel(qtbot, panels, SubagentsView(engine, bridge))
    with qtbot.waitSignal(bridge.engine_event, timeout=10000, check_params_cb=lambda e: isinstance(e, SubagentFinished)):
        engine.subagents.spawn("Read notes.txt", label="reader")
    view.select_task(engine.subagents.list()[0].task_id)
    text = view.transcript.toPlainText()
    assert 'assistant → read_file({"path": "notes.txt"})' in text
    assert "tool (read_file): hello" in text
    assert text.endswith("result (done): The note says hello.")
    assert view.model.index(0, SubagentsModel.STATUS).data() == "done"
    assert not view.cancel_button.isEnabled()


# --- beside a running nanobot gateway -------------------------------------------------------------------

@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc (Linux)")
def test_the_views_say_who_runs_cron_and_the_heartbeat_beside_a_gateway(qtbot, panel_env, tmp_path):
    from tests.engine.background.test_coexistence import _fake_gateway

    engine, bridge, _window, _tray, panels = panel_env
    heartbeat = add_panel(qtbot, panels, HeartbeatView(engine, bridge))
    cron = add_panel(qtbot, panels, CronView(engine, bridge))
    engine.update_config({"gateway.heartbeat.enabled": True})
    gateway = _fake_gateway(tmp_path, engine.config_path)
    try:
        engine.coexistence.check()  # what the service's 5 s watch does
        qtbot.waitUntil(lambda: f"nanobot gateway (pid {gateway.pid})" in heartbeat.status_label.text(), timeout=5000)
        assert heartbeat.status_label.text().startswith("Not checked by the app: nanobot gateway")
        assert cron.banner.isVisible() and "The app does not run these jobs now: nanobot gateway" in cron.banner.text()
    finally:
        gateway.terminate()
        gateway.wait(10)
        gateway.stdout.close()
    engine.coexistence.check()
    qtbot.waitUntil(lambda: not cron.banner.isVisible(), timeout=5000)
    assert "gateway" not in heartbeat.status_label.text()
    engine.coexistence.release()


# --- engine work that ends after its panel is gone -------------------------------------------------

def _gone(qtbot, view) -> None:
    """The panel is shut down and its C++ object deleted, as at the end of a window's life."""
    import shiboken6

    view.shutdown()
    shiboken6.delete(view)
    assert not shiboken6.isValid(view)


def _after_its_callbacks(qtbot, future) -> None:
    """Wait until every done callback registered on `future` so far has run: asyncio runs them in the
    order they were added, so one added now runs last."""
    ran: list[bool] = []
    future.add_done_callback(lambda _f: ran.append(True))
    qtbot.waitUntil(lambda: bool(ran), timeout=5000)


def _loop_errors(loop) -> list[str]:
    """What the qloop fixture has collected so far (it fails the test at teardown with them too)."""
    return list(loop.collected_errors)


def test_a_job_run_from_the_scheduled_panel_that_ends_after_the_panel_is_gone_touches_nothing(
        qtbot, panel_env, fake_openai, qloop):
    engine, bridge, _window, _tray, _panels = panel_env
    fake_openai.add_hang()
    job = engine.cron.add_job("plants", CronSchedule(kind="every", every_ms=3_600_000), "Water the plants")
    view = CronView(engine, bridge)
    view.show()
    view.select_job(job.id)
    qtbot.mouseClick(view.run_button, LEFT)
    qtbot.waitUntil(lambda: len(fake_openai.requests) == 1, timeout=5000)  # the job waits on the model
    running = view._running[job.id]
    _gone(qtbot, view)
    running.cancel()  # the run ends (here: the engine stops it) after the panel is gone
    _after_its_callbacks(qtbot, running)
    assert _loop_errors(qloop) == []


def test_a_heartbeat_tick_that_ends_after_its_panel_is_gone_touches_nothing(qtbot, panel_env, fake_openai, qloop):
    engine, bridge, _window, _tray, _panels = panel_env
    engine.workspace.heartbeat_file.write_text(TASKS, encoding="utf-8")
    fake_openai.add_hang()
    view = HeartbeatView(engine, bridge)
    view.show()
    qtbot.waitUntil(lambda: not view.editor.is_loading, timeout=5000)
    qtbot.mouseClick(view.run_button, LEFT)
    qtbot.waitUntil(lambda: len(fake_openai.requests) == 1, timeout=5000)
    tick = view.run_task
    _gone(qtbot, view)
    tick.cancel()
    _after_its_callbacks(qtbot, tick)
    assert _loop_errors(qloop) == []


def test_a_subagent_cancelled_from_its_panel_that_ends_after_the_panel_is_gone_touches_nothing(
        qtbot, panel_env, fake_openai, qloop):
    engine, bridge, _window, _tray, _panels = panel_env
    fake_openai.add_hang()
    view = SubagentsView(engine, bridge)
    view.show()
    with qtbot.waitSignal(bridge.engine_event, check_params_cb=lambda e: isinstance(e, SubagentStarted)):
        engine.subagents.spawn("Survey the workspace", label="survey")
    qtbot.waitUntil(lambda: len(fake_openai.requests) == 1, timeout=5000)
    view.table.selectRow(0)
    cancelling = view.cancel_selected()
    assert cancelling is not None
    _gone(qtbot, view)
    _after_its_callbacks(qtbot, cancelling)
    assert _loop_errors(qloop) == []
