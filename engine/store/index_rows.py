"""SQL for the derived index: sources, chunks, FTS rows, vectors, the embedding cache, meta."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np
from clawmem.engine.store import cjk_index, word_index
from clawmem.engine.store.schema import vec_table_dims


def vec_to_blob(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype="<f4").tobytes()


def blob_to_vec(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")


# ----------------------------------------------------------------- meta and state


def get_meta(conn: apsw.Connection, key: str) -> str | None:
    row = next(iter(conn.execute("SELECT value FROM memory_index_meta WHERE key = ?", (key,))), None)
    return None if row is None else str(row[0])


def set_meta(conn: apsw.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO memory_index_meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def delete_meta(conn: apsw.Connection, key: str) -> None:
    conn.execute("DELETE FROM memory_index_meta WHERE key = ?", (key,))


@dataclass(frozen=True)
class IndexState:
    """The derived index's change counter and row counts, kept by triggers (schema INDEX_V3)."""

    revision: int  # bumped by every source or chunk insert/delete and every source hash change
    chunks: int
    sources: int


def state(conn: apsw.Connection) -> IndexState:
    """One row read; the counts never need a COUNT(*) over the tables."""
    row = next(iter(conn.execute("SELECT revision, chunks, sources FROM memory_index_state WHERE id = 1")), None)
    return IndexState(int(row[0]), int(row[1]), int(row[2])) if row else IndexState(0, 0, 0)


def revision(conn: apsw.Connection) -> int:
    return state(conn).revision


# ----------------------------------------------------------------- sources


@dataclass(frozen=True)
class SourceRow:
    id: int
    path: str
    source: str
    hash: str
    mtime: float
    size: int


def sources(conn: apsw.Connection, source: str = "memory") -> dict[str, SourceRow]:
    return {
        r[1]: SourceRow(*r)
        for r in conn.execute(
            "SELECT id, path, source, hash, mtime, size FROM memory_index_sources WHERE source = ?",
            (source,),
        )
    }


def upsert_source(conn: apsw.Connection, path: str, source: str, hash_: str, mtime: float, size: int) -> None:
    conn.execute(
        "INSERT INTO memory_index_sources (path, source, hash, mtime, size) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (path, source) DO UPDATE SET hash = excluded.hash, mtime = excluded.mtime, "
        "size = excluded.size",
        (path, source, hash_, mtime, size),
    )


def touch_source(conn: apsw.Connection, path: str, source: str, mtime: float, size: int) -> None:
    conn.execute(
        "UPDATE memory_index_sources SET mtime = ?, size = ? WHERE path = ? AND source = ?",
        (mtime, size, path, source),
    )


def delete_source(conn: apsw.Connection, path: str, source: str) -> None:
    delete_chunks_for_path(conn, path, source)
    conn.execute("DELETE FROM memory_index_sources WHERE path = ? AND source = ?", (path, source))


# ----------------------------------------------------------------- chunks


@dataclass(frozen=True)
class NewChunk:
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    hash: str
    text: str
    origin_class: str
    session_kind: str
    observed_at: int
    supersedes_key: str | None
    importance: int | None
    triggers: str | None
    project_key: str | None


def chunk_ids_for_path(conn: apsw.Connection, path: str, source: str) -> list[str]:
    return [
        r[0] for r in conn.execute("SELECT id FROM memory_index_chunks WHERE path = ? AND source = ?", (path, source))
    ]


def delete_chunks_for_path(conn: apsw.Connection, path: str, source: str) -> int:
    ids = chunk_ids_for_path(conn, path, source)
    delete_chunks(conn, ids)
    return len(ids)


# The FTS row of a chunk is stored under the chunk's rowid whenever that rowid is free (always in
# a rebuilt index), so it is found by rowid instead of scanning the FTS table for its id column:
# a scan costs ~22 ms per chunk at 10k chunks, paid for every vector attached and every chunk
# deleted. Rows of older indexes, whose rowids differ, are still found by the scan.
_FTS_BY_CHUNK_ROWID = "rowid = (SELECT rowid FROM memory_index_chunks WHERE id = ?) AND id = ?"


def _fts_set_model(conn: apsw.Connection, chunk_id: str, model: str) -> None:
    conn.execute(
        f"UPDATE memory_index_chunks_fts SET model = ? WHERE {_FTS_BY_CHUNK_ROWID}", (model, chunk_id, chunk_id)
    )
    if conn.changes() == 0:
        conn.execute("UPDATE memory_index_chunks_fts SET model = ? WHERE id = ?", (model, chunk_id))


def _fts_delete(conn: apsw.Connection, chunk_id: str) -> None:
    row = next(
        iter(
            conn.execute(f"SELECT rowid FROM memory_index_chunks_fts WHERE {_FTS_BY_CHUNK_ROWID}", (chunk_id, chunk_id))
        ),
        None,
    )
    if row is None:
        row = next(iter(conn.execute("SELECT rowid FROM memory_index_chunks_fts WHERE id = ?", (chunk_id,))), None)
    if row is not None:
        conn.execute("DELETE FROM memory_index_chunks_fts WHERE rowid = ?", (row[0],))
        cjk_index.remove(conn, row[0])
        word_index.remove(conn, row[0])


def delete_chunks(conn: apsw.Connection, ids: Sequence[str]) -> None:
    has_vec = vec_table_dims(conn) is not None
    for chunk_id in ids:
        _fts_delete(conn, chunk_id)
        if has_vec:
            conn.execute("DELETE FROM memory_index_chunks_vec WHERE id = ?", (chunk_id,))
        conn.execute("DELETE FROM memory_index_chunks WHERE id = ?", (chunk_id,))


def insert_chunks(
    conn: apsw.Connection,
    chunks: Iterable[NewChunk],
    *,
    now: float,
    embeddings: dict[str, bytes],
    model: str,
    vec: bool,
) -> int:
    """Insert chunks with FTS rows; attach embeddings known by text hash. Returns how many got one."""
    embedded = 0
    for c in chunks:
        blob = embeddings.get(c.hash)
        chunk_model = model if blob is not None else "fts-only"
        conn.execute(
            "INSERT OR REPLACE INTO memory_index_chunks "
            "(id, path, source, start_line, end_line, hash, model, text, embedding, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (c.id, c.path, c.source, c.start_line, c.end_line, c.hash, chunk_model, c.text, blob, now),
        )
        chunk_rowid = conn.last_insert_rowid()
        fts_row = (c.text, c.id, c.path, c.source, chunk_model, c.start_line, c.end_line)
        conn.execute(
            "INSERT INTO memory_index_chunks_fts (rowid, text, id, path, source, model, start_line, end_line) "
            "SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM memory_index_chunks_fts WHERE rowid = ?)",
            (chunk_rowid, *fts_row, chunk_rowid),
        )
        fts_rowid = chunk_rowid
        if conn.changes() == 0:  # an older index uses that rowid for another chunk's text
            conn.execute(
                "INSERT INTO memory_index_chunks_fts (text, id, path, source, model, start_line, end_line) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                fts_row,
            )
            fts_rowid = conn.last_insert_rowid()
        cjk_index.add(conn, fts_rowid, c.text)
        word_index.add(conn, fts_rowid, c.text)
        conn.execute(
            "INSERT OR REPLACE INTO memory_index_chunk_provenance "
            "(chunk_id, origin_class, session_kind, observed_at, supersedes_key) VALUES (?, ?, ?, ?, ?)",
            (c.id, c.origin_class, c.session_kind, c.observed_at, c.supersedes_key),
        )
        conn.execute(
            "INSERT OR REPLACE INTO memory_index_chunk_recall_metadata "
            "(chunk_id, importance, triggers, project_key) VALUES (?, ?, ?, ?)",
            (c.id, c.importance, c.triggers, c.project_key),
        )
        if blob is not None:
            embedded += 1
            if vec:
                conn.execute(
                    "INSERT OR REPLACE INTO memory_index_chunks_vec (id, embedding) VALUES (?, ?)",
                    (c.id, blob),
                )
    return embedded


@dataclass(frozen=True)
class PendingChunk:
    id: str
    path: str
    hash: str
    text: str


# The embedding passes' order of files: curated first, then dated diaries (newest first by path).
EMBED_PRIORITY = (
    "CASE WHEN path IN ('USER.md', 'MEMORY.md', 'memory.md') THEN 0 "
    "WHEN path GLOB 'memory/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' THEN 1 ELSE 2 END"
)


def pending_chunks(conn: apsw.Connection, limit: int | None = None) -> list[PendingChunk]:
    """Chunks still without a vector: curated files first, then dated diaries newest first."""
    sql = (
        "SELECT id, path, hash, text FROM memory_index_chunks WHERE embedding IS NULL "
        f"ORDER BY {EMBED_PRIORITY}, path DESC, start_line"
    )
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [PendingChunk(*r) for r in conn.execute(sql)]


def count_chunks(conn: apsw.Connection) -> tuple[int, int]:
    """(total, embedded).

    The total is the trigger-kept count; the chunks without a vector are counted through the
    partial "pending" index (COUNT(embedding) would read every vector, ~1 s at 100k chunks).
    """
    total = state(conn).chunks
    pending = int(next(iter(conn.execute("SELECT COUNT(*) FROM memory_index_chunks WHERE embedding IS NULL")))[0])
    return total, total - pending


def set_chunk_embedding(conn: apsw.Connection, hash_: str, blob: bytes, model: str, vec: bool) -> list[str]:
    """Attach one vector to every chunk with this text hash that still lacks one."""
    ids = [
        r[0] for r in conn.execute("SELECT id FROM memory_index_chunks WHERE hash = ? AND embedding IS NULL", (hash_,))
    ]
    for chunk_id in ids:
        conn.execute("UPDATE memory_index_chunks SET embedding = ?, model = ? WHERE id = ?", (blob, model, chunk_id))
        _fts_set_model(conn, chunk_id, model)
        if vec:
            conn.execute(
                "INSERT OR REPLACE INTO memory_index_chunks_vec (id, embedding) VALUES (?, ?)",
                (chunk_id, blob),
            )
    return ids


# ----------------------------------------------------------------- embedding cache


def cache_lookup(
    conn: apsw.Connection, provider: str, model: str, provider_key: str, hashes: Sequence[str], now: float
) -> dict[str, bytes]:
    """Cached vectors by text hash; hits are touched so the LRU keeps them."""
    found: dict[str, bytes] = {}
    for h in dict.fromkeys(hashes):
        row = next(
            iter(
                conn.execute(
                    "SELECT embedding FROM memory_embedding_cache "
                    "WHERE provider = ? AND model = ? AND provider_key = ? AND hash = ?",
                    (provider, model, provider_key, h),
                )
            ),
            None,
        )
        if row is not None:
            found[h] = bytes(row[0])
    if found:
        conn.executemany(
            "UPDATE memory_embedding_cache SET updated_at = ? "
            "WHERE provider = ? AND model = ? AND provider_key = ? AND hash = ?",
            [(now, provider, model, provider_key, h) for h in found],
        )
    return found


def cache_store(
    conn: apsw.Connection,
    provider: str,
    model: str,
    provider_key: str,
    hash_: str,
    blob: bytes,
    dims: int,
    now: float,
) -> None:
    conn.execute(
        "INSERT INTO memory_embedding_cache (provider, model, provider_key, hash, embedding, dims, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (provider, model, provider_key, hash) "
        "DO UPDATE SET embedding = excluded.embedding, dims = excluded.dims, updated_at = excluded.updated_at",
        (provider, model, provider_key, hash_, blob, dims, now),
    )


def cache_count(conn: apsw.Connection) -> int:
    return int(next(iter(conn.execute("SELECT COUNT(*) FROM memory_embedding_cache")))[0])


def cache_evict(conn: apsw.Connection, cap: int) -> int:
    """Drop the least recently used rows beyond ``cap``."""
    excess = cache_count(conn) - cap
    if excess <= 0:
        return 0
    conn.execute(
        "DELETE FROM memory_embedding_cache WHERE rowid IN ("
        "SELECT rowid FROM memory_embedding_cache ORDER BY updated_at, rowid LIMIT ?)",
        (excess,),
    )
    return excess


# ----------------------------------------------------------------- skipped files


def set_skipped(conn: apsw.Connection, path: str, reason: str, size: int | None, now: float) -> None:
    conn.execute(
        "INSERT INTO memory_index_skipped (path, reason, size, seen_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (path) DO UPDATE SET reason = excluded.reason, size = excluded.size, "
        "seen_at = excluded.seen_at",
        (path, reason, size, now),
    )


def clear_skipped(conn: apsw.Connection, path: str | None = None) -> None:
    if path is None:
        conn.execute("DELETE FROM memory_index_skipped")
    else:
        conn.execute("DELETE FROM memory_index_skipped WHERE path = ?", (path,))


def skipped(conn: apsw.Connection) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in conn.execute("SELECT path, reason FROM memory_index_skipped ORDER BY path")]


# ----------------------------------------------------------------- publish (shadow rebuild)


def table_exists(conn: apsw.Connection, name: str, schema: str = "main") -> bool:
    row = next(iter(conn.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE name = ?", (name,))), None)
    return row is not None


def copy_rows(conn: apsw.Connection, table: str, columns: Sequence[str], src: str = "shadow") -> None:
    cols = ", ".join(columns)
    conn.execute(f"INSERT INTO main.{table} ({cols}) SELECT {cols} FROM {src}.{table}")


def rows(conn: apsw.Connection, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
    return list(conn.execute(sql, params))


# ---------- what lineage forget reads and deletes in the index


@dataclass(frozen=True)
class ChunkText:
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    hash: str
    text: str


def chunk_texts(conn: apsw.Connection) -> Iterator[ChunkText]:
    if not table_exists(conn, "memory_index_chunks"):
        return
    sql = (
        "SELECT id, path, source, start_line, end_line, hash, text FROM memory_index_chunks "
        "ORDER BY path, start_line, id"
    )
    for r in conn.execute(sql):
        yield ChunkText(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], r[6])


def fts_texts(conn: apsw.Connection) -> Iterator[tuple[str, str, str]]:
    """(chunk id, path, text) of every keyword-index row."""
    if not table_exists(conn, "memory_index_chunks_fts"):
        return
    for r in conn.execute("SELECT id, path, text FROM memory_index_chunks_fts"):
        yield str(r[0]), str(r[1]), str(r[2])


def vector_ids(conn: apsw.Connection, ids: Sequence[str]) -> set[str]:
    if vec_table_dims(conn) is None:
        return set()
    found: set[str] = set()
    for chunk_id in ids:
        if next(iter(conn.execute("SELECT 1 FROM memory_index_chunks_vec WHERE id = ?", (chunk_id,))), None):
            found.add(chunk_id)
    return found


def source_exists(conn: apsw.Connection, path: str, source: str) -> bool:
    if not table_exists(conn, "memory_index_sources"):
        return False
    sql = "SELECT 1 FROM memory_index_sources WHERE path = ? AND source = ?"
    return next(iter(conn.execute(sql, (path, source))), None) is not None


def delete_sources(conn: apsw.Connection, pairs: Iterable[tuple[str, str]]) -> None:
    """Delete sources with every chunk, FTS and vector row (a later sync re-indexes the file)."""
    if not table_exists(conn, "memory_index_chunks"):
        return
    for path, source in pairs:
        delete_source(conn, path, source)


def delete_chunk_ids(conn: apsw.Connection, ids: Sequence[str]) -> None:
    if table_exists(conn, "memory_index_chunks"):
        delete_chunks(conn, ids)


@dataclass(frozen=True)
class CacheRow:
    provider: str
    model: str
    provider_key: str
    hash: str


def cache_rows(conn: apsw.Connection, hashes: Iterable[str]) -> list[CacheRow]:
    if not table_exists(conn, "memory_embedding_cache"):
        return []
    out: list[CacheRow] = []
    sql = (
        "SELECT provider, model, provider_key, hash FROM memory_embedding_cache WHERE hash = ? ORDER BY provider, model"
    )
    for h in dict.fromkeys(hashes):
        out.extend(CacheRow(*r) for r in conn.execute(sql, (h,)))
    return out


def delete_cache_hashes(conn: apsw.Connection, hashes: Iterable[str]) -> None:
    """The cached vectors of these texts (their line vectors: line_vector_rows.delete_hashes)."""
    if not table_exists(conn, "memory_embedding_cache"):
        return
    for h in dict.fromkeys(hashes):
        conn.execute("DELETE FROM memory_embedding_cache WHERE hash = ?", (h,))
