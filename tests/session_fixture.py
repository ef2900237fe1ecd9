"""The fixture sessions (tests/fixtures/sessions/), the facts and recalls the tests build on them, and
``scenario``: that state built through a keyword-only engine (the forget tests start from it).

A (the Hangzhou trip) has a network tool result and a tainted assistant turn; B (the Lingyin
tickets) has a fact that three unique queries on three days make Dreaming promote into MEMORY.md.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from clawmem.engine.config import Settings
from clawmem.engine.facade import MemoryEngine

from tests.conftest import FIXTURES, make_settings

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


def at(settings: Settings, now: str) -> MemoryEngine:
    return MemoryEngine(dataclasses.replace(settings, now=now))


def scenario(home: Path, workspace: Path, *, a_fact_date: str = "2026-10-30") -> Settings:
    """Import both sessions with notes, flush a fact of each, recall B's on three days, dream and apply."""
    settings = make_settings(home, workspace, embedding={"provider": "none"})
    with at(settings, AFTER) as e:
        e.sessions.import_file(HZ, note=True)
        e.sessions.import_file(LINGYIN, note=True)
        e.sessions.flush(B, B_FACT, date="2026-10-31")
        e.sessions.flush(A, A_FACT, date=a_fact_date)
    for now, query in RECALLS:
        with at(settings, now) as e:
            assert any("2026-10-31" in h.path for h in e.search(query).results), query
    with at(settings, DREAM_AT) as e:
        run = e.dreaming.run(apply=True)
        assert run.applied is not None and run.applied.applied, run
    return settings
