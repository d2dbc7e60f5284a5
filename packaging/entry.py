"""The bundle's entry point: exactly `nanobot-desktop` (the console script) — the app, or a subcommand."""

import sys

from nanobot_desktop.cli import run

if __name__ == "__main__":
    sys.exit(run())
