"""Line vectors: one vector per content line of a multi-line chunk (see engine/index/line_evidence.py).

Keyed by the chunk's text hash and the model, like the embedding cache: chunks with the same
text share them, a chunk that moves (an edit above it) or a shadow rebuild keeps them, and
rows whose text no chunk holds any more are swept (:func:`sweep`). A chunk with fewer than two
content lines gets an empty row, so the pass does not look at it again. Derived: ``reset``
drops the table. Vectors are float16 (n_lines × dims): a cosine to 1e-3 is all line evidence
needs, at half the size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import apsw
import numpy as np

TABLE = "memory_index_line_vectors"

CREATE_SQL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    hash TEXT NOT NULL,
    model TEXT NOT NULL,
    vectors BLOB NOT NULL,
    PRIMARY KEY (hash, model)
) STRICT, WITHOUT ROWID
"""


def pack(vectors: Sequence[np.ndarray]) -> bytes:
    if not len(vectors):
        return b""
    return np.stack(vectors).astype("<f2").tobytes()


def unpack(blob: bytes, dims: int) -> np.ndarray:
    """(n_lines, dims) float32; (0, dims) for an empty row."""
    return np.frombuffer(blob, dtype="<f2").reshape(-1, dims).astype(np.float32)


@dataclass(frozen=True)
class PendingText:
    hash: str
    text: str


def pending(conn: apsw.Connection, model: str, limit: int | None = None) -> list[PendingText]:
    """Embedded chunk texts of ``model`` without line vectors yet, in the embedding pass's order."""
    sql = (
        f"SELECT hash, text FROM memory_index_chunks c WHERE embedding IS NOT NULL AND model = ? "
        f"AND NOT EXISTS (SELECT 1 FROM {TABLE} l WHERE l.hash = c.hash AND l.model = c.model) "
        "GROUP BY hash "
        "ORDER BY MIN(CASE WHEN path IN ('USER.md', 'MEMORY.md', 'memory.md') THEN 0 "
        "WHEN path GLOB 'memory/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' THEN 1 ELSE 2 END), "
        "MAX(path) DESC, MIN(start_line)"
    )
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [PendingText(h, t) for h, t in conn.execute(sql, (model,))]


def store(conn: apsw.Connection, hash_: str, model: str, blob: bytes) -> None:
    conn.execute(f"INSERT OR REPLACE INTO {TABLE} (hash, model, vectors) VALUES (?, ?, ?)", (hash_, model, blob))


def for_chunks(conn: apsw.Connection, ids: Sequence[str], model: str) -> dict[str, bytes]:
    """Chunk id -> its line vectors, for the chunks of ``ids`` that have some (non-empty)."""
    out: dict[str, bytes] = {}
    for start in range(0, len(ids), 500):
        part = list(ids[start : start + 500])
        marks = ",".join("?" * len(part))
        for cid, blob in conn.execute(
            f"SELECT c.id, l.vectors FROM memory_index_chunks c JOIN {TABLE} l "
            f"ON l.hash = c.hash AND l.model = ? WHERE c.id IN ({marks}) AND length(l.vectors) > 0",
            (model, *part),
        ):
            out[cid] = bytes(blob)
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
                f"AND NOT EXISTS (SELECT 1 FROM {TABLE} l WHERE l.hash = c.hash AND l.model = c.model)"
            )
        )
    )[0]
    return int(texts), int(size), int(waiting)


def sweep(conn: apsw.Connection) -> int:
    """Drop line vectors of texts no chunk holds any more (edited or deleted text)."""
    conn.execute(
        f"DELETE FROM {TABLE} WHERE NOT EXISTS (SELECT 1 FROM memory_index_chunks c WHERE c.hash = {TABLE}.hash)"
    )
    return conn.changes()


def delete_hashes(conn: apsw.Connection, hashes: Sequence[str]) -> None:
    for h in dict.fromkeys(hashes):
        conn.execute(f"DELETE FROM {TABLE} WHERE hash = ?", (h,))
