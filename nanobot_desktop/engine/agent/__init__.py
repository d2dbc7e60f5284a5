"""The agent: its loop, the tool runner, approvals, subagents and context (see ARCHITECTURE.md)."""
