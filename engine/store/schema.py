"""Schema and migrations, per component.

Each component (the derived index, core state, sessions, intents, dreaming, jobs) has an
ordered list of migrations; ``clawmem_schema`` records how far each one has been applied, so
features evolve independently and an old database is upgraded in place on open.

Derived tables (docs/memory-core.md §2 ``MEMORY_INDEX_DERIVED_TABLES``) can be dropped and rebuilt from the
files; everything else (origins, tombstones, sessions, intents, preimages, the review queue,
the recall store) cannot, and ``reset`` never touches it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import apsw
from clawmem.engine.store.db import immediate

Migration = Callable[[apsw.Connection], None]


def _sql(script: str) -> Migration:
    def run(conn: apsw.Connection) -> None:
        conn.execute(script)

    return run


INDEX_V1 = """
CREATE TABLE IF NOT EXISTS memory_index_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS memory_index_sources (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'memory',
    hash TEXT NOT NULL,
    mtime REAL NOT NULL,
    size INTEGER NOT NULL,
    UNIQUE (path, source)
) STRICT;

CREATE TABLE IF NOT EXISTS memory_index_chunks (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'memory',
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    hash TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    embedding BLOB,
    updated_at REAL NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS memory_index_chunks_path ON memory_index_chunks (path, source);
CREATE INDEX IF NOT EXISTS memory_index_chunks_hash ON memory_index_chunks (hash);
CREATE INDEX IF NOT EXISTS memory_index_chunks_pending
    ON memory_index_chunks (path) WHERE embedding IS NULL;

CREATE TABLE IF NOT EXISTS memory_index_chunk_provenance (
    chunk_id TEXT PRIMARY KEY REFERENCES memory_index_chunks (id) ON DELETE CASCADE,
    origin_class TEXT NOT NULL CHECK (origin_class IN ('owner', 'agent', 'untrusted', 'system')),
    session_kind TEXT NOT NULL DEFAULT 'unknown'
        CHECK (session_kind IN ('interactive', 'cron', 'heartbeat', 'subagent', 'unknown')),
    observed_at INTEGER NOT NULL,
    supersedes_key TEXT
) STRICT;

CREATE TABLE IF NOT EXISTS memory_index_chunk_recall_metadata (
    chunk_id TEXT PRIMARY KEY REFERENCES memory_index_chunks (id) ON DELETE CASCADE,
    importance INTEGER CHECK (importance IS NULL OR importance BETWEEN 1 AND 10),
    triggers TEXT,
    project_key TEXT
) STRICT;

CREATE TABLE IF NOT EXISTS memory_embedding_cache (
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    provider_key TEXT NOT NULL,
    hash TEXT NOT NULL,
    embedding BLOB NOT NULL,
    dims INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (provider, model, provider_key, hash)
) STRICT;
CREATE INDEX IF NOT EXISTS memory_embedding_cache_updated ON memory_embedding_cache (updated_at);

CREATE TABLE IF NOT EXISTS memory_index_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    revision INTEGER NOT NULL
) STRICT;
INSERT OR IGNORE INTO memory_index_state (id, revision) VALUES (1, 0);

CREATE TRIGGER IF NOT EXISTS memory_index_sources_rev_ins AFTER INSERT ON memory_index_sources
BEGIN UPDATE memory_index_state SET revision = revision + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS memory_index_sources_rev_del AFTER DELETE ON memory_index_sources
BEGIN UPDATE memory_index_state SET revision = revision + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS memory_index_sources_rev_upd AFTER UPDATE OF hash ON memory_index_sources
BEGIN UPDATE memory_index_state SET revision = revision + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS memory_index_chunks_rev_ins AFTER INSERT ON memory_index_chunks
BEGIN UPDATE memory_index_state SET revision = revision + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS memory_index_chunks_rev_del AFTER DELETE ON memory_index_chunks
BEGIN UPDATE memory_index_state SET revision = revision + 1 WHERE id = 1; END;

CREATE VIRTUAL TABLE IF NOT EXISTS memory_index_paths_fts USING fts5(
    path, source UNINDEXED, tokenize = 'unicode61'
);
CREATE TRIGGER IF NOT EXISTS memory_index_paths_fts_ai AFTER INSERT ON memory_index_sources
BEGIN INSERT INTO memory_index_paths_fts (rowid, path, source) VALUES (new.id, new.path, new.source); END;
CREATE TRIGGER IF NOT EXISTS memory_index_paths_fts_ad AFTER DELETE ON memory_index_sources
BEGIN DELETE FROM memory_index_paths_fts WHERE rowid = old.id; END;
CREATE TRIGGER IF NOT EXISTS memory_index_paths_fts_au AFTER UPDATE OF path, source ON memory_index_sources
BEGIN
    DELETE FROM memory_index_paths_fts WHERE rowid = old.id;
    INSERT INTO memory_index_paths_fts (rowid, path, source) VALUES (new.id, new.path, new.source);
END;

-- clawmem: files the last sync could not read, with the reason (reported by status).
CREATE TABLE IF NOT EXISTS memory_index_skipped (
    path TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    size INTEGER,
    seen_at REAL NOT NULL
) STRICT;
"""


def chunks_fts_sql(tokenizer: str) -> str:
    tok = "trigram case_sensitive 0" if tokenizer == "trigram" else "unicode61"
    return f"""
CREATE VIRTUAL TABLE IF NOT EXISTS memory_index_chunks_fts USING fts5(
    text, id UNINDEXED, path UNINDEXED, source UNINDEXED, model UNINDEXED,
    start_line UNINDEXED, end_line UNINDEXED, tokenize = '{tok}'
);
"""


CORE_V1 = """
CREATE TABLE IF NOT EXISTS memory_entry_origins (
    entry_key TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    session_key TEXT,
    origin_class TEXT NOT NULL CHECK (origin_class IN ('owner', 'agent', 'untrusted', 'system')),
    observed_at INTEGER NOT NULL,
    PRIMARY KEY (entry_key, agent_id, session_id)
) STRICT;
CREATE INDEX IF NOT EXISTS memory_entry_origins_session ON memory_entry_origins (session_id);

CREATE TABLE IF NOT EXISTS memory_session_tombstones (
    session_id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

-- The short-term recall store (docs/memory-core.md §5), in SQLite like newer OpenClaw builds. query_hashes holds
-- every query (interactive and synthetic ingestion keys); user_query_hashes only interactive ones,
-- which alone count toward minUniqueQueries. The light/REM columns are the phase signals.
CREATE TABLE IF NOT EXISTS memory_short_term_recall (
    entry_key TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    snippet TEXT NOT NULL,
    claim_hash TEXT NOT NULL,
    recall_count INTEGER NOT NULL DEFAULT 0,
    daily_count INTEGER NOT NULL DEFAULT 0,
    grounded_count INTEGER NOT NULL DEFAULT 0,
    total_score REAL NOT NULL DEFAULT 0,
    max_score REAL NOT NULL DEFAULT 0,
    query_hashes TEXT NOT NULL DEFAULT '[]',
    user_query_hashes TEXT NOT NULL DEFAULT '[]',
    recall_days TEXT NOT NULL DEFAULT '[]',
    concept_tags TEXT NOT NULL DEFAULT '[]',
    origin_class TEXT NOT NULL DEFAULT 'agent'
        CHECK (origin_class IN ('owner', 'agent', 'untrusted', 'system')),
    session_kind TEXT NOT NULL DEFAULT 'unknown'
        CHECK (session_kind IN ('interactive', 'cron', 'heartbeat', 'subagent', 'unknown')),
    project_key TEXT,
    first_recalled_at INTEGER,
    last_recalled_at INTEGER,
    last_query_day TEXT,
    promoted_at INTEGER,
    light_hits INTEGER NOT NULL DEFAULT 0,
    rem_hits INTEGER NOT NULL DEFAULT 0,
    last_light_at INTEGER,
    last_rem_at INTEGER,
    last_rem_considered_at INTEGER,
    updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS memory_short_term_recall_path ON memory_short_term_recall (path);
CREATE INDEX IF NOT EXISTS memory_short_term_recall_claim ON memory_short_term_recall (claim_hash);
-- One row per (entry, query hash, day): the same query on the same day counts once.
CREATE TABLE IF NOT EXISTS memory_short_term_recall_events (
    entry_key TEXT NOT NULL REFERENCES memory_short_term_recall (entry_key) ON DELETE CASCADE,
    query_hash TEXT NOT NULL,
    day TEXT NOT NULL,
    score REAL NOT NULL,
    interactive INTEGER NOT NULL DEFAULT 1,
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (entry_key, query_hash, day)
) STRICT;
"""


def _index_v2(conn: apsw.Connection) -> None:
    """The CJK bigram index beside the trigram FTS table (see engine/store/cjk_index.py)."""
    from clawmem.engine.store import cjk_index

    conn.execute(cjk_index.create_sql())
    if fts_tokenizer_in_use(conn) is not None:
        cjk_index.rebuild_from_fts(conn)


# Row counts kept by the triggers that already bump the revision, and an index on the sources'
# source column. Every search needs the chunk count (coverage, the IDF weights) and whether other
# sources exist: a COUNT(*) reads a whole index (5 ms at 100k chunks, several times per search)
# and ``source NOT IN (…)`` scanned every file row; now one row read and a few index seeks.
INDEX_V3 = """
UPDATE memory_index_state SET
    chunks = (SELECT COUNT(*) FROM memory_index_chunks),
    sources = (SELECT COUNT(*) FROM memory_index_sources)
WHERE id = 1;
DROP TRIGGER IF EXISTS memory_index_sources_rev_ins;
DROP TRIGGER IF EXISTS memory_index_sources_rev_del;
DROP TRIGGER IF EXISTS memory_index_chunks_rev_ins;
DROP TRIGGER IF EXISTS memory_index_chunks_rev_del;
CREATE TRIGGER memory_index_sources_rev_ins AFTER INSERT ON memory_index_sources
BEGIN UPDATE memory_index_state SET revision = revision + 1, sources = sources + 1 WHERE id = 1; END;
CREATE TRIGGER memory_index_sources_rev_del AFTER DELETE ON memory_index_sources
BEGIN UPDATE memory_index_state SET revision = revision + 1, sources = sources - 1 WHERE id = 1; END;
CREATE TRIGGER memory_index_chunks_rev_ins AFTER INSERT ON memory_index_chunks
BEGIN UPDATE memory_index_state SET revision = revision + 1, chunks = chunks + 1 WHERE id = 1; END;
CREATE TRIGGER memory_index_chunks_rev_del AFTER DELETE ON memory_index_chunks
BEGIN UPDATE memory_index_state SET revision = revision + 1, chunks = chunks - 1 WHERE id = 1; END;
CREATE INDEX IF NOT EXISTS memory_index_sources_source ON memory_index_sources (source);
"""


def _index_v3(conn: apsw.Connection) -> None:
    columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(memory_index_state)")}
    for column in ("chunks", "sources"):
        if column not in columns:
            conn.execute(f"ALTER TABLE memory_index_state ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0")
    conn.execute(INDEX_V3)


def _index_v4(conn: apsw.Connection) -> None:
    """The word index beside the trigram FTS table (see engine/store/word_index.py)."""
    from clawmem.engine.store import word_index

    conn.execute(word_index.create_sql())
    if fts_tokenizer_in_use(conn) is not None:
        word_index.rebuild_from_fts(conn)


def _index_v5(conn: apsw.Connection) -> None:
    """Line vectors beside the chunk vectors (see engine/store/line_vector_rows.py)."""
    from clawmem.engine.store import line_vector_rows

    conn.execute(line_vector_rows.CREATE_SQL)


def _index_v6(conn: apsw.Connection) -> None:
    """A key per line beside the line vectors, so an edited chunk's unchanged lines are reused."""
    from clawmem.engine.store import line_vector_rows

    columns = {str(r[1]) for r in conn.execute(f"PRAGMA table_info({line_vector_rows.TABLE})")}
    if "line_keys" not in columns:
        conn.execute(line_vector_rows.ADD_KEYS_SQL)


# Component name -> ordered migrations (index i brings the component to version i + 1).
# Feature modules append their own component here; never reorder or edit a shipped entry.
COMPONENTS: dict[str, Sequence[Migration]] = {
    "index": (_sql(INDEX_V1), _index_v2, _index_v3, _index_v4, _index_v5, _index_v6),
    "core": (_sql(CORE_V1),),
}

DERIVED_TABLES = (
    "memory_index_line_vectors",
    "memory_index_chunks_vec",
    "memory_index_chunks_cjk",
    "memory_index_chunks_words",
    "memory_index_chunks_fts",
    "memory_index_paths_fts",
    "memory_index_chunk_recall_metadata",
    "memory_index_chunk_provenance",
    "memory_index_chunks",
    "memory_index_sources",
    "memory_index_meta",
    "memory_embedding_cache",
    "memory_index_state",
    "memory_index_skipped",
)


def register_component(name: str, migrations: Sequence[Migration]) -> None:
    """Let a feature module (sessions, intents, dreaming …) own its tables."""
    COMPONENTS[name] = migrations


SCHEMA_USER_VERSION = 1


def _versions(conn: apsw.Connection) -> dict[str, int] | None:
    """Each component's applied version (None: ``clawmem_schema`` does not exist yet). Reads only."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'clawmem_schema'")
    if next(iter(found), None) is None:
        return None
    return {str(name): int(version) for name, version in conn.execute("SELECT component, version FROM clawmem_schema")}


def pending_components(conn: apsw.Connection, *, components: Sequence[str] | None = None) -> list[str]:
    """Components whose migrations are behind (empty: the database is up to date). Reads only."""
    _load_feature_schemas()
    versions = _versions(conn) or {}
    return [
        name
        for name, migrations in COMPONENTS.items()
        if (components is None or name in components) and versions.get(name, 0) < len(migrations)
    ]


def ensure_schema(conn: apsw.Connection, *, components: Sequence[str] | None = None) -> None:
    """Bring every component up to date, each migration in its own write transaction.

    An up-to-date database is only read: opening one must not need the write lock (another
    process may hold it) and must not change the files (``forget --dry-run`` writes nothing).
    Each migration takes the lock (``BEGIN IMMEDIATE``) and re-reads the version inside it, so
    two processes opening a new database at once never apply a migration twice.
    """
    pending = pending_components(conn, components=components)
    user_version = next(iter(conn.execute("PRAGMA user_version")))[0]
    if not pending and user_version == SCHEMA_USER_VERSION:
        return
    if _versions(conn) is None:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS clawmem_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL) STRICT"
        )
    applied = _versions(conn) or {}
    for name in pending:
        migrations = COMPONENTS[name]
        for index in range(applied.get(name, 0), len(migrations)):
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = next(iter(conn.execute("SELECT version FROM clawmem_schema WHERE component = ?", (name,))), None)
                if (row[0] if row else 0) <= index:
                    migrations[index](conn)
                    conn.execute(
                        "INSERT INTO clawmem_schema (component, version) VALUES (?, ?) "
                        "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                        (name, index + 1),
                    )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
    if user_version != SCHEMA_USER_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_USER_VERSION}")


def ensure_chunks_fts(conn: apsw.Connection, tokenizer: str) -> None:
    conn.execute(chunks_fts_sql(tokenizer))


def fts_tokenizer_in_use(conn: apsw.Connection) -> str | None:
    row = next(iter(conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_index_chunks_fts'")), None)
    if row is None:
        return None
    return "trigram" if "trigram" in row[0] else "unicode61"


def vec_table_dims(conn: apsw.Connection) -> int | None:
    row = next(iter(conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_index_chunks_vec'")), None)
    if row is None:
        return None
    import re

    m = re.search(r"float\[(\d+)\]", row[0], re.IGNORECASE)
    return int(m.group(1)) if m else None


def ensure_vec_table(conn: apsw.Connection, dims: int) -> None:
    """Create the sqlite-vec table for ``dims``; recreate it when the dimension changed."""
    current = vec_table_dims(conn)
    if current == dims:
        return
    if current is not None:
        conn.execute("DROP TABLE memory_index_chunks_vec")
    conn.execute(
        f"CREATE VIRTUAL TABLE memory_index_chunks_vec USING vec0("
        f"id TEXT PRIMARY KEY, embedding float[{int(dims)}] distance_metric=cosine)"
    )


def drop_derived(conn: apsw.Connection) -> None:
    """Drop every derived table (``reset``); origins, sessions, intents … survive."""
    with immediate(conn):
        for trig in [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]:
            if trig.startswith(("memory_index_", "memory_embedding_")):
                conn.execute(f'DROP TRIGGER IF EXISTS "{trig}"')
        for table in DERIVED_TABLES:
            conn.execute(f'DROP TABLE IF EXISTS "{table}"')
        conn.execute("DELETE FROM clawmem_schema WHERE component = 'index'")


_FEATURES_LOADED = False


def _load_feature_schemas() -> None:
    """Import feature schema modules so they register their components (once)."""
    global _FEATURES_LOADED
    if _FEATURES_LOADED:
        return
    _FEATURES_LOADED = True
    import importlib
    import pkgutil

    from clawmem.engine import store as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.endswith("_schema"):
            importlib.import_module(f"{pkg.__name__}.{info.name}")
