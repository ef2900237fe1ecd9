"""The shared embedding cache and line vectors on PostgreSQL (issue 39).

The same contracts as SQLite's (engine/store/index_rows.py "embedding cache",
engine/store/line_vector_rows.py): vectors keyed by text hash and everything that determines
them, so a text one machine embedded is never embedded again by another that shares the server;
line vectors with a key per line, swept when no chunk holds their text. Every function commits
its own transaction, except where it says it only reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from clawmem.engine.store.line_vector_rows import KEY_BYTES, unpack


def cache_lookup(
    conn: Any, provider: str, model: str, provider_key: str, hashes: Sequence[str], now: float
) -> dict[str, bytes]:
    """Cached vectors by text hash; the hits are touched so the LRU keeps them."""
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        return {}
    rows = conn.execute(
        "UPDATE memory_embedding_cache SET updated_at = %s "
        "WHERE provider = %s AND model = %s AND provider_key = %s AND hash = ANY(%s) RETURNING hash, embedding",
        (now, provider, model, provider_key, wanted),
    ).fetchall()
    conn.commit()
    return {str(h): bytes(blob) for h, blob in rows}


def cache_store(
    conn: Any, provider: str, model: str, provider_key: str, vectors: Mapping[str, bytes], dims: int, now: float
) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO memory_embedding_cache (provider, model, provider_key, hash, embedding, dims, updated_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (provider, model, provider_key, hash) "
            "DO UPDATE SET embedding = excluded.embedding, dims = excluded.dims, updated_at = excluded.updated_at",
            [(provider, model, provider_key, h, blob, dims, now) for h, blob in vectors.items()],
        )
    conn.commit()


def cache_evict(conn: Any, cap: int) -> int:
    """Drop the least recently used rows beyond ``cap``; how many went."""
    cur = conn.execute(
        "DELETE FROM memory_embedding_cache WHERE ctid IN (SELECT ctid FROM memory_embedding_cache "
        "ORDER BY updated_at DESC, hash OFFSET %s)",
        (cap,),
    )
    conn.commit()
    return int(cur.rowcount)


def store_lines(conn: Any, provider_key: str, rows: Iterable[tuple[str, bytes, bytes]]) -> None:
    """(chunk text hash, its line vectors, its line keys) rows, in one transaction."""
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO memory_index_line_vectors (hash, provider_key, vectors, line_keys) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (hash, provider_key) DO UPDATE SET vectors = excluded.vectors, line_keys = excluded.line_keys",
            [(h, provider_key, blob, keys) for h, blob, keys in rows],
        )
    conn.commit()


def lines_for_hashes(conn: Any, hashes: Sequence[str], provider_key: str) -> dict[str, bytes]:
    """Text hash -> its line vectors (b"" for a text with fewer than two lines). Reads only."""
    rows = conn.execute(
        "SELECT hash, vectors FROM memory_index_line_vectors WHERE provider_key = %s AND hash = ANY(%s)",
        (provider_key, list(hashes)),
    ).fetchall()
    conn.rollback()
    return {str(h): bytes(blob) for h, blob in rows}


def replaced_lines(conn: Any, provider_key: str, dims: int, cap: int) -> dict[bytes, np.ndarray]:
    """Line key -> vector from the rows of texts no chunk holds any more (edited chunks'
    previous versions, until :func:`sweep_lines`); at most ``cap`` lines. Reads only."""
    out: dict[bytes, np.ndarray] = {}
    rows = conn.execute(
        "SELECT line_keys, vectors FROM memory_index_line_vectors l WHERE provider_key = %s "
        "AND length(line_keys) > 0 AND NOT EXISTS (SELECT 1 FROM memory_index_chunks c WHERE c.hash = l.hash)",
        (provider_key,),
    ).fetchall()
    conn.rollback()
    for keys, blob in rows:
        if len(blob) % (2 * dims):  # not this model's row after all: never guess
            continue
        keys, vectors = bytes(keys), unpack(bytes(blob), dims)
        if len(keys) != KEY_BYTES * len(vectors):
            continue
        for i, vector in enumerate(vectors):
            out[keys[i * KEY_BYTES : (i + 1) * KEY_BYTES]] = vector
        if len(out) >= cap:
            break
    return out


def sweep_lines(conn: Any, provider_key: str) -> int:
    """Drop line vectors of texts no chunk holds, and those of another provider key."""
    cur = conn.execute(
        "DELETE FROM memory_index_line_vectors l WHERE provider_key != %s "
        "OR NOT EXISTS (SELECT 1 FROM memory_index_chunks c WHERE c.hash = l.hash)",
        (provider_key,),
    )
    conn.commit()
    return int(cur.rowcount)


def cache_delete(conn: Any, hashes: Sequence[str]) -> int:
    """Drop the cached vectors of these texts, whatever model made them (forget); how many went."""
    cur = conn.execute("DELETE FROM memory_embedding_cache WHERE hash = ANY(%s)", (list(hashes),))
    conn.commit()
    return int(cur.rowcount)


def cache_keys(conn: Any, hashes: Sequence[str]) -> list[tuple[str, str, str]]:
    """(provider, model, hash) of the cached vectors of these texts (forget's check). Reads only."""
    rows = conn.execute(
        "SELECT provider, model, hash FROM memory_embedding_cache WHERE hash = ANY(%s) ORDER BY provider, model, hash",
        (list(hashes),),
    ).fetchall()
    conn.rollback()
    return [(str(p), str(m), str(h)) for p, m, h in rows]
