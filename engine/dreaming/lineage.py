"""Session lineage of a promotion candidate: which sessions a short-term entry came from.

When MEMORY.md gains an entry from a candidate with session lineage, clawmem reserves
``memory_entry_origins`` rows keyed by the promotion candidate key, so a later lineage forget can
find the promoted entry. Sessions (transcripts, the session corpus) arrive with the sessions
feature; until then no candidate has lineage and :func:`candidate_sessions` returns ``[]``.
This is the one place that feature plugs into.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.facade import MemoryEngine


@dataclass(frozen=True)
class SessionOrigin:
    session_id: str
    session_key: str | None
    origin_class: str
    observed_at: int  # epoch ms


def candidate_sessions(engine: MemoryEngine, candidate_key: str, path: str) -> list[SessionOrigin]:
    """Sessions the candidate's text came from (empty until session lineage exists)."""
    return []
