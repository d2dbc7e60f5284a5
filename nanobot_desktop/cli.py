"""The `nanobot-desktop` command: the desktop app by default, and headless subcommands."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nanobot-desktop",
        description="nanobot Desktop: run the nanobot personal AI agent in a desktop window.",
    )
    parser.add_argument("--workspace", metavar="DIR", help="workspace folder (overrides the config)")
    parser.add_argument("--config", metavar="FILE", help="config file (default ~/.nanobot/config.json)")
    return parser


def main(argv: list[str] | None = None) -> int:
    build_parser().parse_args(argv)
    print("nanobot-desktop: the desktop window is not built yet", file=sys.stderr)
    return 2
