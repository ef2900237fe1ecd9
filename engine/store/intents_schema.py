"""Tables of standing intents (docs/memory-core.md §6), plus clawmem's fire history.

``standing_intents`` has the spec's columns, CHECKs, indexes and the external-content FTS5
table kept in sync by three triggers, as OpenClaw's agent schema has them. Times are
**integer epoch milliseconds (UTC)** like OpenClaw's (``expires_at``, ``last_fired_at``,
``created_at``, ``fired_at``).

``standing_intent_fires`` is clawmem's addition (OpenClaw keeps only ``fire_count`` and
``last_fired_at``): one row per fire, so a user can see when, where and on which message an
intent fired, also after it was cancelled or ran out. Rows are never deleted.
"""

from __future__ import annotations

from clawmem.engine.store.schema import _sql, register_component

INTENTS_V1 = """
CREATE TABLE IF NOT EXISTS standing_intents (
    intent_key INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL,
    trigger_keywords TEXT NOT NULL,
    trigger_embedding TEXT,
    channel_scope TEXT,
    sender_scope TEXT,
    creator_sender TEXT CHECK (creator_sender IS NULL OR length(trim(creator_sender)) > 0),
    status TEXT NOT NULL CHECK (status IN ('pending', 'armed', 'fired', 'done', 'cancelled', 'expired')),
    expires_at INTEGER NOT NULL,
    max_fires INTEGER NOT NULL CHECK (max_fires > 0),
    fire_count INTEGER NOT NULL DEFAULT 0 CHECK (fire_count >= 0),
    cooldown_seconds INTEGER NOT NULL DEFAULT 86400 CHECK (cooldown_seconds >= 0),
    last_fired_at INTEGER,
    created_at INTEGER NOT NULL,
    source_session_id TEXT
) STRICT;

CREATE INDEX IF NOT EXISTS idx_standing_intents_lifecycle
    ON standing_intents (status, expires_at, last_fired_at);
CREATE INDEX IF NOT EXISTS idx_standing_intents_scope
    ON standing_intents (status, channel_scope, sender_scope);

CREATE VIRTUAL TABLE IF NOT EXISTS standing_intents_fts USING fts5(
    trigger_keywords,
    content = 'standing_intents',
    content_rowid = 'intent_key',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS standing_intents_fts_after_insert
AFTER INSERT ON standing_intents
BEGIN
    INSERT INTO standing_intents_fts (rowid, trigger_keywords) VALUES (new.intent_key, new.trigger_keywords);
END;

CREATE TRIGGER IF NOT EXISTS standing_intents_fts_after_delete
AFTER DELETE ON standing_intents
BEGIN
    INSERT INTO standing_intents_fts (standing_intents_fts, rowid, trigger_keywords)
    VALUES ('delete', old.intent_key, old.trigger_keywords);
END;

CREATE TRIGGER IF NOT EXISTS standing_intents_fts_after_update
AFTER UPDATE OF trigger_keywords ON standing_intents
BEGIN
    INSERT INTO standing_intents_fts (standing_intents_fts, rowid, trigger_keywords)
    VALUES ('delete', old.intent_key, old.trigger_keywords);
    INSERT INTO standing_intents_fts (rowid, trigger_keywords) VALUES (new.intent_key, new.trigger_keywords);
END;

-- clawmem: one row per fire (history the UI shows; never deleted).
CREATE TABLE IF NOT EXISTS standing_intent_fires (
    fire_key INTEGER PRIMARY KEY,
    intent_id TEXT NOT NULL REFERENCES standing_intents (id) ON DELETE CASCADE,
    fired_at INTEGER NOT NULL,
    channel TEXT,
    sender TEXT,
    prompt_excerpt TEXT NOT NULL CHECK (length(prompt_excerpt) <= 200)
) STRICT;
CREATE INDEX IF NOT EXISTS idx_standing_intent_fires_intent ON standing_intent_fires (intent_id, fired_at);
"""

register_component("intents", (_sql(INTENTS_V1),))
