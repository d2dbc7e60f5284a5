"""`python -m nanobot_desktop` is the same as the `nanobot-desktop` command."""

import sys

from nanobot_desktop.cli import run

if __name__ == "__main__":
    sys.exit(run())
