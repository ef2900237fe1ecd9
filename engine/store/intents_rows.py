"""SQL of standing intents (docs/memory-core.md §6) and their fire history. Times are epoch milliseconds."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import apsw

COLUMNS = (
    "intent_key, id, description, trigger_keywords, trigger_embedding, channel_scope, sender_scope, "
    "creator_sender, status, expires_at, max_fires, fire_count, cooldown_seconds, last_fired_at, created_at, "
    "source_session_id"
)
_PREFIXED = ", ".join(f"i.{c.strip()}" for c in COLUMNS.split(","))


@dataclass(frozen=True)
class IntentRow:
    intent_key: int
    id: str
    description: str
    trigger_keywords: str  # JSON array text, as stored
    trigger_embedding: str | None
    channel_scope: str | None
    sender_scope: str | None
    creator_sender: str | None
    status: str
    expires_at: int
    max_fires: int
    fire_count: int
    cooldown_seconds: int
    last_fired_at: int | None
    created_at: int
    source_session_id: str | None


@dataclass(frozen=True)
class FireRow:
    intent_id: str
    fired_at: int
    channel: str | None
    sender: str | None
    prompt_excerpt: str


def _row(r: tuple) -> IntentRow:  # type: ignore[type-arg]
    return IntentRow(*r)


@contextmanager
def transaction(conn: apsw.Connection, *, commit: bool = True) -> Iterator[apsw.Connection]:
    """An IMMEDIATE transaction; ``commit=False`` rolls everything back (a dry run)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT" if commit else "ROLLBACK")


def insert(
    conn: apsw.Connection,
    *,
    id: str,
    description: str,
    trigger_keywords: str,
    channel_scope: str | None,
    sender_scope: str | None,
    creator_sender: str,
    expires_at: int,
    max_fires: int,
    cooldown_seconds: int,
    created_at: int,
    source_session_id: str | None,
) -> IntentRow:
    conn.execute(
        "INSERT INTO standing_intents (id, description, trigger_keywords, trigger_embedding, channel_scope, "
        "sender_scope, creator_sender, status, expires_at, max_fires, fire_count, cooldown_seconds, last_fired_at, "
        "created_at, source_session_id) VALUES (?, ?, ?, NULL, ?, ?, ?, 'armed', ?, ?, 0, ?, NULL, ?, ?)",
        (
            id,
            description,
            trigger_keywords,
            channel_scope,
            sender_scope,
            creator_sender,
            expires_at,
            max_fires,
            cooldown_seconds,
            created_at,
            source_session_id,
        ),
    )
    row = get(conn, id)
    assert row is not None
    return row


def get(conn: apsw.Connection, intent_id: str) -> IntentRow | None:
    row = next(iter(conn.execute(f"SELECT {COLUMNS} FROM standing_intents WHERE id = ?", (intent_id,))), None)
    return _row(row) if row else None


def find_by_prefix(conn: apsw.Connection, prefix: str, limit: int = 3) -> list[IntentRow]:
    """Rows whose id starts with ``prefix`` (ids are lowercase hex uuids)."""
    return [
        _row(r)
        for r in conn.execute(
            f"SELECT {COLUMNS} FROM standing_intents WHERE substr(id, 1, ?) = ? ORDER BY created_at, id LIMIT ?",
            (len(prefix), prefix, limit),
        )
    ]


def all_rows(conn: apsw.Connection, status: str | None = None) -> list[IntentRow]:
    if status is None:
        cursor = conn.execute(f"SELECT {COLUMNS} FROM standing_intents ORDER BY created_at, id")
    else:
        cursor = conn.execute(
            f"SELECT {COLUMNS} FROM standing_intents WHERE status = ? ORDER BY created_at, id", (status,)
        )
    return [_row(r) for r in cursor]


def sweep(conn: apsw.Connection, now_ms: int) -> tuple[int, int]:
    """Expire live rows past their expiry, re-arm fired rows whose cooldown elapsed: (expired, re-armed)."""
    conn.execute(
        "UPDATE standing_intents SET status = 'expired' "
        "WHERE status IN ('pending', 'armed', 'fired') AND expires_at <= ?",
        (now_ms,),
    )
    expired = conn.changes()
    conn.execute(
        "UPDATE standing_intents SET status = 'armed' "
        "WHERE status = 'fired' AND expires_at > ? AND fire_count < max_fires "
        "AND last_fired_at IS NOT NULL AND last_fired_at + cooldown_seconds * 1000 <= ?",
        (now_ms, now_ms),
    )
    return expired, conn.changes()


def candidate_page(
    conn: apsw.Connection,
    *,
    fts_query: str | None,
    cjk_glob: str | None,
    now_ms: int,
    channel: str | None,
    sender: str | None,
    after: tuple[int, str] | None,
    limit: int,
) -> list[IntentRow]:
    """One page of the spec's prefilter: FTS hits (or, for CJK prompts, rows with CJK keywords)
    that are armed, unexpired, under max_fires and in scope, ordered by created_at, id."""
    lexical: list[str] = []
    params: dict[str, object] = {"now": now_ms, "limit": limit}
    if fts_query:
        lexical.append("i.intent_key IN (SELECT rowid FROM standing_intents_fts WHERE standing_intents_fts MATCH :q)")
        params["q"] = fts_query
    if cjk_glob:
        lexical.append("i.trigger_keywords GLOB :g")
        params["g"] = cjk_glob
    if not lexical:
        return []
    where = [
        "(" + " OR ".join(lexical) + ")",
        "i.status = 'armed'",
        "i.expires_at > :now",
        "i.fire_count < i.max_fires",
    ]
    if channel is None:
        where.append("i.channel_scope IS NULL")
    else:
        where.append("(i.channel_scope IS NULL OR i.channel_scope = :channel)")
        params["channel"] = channel
    if sender is None:
        where.append("i.sender_scope IS NULL")
    else:
        where.append("(i.sender_scope IS NULL OR i.sender_scope = :sender)")
        params["sender"] = sender
    if after is not None:
        where.append("(i.created_at > :after_at OR (i.created_at = :after_at AND i.id > :after_id))")
        params["after_at"], params["after_id"] = after
    sql = (
        f"SELECT {_PREFIXED} FROM standing_intents AS i WHERE {' AND '.join(where)} "
        "ORDER BY i.created_at, i.id LIMIT :limit"
    )
    return [_row(r) for r in conn.execute(sql, params)]


def mark_fired(conn: apsw.Connection, intent_id: str, *, fire_count: int, fired_at: int, status: str) -> bool:
    conn.execute(
        "UPDATE standing_intents SET fire_count = ?, last_fired_at = ?, status = ? WHERE id = ? AND status = 'armed'",
        (fire_count, fired_at, status, intent_id),
    )
    return conn.changes() == 1


def insert_fire(
    conn: apsw.Connection, intent_id: str, *, fired_at: int, channel: str | None, sender: str | None, excerpt: str
) -> None:
    conn.execute(
        "INSERT INTO standing_intent_fires (intent_id, fired_at, channel, sender, prompt_excerpt) "
        "VALUES (?, ?, ?, ?, ?)",
        (intent_id, fired_at, channel, sender, excerpt),
    )


def fires(conn: apsw.Connection, intent_id: str | None = None, limit: int = 200) -> list[FireRow]:
    """Fire history, newest first (of one intent, or of all)."""
    if intent_id is None:
        cursor = conn.execute(
            "SELECT intent_id, fired_at, channel, sender, prompt_excerpt FROM standing_intent_fires "
            "ORDER BY fired_at DESC, fire_key DESC LIMIT ?",
            (limit,),
        )
    else:
        cursor = conn.execute(
            "SELECT intent_id, fired_at, channel, sender, prompt_excerpt FROM standing_intent_fires "
            "WHERE intent_id = ? ORDER BY fired_at DESC, fire_key DESC LIMIT ?",
            (intent_id, limit),
        )
    return [FireRow(*r) for r in cursor]


def cancel(conn: apsw.Connection, intent_id: str) -> bool:
    conn.execute(
        "UPDATE standing_intents SET status = 'cancelled' WHERE id = ? AND status IN ('pending', 'armed', 'fired')",
        (intent_id,),
    )
    return conn.changes() == 1
