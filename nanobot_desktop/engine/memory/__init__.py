"""What the agent remembers: MEMORY.md and its versions (a `.versions/` folder or 0.3's git repository),
the history log (HISTORY.md or history.jsonl) and the consolidation that writes both."""
