"""A diary fact that three searches on three days recall, so that Dreaming's Deep phase promotes it
(the Dreaming tests, the CLI's and the fault harness's start from it), and a hand-made hit."""

from __future__ import annotations

from pathlib import Path

from clawmem.engine.search.types import Provenance, ScoreBreakdown, SearchHit

FACT = "The staging database password rotates every Friday at noon."
DIARY = "memory/2026-11-02.md"
QUERIES = (
    ("2026-11-03T10:00:00+00:00", "staging database password"),
    ("2026-11-04T10:00:00+00:00", "database password rotates"),
    ("2026-11-05T10:00:00+00:00", "staging password friday noon"),
)
DREAM_AT = "2026-11-05T11:00:00+00:00"


def write_fact(workspace: Path, rel: str = DIARY, fact: str = FACT) -> None:
    (workspace / rel).write_text(f"- {fact}\n", encoding="utf-8")


def hit(path: str, snippet: str, score: float, origin: str = "agent", session_kind: str = "unknown") -> SearchHit:
    breakdown = ScoreBreakdown(None, 0.0, None, score, 0, score, None, 1.0, None, 1.0, 1.0, score, 1, True)
    return SearchHit("c1", path, 1, 1, score, snippet, "memory", Provenance(origin, session_kind, None), breakdown)
