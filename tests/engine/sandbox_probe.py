"""The sandbox cases of issue 28 as one script, so they run as root and as an unprivileged user alike.

`python3 sandbox_probe.py FOLDER` (the checkout on PYTHONPATH, standard library only) makes a home,
a runtime folder, a config with a key and a workspace in FOLDER, starts a Unix socket in the home and
in the runtime folder, and runs each case through the real ExecTool with the workspace restriction on.
It prints one JSON object: {case: {"class": …, "held": bool, "detail": …}}.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from pathlib import Path

KEY = "sk-probe-key-0d9f2b6e1a"


def _setup(folder: Path) -> dict[str, Path]:
    home, runtime, ws = folder / "home", folder / "run", folder / "home" / ".nanobot" / "workspace"
    for path in (home, runtime, ws / ".nanobot", ws / "memory"):
        path.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    config = home / ".nanobot" / "config.json"
    config.write_text(json.dumps({"providers": {"custom": {"apiKey": KEY}}}))
    (ws / ".nanobot" / "workspace-id").write_text("a" * 32 + "\n")
    secret = folder / "outside-secret.txt"
    secret.write_text("OUTSIDE-SECRET")
    hard = ws / "hard"
    if hard.exists():
        hard.unlink()
    os.link(secret, hard)
    os.environ.update({"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)})
    return {"home": home, "runtime": runtime, "ws": ws, "config": config, "secret": secret}


def main(folder: Path) -> dict[str, dict[str, object]]:
    paths = _setup(folder)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from nanobot_desktop.engine.tools.base import ToolContext
    from nanobot_desktop.engine.tools.sandbox import process_limit_mechanism, sandbox_support
    from nanobot_desktop.engine.tools.shell import ExecTool

    listeners = []
    for where in (paths["runtime"] / "bus", paths["home"] / "agent.sock"):
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(where))
        server.listen(5)
        listeners.append(server)
    tool = ExecTool(timeout_s=60, config_path=paths["config"])
    ctx = ToolContext(workspace=paths["ws"], restrict_to_workspace=True)

    def run(command: str, network: bool = True) -> str:
        tool.network = network
        return asyncio.run(tool.execute(ctx, command))

    connect = ("/usr/bin/python3 -c \"import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
               "print('CONNECTED')\" ")
    results: dict[str, dict[str, object]] = {}

    def record(name: str, kind: str, held: bool, detail: str) -> None:
        results[name] = {"class": kind, "held": held, "detail": detail[-300:]}

    for network in (True, False):
        for label, where in (("bus", paths["runtime"] / "bus"), ("home-socket", paths["home"] / "agent.sock")):
            out = run(connect + str(where), network)
            record(f"{label}-network-{'on' if network else 'off'}", "local-service", "CONNECTED" not in out, out)
    out = run(f"cat {paths['config']}")
    record("config-read", "read-outside", KEY not in out, out)
    out = run("cat hard; echo pwned >> hard")
    record("hard-link", "hard-link", "OUTSIDE-SECRET" not in out and paths["secret"].read_text() == "OUTSIDE-SECRET",
           out)
    out = run("echo bad > .nanobot/workspace-id")
    record("app-state", "app-state", (paths["ws"] / ".nanobot" / "workspace-id").read_text() == "a" * 32 + "\n", out)
    marker = Path("/tmp") / f"probe-host-{os.getpid()}"
    marker.write_text("x")
    try:
        out = run("ls -A /tmp")
    finally:
        marker.unlink()
    record("own-tmp", "local-service", marker.name not in out, out)
    out = run("tr '\\0' ' ' < /proc/1/cmdline")
    record("policy-hidden", "policy", str(paths["home"]) not in out and "hidden" not in out, out)
    started = time.monotonic()
    out = run("/usr/bin/python3 -c 'b = bytearray(3 * 1024 ** 3); print(\"GOT\")'")
    record("memory-3gb", "resources", "GOT" not in out and "memory limit" in out, f"{time.monotonic() - started:.1f}s {out}")
    started = time.monotonic()
    out = run("i=0; while [ $i -lt 1500 ]; do sleep 30 & i=$((i+1)); done; echo started $i")
    record("fork-1500", "resources", "started 1500" not in out and "process limit" in out,
           f"{time.monotonic() - started:.1f}s {out}")
    for server in listeners:
        server.close()
    results["_about"] = {"uid": os.getuid(), "sandbox": sandbox_support().summary,
                         "processes": process_limit_mechanism()}
    return results


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
