"""nanobot Desktop: a desktop app that runs the nanobot personal AI agent in-process."""

__version__ = "0.1.0"
