"""Tables of the sessions component: transcripts, their trust, and flush provenance segments.

- ``session_windows``: one row per imported session (docs/memory-core.md §2 FK target of ``transcript_events``).
- ``transcript_events``: the spec's table, (session_id, seq) PK, the event as JSON.
- ``transcript_event_trust``: the origin class the program assigned to each event at import
  (never read from the text), and whether a network tool result tainted it.
- ``session_transcript_fts``: FTS5 over event text (unicode61, remove_diacritics 2), kept in sync
  by triggers on ``transcript_events``.
- ``memory_flush_segments`` / ``memory_flush_files``: flush provenance (docs/memory-core.md §8
  ``daily-provenance``): hashed, line-aligned byte ranges of memory files tagged ``agent`` or
  ``untrusted`` with the session they came from, and each tracked file's size and hash after the
  last write clawmem made or checked, so a non-append change can be detected.

None of these is derived: ``reset`` never touches them. Times are epoch milliseconds.
"""

from __future__ import annotations

from clawmem.engine.store.schema import _sql, register_component

SESSIONS_V1 = """
CREATE TABLE IF NOT EXISTS session_windows (
    session_id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('interactive', 'cron', 'heartbeat', 'subagent')),
    channel TEXT NOT NULL,
    sender TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at INTEGER NOT NULL,
    event_count INTEGER NOT NULL,
    imported_at INTEGER NOT NULL,
    source_file TEXT,
    note_path TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS session_windows_key ON session_windows (session_key);
CREATE INDEX IF NOT EXISTS session_windows_started ON session_windows (started_at);

CREATE TABLE IF NOT EXISTS transcript_events (
    session_id TEXT NOT NULL REFERENCES session_windows (session_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    event_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;

CREATE TABLE IF NOT EXISTS transcript_event_trust (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    origin_class TEXT NOT NULL CHECK (origin_class IN ('owner', 'agent', 'untrusted', 'system')),
    tainted INTEGER NOT NULL DEFAULT 0 CHECK (tainted IN (0, 1)),
    PRIMARY KEY (session_id, seq),
    FOREIGN KEY (session_id, seq) REFERENCES transcript_events (session_id, seq) ON DELETE CASCADE
) STRICT;

CREATE VIRTUAL TABLE IF NOT EXISTS session_transcript_fts USING fts5(
    text, session_id UNINDEXED, seq UNINDEXED, role UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS transcript_events_fts_ai AFTER INSERT ON transcript_events
BEGIN
    INSERT INTO session_transcript_fts (rowid, text, session_id, seq, role)
    VALUES (new.rowid, COALESCE(json_extract(new.event_json, '$.text'), ''), new.session_id, new.seq,
            COALESCE(json_extract(new.event_json, '$.role'), ''));
END;
CREATE TRIGGER IF NOT EXISTS transcript_events_fts_ad AFTER DELETE ON transcript_events
BEGIN
    DELETE FROM session_transcript_fts WHERE rowid = old.rowid;
END;

CREATE TABLE IF NOT EXISTS memory_flush_segments (
    path TEXT NOT NULL,
    seq INTEGER NOT NULL,
    byte_start INTEGER NOT NULL,
    byte_end INTEGER NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    origin_class TEXT NOT NULL CHECK (origin_class IN ('agent', 'untrusted')),
    kind TEXT NOT NULL CHECK (kind IN ('flush', 'note', 'external', 'changed')),
    session_id TEXT,
    session_key TEXT,
    session_kind TEXT CHECK (session_kind IS NULL OR session_kind IN ('interactive', 'cron', 'heartbeat', 'subagent')),
    status TEXT NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'lost')),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (path, seq),
    CHECK (byte_end >= byte_start AND line_end >= line_start)
) STRICT;
CREATE INDEX IF NOT EXISTS memory_flush_segments_session ON memory_flush_segments (session_id);

CREATE TABLE IF NOT EXISTS memory_flush_files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
"""

register_component("sessions", (_sql(SESSIONS_V1),))
