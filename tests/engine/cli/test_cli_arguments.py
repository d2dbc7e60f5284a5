"""The command line: a plain start of the window is read without argparse (issue 14: building the
parsers costs ~5 ms before the first paint), with exactly the full parser's result, and every other
command line, mistakes included, gets the full parser's result and message."""

from __future__ import annotations

import pytest

from nanobot_desktop import cli
from nanobot_desktop.cli import build_parser, parse_arguments

COMMAND_LINES = [
    [], ["--config", "c.json", "--workspace", "ws", "--toggle"], ["-c", "c.json", "-w", "ws"], ["--conf", "c.json"],
    ["--version"], ["--config", "agent"], ["agent", "-m", "hi", "--config", "c.json"], ["heartbeat", "--once"],
    ["onboard", "--layout", "0.3"], ["--config=c.json", "--workspace=ws"], ["--config="], ["-cc.json"],
    ["--config", "a.json", "--config", "b.json"], ["--toggle", "--toggle", "-w", "ws"], ["-w", "ws", "--version"],
    ["--tog"],
]
MISTAKES = [["--config"], ["bogus"], ["--foo"], ["--toggle", "extra"], ["agent"], ["--toggle=1"], ["-c", "-w", "x"],
            ["--workspace", "--toggle"], ["--", "--toggle"], ["-w", "ws", "-x"]]


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=" ".join)
def test_every_command_line_parses_as_the_full_parser_parses_it(argv: list[str]) -> None:
    assert vars(parse_arguments(argv)) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv", MISTAKES, ids=" ".join)
def test_a_mistake_gets_the_full_parsers_message(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as full:
        build_parser().parse_args(argv)
    expected = capsys.readouterr().err
    with pytest.raises(SystemExit) as ours:
        parse_arguments(argv)
    assert (ours.value.code, capsys.readouterr().err) == (full.value.code, expected)
    if argv[0] not in ("agent", "heartbeat", "onboard"):
        assert "COMMAND" in expected  # the usage line is the full parser's, which lists the commands


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_arguments(["-h"])
    shown = capsys.readouterr().out
    assert all(command in shown for command in ("onboard", "agent", "heartbeat")), shown


def test_a_plain_start_of_the_window_builds_no_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parser() -> None:
        raise AssertionError("a plain start of the window must not build argparse's parsers")

    monkeypatch.setattr(cli, "build_parser", no_parser)
    args = parse_arguments(["--config", "c.json", "-w", "ws", "--toggle"])
    assert (args.config, args.workspace, args.toggle, args.command) == ("c.json", "ws", True, None)
