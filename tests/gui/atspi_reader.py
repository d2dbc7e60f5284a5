"""Reads the accessibility tree over the AT-SPI bus, as a screen reader (Orca) does.

Run by Debian's own `/usr/bin/python3`, which has `python3-pyatspi` (the project's venv has not):
tests/gui/common/test_atspi.py starts it in a separate process with the app's DISPLAY and session bus.

    atspi_reader.py dump APP_NAME         one JSON line: every object of the app's windows
    atspi_reader.py listen SECONDS        JSON lines: each `object:announcement` heard, until SECONDS pass
                                          (prints "READY" once the listener is registered)

Standard library and pyatspi only: this file is not imported by the tests.
"""

from __future__ import annotations

import json
import sys

import pyatspi  # type: ignore[import-not-found]


def _states(obj: object) -> list[str]:
    states = obj.getState()  # type: ignore[attr-defined]
    names = {pyatspi.STATE_FOCUSABLE: "focusable", pyatspi.STATE_SHOWING: "showing",
             pyatspi.STATE_VISIBLE: "visible", pyatspi.STATE_FOCUSED: "focused",
             pyatspi.STATE_ENABLED: "enabled", pyatspi.STATE_SENSITIVE: "sensitive",
             pyatspi.STATE_SELECTED: "selected"}
    return [name for state, name in names.items() if states.contains(state)]


def _extents(obj: object) -> list[int] | None:
    try:
        box = obj.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)  # type: ignore[attr-defined]
    except NotImplementedError:
        return None
    return [box.x, box.y, box.width, box.height]


def _walk(obj: object, path: str, out: list[dict[str, object]], depth: int = 0) -> None:
    if obj is None or depth > 60:
        return
    try:
        entry = {"path": path, "role": obj.getRoleName(), "name": obj.name or "",  # type: ignore[attr-defined]
                 "description": obj.description or "", "states": _states(obj),  # type: ignore[attr-defined]
                 "extents": _extents(obj)}
        try:
            entry["actions"] = [obj.queryAction().getName(i)  # type: ignore[attr-defined]
                                for i in range(obj.queryAction().nActions)]  # type: ignore[attr-defined]
        except NotImplementedError:
            entry["actions"] = []
        out.append(entry)
        count = obj.childCount  # type: ignore[attr-defined]
    except Exception as error:  # noqa: BLE001 - an object can vanish while it is read (a D-Bus error): say so, keep walking
        out.append({"path": path, "error": str(error)})
        return
    for index in range(min(count, 2000)):
        try:
            child = obj.getChildAtIndex(index)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a child gone mid-walk (a D-Bus error of any kind)
            continue
        _walk(child, f"{path}/{index}", out, depth + 1)


def dump(app_name: str) -> None:
    desktop = pyatspi.Registry.getDesktop(0)
    apps = [desktop.getChildAtIndex(i) for i in range(desktop.childCount)]
    names = [app.name for app in apps if app is not None]
    objects: list[dict[str, object]] = []
    for app in apps:
        if app is not None and app.name == app_name:
            _walk(app, "app", objects)
    print(json.dumps({"apps": names, "objects": objects}), flush=True)


def listen(seconds: float) -> None:
    from gi.repository import GLib  # type: ignore[import-not-found]

    def heard(event: object) -> None:
        source = event.source  # type: ignore[attr-defined]
        print(json.dumps({"type": str(event.type), "text": str(event.any_data),  # type: ignore[attr-defined]
                          "source_role": source.getRoleName() if source else ""}), flush=True)

    pyatspi.Registry.registerEventListener(heard, "object:announcement")
    GLib.timeout_add(int(seconds * 1000), lambda: pyatspi.Registry.stop() or False)
    GLib.idle_add(lambda: print("READY", flush=True) or False)
    pyatspi.Registry.start()


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2])
    elif sys.argv[1] == "listen":
        listen(float(sys.argv[2]))
    else:
        sys.exit(f"unknown command {sys.argv[1]!r}")
