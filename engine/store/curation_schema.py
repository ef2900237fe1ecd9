"""Tables of the supersede curation action (issue 36): what ``clawmem supersede`` wrote, so its undo
restores the file exactly, and the supersessions agents proposed for the person to accept or reject.

Neither is derived from the files: ``reset`` never touches them. Times are integer epoch
milliseconds (UTC), like the intent tables.

``memory_supersessions`` — one row per marker written. ``before_line`` is the line the write
replaced (an ``observed … | status: active`` marker line, or the bullet line itself when the marker
was inline), NULL when a new marker line was inserted above the bullet; ``after_line`` is what was
written. ``bullet_text`` is the older entry's bullet line, which finds the row again after lines
above it moved. ``undone_at`` is set when the write was undone; rows are never deleted.

``memory_supersede_proposals`` — a proposal from an agent (the MCP tool ``supersede_propose``):
both entries as ``path`` + ``line`` + the bullet's text when proposed (an accept finds a bullet
again by its text when lines moved, and refuses when it changed), the reason, the class of the
server that proposed it, and the person's decision.
"""

from __future__ import annotations

from clawmem.engine.store.schema import _sql, register_component

CURATION_V1 = """
CREATE TABLE IF NOT EXISTS memory_supersessions (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    bullet_text TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('added', 'replaced', 'inline')),
    before_line TEXT,
    after_line TEXT NOT NULL,
    newer_path TEXT NOT NULL,
    newer_line INTEGER NOT NULL CHECK (newer_line > 0),
    proposal_id TEXT,
    created_at INTEGER NOT NULL,
    undone_at INTEGER,
    CHECK ((kind = 'added') = (before_line IS NULL))
) STRICT;
CREATE INDEX IF NOT EXISTS idx_memory_supersessions_path ON memory_supersessions (path, undone_at);

CREATE TABLE IF NOT EXISTS memory_supersede_proposals (
    id TEXT PRIMARY KEY,
    older_path TEXT NOT NULL,
    older_line INTEGER NOT NULL CHECK (older_line > 0),
    older_text TEXT NOT NULL,
    newer_path TEXT NOT NULL,
    newer_line INTEGER NOT NULL CHECK (newer_line > 0),
    newer_text TEXT NOT NULL,
    reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    origin_class TEXT NOT NULL CHECK (origin_class IN ('owner', 'agent', 'untrusted', 'system')),
    status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected', 'stale')),
    created_at INTEGER NOT NULL,
    decided_at INTEGER,
    decision_note TEXT,
    supersession_id INTEGER REFERENCES memory_supersessions (id)
) STRICT;
CREATE INDEX IF NOT EXISTS idx_memory_supersede_proposals_status
    ON memory_supersede_proposals (status, created_at);
"""

register_component("curation", (_sql(CURATION_V1),))
