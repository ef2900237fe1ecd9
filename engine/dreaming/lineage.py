"""Session lineage of a promotion candidate: which sessions a short-term entry came from.

When MEMORY.md gains an entry from a candidate with session lineage, clawmem reserves
``memory_entry_origins`` rows keyed by the promotion candidate key, so a later lineage forget can
find the promoted entry. Lineage comes from flush provenance (:mod:`engine.sessions.flush`): the
candidate's line range in its source file is matched against the file's segments as they sit in
the current bytes (a session-memory note is one segment; a flush into ``memory/<date>.md`` is
another), and every session whose segment overlaps the range is an origin. Forgotten
(tombstoned) sessions are never reserved again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawmem.engine.sessions import trust
from clawmem.engine.store import recall_rows
from clawmem.engine.store import sessions_rows as srows

if TYPE_CHECKING:
    from clawmem.engine.runtime import Runtime


@dataclass(frozen=True)
class SessionOrigin:
    session_id: str
    session_key: str | None
    origin_class: str
    observed_at: int  # epoch ms


def candidate_sessions(runtime: Runtime, candidate_key: str, path: str) -> list[SessionOrigin]:
    """Sessions the candidate's text came from, by overlap with the source file's flush segments."""
    conn = runtime.store.conn()
    row = recall_rows.get(conn, candidate_key)
    if row is None or row.path != path or path not in srows.segment_paths(conn):
        return []
    prov = trust.line_trust(conn, runtime.workspace, path).provenance
    if prov is None:
        return []
    tombstoned = srows.tombstoned_ids(conn)
    out: dict[str, SessionOrigin] = {}
    for loc in prov.located:
        seg = loc.row
        if seg.session_id is None or seg.session_id in tombstoned:
            continue
        if loc.line_end < row.start_line or loc.line_start > row.end_line:
            continue
        origin = trust.segment_class(seg)
        prior = out.get(seg.session_id)
        if prior is not None:
            origin = trust.least_trusted(prior.origin_class, origin)
        out[seg.session_id] = SessionOrigin(seg.session_id, seg.session_key, origin, seg.created_at)
    return list(out.values())
