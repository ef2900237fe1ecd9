"""SQL the benchmarks under bench/ need: reading back what was indexed, writing synthetic corpora.

Nothing in the product calls these; they live here because all SQL lives in engine/store.
"""

from __future__ import annotations

from collections.abc import Iterator

import apsw
from clawmem.engine.store.db import immediate


def distinct_chunk_texts(conn: apsw.Connection) -> list[str]:
    """One text per distinct chunk hash, in index order: what the embedding pass sent to the model."""
    return [str(r[0]) for r in conn.execute("SELECT text FROM memory_index_chunks GROUP BY hash ORDER BY MIN(rowid)")]


def embedded_chunks(conn: apsw.Connection, model: str) -> list[tuple[str, bytes]]:
    """(text, vector blob) of every chunk embedded by ``model``, in index order."""
    return [
        (str(r[0]), bytes(r[1]))
        for r in conn.execute(
            "SELECT text, embedding FROM memory_index_chunks WHERE embedding IS NOT NULL AND model = ? ORDER BY rowid",
            (model,),
        )
    ]


def fill_vec_table(conn: apsw.Connection) -> None:
    """Copy every stored vector into the sqlite-vec table in one statement (synthetic corpora)."""
    conn.execute(
        "INSERT OR REPLACE INTO memory_index_chunks_vec (id, embedding) "
        "SELECT id, embedding FROM memory_index_chunks WHERE embedding IS NOT NULL"
    )


def copy_embedding_cache(conn: apsw.Connection, other_db: str) -> int:
    """Copy another database's embedding cache into this one (a merged benchmark workspace reuses
    vectors computed per conversation: the cache is keyed by text hash). Returns rows added."""
    conn.execute("ATTACH DATABASE ? AS other", (other_db,))
    try:
        with immediate(conn):
            conn.execute(
                "INSERT OR IGNORE INTO memory_embedding_cache "
                "(provider, model, provider_key, hash, embedding, dims, updated_at) "
                "SELECT provider, model, provider_key, hash, embedding, dims, updated_at "
                "FROM other.memory_embedding_cache"
            )
            added = conn.changes()
        return added
    finally:
        conn.execute("DETACH DATABASE other")


def chunk_rows(conn: apsw.Connection) -> Iterator[tuple[str, str, str, int, int, str, str, str, bytes | None]]:
    """(id, path, source, start_line, end_line, hash, model, text, vector blob) of every chunk,
    in index order: a corpus read back to load it into another store (bench/pg_scale.py)."""
    yield from conn.execute(
        "SELECT id, path, source, start_line, end_line, hash, model, text, embedding "
        "FROM memory_index_chunks ORDER BY rowid"
    )


def source_rows(conn: apsw.Connection) -> list[tuple[str, str, str, float, int]]:
    """(path, source, hash, mtime, size) of every indexed file."""
    return list(conn.execute("SELECT path, source, hash, mtime, size FROM memory_index_sources ORDER BY id"))
