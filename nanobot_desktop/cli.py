"""The `nanobot-desktop` command: the desktop app by default, and headless subcommands.

The headless commands are consumers of the same engine and events as the window: `agent` prints
progress to stderr and the reply to stdout, so it can be scripted.

Imports are made where a command needs them: the window's frame paints before asyncio is loaded,
and `agent -m` loads only the engine pieces one turn uses.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from collections.abc import Coroutine
from typing import Any

from nanobot_desktop import start_up_collector

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", "-w", metavar="DIR", help="workspace folder (overrides the config's)")
    common.add_argument("--config", "-c", metavar="FILE",
                        help="config file (default: ~/.nanobot/config.json, shared with the nanobot CLI)")
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    parser = argparse.ArgumentParser(
        prog="nanobot-desktop", parents=[common],
        description="nanobot Desktop: the nanobot personal AI agent in a desktop window. "
                    "Without a command it opens the app (or raises the window of the one already running).",
    )
    parser.add_argument("--toggle", action="store_true",
                        help="show or hide the running app's window (bind this to a desktop shortcut)")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    onboard = commands.add_parser("onboard", parents=[common],
                                  help="create the config and workspace if missing (never overwrites anything)")
    onboard.add_argument("--layout", choices=("post4", "0.3"), default="post4",
                         help="layout of a NEW workspace: nanobot 0.1.4's (default) or nanobot 0.3's; an "
                              "existing workspace keeps its own")
    agent = commands.add_parser("agent", parents=[common], help="run one agent turn without the window")
    agent.add_argument("-m", "--message", required=True, help="the message to send")
    agent.add_argument("-s", "--session", default="cli:direct", metavar="KEY",
                       help="session key, channel:chat_id (default: cli:direct)")
    agent.add_argument("--yes", "-y", action="store_true",
                       help="allow every tool call the policy would ask about")
    heartbeat = commands.add_parser("heartbeat", parents=[common], help="run the heartbeat check")
    heartbeat.add_argument("--once", action="store_true", required=True,
                           help="run one tick now and print the decision and result")
    update = commands.add_parser("update", help="check for a signed update: a bundle install downloads, verifies and "
                                                "stages it for the next start; other installs say how to get it")
    update.add_argument("--rollback", action="store_true",
                        help="go back to the version kept before the last update (a bundle install; from the next start)")
    return parser


_WINDOW_VALUE_OPTIONS = {"--workspace": "workspace", "-w": "workspace", "--config": "config", "-c": "config"}


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The parsed command line.

    A start of the window written out plainly (`--config FILE`, `-c FILE`, `--workspace=DIR`,
    `--toggle`, in any order) is read here directly: building argparse's parsers costs ~5 ms before
    the first paint (its gettext look-ups import `locale` and search for catalogs per string).
    Anything else (a command, help, `--version`, an abbreviation, a mistake) goes through the full
    parser, so every other result and every message is argparse's; tests/engine/cli/test_cli_arguments.py
    checks that both agree.
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    return _plain_window_start(arguments) or build_parser().parse_args(arguments)


def _plain_window_start(arguments: list[str]) -> argparse.Namespace | None:
    values: dict[str, Any] = {"workspace": None, "config": None, "toggle": False, "version": False, "command": None}
    index = 0
    while index < len(arguments):
        option, equals, value = arguments[index].partition("=")
        if not option.startswith("--"):
            equals, value = "", ""
            option = arguments[index]
        if option == "--toggle" and not equals:
            values["toggle"] = True
        elif option in _WINDOW_VALUE_OPTIONS:
            if not equals:
                index += 1
                if index == len(arguments) or arguments[index].startswith("-"):
                    return None  # a missing value (or one argparse reads as an option): its message
                value = arguments[index]
            values[_WINDOW_VALUE_OPTIONS[option]] = value
        else:
            return None
        index += 1
    return argparse.Namespace(**values)


def run(argv: list[str] | None = None) -> int:
    """The process entry: the `nanobot-desktop` command, `python -m nanobot_desktop`, the bundle.

    The cyclic garbage collector is held off until the program has shown its first result (see
    start_up_collector.py), then `main` does the rest."""
    start_up_collector.hold()
    if getattr(sys, "frozen", False):
        _start_pending_update()
    try:
        return main(argv)
    finally:
        start_up_collector.release()


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the command (the window by default); returns the exit code."""
    args = parse_arguments(argv)
    if args.version:
        from nanobot_desktop import __version__

        print(f"nanobot-desktop {__version__}")
        return EXIT_OK
    if args.command == "onboard":
        return _onboard(args)
    if args.command == "agent":
        return _guarded(_agent(args))
    if args.command == "heartbeat":
        return _guarded(_heartbeat_once(args))
    if args.command == "update":
        return _update(args)
    from nanobot_desktop.gui.shell.app import run_gui

    return run_gui(workspace=args.workspace, config=args.config, toggle=args.toggle)


def _start_pending_update() -> None:
    """A bundle whose update waits beside it switches to it now, before the app's code loads, and runs
    the new executable with the same arguments (one stat when nothing waits; see updates/bundle.py)."""
    app_dir = Path(sys.executable).resolve().parent
    if not app_dir.with_name(app_dir.name + ".pending").is_dir():
        return
    import os

    from nanobot_desktop import __version__
    from nanobot_desktop.gui.shell.single_instance import any_instance_running
    from nanobot_desktop.updates import bundle

    if any_instance_running():
        _err("nanobot Desktop: an update waits; it is put in place when no nanobot Desktop window is open.")
        return
    try:
        new_version = bundle.apply_pending(app_dir, __version__)
    except bundle.BundleProblem as problem:
        _err(f"nanobot Desktop: {problem}")
        return
    _err(f"nanobot Desktop: switched from version {__version__} to {new_version} "
         f"(`nanobot-desktop update --rollback` goes back).")
    program = bundle.executable(app_dir)
    # The new bootloader must start afresh, not as a child of this process (PyInstaller's own variable).
    env = dict(os.environ, PYINSTALLER_RESET_ENVIRONMENT="1")
    os.execve(program, [str(program), *sys.argv[1:]], env)


def _update(args: argparse.Namespace) -> int:
    """`update`: one check (download, verify, stage for a bundle), or `--rollback`; one sentence out."""
    from nanobot_desktop import __version__
    from nanobot_desktop.updates import bundle, install

    installation = install.detect()
    if args.rollback:
        if not installation.updates_itself:
            _err(f"This copy was installed with {installation.kind.value}: go back to an older version with that "
                 "tool; there is no kept version to roll back to.")
            return EXIT_FAILED
        try:
            version = bundle.stage_rollback(installation.app_dir)
        except (bundle.BundleProblem, OSError) as problem:
            _err(str(problem))
            return EXIT_FAILED
        print(f"Version {version} starts the next time you open nanobot Desktop.")
        return EXIT_OK
    from nanobot_desktop.updates.check import check_for_update

    outcome = check_for_update(installation, __version__)
    if not outcome.ok:
        _err(outcome.sentence())
        return EXIT_FAILED
    print(outcome.sentence())
    return EXIT_OK


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _guarded(coro: Coroutine[Any, Any, int]) -> int:
    """Run a command coroutine; any engine error becomes one line on stderr and a non-zero exit."""
    import asyncio

    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:
        _err("Interrupted.")
    except Exception as error:  # noqa: BLE001 - a command line prints one sentence, never a traceback
        _err(f"Error: {_one_sentence(error)}")
    return EXIT_FAILED


def _one_sentence(error: BaseException) -> str:
    """The error as a person reads it: our own errors already are sentences; OS errors get the file and
    what to do; anything else (a bug) is named by its type, with the details in the log."""
    from nanobot_desktop.engine import ConfigError, StorageError, WorkspaceError, storage_error

    if isinstance(error, (ConfigError, WorkspaceError, StorageError)):
        return str(error)
    if isinstance(error, OSError) and error.filename:
        return str(storage_error(Path(error.filename), error))
    return f"unexpected {type(error).__name__}: {error}"


def _onboard(args: argparse.Namespace) -> int:
    from nanobot_desktop.engine import (Workspace, default_config_path, detect_layout, load_config,
                                        open_settings_files, patch_config_file, prepare_workspace)

    path = Path(args.config).expanduser() if args.config else default_config_path()
    try:
        existed_before = path.exists()
        if existed_before:
            open_settings_files(path)  # an older app version's keys move to desktop.json
            config = load_config(path)
            print(f"Config: {path} (exists, left as it is)")
        else:  # exactly the keys nanobot 0.1.4.post4 writes itself: both CLIs load it silently
            workspace_patch = {"agents.defaults.workspace": str(Path(args.workspace).expanduser())} if args.workspace else {}
            config, _ = patch_config_file(path, workspace_patch, environ={})
            config = load_config(path)
            print(f"Config: created {path}")
    except Exception as error:  # noqa: BLE001 - a config error, a read-only folder, a full disk: one sentence
        _err(f"Error: {_one_sentence(error)}")
        return EXIT_FAILED
    try:
        workspace = Workspace.at(args.workspace or config.workspace_path)
        layout = detect_layout(workspace.root, path, config.agents.defaults.model_extra,
                               new_workspace=getattr(args, "layout", "post4"))
        existed = workspace.looks_like_nanobot_workspace()
        created = prepare_workspace(workspace.root, layout.kind)  # missing files only, in the workspace's layout
    except Exception as error:  # noqa: BLE001 - one sentence, no traceback
        _err(f"Error: {_one_sentence(error)}")
        return EXIT_FAILED
    state = ("existing nanobot workspace" if existed else "new workspace") + \
        (", nanobot 0.3 layout" if layout.is_v03 else "")
    print(f"Workspace: {workspace.root} ({state}; {len(created)} missing file(s) created)")
    for item in created:
        print(f"  + {item.relative_to(workspace.root)}")
    print("Next: set a provider's apiKey (or a local server) in the config, or open the app: nanobot-desktop")
    return EXIT_OK


def _open_engine(args: argparse.Namespace) -> Any:
    from nanobot_desktop.engine import Engine

    return Engine.open(args.config, args.workspace)


def _progress_printer(event: Any) -> None:
    from nanobot_desktop.engine import events

    if isinstance(event, events.Progress):
        _err(f"  ↳ {event.text}")
    elif isinstance(event, events.WaitingForModel) and int(event.waited_s) % 5 == 0:
        what = "an answer" if event.phase == "first_byte" else "the rest of the reply"
        _err(f"  ↳ waiting for {what}… {event.waited_s:.0f} s (gives up after {event.limit_s:g} s)")
    elif isinstance(event, events.RetryScheduled):
        _err(f"  ↳ retrying ({event.attempt}/{event.max_attempts}) in {round(event.delay_s, 1):g} s…")
    elif isinstance(event, events.ToolCallFinished) and event.status != "ok":
        _err(f"  ↳ {event.name}: {event.status}: {event.result.splitlines()[0] if event.result else ''}")
    elif isinstance(event, events.ConsolidationFinished) and not event.ok and event.error != "cancelled":
        _err(f"  ↳ memory was not updated: {event.error}")
    elif isinstance(event, events.ApprovalAnswered) and event.surface is not events.ApprovalSurface.TERMINAL:
        how = {"allow_once": "allowed once", "allow_always": "always allowed", "deny": "denied"}[event.answer.value]
        by = f": {event.why}" if event.surface is events.ApprovalSurface.ENGINE else f" from the {event.surface.value}"
        _err(f"  ↳ {event.request.tool} {event.request.summary}: {how}{by}")
    elif isinstance(event, events.SubagentStarted):
        _err(f"  ↳ subagent started: {event.label}")
    elif isinstance(event, events.Notice):
        _err(f"  ↳ {event.text}")


def _release_collector_after_first_reply(event: Any) -> None:
    """Start-up ends with the first model reply: by then the SDK is imported and its client made."""
    from nanobot_desktop.engine import events

    if isinstance(event, events.LLMCallFinished):
        start_up_collector.release()


MCP_WAIT_S = 20.0  # the headless turn waits this long at most for the MCP servers to come up


async def _wait_for_mcp(engine: Any) -> None:
    """Start the MCP servers and wait for them (bounded); say which did not come up, then go on.
    With none configured there is nothing to wait for, and the MCP modules are not even imported."""
    if not engine.config.tools.mcp_servers:
        return
    engine.start_mcp()
    for status in await engine.mcp.wait_ready(MCP_WAIT_S):
        reason = status.error or f"still {status.state} after {MCP_WAIT_S:g}s"
        _err(f"  ↳ MCP server '{status.name}' is not available: {reason}")


async def _agent(args: argparse.Namespace) -> int:
    from nanobot_desktop.engine import ApprovalAnswer, ApprovalRequest, ApprovalSurface, file_name_problem, safe_key

    problem = file_name_problem(safe_key(args.session), args.session)
    if problem:
        _err(f"Error: {problem}")
        return EXIT_USAGE
    from nanobot_desktop.engine import SessionKey, SessionKeyError

    try:
        SessionKey.parse(args.session)
    except SessionKeyError as error:
        _err(f"Error: {error}")
        return EXIT_USAGE
    engine = _open_engine(args)
    engine.bus.subscribe(_progress_printer)
    engine.bus.subscribe(_release_collector_after_first_reply)
    for notice in engine.start_notices:
        _progress_printer(notice)
    interactive = sys.stdin is not None and sys.stdin.isatty()

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        """The terminal as a surface: it renders the request and answers it through the engine."""
        if args.yes:
            return ApprovalAnswer.ALLOW_ONCE
        summary = request.command or ", ".join(f"{k}={v!r}" for k, v in request.arguments.items())
        if not interactive:
            _err(f"  ↳ denied {request.tool} ({summary[:80]}): approval needed and no terminal (use --yes)")
            return ApprovalAnswer.DENY
        if request.diff:
            _err(request.diff)
        import asyncio

        origin = f" ({request.origin})" if request.origin else ""
        asker = f"{request.title}. " if request.source.background else ""
        answer = await asyncio.to_thread(input, f"{asker}Allow {request.tool}{origin}: {summary[:200]}? [y/N/a(lways)] ")
        choice = answer.strip().lower()
        if choice in {"a", "always"}:
            return ApprovalAnswer.ALLOW_ALWAYS
        return ApprovalAnswer.ALLOW_ONCE if choice in {"y", "yes"} else ApprovalAnswer.DENY

    stop_answering = engine.approvals.respond_with(approve, ApprovalSurface.TERMINAL)
    try:
        await _wait_for_mcp(engine)
        for merged in engine.merge_sync_copies():  # another machine's lines first (a synced workspace)
            _err(merged.sentence)
        session = await _session_not_held(engine, args.session, interactive)
        from nanobot_desktop.engine import SessionKey
        channel, chat_id = SessionKey.parse(session).route("cli", "direct")
        result = await engine.loop.process(session, args.message, channel=channel, chat_id=chat_id)
        await engine.loop.wait_for_consolidation(session)
    finally:
        stop_answering()
        await engine.shutdown()
    if result.status == "failed":
        if result.reply:  # a reply cut off by the endpoint, or one the disk would not take: still shown
            print(result.reply)
        _err(f"Error: {result.error}")
        return EXIT_FAILED
    if result.reply:
        print(result.reply)
    return EXIT_OK


async def _session_not_held(engine: Any, key: str, interactive: bool) -> str:
    """The session to send into: `key`, unless a running nanobot process holds it in memory (its next
    save would erase this turn) and the person, asked at a terminal, takes a new session instead.
    Without a terminal the warning is printed and the turn goes into `key`, as asked."""
    import asyncio

    from nanobot_desktop.engine import SessionKey

    await asyncio.to_thread(engine.coexistence.scan_now)
    warning = engine.coexistence.session_risk(key)
    if not warning:
        return key
    channel, chat_id = SessionKey.parse(key).route("cli", "direct")
    fresh = str(SessionKey(channel, f"{chat_id}-{time.strftime('%Y%m%d-%H%M%S')}"))
    _err(f"Warning: {warning}")
    if not interactive:
        _err(f"  ↳ sending into {key} anyway; use -s {fresh} to continue in a new session instead")
        return key
    answer = await asyncio.to_thread(input, f"Continue in a new session ({fresh}) instead? [Y/n] ")
    return key if answer.strip().lower() in {"n", "no"} else fresh


async def _heartbeat_once(args: argparse.Namespace) -> int:
    engine = _open_engine(args)
    engine.bus.subscribe(_progress_printer)
    engine.bus.subscribe(_release_collector_after_first_reply)
    try:
        await _wait_for_mcp(engine)
        tick = await engine.heartbeat.trigger_now()
    finally:
        await engine.shutdown()
    print(f"decision: {tick.decision}" + (f" ({tick.explanation})" if tick.explanation else ""))
    if tick.tasks:
        print(f"tasks: {tick.tasks}")
    for use in tick.tools:
        print(f"tool: {use.describe()}")
    for asked in tick.approvals:
        print(f"refused approval: {asked}" if "→ denied" in asked else f"approval: {asked}")
    if tick.result:
        print(f"result: {tick.result}")
    if tick.error:
        _err(f"Error: {tick.error}")
        return EXIT_FAILED
    return EXIT_OK
