"""The shared recall journal on PostgreSQL: every machine's recall observations, in order.

A search records recall signals where Dreaming reads them, in its own machine's SQLite
(engine/recall.py), in the same store as the Dreaming state those rows are updated with. With a
shared index each machine also appends its observations here, one row per (entry, query), and
replays the other machines' rows after its cursor (engine/recall_sharing.py). A forget appends
one ``forget`` row per entry key and deletes that entry's observations, so the forgotten text
leaves the server and every other machine drops the entry when it replays, and one
``forget-text`` row per forgotten text hash, whose cached and line vectors every machine drops.

Appends take one transaction-level advisory lock, so ids are handed out and committed in order
and a reader's cursor never skips a row that commits later. The journal keeps its newest
:data:`KEEP` rows; a machine away for longer misses the oldest signals, never more.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

KEEP = 50_000  # rows kept (a row is about 1 kB: 50 MB at most)
_APPEND_LOCK = 0x636C61776D6A  # "clawmj": appends of one database take turns


@dataclass(frozen=True)
class JournalRow:
    id: int
    machine: str
    kind: str  # "recall" (body: an observation), "forget" (body empty) or "forget-text"
    entry_key: str  # the recall entry's key; for "forget-text", the text's hash
    body: Mapping[str, object]


def append(conn: Any, machine: str, at: int, rows: Sequence[tuple[str, str, Mapping[str, object]]]) -> int:
    """Append (kind, entry key, body) rows as ``machine`` in one transaction (committed); the
    last id written (0 when ``rows`` is empty). A ``forget`` row also deletes the entry's
    observations, so its text is gone from the server."""
    if not rows:
        return 0
    try:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_APPEND_LOCK,))
        forgotten = [key for kind, key, _ in rows if kind == "forget"]
        if forgotten:
            conn.execute(
                "DELETE FROM memory_recall_journal WHERE kind = 'recall' AND entry_key = ANY(%s)", (forgotten,)
            )
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO memory_recall_journal (machine, kind, entry_key, recorded_at, body) "
                "VALUES (%s, %s, %s, %s, %s::jsonb)",
                [(machine, kind, key, at, json.dumps(dict(body), ensure_ascii=False)) for kind, key, body in rows],
            )
        (last,) = conn.execute("SELECT max(id) FROM memory_recall_journal").fetchone()
        conn.execute("DELETE FROM memory_recall_journal WHERE id <= %s", (int(last) - KEEP,))
    except BaseException:
        conn.rollback()
        raise
    conn.commit()
    return int(last)


def since(conn: Any, after: int, machine: str, limit: int = 1_000) -> list[JournalRow]:
    """Other machines' rows after id ``after``, oldest first, at most ``limit``. Reads only."""
    rows = conn.execute(
        "SELECT id, machine, kind, entry_key, body FROM memory_recall_journal WHERE id > %s AND machine != %s "
        "ORDER BY id LIMIT %s",
        (after, machine, limit),
    ).fetchall()
    conn.rollback()
    return [JournalRow(int(r[0]), str(r[1]), str(r[2]), str(r[3]), r[4] or {}) for r in rows]


def summary(conn: Any) -> tuple[int, int]:
    """(observations kept, machines that made them), for ``status``. Reads only."""
    rows, machines = conn.execute(
        "SELECT count(*), count(DISTINCT machine) FROM memory_recall_journal WHERE kind = 'recall'"
    ).fetchone()
    conn.rollback()
    return int(rows), int(machines)


def observations_of(conn: Any, entry_keys: Sequence[str]) -> dict[str, int]:
    """Entry key -> how many observations of it the journal holds (forget's residual check). Reads only."""
    rows = conn.execute(
        "SELECT entry_key, count(*) FROM memory_recall_journal WHERE kind = 'recall' AND entry_key = ANY(%s) "
        "GROUP BY entry_key",
        (list(entry_keys),),
    ).fetchall()
    conn.rollback()
    return {str(k): int(n) for k, n in rows}
