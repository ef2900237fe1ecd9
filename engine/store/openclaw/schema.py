"""The OpenClaw schema clawmem knows: the newest ``schema_meta`` versions it has read, and the
tables and columns each feature needs.

OpenClaw's schema changes between releases, so every query names its columns (never ``*``) and
each feature checks the columns it needs first: a database that lacks one is refused for that
feature, with one line naming the table and the column, and everything else still opens.
"""

from __future__ import annotations

from collections.abc import Mapping

import apsw
from clawmem.engine.errors import ClawmemError

# The newest schema versions clawmem has read (OpenClaw 2026.9.6); a newer database is refused.
AGENT_SCHEMA_MAX = 23
STATE_SCHEMA_MAX = 18

SCHEMA_META: Mapping[str, tuple[str, ...]] = {"schema_meta": ("meta_key", "role", "schema_version", "app_version")}
AGENT_DATABASES: Mapping[str, tuple[str, ...]] = {"agent_databases": ("agent_id", "path", "schema_version")}
INDEX: Mapping[str, tuple[str, ...]] = {
    "memory_index_meta": ("key", "value"),
    "memory_index_state": ("revision",),
    "memory_index_sources": ("path", "source", "hash", "mtime", "size"),
    "memory_index_chunks": ("path", "source"),
}
SESSIONS: Mapping[str, tuple[str, ...]] = {
    "session_windows": (
        "session_id",
        "session_key",
        "created_at",
        "updated_at",
        "started_at",
        "ended_at",
        "status",
        "chat_type",
        "channel",
    ),
    "transcript_events": ("session_id", "seq", "event_json", "created_at"),
}
# Read when present: older schemas have no compressed rows, and these only add detail.
SESSION_OPTIONAL: Mapping[str, tuple[str, ...]] = {
    "session_windows": ("account_id", "model_provider", "model", "display_name"),
    "transcript_events": ("event_zstd", "event_utf8_bytes"),
}

# Standing intents (agent DB) and the gateway's scheduled jobs (state DB).
INTENTS: Mapping[str, tuple[str, ...]] = {
    "standing_intents": (
        "id",
        "description",
        "trigger_keywords",
        "channel_scope",
        "sender_scope",
        "creator_sender",
        "status",
        "expires_at",
        "max_fires",
        "fire_count",
        "cooldown_seconds",
        "last_fired_at",
        "created_at",
        "source_session_id",
    ),
}
JOBS: Mapping[str, tuple[str, ...]] = {
    "cron_jobs": ("job_id", "name", "description", "enabled", "agent_id", "job_json", "state_json", "sort_order"),
}


class SchemaRefused(ClawmemError):
    """A database lacks a table or column a feature needs, or is newer than clawmem knows."""


def table_columns(conn: apsw.Connection, table: str) -> tuple[str, ...] | None:
    """The table's column names, or None when there is no such table."""
    names = tuple(str(row[1]) for row in conn.execute("SELECT * FROM pragma_table_info(?)", (table,)))
    return names or None


def present_columns(conn: apsw.Connection, table: str, wanted: tuple[str, ...]) -> tuple[str, ...]:
    have = table_columns(conn, table) or ()
    return tuple(c for c in wanted if c in have)


def require(conn: apsw.Connection, needs: Mapping[str, tuple[str, ...]], where: str, what: str) -> None:
    """Refuse (one line) when a needed table or column is missing."""
    for table, columns in needs.items():
        have = table_columns(conn, table)
        if have is None:
            raise SchemaRefused(f"{where}: it has no table {table}, so {what} cannot be read")
        for column in columns:
            if column not in have:
                raise SchemaRefused(f"{where}: table {table} has no column {column}, so {what} cannot be read")


# Dreaming's short-term recall store and its recall events (memory-core's plugin state, state DB).
DREAMING: Mapping[str, tuple[str, ...]] = {
    "plugin_state_entries": ("plugin_id", "namespace", "entry_key", "value_json", "created_at"),
}
