"""SQL of the short-term recall store (docs/memory-core.md §5): entries, per-day query events, phase signals."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import apsw

COLUMNS = (
    "entry_key, path, start_line, end_line, snippet, claim_hash, recall_count, daily_count, grounded_count, "
    "total_score, max_score, query_hashes, user_query_hashes, recall_days, concept_tags, origin_class, "
    "session_kind, project_key, first_recalled_at, last_recalled_at, last_query_day, promoted_at, "
    "light_hits, rem_hits, last_light_at, last_rem_at, last_rem_considered_at, updated_at"
)
_N_COLUMNS = 28


@dataclass(frozen=True)
class RecallRow:
    """One short-term recall entry. Times are epoch milliseconds."""

    entry_key: str
    path: str
    start_line: int
    end_line: int
    snippet: str  # normalized: one line, whitespace collapsed, at most 800 chars
    claim_hash: str
    recall_count: int
    daily_count: int
    grounded_count: int
    total_score: float
    max_score: float
    query_hashes: tuple[str, ...]  # every query key, synthetic ingestion keys included
    user_query_hashes: tuple[str, ...]  # interactive queries only (the minUniqueQueries gate)
    recall_days: tuple[str, ...]
    concept_tags: tuple[str, ...]
    origin_class: str
    session_kind: str
    project_key: str | None
    first_recalled_at: int | None
    last_recalled_at: int | None
    last_query_day: str | None
    promoted_at: int | None
    light_hits: int
    rem_hits: int
    last_light_at: int | None
    last_rem_at: int | None
    last_rem_considered_at: int | None
    updated_at: int

    @property
    def signal_count(self) -> int:
        return max(0, self.recall_count) + max(0, self.daily_count) + max(0, self.grounded_count)


def _row(r: tuple) -> RecallRow:  # type: ignore[type-arg]
    return RecallRow(
        r[0],
        r[1],
        int(r[2]),
        int(r[3]),
        r[4],
        r[5],
        int(r[6]),
        int(r[7]),
        int(r[8]),
        float(r[9]),
        float(r[10]),
        tuple(json.loads(r[11])),
        tuple(json.loads(r[12])),
        tuple(json.loads(r[13])),
        tuple(json.loads(r[14])),
        r[15],
        r[16],
        r[17],
        r[18],
        r[19],
        r[20],
        r[21],
        int(r[22]),
        int(r[23]),
        r[24],
        r[25],
        r[26],
        int(r[27]),
    )


def get(conn: apsw.Connection, entry_key: str) -> RecallRow | None:
    sql = f"SELECT {COLUMNS} FROM memory_short_term_recall WHERE entry_key = ?"
    row = next(iter(conn.execute(sql, (entry_key,))), None)
    return _row(row) if row else None


def get_many(conn: apsw.Connection, keys: Iterable[str]) -> dict[str, RecallRow]:
    out: dict[str, RecallRow] = {}
    for key in keys:
        row = get(conn, key)
        if row is not None:
            out[key] = row
    return out


def all_rows(conn: apsw.Connection) -> list[RecallRow]:
    return [_row(r) for r in conn.execute(f"SELECT {COLUMNS} FROM memory_short_term_recall ORDER BY entry_key")]


def keys_with_prefix(conn: apsw.Connection, prefix: str) -> list[str]:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return [
        r[0]
        for r in conn.execute(
            "SELECT entry_key FROM memory_short_term_recall WHERE entry_key LIKE ? ESCAPE '\\' ORDER BY entry_key",
            (escaped + "%",),
        )
    ]


def rows_at_line(conn: apsw.Connection, path: str, line: int) -> list[RecallRow]:
    sql = (
        f"SELECT {COLUMNS} FROM memory_short_term_recall WHERE path = ? AND start_line <= ? AND end_line >= ? "
        "ORDER BY entry_key"
    )
    return [_row(r) for r in conn.execute(sql, (path, line, line))]


def find_non_claim_by_claim_hash(conn: apsw.Connection, claim_hash: str) -> RecallRow | None:
    """A recall or grounded entry with this claim hash (daily signals merge into it)."""
    sql = (
        f"SELECT {COLUMNS} FROM memory_short_term_recall WHERE claim_hash = ? AND entry_key NOT LIKE 'memory:claim:%' "
        "AND recall_count + grounded_count > 0 ORDER BY entry_key LIMIT 1"
    )
    row = next(iter(conn.execute(sql, (claim_hash,))), None)
    return _row(row) if row else None


def upsert(conn: apsw.Connection, r: RecallRow) -> None:
    conn.execute(
        f"INSERT INTO memory_short_term_recall ({COLUMNS}) VALUES ({', '.join('?' * _N_COLUMNS)}) "
        "ON CONFLICT (entry_key) DO UPDATE SET "
        + ", ".join(f"{c.strip()} = excluded.{c.strip()}" for c in COLUMNS.split(",")[1:]),
        (
            r.entry_key,
            r.path,
            r.start_line,
            r.end_line,
            r.snippet,
            r.claim_hash,
            r.recall_count,
            r.daily_count,
            r.grounded_count,
            r.total_score,
            r.max_score,
            json.dumps(list(r.query_hashes)),
            json.dumps(list(r.user_query_hashes)),
            json.dumps(list(r.recall_days)),
            json.dumps(list(r.concept_tags), ensure_ascii=False),
            r.origin_class,
            r.session_kind,
            r.project_key,
            r.first_recalled_at,
            r.last_recalled_at,
            r.last_query_day,
            r.promoted_at,
            r.light_hits,
            r.rem_hits,
            r.last_light_at,
            r.last_rem_at,
            r.last_rem_considered_at,
            r.updated_at,
        ),
    )


def has_event(conn: apsw.Connection, entry_key: str, query_hash: str, day: str) -> bool:
    sql = "SELECT 1 FROM memory_short_term_recall_events WHERE entry_key = ? AND query_hash = ? AND day = ?"
    return next(iter(conn.execute(sql, (entry_key, query_hash, day))), None) is not None


def add_event(
    conn: apsw.Connection, entry_key: str, query_hash: str, day: str, score: float, interactive: bool, at: int
) -> bool:
    """Record one (entry, query, day); False when this query already counted today."""
    conn.execute(
        "INSERT OR IGNORE INTO memory_short_term_recall_events "
        "(entry_key, query_hash, day, score, interactive, recorded_at) VALUES (?, ?, ?, ?, ?, ?)",
        (entry_key, query_hash, day, score, 1 if interactive else 0, at),
    )
    return conn.changes() == 1


def record_phase_hit(conn: apsw.Connection, keys: Sequence[str], phase: str, at: int) -> int:
    """Light or REM touched these entries (docs/memory-core.md §5 phase boost); returns rows changed."""
    if phase == "light":
        sql = "UPDATE memory_short_term_recall SET light_hits = MIN(9999, light_hits + 1), last_light_at = ? "
    else:
        sql = "UPDATE memory_short_term_recall SET rem_hits = MIN(9999, rem_hits + 1), last_rem_at = ? "
    changed = 0
    for key in dict.fromkeys(keys):
        conn.execute(sql + "WHERE entry_key = ?", (at, key))
        changed += conn.changes()
    return changed


def record_rem_considered(conn: apsw.Connection, keys: Sequence[str], at: int) -> None:
    for key in dict.fromkeys(keys):
        conn.execute("UPDATE memory_short_term_recall SET last_rem_considered_at = ? WHERE entry_key = ?", (at, key))


def set_promoted(conn: apsw.Connection, key: str, promoted_at: int | None, at: int) -> None:
    conn.execute(
        "UPDATE memory_short_term_recall SET promoted_at = ?, updated_at = ? WHERE entry_key = ?",
        (promoted_at, at, key),
    )


def relocate(conn: apsw.Connection, key: str, start_line: int, end_line: int, snippet: str, at: int) -> None:
    """Keep the range and snippet that were actually promoted (rehydrated from the live file)."""
    conn.execute(
        "UPDATE memory_short_term_recall SET start_line = ?, end_line = ?, snippet = ?, updated_at = ? "
        "WHERE entry_key = ?",
        (start_line, end_line, snippet, at, key),
    )


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


# ------------------------------------------------------------------------------- query matches


def record_match(
    conn: apsw.Connection, entry_key: str, query_hash: str, lines: Sequence[int], terms: Sequence[str], at: int
) -> None:
    """What one interactive query matched inside an entry (lines of the file, concept terms)."""
    conn.execute(
        "INSERT INTO dreaming_recall_matches (entry_key, query_hash, lines, terms, recorded_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (entry_key, query_hash) DO UPDATE SET "
        "lines = excluded.lines, terms = excluded.terms, recorded_at = excluded.recorded_at",
        (entry_key, query_hash, json.dumps(sorted(set(lines))), json.dumps(list(terms), ensure_ascii=False), at),
    )


def _match_lists(conn: apsw.Connection, entry_key: str, column: str, except_query: str | None) -> list[list[object]]:
    sql = f"SELECT {column} FROM dreaming_recall_matches WHERE entry_key = ? AND query_hash != ? ORDER BY query_hash"
    return [json.loads(r[0]) for r in conn.execute(sql, (entry_key, except_query or ""))]


def line_query_counts(conn: apsw.Connection, entry_key: str) -> dict[int, int]:
    """File line → how many distinct interactive queries matched it."""
    lists = _match_lists(conn, entry_key, "lines", None)
    return dict(Counter(v for values in lists for v in values if isinstance(v, int)))


def term_query_counts(conn: apsw.Connection, entry_key: str, *, except_query: str | None = None) -> dict[str, int]:
    """Concept term → how many distinct interactive queries hit it (``except_query`` left out)."""
    lists = _match_lists(conn, entry_key, "terms", except_query)
    return dict(Counter(v for values in lists for v in values if isinstance(v, str)))


# ---------- lineage forget


def delete_recall(conn: apsw.Connection, keys: Iterable[str]) -> None:
    for key in dict.fromkeys(keys):
        conn.execute("DELETE FROM memory_short_term_recall_events WHERE entry_key = ?", (key,))
        conn.execute("DELETE FROM memory_short_term_recall WHERE entry_key = ?", (key,))
