"""Standing intents (keyword triggers) and timed jobs (reminders at a fixed time, cron)."""
