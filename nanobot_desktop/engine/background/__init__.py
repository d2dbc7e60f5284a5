"""What runs without a person asking: the heartbeat, cron jobs (their store in either layout), living
beside a nanobot gateway or another app instance on the same files, and the log of background tool use."""
