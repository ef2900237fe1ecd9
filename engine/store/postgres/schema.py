"""The derived index's tables on PostgreSQL, in a schema of their own, with versioned migrations.

The same tables and columns as the SQLite index (engine/store/schema.py) where PostgreSQL has
the type, and PostgreSQL's own tools where SQLite used a virtual table:

- full text: a ``tsvector`` column per chunk (``terms``) with a GIN index, filled with the
  ``simple`` configuration from the tokens clawmem already makes (engine/search/tokens.py: words,
  and CJK runs as bigrams, since the bundled server has no ``pg_trgm``);
- vectors: ``memory_index_chunks_vec`` (``vector(dims)``, created once the model's dimensions
  are known) with an HNSW index on cosine distance, like the ``vec0`` table beside SQLite;
- line vectors and the embedding cache, from which a machine takes what another one embedded
  (engine/store/postgres/mirror.py);
- the recall journal: every machine's searches' recall observations, which each machine replays
  into its own recall store (engine/store/postgres/recall_journal.py).

Every clawmem process that names the same database and schema shares one index; a schema name
is one index (``clawmem`` unless ``store.schema`` says otherwise). Sessions, intents and
Dreaming state stay in each machine's SQLite. Migrations run under a transaction-
level advisory lock, so two processes starting at once do not race to create the tables.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from clawmem.engine.errors import ClawmemError

DEFAULT_SCHEMA = "clawmem"
_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_MIGRATION_LOCK = 0x636C61776D656D  # "clawmem": one advisory key for schema changes

INDEX_V1 = """
CREATE TABLE IF NOT EXISTS memory_index_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_index_sources (
    id BIGSERIAL PRIMARY KEY,
    path TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'memory',
    hash TEXT NOT NULL,
    mtime DOUBLE PRECISION NOT NULL,
    size BIGINT NOT NULL,
    UNIQUE (path, source)
);
CREATE TABLE IF NOT EXISTS memory_index_chunks (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'memory',
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    hash TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    terms TSVECTOR NOT NULL,
    embedded BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_index_chunks_path ON memory_index_chunks (path, source);
CREATE INDEX IF NOT EXISTS memory_index_chunks_hash ON memory_index_chunks (hash);
CREATE INDEX IF NOT EXISTS memory_index_chunks_pending ON memory_index_chunks (path) WHERE NOT embedded;
CREATE INDEX IF NOT EXISTS memory_index_chunks_terms ON memory_index_chunks USING gin (terms);
CREATE TABLE IF NOT EXISTS memory_index_chunk_provenance (
    chunk_id TEXT PRIMARY KEY REFERENCES memory_index_chunks (id) ON DELETE CASCADE,
    origin_class TEXT NOT NULL CHECK (origin_class IN ('owner', 'agent', 'untrusted', 'system')),
    session_kind TEXT NOT NULL DEFAULT 'unknown'
        CHECK (session_kind IN ('interactive', 'cron', 'heartbeat', 'subagent', 'unknown')),
    observed_at BIGINT NOT NULL,
    supersedes_key TEXT
);
CREATE TABLE IF NOT EXISTS memory_index_chunk_recall_metadata (
    chunk_id TEXT PRIMARY KEY REFERENCES memory_index_chunks (id) ON DELETE CASCADE,
    importance INTEGER CHECK (importance IS NULL OR importance BETWEEN 1 AND 10),
    triggers TEXT,
    project_key TEXT
);
CREATE TABLE IF NOT EXISTS memory_embedding_cache (
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    provider_key TEXT NOT NULL,
    hash TEXT NOT NULL,
    embedding BYTEA NOT NULL,
    dims INTEGER NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (provider, model, provider_key, hash)
);
CREATE INDEX IF NOT EXISTS memory_embedding_cache_updated ON memory_embedding_cache (updated_at);
CREATE TABLE IF NOT EXISTS memory_index_line_vectors (
    hash TEXT NOT NULL,
    provider_key TEXT NOT NULL,
    vectors BYTEA NOT NULL,
    line_keys BYTEA NOT NULL DEFAULT '\\x',
    PRIMARY KEY (hash, provider_key)
);
CREATE TABLE IF NOT EXISTS memory_index_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    revision BIGINT NOT NULL,
    chunks BIGINT NOT NULL DEFAULT 0,
    sources BIGINT NOT NULL DEFAULT 0
);
INSERT INTO memory_index_state (id, revision) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
CREATE TABLE IF NOT EXISTS memory_index_skipped (
    path TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    size BIGINT,
    seen_at DOUBLE PRECISION NOT NULL
);
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
    total_score DOUBLE PRECISION NOT NULL DEFAULT 0,
    max_score DOUBLE PRECISION NOT NULL DEFAULT 0,
    query_hashes TEXT NOT NULL DEFAULT '[]',
    user_query_hashes TEXT NOT NULL DEFAULT '[]',
    recall_days TEXT NOT NULL DEFAULT '[]',
    concept_tags TEXT NOT NULL DEFAULT '[]',
    origin_class TEXT NOT NULL DEFAULT 'agent'
        CHECK (origin_class IN ('owner', 'agent', 'untrusted', 'system')),
    session_kind TEXT NOT NULL DEFAULT 'unknown'
        CHECK (session_kind IN ('interactive', 'cron', 'heartbeat', 'subagent', 'unknown')),
    project_key TEXT,
    first_recalled_at BIGINT,
    last_recalled_at BIGINT,
    last_query_day TEXT,
    promoted_at BIGINT,
    light_hits INTEGER NOT NULL DEFAULT 0,
    rem_hits INTEGER NOT NULL DEFAULT 0,
    last_light_at BIGINT,
    last_rem_at BIGINT,
    last_rem_considered_at BIGINT,
    updated_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_short_term_recall_path ON memory_short_term_recall (path);
CREATE INDEX IF NOT EXISTS memory_short_term_recall_claim ON memory_short_term_recall (claim_hash);
CREATE TABLE IF NOT EXISTS memory_short_term_recall_events (
    entry_key TEXT NOT NULL REFERENCES memory_short_term_recall (entry_key) ON DELETE CASCADE,
    query_hash TEXT NOT NULL,
    day TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    interactive INTEGER NOT NULL DEFAULT 1,
    recorded_at BIGINT NOT NULL,
    PRIMARY KEY (entry_key, query_hash, day)
);
"""

# V2: a sequence number per chunk, the key the in-memory vector matrix and the calibration
# background page by (SQLite pages by rowid; engine/store/postgres/search_reader.py).
INDEX_V2 = """
ALTER TABLE memory_index_chunks ADD COLUMN IF NOT EXISTS seq BIGSERIAL;
CREATE INDEX IF NOT EXISTS memory_index_chunks_seq ON memory_index_chunks (seq);
"""

# V3: the number of chunks with a vector kept in the state row, as the chunks and files are: a
# search asks for it (coverage, the matrix's and the background's cache keys), and counting 100k
# rows took 80 ms each time; and each file's path as full-text terms with a GIN index, for the
# path leg, which scanned every file with LIKE (10 ms a probe at 100k; bench/RESULTS.md §3b).
# Paths indexed before V3 get their words split on anything not a letter or digit here (a CJK run
# stays one term until a publish writes the file again with clawmem's own terms, fulltext.py).
INDEX_V3 = """
ALTER TABLE memory_index_state ADD COLUMN IF NOT EXISTS vectors BIGINT NOT NULL DEFAULT 0;
UPDATE memory_index_state SET vectors = (SELECT count(*) FROM memory_index_chunks WHERE embedded) WHERE id = 1;
ALTER TABLE memory_index_sources ADD COLUMN IF NOT EXISTS terms TSVECTOR;
UPDATE memory_index_sources SET terms = to_tsvector('simple', regexp_replace(lower(path), '[^[:alnum:]]+', ' ', 'g'))
    WHERE terms IS NULL;
CREATE INDEX IF NOT EXISTS memory_index_sources_terms ON memory_index_sources USING gin (terms);
"""

# V4: the recall signals as a journal every machine appends its searches' observations to and
# replays the others' from (engine/store/postgres/recall_journal.py): Dreaming's state stays in
# each machine's SQLite, so the recall rows it updates in the same transactions stay there too,
# fed from every machine; and forgets, of recall entries and of texts whose vectors every
# machine drops. The V1 recall tables, which no clawmem ever filled, go.
INDEX_V4 = """
DROP TABLE IF EXISTS memory_short_term_recall_events;
DROP TABLE IF EXISTS memory_short_term_recall;
CREATE TABLE IF NOT EXISTS memory_recall_journal (
    id BIGSERIAL PRIMARY KEY,
    machine TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('recall', 'forget', 'forget-text')),
    entry_key TEXT NOT NULL,
    recorded_at BIGINT NOT NULL,
    body JSONB NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS memory_recall_journal_entry ON memory_recall_journal (entry_key);
"""

# Ordered migrations of the one component kept on PostgreSQL; never reorder or edit a shipped one.
MIGRATIONS: Sequence[str] = (INDEX_V1, INDEX_V2, INDEX_V3, INDEX_V4)

# What ``reset`` empties (the recall journal is not derived and stays, as the recall store does in SQLite).
DERIVED_TABLES = (
    "memory_index_chunks_vec",
    "memory_index_line_vectors",
    "memory_index_chunk_recall_metadata",
    "memory_index_chunk_provenance",
    "memory_index_chunks",
    "memory_index_sources",
    "memory_index_meta",
    "memory_embedding_cache",
    "memory_index_skipped",
)


def check_name(schema: str) -> str:
    """A PostgreSQL schema name clawmem may create and quote safely, or a one-line error."""
    if not _NAME.match(schema):
        raise ClawmemError(
            f"store.schema must be a lower-case name of letters, digits and _ (at most 63), not {schema!r}"
        )
    return schema


def ensure_schema(conn: Any, schema: str = DEFAULT_SCHEMA) -> int:
    """Create or upgrade the index tables in ``schema`` (committed); returns the version now.
    Leaves the connection's ``search_path`` on that schema (then ``public``, for pgvector)."""
    check_name(schema)
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
    conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    use_schema(conn, schema, local=True)
    conn.execute("CREATE TABLE IF NOT EXISTS clawmem_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
    row = conn.execute("SELECT version FROM clawmem_schema WHERE component = 'index'").fetchone()
    version = int(row[0]) if row else 0
    if version > len(MIGRATIONS):
        conn.rollback()
        raise ClawmemError(
            f"the PostgreSQL index in schema {schema!r} was made by a newer clawmem (version {version}); "
            "upgrade clawmem or name another store.schema"
        )
    for i in range(version, len(MIGRATIONS)):
        conn.execute(MIGRATIONS[i])
    conn.execute(
        "INSERT INTO clawmem_schema (component, version) VALUES ('index', %s) "
        "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
        (len(MIGRATIONS),),
    )
    conn.commit()
    use_schema(conn, schema)
    return len(MIGRATIONS)


def use_schema(conn: Any, schema: str, *, local: bool = False) -> None:
    """Point unqualified table names at ``schema`` (``public`` after it holds pgvector's type)."""
    conn.execute(f'SET {"LOCAL " if local else ""}search_path TO "{check_name(schema)}", public')
    if not local:
        conn.commit()


def vector_dims(conn: Any) -> int | None:
    """Dimensions of the chunk vectors' table in the current schema; None when there is none."""
    row = conn.execute(
        "SELECT a.atttypmod FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
        "AND c.relname = 'memory_index_chunks_vec' AND a.attname = 'embedding'"
    ).fetchone()
    return int(row[0]) if row is not None else None


def ensure_vec_table(conn: Any, dims: int) -> None:
    """The chunk vectors' table for ``dims`` dimensions with its HNSW cosine index (committed).
    A table of other dimensions (another model) is dropped: its vectors cannot be compared."""
    if not 0 < dims <= 2000:  # pgvector's HNSW limit for vector columns
        raise ClawmemError(f"pgvector's HNSW index takes at most 2,000 dimensions; the model has {dims}")
    current = vector_dims(conn)
    if current is not None and current != dims:
        conn.execute("DROP TABLE memory_index_chunks_vec")
        conn.execute("UPDATE memory_index_chunks SET embedded = FALSE")
        conn.execute("UPDATE memory_index_state SET vectors = 0 WHERE id = 1")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS memory_index_chunks_vec ("
        "id TEXT PRIMARY KEY REFERENCES memory_index_chunks (id) ON DELETE CASCADE, "
        f"embedding vector({dims}) NOT NULL)"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS memory_index_chunks_vec_hnsw ON memory_index_chunks_vec "
        "USING hnsw (embedding vector_cosine_ops)"
    )
    conn.commit()


def tables(conn: Any) -> list[str]:
    """The tables of the current schema, sorted (status and tests)."""
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
    ).fetchall()
    conn.rollback()
    return [str(r[0]) for r in rows]
