"""SQL of the short-term recall store (spec §5)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import apsw

COLUMNS = (
    "entry_key, path, start_line, end_line, snippet, claim_hash, recall_count, daily_count, grounded_count, "
    "total_score, max_score, query_hashes, recall_days, concept_tags, origin_class, session_kind, "
    "first_recalled_at, last_recalled_at, last_query_day, promoted_at, updated_at"
)


@dataclass(frozen=True)
class RecallRow:
    entry_key: str
    path: str
    start_line: int
    end_line: int
    snippet: str
    claim_hash: str
    recall_count: int
    daily_count: int
    grounded_count: int
    total_score: float
    max_score: float
    query_hashes: tuple[str, ...]
    recall_days: tuple[str, ...]
    concept_tags: tuple[str, ...]
    origin_class: str
    session_kind: str
    first_recalled_at: int | None
    last_recalled_at: int | None
    last_query_day: str | None
    promoted_at: int | None
    updated_at: int


def _row(r: tuple) -> RecallRow:  # type: ignore[type-arg]
    return RecallRow(
        r[0], r[1], int(r[2]), int(r[3]), r[4], r[5], int(r[6]), int(r[7]), int(r[8]), float(r[9]), float(r[10]),
        tuple(json.loads(r[11])), tuple(json.loads(r[12])), tuple(json.loads(r[13])), r[14], r[15],
        r[16], r[17], r[18], r[19], int(r[20]),
    )


def get(conn: apsw.Connection, entry_key: str) -> RecallRow | None:
    row = next(iter(conn.execute(f"SELECT {COLUMNS} FROM memory_short_term_recall WHERE entry_key = ?", (entry_key,))), None)
    return _row(row) if row else None


def all_rows(conn: apsw.Connection) -> list[RecallRow]:
    return [_row(r) for r in conn.execute(f"SELECT {COLUMNS} FROM memory_short_term_recall ORDER BY entry_key")]


def upsert(conn: apsw.Connection, r: RecallRow) -> None:
    conn.execute(
        f"INSERT OR REPLACE INTO memory_short_term_recall ({COLUMNS}) VALUES ({', '.join('?' * 21)})",
        (
            r.entry_key, r.path, r.start_line, r.end_line, r.snippet, r.claim_hash, r.recall_count, r.daily_count,
            r.grounded_count, r.total_score, r.max_score, json.dumps(list(r.query_hashes)),
            json.dumps(list(r.recall_days)), json.dumps(list(r.concept_tags), ensure_ascii=False), r.origin_class,
            r.session_kind, r.first_recalled_at, r.last_recalled_at, r.last_query_day, r.promoted_at, r.updated_at,
        ),
    )


def add_event(conn: apsw.Connection, entry_key: str, query_hash: str, day: str, score: float, interactive: bool, at: int) -> bool:
    """Record one (entry, query, day); False when this query already counted today."""
    conn.execute(
        "INSERT OR IGNORE INTO memory_short_term_recall_events "
        "(entry_key, query_hash, day, score, interactive, recorded_at) VALUES (?, ?, ?, ?, ?, ?)",
        (entry_key, query_hash, day, score, 1 if interactive else 0, at),
    )
    return conn.changes() == 1


def count(conn: apsw.Connection) -> int:
    return int(next(iter(conn.execute("SELECT COUNT(*) FROM memory_short_term_recall")))[0])


def evict_beyond(conn: apsw.Connection, cap: int) -> int:
    """Keep at most ``cap`` entries: the least recently recalled, unpromoted ones go first."""
    excess = count(conn) - cap
    if excess <= 0:
        return 0
    conn.execute(
        "DELETE FROM memory_short_term_recall WHERE entry_key IN (SELECT entry_key FROM memory_short_term_recall "
        "ORDER BY promoted_at IS NOT NULL, COALESCE(last_recalled_at, 0), entry_key LIMIT ?)",
        (excess,),
    )
    return excess
