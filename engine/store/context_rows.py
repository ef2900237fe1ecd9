"""SQL behind the Context pane: curated trigger rows (Active Memory lane 1) and file provenance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import apsw
from clawmem.engine.workspace.names import MEMORY_FILE, USER_FILE

# Only the root curated files carry trigger annotations OpenClaw reads (docs/memory-core.md §9).
TRIGGER_PATHS: tuple[str, ...] = (MEMORY_FILE, USER_FILE)


@dataclass(frozen=True)
class CuratedTriggerRow:
    chunk_id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    importance: int | None
    triggers: str
    project_key: str | None
    origin_class: str  # 'untrusted' when the chunk has no provenance row
    session_kind: str
    observed_at: int | None


def curated_trigger_rows(
    conn: apsw.Connection, paths: Sequence[str] = TRIGGER_PATHS, limit: int = 4096
) -> list[CuratedTriggerRow]:
    """MEMORY.md / USER.md chunks whose triggers are set, in OpenClaw's candidate order.

    The order is OpenClaw's (importance desc, path, chunk id). Unlike OpenClaw's query this one
    does not filter by origin or project: the caller applies those rules so the Context pane can
    show *why* a row was left out.
    """
    marks = ", ".join("?" for _ in paths)
    sql = (
        "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, m.importance, m.triggers, "
        "m.project_key, COALESCE(p.origin_class, 'untrusted'), COALESCE(p.session_kind, 'unknown'), "
        "p.observed_at "
        "FROM memory_index_chunks c "
        "JOIN memory_index_chunk_recall_metadata m ON m.chunk_id = c.id "
        "LEFT JOIN memory_index_chunk_provenance p ON p.chunk_id = c.id "
        f"WHERE c.source = 'memory' AND c.path IN ({marks}) "
        "AND m.triggers IS NOT NULL AND TRIM(m.triggers) != '' "
        "ORDER BY COALESCE(m.importance, 0) DESC, c.path, c.id LIMIT ?"
    )
    return [CuratedTriggerRow(*row) for row in conn.execute(sql, [*paths, limit])]


def file_origin_classes(conn: apsw.Connection, path: str, source: str = "memory") -> tuple[str, ...]:
    """The distinct origin classes the index recorded for one file's chunks (empty: not indexed)."""
    return tuple(
        str(row[0])
        for row in conn.execute(
            "SELECT DISTINCT p.origin_class FROM memory_index_chunks c "
            "JOIN memory_index_chunk_provenance p ON p.chunk_id = c.id "
            "WHERE c.path = ? AND c.source = ? ORDER BY p.origin_class",
            (path, source),
        )
    )
