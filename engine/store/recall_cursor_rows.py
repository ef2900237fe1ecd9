"""SQL of this machine's recall journal cursors (engine/store/recall_journal_schema.py)."""

from __future__ import annotations

import apsw


def get(conn: apsw.Connection, index_key: str) -> tuple[str, int] | None:
    """(this machine's name in that journal, the last id replayed), or None before first use."""
    row = next(
        iter(conn.execute("SELECT machine, last_id FROM recall_journal_cursor WHERE index_key = ?", (index_key,))),
        None,
    )
    return (str(row[0]), int(row[1])) if row else None


def create(conn: apsw.Connection, index_key: str, machine: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO recall_journal_cursor (index_key, machine, last_id) VALUES (?, ?, 0)",
        (index_key, machine),
    )


def advance(conn: apsw.Connection, index_key: str, last_id: int) -> None:
    conn.execute("UPDATE recall_journal_cursor SET last_id = max(last_id, ?) WHERE index_key = ?", (last_id, index_key))
