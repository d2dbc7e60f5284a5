"""The agent: the loop that runs a turn, its tool steps and saving, the tool runner, the one approval
object, subagents, and the context (system prompt and history) a turn sends. Its public names are
reached through `nanobot_desktop.engine`; this package imports nothing itself."""
