"""Background approvals on a real Linux desktop session: Xvfb, a session bus, dunst, a tray host.

The app runs as a subprocess (the real tray controller, engine and qasync loop) against the loopback
fake endpoint. A heartbeat task calls `exec echo fed`; the test watches the bus for the notification,
presses its Allow once / Deny button through dunst (as a click would), or lets it expire, and checks
what follows: the task's result notification, the timeline, what the model was told, the tray icon's
"waiting" tooltip published over StatusNotifierItem, and that the next heartbeat runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest

from tests.engine.agent.test_background_approvals import TASK, route_heartbeat_exec
from tests.fake_openai import tool_calls_reply
from tests.gui.dbus_desktop import DesktopSession, missing
from tests.gui.tray_app_support import REPO, prepare_app

pytestmark = [
    pytest.mark.xvfb,
    pytest.mark.skipif(bool(missing()), reason=f"needs {', '.join(missing())} (dev.py test installs them: xvfb, "
                                               "dbus-daemon, dbus-bin, dunst, haskell-status-notifier-item-utils, "
                                               "haskell-gtk-sni-tray-utils)"),
]


APP = '''
    config_path, settings_path, scenarios = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    app = QApplication([])
    loop = QtAsyncioLoop(app)
    asyncio.set_event_loop(loop)

    def say(kind, **data):
        print(kind + " " + json.dumps(data), flush=True)

    from nanobot_desktop.engine import ApprovalAnswer, ApprovalAnswered

    async def main():
        engine, bridge, window, tray = open_tray(config_path, settings_path)
        answered = []  # the engine's one answer to each ask, with the surface it came from
        engine.bus.subscribe(lambda event: answered.append(event) if isinstance(event, ApprovalAnswered) else None)
        opened = []
        tray.open_session_requested.connect(opened.append)
        await wait_for(lambda: tray.approvals._started is not None and tray.approvals._started.done(), 10)
        say("READY", tray=tray.available, notifier=tray.approvals.notifier.available,
            actions=tray.approvals.notifier.supports_actions, server=tray.approvals.notifier.server)
        for scenario in scenarios:
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)  # the test says go
            if scenario == "expire":
                engine.app_settings.background_approval_expiry_s = 1.5
            count = len(engine.heartbeat.ticks)
            tray.actions["heartbeat_run"].trigger()
            if scenario != "plain":
                await wait_for(lambda: tray.state == "waiting", 20)
                say("PENDING", state=tray.state, tooltip=tray.icon.toolTip() if tray.icon else "",
                    menu=[m.title() for m in tray.approvals.menu_entries()])
            await wait_for(lambda: len(engine.heartbeat.ticks) > count, 30)
            tick = engine.heartbeat.ticks[-1]
            await wait_for(lambda: tray.state != "waiting", 5)
            last = answered[-1] if answered and scenario != "plain" else None
            # a second answer, from the tray menu this time, after the notification's (or the expiry's)
            second = tray.approvals.answer(last.call_id, ApprovalAnswer.ALLOW_ONCE) if last is not None else None
            say("DONE", scenario=scenario, decision=tick.decision, result=tick.result, approvals=list(tick.approvals),
                tools=[u.describe() for u in tick.tools], state=tray.state, answers=len(answered),
                surface=last.surface.value if last is not None else "", second=second)
        say("OPENED", sessions=opened)
        tray.shutdown()
        bridge.detach()
        await engine.shutdown()
        await asyncio.sleep(0.2)

    with loop:
        loop.run_until_complete(main())
'''


class AppProcess:
    """The app subprocess; its stdout lines ("KIND {json}") are read on a thread as they come."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen([sys.executable, *args], env=env, cwd=REPO, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
        self.lines: list[tuple[str, dict]] = []
        self.stderr = ""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout or []:
            kind, _, data = line.strip().partition(" ")
            if kind.isupper() and data.startswith("{"):
                self.lines.append((kind, json.loads(data)))

    def _read_err(self) -> None:
        self.stderr = (self.process.stderr.read() if self.process.stderr else "")[-4000:]

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def next(self, kind: str, after: int, timeout: float = 30.0) -> tuple[int, dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index in range(after, len(self.lines)):
                if self.lines[index][0] == kind:
                    return index + 1, self.lines[index][1]
            if self.process.poll() is not None and not any(k == kind for k, _ in self.lines[after:]):
                break
            time.sleep(0.02)
        pytest.fail(f"the app did not report {kind} (exit {self.process.poll()}): {self.lines}\n{self.stderr}")


def wait_for_notify(session: DesktopSession, text: str, since: int, timeout: float) -> tuple[float, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for moment, call in session.notifications()[since:]:
            if text in call:
                return moment, call
        time.sleep(0.02)
    pytest.fail(f"no Notify with {text!r} within {timeout} s; calls: {[c for _t, c in session.notifications()]}")


def test_approval_notifications_answer_allow_deny_and_expire(fake_openai, tmp_path):
    route_heartbeat_exec(fake_openai)
    home, config_path, script = prepare_app(tmp_path, fake_openai.base_url, TASK, APP, "app.py")
    session = DesktopSession(tmp_path)
    app = None
    try:
        session.start()
        env = dict(session.env, HOME=str(home), QT_QPA_PLATFORM="xcb", PYTHONPATH=str(REPO))
        app = AppProcess([str(script), str(config_path), str(tmp_path / "tray.ini"), "allow,deny,expire,plain"], env)
        at, ready = app.next("READY", 0)
        assert ready["notifier"] and ready["actions"] and ready["server"] == "dunst", ready
        assert ready["tray"] is True  # a StatusNotifierItem host is on the bus: Qt's tray icon exists over D-Bus

        outcomes = {}
        for scenario in ("allow", "deny", "expire"):
            calls_before = len(session.notifications())
            app.go()
            at, pending = app.next("PENDING", at)
            asked_at = time.monotonic()
            moment, call = wait_for_notify(session, "Heartbeat wants to run a command", calls_before, 2.0)
            assert moment - asked_at < 2.0
            assert "`echo fed`" in call and '"Allow once"' in call and '"Deny"' in call
            assert pending["state"] == "waiting" and pending["menu"] == ["Heartbeat: exec `echo fed`"]
            assert pending["tooltip"].startswith("nanobot — waiting for you")
            if scenario == "allow":
                (item,) = session.tray_items()
                assert "waiting for you" in session.item_property(item, "ToolTip")  # the tray host sees it
                session.click("Allow once")
            elif scenario == "deny":
                session.click("Deny")
            else:  # a click on the notification's body opens the window on the session; nobody answers
                session.click("Show in window")
            at, done = app.next("DONE", at)
            outcomes[scenario] = done
            result_text = done["result"].split(":")[0]
            wait_for_notify(session, "string \"Heartbeat\"", calls_before + 1, 10.0)
            assert any(result_text in c for _t, c in session.notifications()[calls_before + 1:])

        allow, deny, expire = outcomes["allow"], outcomes["deny"], outcomes["expire"]
        assert allow["result"] == "Tool said: fed" and allow["approvals"] == ["exec echo fed → allowed once"]
        assert deny["result"].startswith("Tool said: Error: the user denied running 'exec'")
        assert deny["approvals"] == ["exec echo fed → denied"]
        assert expire["approvals"][0].startswith("exec echo fed → denied (nobody answered within 1.5 s")
        assert "expired and counts as deny" in expire["result"]  # what the model was told, in its reply
        model_saw = [m["content"] for r in fake_openai.requests for m in r["messages"] if m.get("role") == "tool"]
        assert any("expired and counts as deny" in text for text in model_saw)
        assert all(o["state"] != "waiting" for o in outcomes.values())
        # each ask was answered exactly once, by the notification's button (or the expiry), and the
        # tray's later answer to the same request was refused
        assert [(o["answers"], o["surface"], o["second"]) for o in (allow, deny, expire)] == [
            (1, "notification", False), (2, "notification", False), (3, "engine", False)]

        fake_openai.respond_with(lambda body: tool_calls_reply([("heartbeat", {"action": "skip"})]))
        app.go()
        at, plain = app.next("DONE", at)  # the next heartbeat runs as usual: nothing is left waiting
        assert (plain["decision"], plain["approvals"], plain["state"]) == ("skip", [], "idle")
        at, opened = app.next("OPENED", at)
        assert opened["sessions"] == ["heartbeat"]
        assert app.process.wait(timeout=30) == 0, app.stderr
    finally:
        if app is not None and app.process.poll() is None:
            app.process.kill()
            app.process.wait()
        session.stop()
