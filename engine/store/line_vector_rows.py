"""Line vectors: one vector per content line of a multi-line chunk (see engine/index/line_evidence.py).

Keyed by the chunk's text hash and the provider key (everything that determines a vector: the
model file's hash, prefixes, pooling), like the embedding cache: chunks with the same text share
them, a chunk that moves (an edit above it) or a shadow rebuild keeps them, another model never
reads them, and rows whose text no chunk holds any more, or of another provider key, are swept
(:func:`sweep`). A chunk with fewer than two
content lines gets an empty row, so the pass does not look at it again. Derived: ``reset``
drops the table. Vectors are float16 (n_lines × dims): a cosine to 1e-3 is all line evidence
needs, at half the size.

Each row also keeps a 16-byte key per line (a hash of the line's text, :func:`line_key`), so the
line pass can take the vectors of an edited chunk's unchanged lines from the row of its previous
text, which stays until the pass's sweep (:func:`replaced_lines`): editing or appending one line
embeds that line, not the chunk's every line. Rows written before the keys existed have none
and are simply not reused.
"""

from __future__ import annotations

import hashlib
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


KEY_BYTES = 16  # a collision between two of a workspace's lines is not a real risk at 128 bits

# Index schema 6 (engine/store/schema.py): the line keys beside the vectors.
ADD_KEYS_SQL = f"ALTER TABLE {TABLE} ADD COLUMN line_keys BLOB NOT NULL DEFAULT x''"


def line_key(line: str) -> bytes:
    """The key of one line's text: equal texts, equal vectors (the provider key is the row's)."""
    return hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


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


def store(conn: apsw.Connection, hash_: str, provider_key: str, blob: bytes, keys: bytes = b"") -> None:
    """One chunk text's line vectors and, in the same order, its lines' keys (each :func:`line_key`)."""
    conn.execute(
        f"INSERT OR REPLACE INTO {TABLE} (hash, provider_key, vectors, line_keys) VALUES (?, ?, ?, ?)",
        (hash_, provider_key, blob, keys),
    )


def replaced_lines(conn: apsw.Connection, provider_key: str, dims: int, cap: int) -> dict[bytes, np.ndarray]:
    """Line key -> vector, from the rows of texts no chunk holds any more: the previous versions
    of edited (or deleted) chunks, which stay until :func:`sweep`. At most ``cap`` lines."""
    out: dict[bytes, np.ndarray] = {}
    rows = conn.execute(
        f"SELECT line_keys, vectors FROM {TABLE} WHERE provider_key = ? AND length(line_keys) > 0 "
        f"AND NOT EXISTS (SELECT 1 FROM memory_index_chunks c WHERE c.hash = {TABLE}.hash)",
        (provider_key,),
    )
    for keys, blob in rows:
        if len(blob) % (2 * dims):  # not this model's row after all: never guess
            continue
        vectors = unpack(bytes(blob), dims)
        if len(keys) != KEY_BYTES * len(vectors):
            continue
        for i, vector in enumerate(vectors):
            out[bytes(keys[i * KEY_BYTES : (i + 1) * KEY_BYTES])] = vector
        if len(out) >= cap:
            break
    return out


def replaced_keys(conn: apsw.Connection, provider_key: str) -> set[bytes]:
    """The line keys :func:`replaced_lines` would give vectors for (the keys only: cheap)."""
    out: set[bytes] = set()
    rows = conn.execute(
        f"SELECT line_keys FROM {TABLE} WHERE provider_key = ? AND length(line_keys) > 0 "
        f"AND NOT EXISTS (SELECT 1 FROM memory_index_chunks c WHERE c.hash = {TABLE}.hash)",
        (provider_key,),
    )
    for (keys,) in rows:
        out.update(bytes(keys[i : i + KEY_BYTES]) for i in range(0, len(keys), KEY_BYTES))
    return out


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


def hashes_with_lines(conn: apsw.Connection, hashes: Sequence[str], provider_key: str) -> set[str]:
    """Of these text hashes, those with a row (the hashes only: never the vectors)."""
    out: set[str] = set()
    for start in range(0, len(hashes), 500):
        part = list(hashes[start : start + 500])
        marks = ",".join("?" * len(part))
        out.update(
            str(h)
            for (h,) in conn.execute(
                f"SELECT hash FROM {TABLE} WHERE provider_key = ? AND hash IN ({marks})", (provider_key, *part)
            )
        )
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
