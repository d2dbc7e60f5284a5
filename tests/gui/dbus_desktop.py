"""A private Linux desktop session for the notification tests: Xvfb, a session bus, dunst, a tray host.

- Xvfb: dunst draws its notifications on an X display.
- `dbus-daemon --session`: a bus of the test's own (never the developer's).
- dunst (Debian): a real org.freedesktop.Notifications server with actions. A click on a button is
  made the way dunst offers it: `dunstctl context` (its D-Bus interface) opens the action menu through
  the configured `dmenu` program, here a script that picks the button the test asks for; dunst then
  emits ActionInvoked exactly as for a click.
- a StatusNotifierItem tray host (Debian: `status-notifier-watcher` from
  haskell-status-notifier-item-utils and the GTK tray `gtk-sni-tray-standalone` from
  haskell-gtk-sni-tray-utils): with it Qt publishes its tray icon as a StatusNotifierItem, as on KDE
  and on GNOME with AppIndicator, and the test reads the item's properties (its tooltip) over D-Bus.
- dbus-monitor: every Notify call on the bus, with its arguments, for the assertions.
Every process started here is stopped by its own handle.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
import threading
import time
from pathlib import Path

from tests.gui.xvfb_support import start_xvfb, stop_process

NEEDED = ("Xvfb", "dbus-daemon", "dbus-monitor", "dbus-send", "dunst", "dunstctl", "status-notifier-watcher",
          "gtk-sni-tray-standalone")

DMENU = textwrap.dedent('''\
    #!/bin/sh
    # dunst's action menu: pick the line of the button named in the choice file, as a click would.
    cat > "{menu_file}"
    grep -m1 -F "#$(cat "{choice_file}") (" "{menu_file}"
''')


def missing() -> list[str]:
    names = [name for name in NEEDED if shutil.which(name) is None]
    try:
        import jeepney  # noqa: F401  (the app's notifications need it)
    except ImportError:
        names.append("jeepney (python)")
    return names


class DesktopSession:
    """Start everything in `start()`; `stop()` ends each process it started."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.processes: list[subprocess.Popen] = []
        self.env: dict[str, str] = {}
        self.notify_calls: list[tuple[float, str]] = []  # (monotonic time, the Notify call as printed)
        self.choice_file = folder / "dmenu-choice.txt"
        self._lock = threading.Lock()

    def start(self) -> None:
        xvfb, display = start_xvfb()
        self.processes.append(xvfb)
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.processes.append(bus)
        address = bus.stdout.readline().strip() if bus.stdout else ""
        if not address:
            raise RuntimeError("dbus-daemon did not print its address")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("NANOBOT_")}
        self.env.update(DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=address)
        menu = self.folder / "dmenu.sh"
        menu.write_text(DMENU.format(menu_file=self.folder / "dmenu-in.txt", choice_file=self.choice_file))
        menu.chmod(0o755)
        config = self.folder / "dunstrc"
        config.write_text(f"[global]\n    dmenu = {menu}\n    timeout = 0\n")
        self.processes.append(subprocess.Popen(["dunst", "-conf", str(config)], env=self.env,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        monitor = subprocess.Popen(["dbus-monitor", "--address", address,
                                    "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.processes.append(monitor)
        threading.Thread(target=self._read_monitor, args=(monitor,), daemon=True).start()
        self.processes.append(subprocess.Popen(["status-notifier-watcher"], env=self.env,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.wait_for_name("org.kde.StatusNotifierWatcher")
        self.processes.append(subprocess.Popen(["gtk-sni-tray-standalone"], env=self.env,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.wait_until_host_registered()
        self.wait_for_name("org.freedesktop.Notifications")

    def _read_monitor(self, monitor: subprocess.Popen) -> None:
        current: list[str] = []
        for line in monitor.stdout or []:
            if line.startswith("method call") and current:
                self._add_call(current)
                current = []
            current.append(line.rstrip("\n"))
            if line.startswith("   int32 "):  # Notify's last argument, expire_timeout
                self._add_call(current)
                current = []

    def _add_call(self, lines: list[str]) -> None:
        if any("member=Notify" in line for line in lines):
            with self._lock:
                self.notify_calls.append((time.monotonic(), "\n".join(lines)))

    def notifications(self) -> list[tuple[float, str]]:
        with self._lock:
            return list(self.notify_calls)

    def _watcher_property(self, name: str) -> str:
        done = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.kde.StatusNotifierWatcher",
                               "/StatusNotifierWatcher", "org.freedesktop.DBus.Properties.Get",
                               "string:org.kde.StatusNotifierWatcher", f"string:{name}"],
                              env=self.env, capture_output=True, text=True, timeout=10)
        return done.stdout

    def wait_until_host_registered(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "boolean true" in self._watcher_property("IsStatusNotifierHostRegistered"):
                return
            time.sleep(0.05)
        raise RuntimeError("the tray host did not register with the StatusNotifierWatcher")

    def tray_items(self) -> list[str]:
        """The StatusNotifierItems registered with the watcher (service names, or service/path)."""
        return re.findall(r'string "([^"]+)"', self._watcher_property("RegisteredStatusNotifierItems"))

    def wait_for_name(self, name: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
                                   "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", f"string:{name}"],
                                  env=self.env, capture_output=True, text=True, timeout=10)
            if "boolean true" in done.stdout:
                return
            time.sleep(0.05)
        raise RuntimeError(f"{name} did not appear on the session bus")

    def click(self, button: str) -> None:
        """Press a notification button the way dunst offers it: its action menu, that entry."""
        self.choice_file.write_text(button)
        subprocess.run(["dunstctl", "context"], env=self.env, check=True, timeout=10,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def item_property(self, item: str, name: str) -> str:
        """A property of a registered StatusNotifierItem ("service/path" or "service"), as text."""
        service, _, path = item.partition("/")
        done = subprocess.run(["dbus-send", "--session", "--print-reply", f"--dest={service}", "/" + (path or "StatusNotifierItem"),
                               "org.freedesktop.DBus.Properties.Get", "string:org.kde.StatusNotifierItem",
                               f"string:{name}"], env=self.env, capture_output=True, text=True, timeout=10)
        return done.stdout

    def stop(self) -> None:
        for process in reversed(self.processes):
            stop_process(process)
        self.processes.clear()
