"""SQL of the sessions component: windows, transcript events and their trust, transcript search,
flush provenance segments and tracked-file states, plus the core lookups sessions need
(tombstones, origin rows)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import apsw

# ---------------------------------------------------------------------------------------- windows

WINDOW_COLUMNS = (
    "session_id, session_key, kind, channel, sender, started_at, ended_at, event_count, imported_at, "
    "source_file, note_path"
)


@dataclass(frozen=True)
class WindowRow:
    session_id: str
    session_key: str
    kind: str
    channel: str
    sender: str
    started_at: int
    ended_at: int
    event_count: int
    imported_at: int
    source_file: str | None
    note_path: str | None


def insert_window(conn: apsw.Connection, w: WindowRow) -> None:
    conn.execute(
        f"INSERT INTO session_windows ({WINDOW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            w.session_id,
            w.session_key,
            w.kind,
            w.channel,
            w.sender,
            w.started_at,
            w.ended_at,
            w.event_count,
            w.imported_at,
            w.source_file,
            w.note_path,
        ),
    )


def get_window(conn: apsw.Connection, session_id: str) -> WindowRow | None:
    row = next(
        iter(conn.execute(f"SELECT {WINDOW_COLUMNS} FROM session_windows WHERE session_id = ?", (session_id,))), None
    )
    return WindowRow(*row) if row else None


def windows_by_key(conn: apsw.Connection, session_key: str) -> list[WindowRow]:
    sql = f"SELECT {WINDOW_COLUMNS} FROM session_windows WHERE session_key = ? ORDER BY started_at, session_id"
    return [WindowRow(*r) for r in conn.execute(sql, (session_key,))]


def all_windows(conn: apsw.Connection) -> list[WindowRow]:
    sql = f"SELECT {WINDOW_COLUMNS} FROM session_windows ORDER BY started_at DESC, session_id"
    return [WindowRow(*r) for r in conn.execute(sql)]


def set_note_path(conn: apsw.Connection, session_id: str, note_path: str | None) -> None:
    conn.execute("UPDATE session_windows SET note_path = ? WHERE session_id = ?", (note_path, session_id))


def clear_note_path(conn: apsw.Connection, note_path: str) -> None:
    conn.execute("UPDATE session_windows SET note_path = NULL WHERE note_path = ?", (note_path,))


def delete_window(conn: apsw.Connection, session_id: str) -> int:
    """Delete a session and (by cascade) its events, their trust rows and FTS rows."""
    conn.execute("DELETE FROM session_windows WHERE session_id = ?", (session_id,))
    return conn.changes()


def windows_with_note(conn: apsw.Connection, note_path: str) -> list[WindowRow]:
    sql = f"SELECT {WINDOW_COLUMNS} FROM session_windows WHERE note_path = ? ORDER BY session_id"
    return [WindowRow(*r) for r in conn.execute(sql, (note_path,))]


# ----------------------------------------------------------------------------------------- events


@dataclass(frozen=True)
class EventRow:
    session_id: str
    seq: int
    event_json: str
    created_at: int
    origin_class: str
    tainted: bool


def insert_event(
    conn: apsw.Connection, session_id: str, seq: int, event_json: str, created_at: int, origin: str, tainted: bool
) -> None:
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)",
        (session_id, seq, event_json, created_at),
    )
    conn.execute(
        "INSERT INTO transcript_event_trust (session_id, seq, origin_class, tainted) VALUES (?, ?, ?, ?)",
        (session_id, seq, origin, 1 if tainted else 0),
    )


def events(conn: apsw.Connection, session_id: str) -> list[EventRow]:
    sql = (
        "SELECT e.session_id, e.seq, e.event_json, e.created_at, COALESCE(t.origin_class, 'untrusted'), "
        "COALESCE(t.tainted, 0) FROM transcript_events e "
        "LEFT JOIN transcript_event_trust t ON t.session_id = e.session_id AND t.seq = e.seq "
        "WHERE e.session_id = ? ORDER BY e.seq"
    )
    return [EventRow(r[0], int(r[1]), r[2], int(r[3]), r[4], bool(r[5])) for r in conn.execute(sql, (session_id,))]


def event_texts_except(conn: apsw.Connection, session_ids: Sequence[str]) -> list[str]:
    """The text of every event of every session not in ``session_ids``."""
    marks = ", ".join("?" for _ in session_ids) or "''"
    sql = (
        "SELECT COALESCE(json_extract(event_json, '$.text'), '') FROM transcript_events "
        f"WHERE session_id NOT IN ({marks})"
    )
    return [str(r[0]) for r in conn.execute(sql, tuple(session_ids))]


@dataclass(frozen=True)
class TrustCount:
    session_id: str
    origin_class: str
    tainted: int
    count: int


def trust_counts(conn: apsw.Connection) -> list[TrustCount]:
    sql = (
        "SELECT session_id, origin_class, tainted, COUNT(*) FROM transcript_event_trust "
        "GROUP BY session_id, origin_class, tainted"
    )
    return [TrustCount(r[0], r[1], int(r[2]), int(r[3])) for r in conn.execute(sql)]


def network_counts(conn: apsw.Connection) -> dict[str, int]:
    sql = (
        "SELECT session_id, COUNT(*) FROM transcript_events "
        "WHERE json_extract(event_json, '$.network') = 1 GROUP BY session_id"
    )
    return {r[0]: int(r[1]) for r in conn.execute(sql)}


@dataclass(frozen=True)
class TranscriptMatch:
    session_id: str
    seq: int
    role: str
    snippet: str
    rank: float


def search_transcripts(conn: apsw.Connection, match: str, limit: int) -> list[TranscriptMatch]:
    sql = (
        "SELECT session_id, seq, role, snippet(session_transcript_fts, 0, '[', ']', '…', 16), "
        "bm25(session_transcript_fts) FROM session_transcript_fts WHERE session_transcript_fts MATCH ? "
        "ORDER BY bm25(session_transcript_fts) LIMIT ?"
    )
    return [TranscriptMatch(r[0], int(r[1]), r[2], r[3], float(r[4])) for r in conn.execute(sql, (match, limit))]


def transcript_fts_texts(conn: apsw.Connection, session_ids: Sequence[str]) -> list[tuple[str, int, str]]:
    marks = ", ".join("?" for _ in session_ids) or "''"
    sql = f"SELECT session_id, seq, text FROM session_transcript_fts WHERE session_id IN ({marks})"
    return [(r[0], int(r[1]), r[2]) for r in conn.execute(sql, tuple(session_ids))]


# ------------------------------------------------------------------------------------- tombstones


@dataclass(frozen=True)
class TombstoneRow:
    session_id: str
    agent_id: str
    reason: str
    created_at: int


def tombstone(conn: apsw.Connection, session_id: str) -> TombstoneRow | None:
    sql = "SELECT session_id, agent_id, reason, created_at FROM memory_session_tombstones WHERE session_id = ?"
    row = next(iter(conn.execute(sql, (session_id,))), None)
    return TombstoneRow(row[0], row[1], row[2], int(row[3])) if row else None


def tombstoned_ids(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT session_id FROM memory_session_tombstones")}


def all_tombstones(conn: apsw.Connection) -> list[TombstoneRow]:
    sql = "SELECT session_id, agent_id, reason, created_at FROM memory_session_tombstones ORDER BY created_at"
    return [TombstoneRow(r[0], r[1], r[2], int(r[3])) for r in conn.execute(sql)]


def insert_tombstone(conn: apsw.Connection, session_id: str, agent_id: str, reason: str, at: int) -> bool:
    conn.execute(
        "INSERT OR IGNORE INTO memory_session_tombstones (session_id, agent_id, reason, created_at) "
        "VALUES (?, ?, ?, ?)",
        (session_id, agent_id, reason, at),
    )
    return conn.changes() == 1


# ---------------------------------------------------------------------------------- origin rows


@dataclass(frozen=True)
class OriginRow:
    entry_key: str
    agent_id: str
    session_id: str
    session_key: str | None
    origin_class: str
    observed_at: int


_ORIGIN_COLUMNS = "entry_key, agent_id, session_id, session_key, origin_class, observed_at"


def origins_for_sessions(conn: apsw.Connection, session_ids: Iterable[str]) -> list[OriginRow]:
    ids = list(dict.fromkeys(session_ids))
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    sql = (
        f"SELECT {_ORIGIN_COLUMNS} FROM memory_entry_origins WHERE session_id IN ({marks}) "
        "ORDER BY entry_key, session_id"
    )
    return [OriginRow(*r) for r in conn.execute(sql, tuple(ids))]


def origins_for_entries(conn: apsw.Connection, entry_keys: Iterable[str]) -> list[OriginRow]:
    keys = list(dict.fromkeys(entry_keys))
    out: list[OriginRow] = []
    for key in keys:
        sql = f"SELECT {_ORIGIN_COLUMNS} FROM memory_entry_origins WHERE entry_key = ? ORDER BY agent_id, session_id"
        out.extend(OriginRow(*r) for r in conn.execute(sql, (key,)))
    return out


def entry_keys_with_origins(conn: apsw.Connection, agent_id: str) -> set[str]:
    return {
        r[0]
        for r in conn.execute("SELECT DISTINCT entry_key FROM memory_entry_origins WHERE agent_id = ?", (agent_id,))
    }


def known_origin_session(conn: apsw.Connection, session_id: str) -> str | None:
    """The session key an origin row recorded for a session no longer in ``session_windows``."""
    sql = "SELECT session_key FROM memory_entry_origins WHERE session_id = ? ORDER BY observed_at DESC LIMIT 1"
    row = next(iter(conn.execute(sql, (session_id,))), None)
    return None if row is None else (row[0] or "")


def origin_sessions_with_key(conn: apsw.Connection, session_key: str) -> list[str]:
    sql = "SELECT DISTINCT session_id FROM memory_entry_origins WHERE session_key = ? ORDER BY session_id"
    return [r[0] for r in conn.execute(sql, (session_key,))]


# ------------------------------------------------------------------------------- flush segments

SEGMENT_COLUMNS = (
    "path, seq, byte_start, byte_end, line_start, line_end, sha256, origin_class, kind, session_id, session_key, "
    "session_kind, status, created_at"
)


@dataclass(frozen=True)
class SegmentRow:
    path: str
    seq: int
    byte_start: int
    byte_end: int
    line_start: int
    line_end: int
    sha256: str
    origin_class: str  # agent | untrusted
    kind: str  # flush | note | external | changed
    session_id: str | None
    session_key: str | None
    session_kind: str | None
    status: str  # live | lost
    created_at: int


def _segment(r: tuple) -> SegmentRow:  # type: ignore[type-arg]
    return SegmentRow(
        r[0],
        int(r[1]),
        int(r[2]),
        int(r[3]),
        int(r[4]),
        int(r[5]),
        r[6],
        r[7],
        r[8],
        r[9],
        r[10],
        r[11],
        r[12],
        int(r[13]),
    )


def segments_for_path(conn: apsw.Connection, path: str) -> list[SegmentRow]:
    sql = f"SELECT {SEGMENT_COLUMNS} FROM memory_flush_segments WHERE path = ? ORDER BY seq"
    return [_segment(r) for r in conn.execute(sql, (path,))]


def segments_for_sessions(conn: apsw.Connection, session_ids: Iterable[str]) -> list[SegmentRow]:
    ids = list(dict.fromkeys(session_ids))
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    sql = f"SELECT {SEGMENT_COLUMNS} FROM memory_flush_segments WHERE session_id IN ({marks}) ORDER BY path, seq"
    return [_segment(r) for r in conn.execute(sql, tuple(ids))]


def segment_paths(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT DISTINCT path FROM memory_flush_segments")} | {
        r[0] for r in conn.execute("SELECT path FROM memory_flush_files")
    }


def segment_counts(conn: apsw.Connection) -> dict[str, int]:
    sql = "SELECT session_id, COUNT(*) FROM memory_flush_segments WHERE session_id IS NOT NULL GROUP BY session_id"
    return {r[0]: int(r[1]) for r in conn.execute(sql)}


def next_segment_seq(conn: apsw.Connection, path: str) -> int:
    row = next(iter(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM memory_flush_segments WHERE path = ?", (path,))))
    return int(row[0]) + 1


def insert_segment(conn: apsw.Connection, s: SegmentRow) -> None:
    conn.execute(
        f"INSERT INTO memory_flush_segments ({SEGMENT_COLUMNS}) VALUES ({', '.join('?' * 14)})",
        (
            s.path,
            s.seq,
            s.byte_start,
            s.byte_end,
            s.line_start,
            s.line_end,
            s.sha256,
            s.origin_class,
            s.kind,
            s.session_id,
            s.session_key,
            s.session_kind,
            s.status,
            s.created_at,
        ),
    )


def update_segment_range(
    conn: apsw.Connection, path: str, seq: int, byte_start: int, byte_end: int, line_start: int, line_end: int, sha: str
) -> None:
    conn.execute(
        "UPDATE memory_flush_segments SET byte_start = ?, byte_end = ?, line_start = ?, line_end = ?, sha256 = ?, "
        "status = 'live' WHERE path = ? AND seq = ?",
        (byte_start, byte_end, line_start, line_end, sha, path, seq),
    )


def mark_segment_lost(conn: apsw.Connection, path: str, seq: int) -> None:
    conn.execute("UPDATE memory_flush_segments SET status = 'lost' WHERE path = ? AND seq = ?", (path, seq))


def delete_segment(conn: apsw.Connection, path: str, seq: int) -> None:
    conn.execute("DELETE FROM memory_flush_segments WHERE path = ? AND seq = ?", (path, seq))


def delete_segments_for_path(conn: apsw.Connection, path: str) -> int:
    conn.execute("DELETE FROM memory_flush_segments WHERE path = ?", (path,))
    return conn.changes()


def delete_segments_for_sessions(conn: apsw.Connection, session_ids: Iterable[str]) -> int:
    total = 0
    for sid in dict.fromkeys(session_ids):
        conn.execute("DELETE FROM memory_flush_segments WHERE session_id = ?", (sid,))
        total += conn.changes()
    return total


@dataclass(frozen=True)
class FileStateRow:
    path: str
    size: int
    sha256: str
    updated_at: int


def file_state(conn: apsw.Connection, path: str) -> FileStateRow | None:
    sql = "SELECT path, size, sha256, updated_at FROM memory_flush_files WHERE path = ?"
    row = next(iter(conn.execute(sql, (path,))), None)
    return FileStateRow(row[0], int(row[1]), row[2], int(row[3])) if row else None


def set_file_state(conn: apsw.Connection, path: str, size: int, sha: str, at: int) -> None:
    conn.execute(
        "INSERT INTO memory_flush_files (path, size, sha256, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (path) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256, "
        "updated_at = excluded.updated_at",
        (path, size, sha, at),
    )


def delete_file_state(conn: apsw.Connection, path: str) -> None:
    conn.execute("DELETE FROM memory_flush_files WHERE path = ?", (path,))


# ---------- entry origins, as lineage forget reads and deletes them


def delete_origins_for_entries(conn: apsw.Connection, keys: Iterable[str], agent_id: str) -> None:
    for key in dict.fromkeys(keys):
        conn.execute("DELETE FROM memory_entry_origins WHERE entry_key = ? AND agent_id = ?", (key, agent_id))


def delete_origins_for_sessions(conn: apsw.Connection, session_ids: Iterable[str], agent_id: str) -> None:
    for sid in dict.fromkeys(session_ids):
        conn.execute("DELETE FROM memory_entry_origins WHERE session_id = ? AND agent_id = ?", (sid, agent_id))


def origin_row_count(conn: apsw.Connection, *, keys: Sequence[str], session_ids: Sequence[str], agent_id: str) -> int:
    total = 0
    seen: set[tuple[str, str]] = set()
    for key in keys:
        sql = "SELECT entry_key, session_id FROM memory_entry_origins WHERE entry_key = ? AND agent_id = ?"
        seen.update((r[0], r[1]) for r in conn.execute(sql, (key, agent_id)))
    for sid in session_ids:
        sql = "SELECT entry_key, session_id FROM memory_entry_origins WHERE session_id = ? AND agent_id = ?"
        seen.update((r[0], r[1]) for r in conn.execute(sql, (sid, agent_id)))
    total = len(seen)
    return total


def other_agent_origin_count(conn: apsw.Connection, session_ids: Sequence[str], agent_id: str) -> int:
    total = 0
    for sid in session_ids:
        sql = "SELECT COUNT(*) FROM memory_entry_origins WHERE session_id = ? AND agent_id != ?"
        total += int(next(iter(conn.execute(sql, (sid, agent_id))))[0])
    return total
