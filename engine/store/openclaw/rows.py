"""Queries on OpenClaw's databases, by column name. Each takes a read-only connection from
:func:`~engine.store.openclaw.readonly.read` and returns plain rows; the callers check the
columns first (:mod:`.schema`). Optional columns come back as None when the table lacks them."""

from __future__ import annotations

from dataclasses import dataclass

import apsw
from clawmem.engine.store.openclaw.schema import INTENTS, JOBS, SESSION_OPTIONAL, SESSIONS, present_columns


@dataclass(frozen=True)
class SchemaMetaRow:
    meta_key: str
    role: str
    schema_version: int
    app_version: str | None
    agent_id: str | None


@dataclass(frozen=True)
class AgentDatabaseRow:
    agent_id: str
    path: str
    schema_version: int


@dataclass(frozen=True)
class SourceRow:
    path: str
    source: str
    hash: str
    mtime: float
    size: int


@dataclass(frozen=True)
class WindowRow:
    session_id: str
    session_key: str
    created_at: int
    updated_at: int
    started_at: int | None
    ended_at: int | None
    status: str | None
    chat_type: str | None
    channel: str | None
    account_id: str | None
    model_provider: str | None
    model: str | None
    display_name: str | None


@dataclass(frozen=True)
class EventRow:
    session_id: str
    seq: int
    created_at: int
    event_json: str | None
    event_zstd: bytes | None
    event_utf8_bytes: int | None


def schema_meta(conn: apsw.Connection) -> list[SchemaMetaRow]:
    agent = "agent_id" if "agent_id" in present_columns(conn, "schema_meta", ("agent_id",)) else "NULL"
    sql = f"SELECT meta_key, role, schema_version, app_version, {agent} FROM schema_meta ORDER BY meta_key"
    return [SchemaMetaRow(str(k), str(r), int(v), a, g) for k, r, v, a, g in conn.execute(sql)]


def agent_databases(conn: apsw.Connection) -> list[AgentDatabaseRow]:
    sql = "SELECT agent_id, path, schema_version FROM agent_databases ORDER BY agent_id, path"
    return [AgentDatabaseRow(str(a), str(p), int(v)) for a, p, v in conn.execute(sql)]


def index_meta(conn: apsw.Connection) -> dict[str, str]:
    return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM memory_index_meta")}


def index_revision(conn: apsw.Connection) -> int | None:
    row = next(iter(conn.execute("SELECT MAX(revision) FROM memory_index_state")), None)
    return None if row is None or row[0] is None else int(row[0])


def index_sources(conn: apsw.Connection) -> list[SourceRow]:
    sql = "SELECT path, source, hash, mtime, size FROM memory_index_sources ORDER BY source, path"
    return [SourceRow(str(p), str(s), str(h), float(m), int(z)) for p, s, h, m, z in conn.execute(sql)]


def chunk_counts(conn: apsw.Connection) -> dict[tuple[str, str], int]:
    sql = "SELECT path, source, COUNT(*) FROM memory_index_chunks GROUP BY path, source"
    return {(str(p), str(s)): int(n) for p, s, n in conn.execute(sql)}


def _select(conn: apsw.Connection, table: str) -> str:
    """The needed columns, then each optional one (NULL where the table lacks it)."""
    have = set(present_columns(conn, table, SESSION_OPTIONAL[table]))
    return ", ".join([*SESSIONS[table], *(c if c in have else "NULL" for c in SESSION_OPTIONAL[table])])


def windows(conn: apsw.Connection) -> list[WindowRow]:
    sql = f"SELECT {_select(conn, 'session_windows')} FROM session_windows ORDER BY created_at DESC, session_id"
    return [WindowRow(*row) for row in conn.execute(sql)]


def events(conn: apsw.Connection, session_ids: list[str] | None = None) -> list[EventRow]:
    """Transcript events in order, of every session or of the given ones."""
    if session_ids == []:
        return []
    have = set(present_columns(conn, "transcript_events", SESSION_OPTIONAL["transcript_events"]))
    zstd = "event_zstd" if "event_zstd" in have else "NULL"
    size = "event_utf8_bytes" if "event_utf8_bytes" in have else "NULL"
    sql = f"SELECT session_id, seq, created_at, event_json, {zstd}, {size} FROM transcript_events"
    params: tuple[str, ...] = ()
    if session_ids is not None:
        sql += f" WHERE session_id IN ({', '.join('?' * len(session_ids))})"
        params = tuple(session_ids)
    sql += " ORDER BY session_id, seq"
    return [
        EventRow(str(s), int(q), int(c), j, bytes(z) if z is not None else None, b)
        for s, q, c, j, z, b in conn.execute(sql, params)
    ]


def transcript_stamps(conn: apsw.Connection) -> dict[str, int]:
    """Each session's last change (epoch ms): its window's update or its newest event, whichever is later."""
    stamps = {str(s): int(u) for s, u in conn.execute("SELECT session_id, updated_at FROM session_windows")}
    for s, newest in conn.execute("SELECT session_id, MAX(created_at) FROM transcript_events GROUP BY session_id"):
        if str(s) in stamps and newest is not None:
            stamps[str(s)] = max(stamps[str(s)], int(newest))
    return stamps


def event_counts(conn: apsw.Connection) -> dict[str, int]:
    sql = "SELECT session_id, COUNT(*) FROM transcript_events GROUP BY session_id"
    return {str(s): int(n) for s, n in conn.execute(sql)}


def table_count(conn: apsw.Connection, table: str) -> int:
    """Rows in one of the tables :data:`~.schema.SESSIONS` names."""
    if table not in SESSIONS:
        raise ValueError(table)
    return int(next(iter(conn.execute(f"SELECT COUNT(*) FROM {table}")))[0])


# ------------------------------------------------------------------------------ plugin state (state DB)


@dataclass(frozen=True)
class PluginStateRow:
    namespace: str
    entry_key: str
    value_json: str
    created_at: int


def plugin_state(conn: apsw.Connection, plugin_id: str, namespaces: tuple[str, ...]) -> list[PluginStateRow]:
    """One plugin's ``plugin_state_entries`` in these namespaces, in key order."""
    sql = (
        "SELECT namespace, entry_key, value_json, created_at FROM plugin_state_entries "
        f"WHERE plugin_id = ? AND namespace IN ({', '.join('?' * len(namespaces))}) ORDER BY namespace, entry_key"
    )
    return [
        PluginStateRow(str(n), str(k), str(v), int(c or 0))
        for n, k, v, c in conn.execute(sql, (plugin_id, *namespaces))
    ]


@dataclass(frozen=True)
class IntentRow:
    id: str
    description: str
    trigger_keywords: str
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


def standing_intents(conn: apsw.Connection) -> list[IntentRow]:
    sql = f"SELECT {', '.join(INTENTS['standing_intents'])} FROM standing_intents ORDER BY created_at, id"
    return [IntentRow(*row) for row in conn.execute(sql)]


@dataclass(frozen=True)
class CronJobRow:
    job_id: str
    name: str
    description: str | None
    enabled: int
    agent_id: str | None
    job_json: str
    state_json: str
    sort_order: int


def cron_jobs(conn: apsw.Connection) -> list[CronJobRow]:
    sql = f"SELECT {', '.join(JOBS['cron_jobs'])} FROM cron_jobs ORDER BY sort_order, name, job_id"
    return [CronJobRow(*row) for row in conn.execute(sql)]
