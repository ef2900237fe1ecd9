"""The fixture sessions (tests/fixtures/sessions/) and the facts and recalls the tests build on them.

A (the Hangzhou trip) has a network tool result and a tainted assistant turn; B (the Lingyin
tickets) has a fact that three unique queries on three days make Dreaming promote into MEMORY.md.
"""

from __future__ import annotations

from tests.conftest import FIXTURES

SESSIONS = FIXTURES / "sessions"
HZ = SESSIONS / "hangzhou-trip.jsonl"
LINGYIN = SESSIONS / "lingyin-tickets.jsonl"
CRON = SESSIONS / "cron-digest.jsonl"
A = "sess-hz-01"
B = "sess-lingyin-02"
A_FACT = "- Hangzhou weekend budget: 3000 yuan for two people."
B_FACT = "- Lingyin Temple tickets are booked for Saturday at 9:00, two adults."
RECALLS = (
    ("2026-11-01T10:00:00+00:00", "Lingyin Temple tickets"),
    ("2026-11-02T10:00:00+00:00", "temple tickets Saturday"),
    ("2026-11-03T10:00:00+00:00", "Lingyin booked two adults"),
)
DREAM_AT = "2026-11-03T11:00:00+00:00"
AFTER = "2026-11-05T09:00:00+00:00"
