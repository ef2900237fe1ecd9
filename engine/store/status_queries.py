"""Read-only queries behind ``status``."""

from __future__ import annotations

from datetime import UTC, datetime

import apsw


def recall_summary(conn: apsw.Connection) -> tuple[int, str | None]:
    row = next(iter(conn.execute("SELECT COUNT(*), MAX(updated_at) FROM memory_short_term_recall")))
    updated = datetime.fromtimestamp(row[1] / 1000, UTC).isoformat() if row[1] else None
    return int(row[0]), updated


def pending_supersede_proposals(conn: apsw.Connection) -> int:
    """How many supersessions agents proposed that wait for the person (engine/curation/)."""
    row = next(iter(conn.execute("SELECT COUNT(*) FROM memory_supersede_proposals WHERE status = 'pending'")))
    return int(row[0])


def knn_probe(conn: apsw.Connection, blob: bytes) -> int:
    return len(list(conn.execute("SELECT id FROM memory_index_chunks_vec WHERE embedding MATCH ? AND k = 1", (blob,))))


def sample_embedding_dims(conn: apsw.Connection) -> int | None:
    row = next(
        iter(conn.execute("SELECT length(embedding) FROM memory_index_chunks WHERE embedding IS NOT NULL LIMIT 1")),
        None,
    )
    return None if row is None else int(row[0]) // 4
