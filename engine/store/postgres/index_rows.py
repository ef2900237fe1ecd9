"""The derived index's rows on PostgreSQL: one file's sync, the rebuild's publish, and the two
legs a search reads (full text and nearest vectors).

Every change is one transaction, and writers of one index take turns on its state row. A
publish replaces the whole index in one: other processes go on reading the previous index until
the commit (PostgreSQL's snapshots), and a rebuild that is killed, or loses its connection, is
rolled back by the server, so the old index keeps serving.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from clawmem.engine.store.postgres.fulltext import all_terms_query, any_term_query, document_terms, term_query
from clawmem.engine.store.postgres.schema import vector_dims

BATCH = 500  # rows per executemany: a progress step, and what a cancel waits for at most


@dataclass(frozen=True)
class SourceRow:
    path: str
    source: str
    hash: str
    mtime: float
    size: int


@dataclass(frozen=True)
class ChunkRow:
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    hash: str
    model: str
    text: str
    updated_at: float


def vector_text(vector: np.ndarray) -> str:
    """A vector as pgvector's text form, ``[x,y,…]``."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


def insert_chunks(conn: Any, chunks: Sequence[ChunkRow], progress: Callable[[int], None] | None = None) -> None:
    """Insert chunk rows with their full-text terms (in the caller's transaction)."""
    sql = (
        "INSERT INTO memory_index_chunks (id, path, source, start_line, end_line, hash, model, text, terms, "
        "updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, to_tsvector('simple', %s), %s)"
    )
    with conn.cursor() as cur:
        for start in range(0, len(chunks), BATCH):
            part = chunks[start : start + BATCH]
            cur.executemany(
                sql,
                [
                    (
                        c.id,
                        c.path,
                        c.source,
                        c.start_line,
                        c.end_line,
                        c.hash,
                        c.model,
                        c.text,
                        document_terms(c.text),
                        c.updated_at,
                    )
                    for c in part
                ],
            )
            if progress:
                progress(start + len(part))


def insert_vectors(conn: Any, vectors: Mapping[str, np.ndarray]) -> None:
    """Set chunk vectors, row by row into the HNSW index (in the caller's transaction)."""
    items = list(vectors.items())
    with conn.cursor() as cur:
        for start in range(0, len(items), BATCH):
            part = items[start : start + BATCH]
            cur.executemany(
                "INSERT INTO memory_index_chunks_vec (id, embedding) VALUES (%s, %s::vector) "
                "ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding",
                [(cid, vector_text(v)) for cid, v in part],
            )
            cur.executemany("UPDATE memory_index_chunks SET embedded = TRUE WHERE id = %s", [(cid,) for cid, _ in part])


def take_state(conn: Any) -> None:
    """Lock the index's state row for this transaction: writers of one index (on any machine)
    take turns, and each one's counts see what the one before committed."""
    conn.execute("SELECT revision FROM memory_index_state WHERE id = 1 FOR UPDATE")


def bump(conn: Any) -> None:
    """A new revision with the counts of now (searches' caches key on it)."""
    conn.execute(
        "UPDATE memory_index_state SET revision = revision + 1, "
        "chunks = (SELECT count(*) FROM memory_index_chunks), "
        "sources = (SELECT count(*) FROM memory_index_sources), "
        "vectors = (SELECT count(*) FROM memory_index_chunks WHERE embedded) WHERE id = 1"
    )


def publish(
    conn: Any,
    sources: Sequence[SourceRow],
    chunks: Sequence[ChunkRow],
    vectors: Mapping[str, np.ndarray],
    *,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Replace every file, chunk and chunk vector in one transaction; the new revision.
    ``progress`` is told the chunks written so far (the rebuild's bar).

    The vectors go into a table of their own whose HNSW index is built once over all of them
    (far faster than growing it row by row), which then takes the old table's place; searches
    wait for that swap only, at the very end, not for the rebuild."""
    try:
        take_state(conn)
        fill(conn, sources, chunks, vectors, progress=progress)
        bump(conn)
        (rev,) = conn.execute("SELECT revision FROM memory_index_state WHERE id = 1").fetchone()
    except BaseException:
        conn.rollback()
        raise
    conn.commit()
    return int(rev)


def fill(
    conn: Any,
    sources: Sequence[SourceRow],
    chunks: Sequence[ChunkRow],
    vectors: Mapping[str, np.ndarray],
    *,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Every file, chunk and vector in place of what the index held, in the caller's
    transaction (which holds the state row): :func:`publish`'s work, and a first mirror's."""
    dims = vector_dims(conn)
    conn.execute("DELETE FROM memory_index_chunks")  # provenance, metadata, vectors: ON DELETE CASCADE
    conn.execute("DELETE FROM memory_index_sources")
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO memory_index_sources (path, source, hash, mtime, size, terms) "
            "VALUES (%s, %s, %s, %s, %s, to_tsvector('simple', %s))",
            [(s.path, s.source, s.hash, s.mtime, s.size, document_terms(s.path)) for s in sources],
        )
    insert_chunks(conn, chunks, progress)
    if dims is not None:
        _swap_in_vectors(conn, dims, vectors)


def upsert_source(conn: Any, source: SourceRow) -> None:
    """One file's row, new or with its new hash (in the caller's transaction)."""
    conn.execute(
        "INSERT INTO memory_index_sources (path, source, hash, mtime, size, terms) "
        "VALUES (%s, %s, %s, %s, %s, to_tsvector('simple', %s)) "
        "ON CONFLICT (path, source) DO UPDATE SET hash = excluded.hash, mtime = excluded.mtime, "
        "size = excluded.size, terms = excluded.terms",
        (source.path, source.source, source.hash, source.mtime, source.size, document_terms(source.path)),
    )


def count_vectors(conn: Any) -> None:
    """The state row's count of chunks with a vector, after vectors alone changed (in the caller's
    transaction; :func:`bump` counts them too)."""
    conn.execute(
        "UPDATE memory_index_state SET vectors = (SELECT count(*) FROM memory_index_chunks WHERE embedded) WHERE id = 1"
    )


def set_meta(conn: Any, key: str, value: str) -> None:
    """One index meta value (in the caller's transaction)."""
    conn.execute(
        "INSERT INTO memory_index_meta (key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def meta_for_update(conn: Any, key: str) -> str | None:
    """One index meta value, its row locked for the caller's transaction (created empty if it was
    not there: two machines merging into one value take turns)."""
    conn.execute("INSERT INTO memory_index_meta (key, value) VALUES (%s, '') ON CONFLICT (key) DO NOTHING", (key,))
    row = conn.execute("SELECT value FROM memory_index_meta WHERE key = %s FOR UPDATE", (key,)).fetchone()
    return None if row is None else str(row[0])


def pop_meta(conn: Any, key: str) -> str | None:
    """One index meta value, deleted as it is read (one statement: nothing to write when the key
    is not there), in the caller's transaction."""
    row = conn.execute("DELETE FROM memory_index_meta WHERE key = %s RETURNING value", (key,)).fetchone()
    return None if row is None else str(row[0])


def _swap_in_vectors(conn: Any, dims: int, vectors: Mapping[str, np.ndarray]) -> None:
    conn.execute("DROP TABLE IF EXISTS memory_index_chunks_vec_next")
    conn.execute(
        "CREATE TABLE memory_index_chunks_vec_next ("
        "id TEXT PRIMARY KEY REFERENCES memory_index_chunks (id) ON DELETE CASCADE, "
        f"embedding vector({dims}) NOT NULL)"
    )
    with conn.cursor() as cur, cur.copy("COPY memory_index_chunks_vec_next (id, embedding) FROM STDIN") as copy:
        for cid, vector in vectors.items():
            copy.write_row((cid, vector_text(vector)))
    conn.execute(
        "CREATE INDEX memory_index_chunks_vec_next_hnsw ON memory_index_chunks_vec_next "
        "USING hnsw (embedding vector_cosine_ops)"
    )
    conn.execute(
        "UPDATE memory_index_chunks SET embedded = TRUE WHERE id IN (SELECT id FROM memory_index_chunks_vec_next)"
    )
    conn.execute("DROP TABLE memory_index_chunks_vec")
    conn.execute("ALTER TABLE memory_index_chunks_vec_next RENAME TO memory_index_chunks_vec")
    conn.execute("ALTER INDEX memory_index_chunks_vec_next_hnsw RENAME TO memory_index_chunks_vec_hnsw")
    conn.execute("ALTER INDEX memory_index_chunks_vec_next_pkey RENAME TO memory_index_chunks_vec_pkey")


def replace_file(conn: Any, source: SourceRow, chunks: Sequence[ChunkRow], vectors: Mapping[str, np.ndarray]) -> None:
    """One file's new text (its chunks and the vectors already known), in one transaction."""
    try:
        take_state(conn)
        conn.execute("DELETE FROM memory_index_chunks WHERE path = %s AND source = %s", (source.path, source.source))
        upsert_source(conn, source)
        insert_chunks(conn, chunks, None)
        insert_vectors(conn, vectors)
        bump(conn)
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def vector_blob(binary: bytes) -> bytes:
    """pgvector's binary form (int16 dims, int16 unused, big-endian float4s) as clawmem's float32 blob."""
    return np.frombuffer(binary, dtype=">f4", offset=4).astype(np.float32).tobytes()


def revision(conn: Any) -> int:
    (rev,) = conn.execute("SELECT revision FROM memory_index_state WHERE id = 1").fetchone()
    conn.rollback()
    return int(rev)


COMMON_ROWS = 2_000  # a term held by more chunks than this finds no candidates of its own


def keyword_hits(conn: Any, terms: list[str], limit: int, *, match_all: bool = True) -> list[tuple[str, float]]:
    """(chunk id, ts_rank_cd) of the chunks holding every term (``match_all``) or any term, best
    first. PostgreSQL's rank, not BM25 (engine/store/postgres/fulltext.py).

    Any term: ranking every chunk that holds a common word reads tens of thousands of tsvectors
    (0.35 s p95 at 100k chunks), so candidates come from the rare terms only — those held by at
    most COMMON_ROWS chunks, counted through the GIN index with that cap — and are ranked by the
    whole query, as the SQLite leg ranks through its rarest term. With no rare term, the chunks
    holding every term are the candidates."""
    query = all_terms_query(terms) if match_all else any_term_query(terms)
    candidates = query
    if not match_all:
        rare = [t for t in terms if (q := term_query(t)) is not None and _holders(conn, q) <= COMMON_ROWS]
        candidates = any_term_query(rare) if rare else all_terms_query(terms)
    if query is None or candidates is None:
        conn.rollback()
        return []
    rows = conn.execute(
        "SELECT id, ts_rank_cd(terms, q) AS rank FROM memory_index_chunks, to_tsquery('simple', %s) q, "
        "to_tsquery('simple', %s) c WHERE terms @@ c ORDER BY rank DESC, id LIMIT %s",
        (query, candidates, limit),
    ).fetchall()
    conn.rollback()
    return [(str(cid), float(rank)) for cid, rank in rows]


def _holders(conn: Any, query: str) -> int:
    """Chunks holding ``query``, counted up to COMMON_ROWS + 1."""
    (n,) = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM memory_index_chunks WHERE terms @@ to_tsquery('simple', %s) LIMIT %s) x",
        (query, COMMON_ROWS + 1),
    ).fetchone()
    return int(n)


def vector_hits(conn: Any, vector: np.ndarray, limit: int, *, ef_search: int = 400) -> list[tuple[str, float]]:
    """(chunk id, cosine) of the nearest chunk vectors through the HNSW index, best first.
    ``ef_search`` is the HNSW candidate list: at 100k chunks 40 (pgvector's default) found 0.85 of
    the exact top 10, 100 found 0.92, 400 all of them at 11.5 ms p50 (bench/RESULTS.md §3b)."""
    conn.execute(f"SET LOCAL hnsw.ef_search = {max(int(ef_search), int(limit))}")
    rows = conn.execute(
        "SELECT id, 1 - (embedding <=> %s::vector) AS cosine FROM memory_index_chunks_vec "
        "ORDER BY embedding <=> %s::vector LIMIT %s",
        (vector_text(vector), vector_text(vector), limit),
    ).fetchall()
    conn.rollback()
    return [(str(cid), float(cos)) for cid, cos in rows]
