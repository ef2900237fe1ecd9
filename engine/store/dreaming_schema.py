"""Tables of the Dreaming component: runs, the review queue, preimages, rejections, ingestion.

None of these is derived: proposals, preimages and rejections are the user's review history and
``reset`` never touches them.
"""

from __future__ import annotations

from clawmem.engine.store.schema import _sql, register_component

DREAMING_V1 = """
CREATE TABLE IF NOT EXISTS dreaming_runs (
    id TEXT PRIMARY KEY,
    started_at INTEGER NOT NULL,
    finished_at INTEGER,
    phases TEXT NOT NULL,
    trigger TEXT NOT NULL CHECK (trigger IN ('manual', 'scheduled', 'tui')),
    counts TEXT NOT NULL DEFAULT '{}',
    proposal_id TEXT,
    report TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX IF NOT EXISTS dreaming_runs_finished ON dreaming_runs (finished_at);

CREATE TABLE IF NOT EXISTS dreaming_proposals (
    id TEXT PRIMARY KEY,
    run_id TEXT,
    created_at INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'applied', 'rejected', 'stale', 'reverted',
                                            'superseded-by-newer')),
    mode TEXT NOT NULL CHECK (mode IN ('rewrite', 'append')),
    base_sha256 TEXT NOT NULL,
    before_text TEXT NOT NULL,
    after_text TEXT NOT NULL,
    result_sha256 TEXT,
    operations TEXT NOT NULL,
    counts TEXT NOT NULL DEFAULT '{}',
    highlights TEXT NOT NULL DEFAULT '[]',
    fallback_reason TEXT,
    reason TEXT,
    decided_at INTEGER,
    reverted_at INTEGER
) STRICT;
CREATE INDEX IF NOT EXISTS dreaming_proposals_status ON dreaming_proposals (status, created_at);

CREATE TABLE IF NOT EXISTS dreaming_preimages (
    key TEXT PRIMARY KEY,
    proposal_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    preimage TEXT NOT NULL,
    preimage_sha256 TEXT NOT NULL,
    result_sha256 TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS dreaming_preimages_proposal ON dreaming_preimages (proposal_id);

CREATE TABLE IF NOT EXISTS dreaming_rejections (
    candidate_key TEXT PRIMARY KEY,
    proposal_id TEXT,
    signal_count INTEGER NOT NULL,
    rejected_at INTEGER NOT NULL,
    reason TEXT
) STRICT;

CREATE TABLE IF NOT EXISTS dreaming_daily_ingest (
    day TEXT NOT NULL,
    path TEXT NOT NULL,
    claim_key TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (day, path, claim_key)
) STRICT;
"""

# What each interactive query matched inside a recall entry: the file lines whose text holds one of
# the query's terms, and the entry's concept terms it hit. Deep promotes the lines the recalls
# actually matched, and concept tags prefer terms that recur across the recalling queries. Derived
# from the recall store (deleted with its entry), so it holds no query text, only hashes.
DREAMING_V2 = """
CREATE TABLE IF NOT EXISTS dreaming_recall_matches (
    entry_key TEXT NOT NULL REFERENCES memory_short_term_recall (entry_key) ON DELETE CASCADE,
    query_hash TEXT NOT NULL,
    lines TEXT NOT NULL DEFAULT '[]',
    terms TEXT NOT NULL DEFAULT '[]',
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (entry_key, query_hash)
) STRICT;
"""

register_component("dreaming", (_sql(DREAMING_V1), _sql(DREAMING_V2)))
