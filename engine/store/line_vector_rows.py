"""Line vectors: one vector per content line of a multi-line chunk (see engine/index/line_evidence.py).

Keyed by the chunk's text hash and the provider key (everything that determines a vector: the
model file's hash, prefixes, pooling), like the embedding cache: chunks with the same text share
them, a chunk that moves (an edit above it) or a shadow rebuild keeps them, another model never
reads them, and rows whose text no chunk holds any more, or of another provider key, are swept
(:func:`sweep`). A chunk with fewer than two
content lines gets an empty row, so the pass does not look at it again. Derived: ``reset``
drops the table. Vectors are float16 (n_lines × dims): a cosine to 1e-3 is all line evidence
needs, at half the size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import apsw
import numpy as np
from clawmem.engine.store import index_rows

TABLE = "memory_index_line_vectors"

CREATE_SQL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    hash TEXT NOT NULL,
    provider_key TEXT NOT NULL,
    vectors BLOB NOT NULL,
    PRIMARY KEY (hash, provider_key)
) STRICT, WITHOUT ROWID
"""


def pack(vectors: Sequence[np.ndarray]) -> bytes:
    if not len(vectors):
        return b""
    return np.stack(vectors).astype("<f2").tobytes()


def unpack(blob: bytes, dims: int) -> np.ndarray:
    """(n_lines, dims) float16 as stored (a read-only view of ``blob``); (0, dims) when empty."""
    return np.frombuffer(blob, dtype="<f2").reshape(-1, dims)


@dataclass(frozen=True)
class PendingText:
    hash: str
    text: str


def pending(conn: apsw.Connection, model: str, provider_key: str, limit: int | None = None) -> list[PendingText]:
    """Chunk texts embedded by ``model`` without line vectors of ``provider_key`` yet, in the
    embedding pass's order."""
    sql = (
        f"SELECT hash, text FROM memory_index_chunks c WHERE embedding IS NOT NULL AND model = ? "
        f"AND NOT EXISTS (SELECT 1 FROM {TABLE} l WHERE l.hash = c.hash AND l.provider_key = ?) "
        f"GROUP BY hash ORDER BY MIN({index_rows.EMBED_PRIORITY}), MAX(path) DESC, MIN(start_line)"
    )
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [PendingText(h, t) for h, t in conn.execute(sql, (model, provider_key))]


def store(conn: apsw.Connection, hash_: str, provider_key: str, blob: bytes) -> None:
    conn.execute(
        f"INSERT OR REPLACE INTO {TABLE} (hash, provider_key, vectors) VALUES (?, ?, ?)", (hash_, provider_key, blob)
    )


def for_hashes(conn: apsw.Connection, hashes: Sequence[str], provider_key: str) -> dict[str, bytes]:
    """Text hash -> its line vectors (b"" for a text with fewer than two lines), where computed."""
    out: dict[str, bytes] = {}
    for start in range(0, len(hashes), 500):
        part = list(hashes[start : start + 500])
        marks = ",".join("?" * len(part))
        for h, blob in conn.execute(
            f"SELECT hash, vectors FROM {TABLE} WHERE provider_key = ? AND hash IN ({marks})", (provider_key, *part)
        ):
            out[h] = bytes(blob)
    return out


def summary(conn: apsw.Connection) -> tuple[int, int, int]:
    """(chunk texts with line vectors, their line vectors' bytes, embedded texts still waiting)."""
    texts, size = next(
        iter(conn.execute(f"SELECT COUNT(*), COALESCE(SUM(length(vectors)), 0) FROM {TABLE} WHERE length(vectors) > 0"))
    )
    waiting = next(
        iter(
            conn.execute(
                f"SELECT COUNT(DISTINCT hash) FROM memory_index_chunks c WHERE embedding IS NOT NULL "
                f"AND NOT EXISTS (SELECT 1 FROM {TABLE} l WHERE l.hash = c.hash)"
            )
        )
    )[0]
    return int(texts), int(size), int(waiting)


def sweep(conn: apsw.Connection, provider_key: str) -> int:
    """Drop line vectors of texts no chunk holds any more (edited or deleted text), and those of
    another provider key (the model changed)."""
    conn.execute(
        f"DELETE FROM {TABLE} WHERE provider_key != ? "
        f"OR NOT EXISTS (SELECT 1 FROM memory_index_chunks c WHERE c.hash = {TABLE}.hash)",
        (provider_key,),
    )
    return conn.changes()


def delete_hashes(conn: apsw.Connection, hashes: Sequence[str]) -> None:
    for h in dict.fromkeys(hashes):
        conn.execute(f"DELETE FROM {TABLE} WHERE hash = ?", (h,))


def delete_hashes_present(conn: apsw.Connection, hashes: Sequence[str]) -> None:
    """Like :func:`delete_hashes`, in a database that may predate line vectors (lineage forget)."""
    if index_rows.table_exists(conn, TABLE):
        delete_hashes(conn, hashes)
