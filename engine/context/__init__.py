"""What a new session loads: bootstrap files and budgets, the daily start-up, trigger recall."""
