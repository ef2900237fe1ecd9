"""Connecting to PostgreSQL: one line for every way it can fail, the password never printed.

``store.url`` is a libpq URL (``postgresql://user:password@host:5432/db``; a socket folder as
``?host=/path``). A missing server, an unreachable host, wrong credentials and a database
without the ``vector`` extension each raise :class:`StoreUnavailable` with one line that names
the server (user, host, port, database; never the password) and what to do. Nothing is created
until the connection and the extension are known good.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from clawmem.engine.errors import ClawmemError

CONNECT_TIMEOUT_S = 5  # an unreachable host answers in seconds, not a TCP timeout of minutes


class StoreUnavailable(ClawmemError):
    """The PostgreSQL store named by ``store.url`` cannot be used; nothing was written."""


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def describe(url: str) -> str:
    """``user@host:port/db`` of a libpq URL, for messages and ``status`` (no password)."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    host = parts.hostname or (query.get("host") or ["localhost"])[0]
    port = parts.port or int((query.get("port") or ["5432"])[0])
    user = parts.username or (query.get("user") or [""])[0]
    db = parts.path.lstrip("/") or (query.get("dbname") or [user or "postgres"])[0]
    return f"{user + '@' if user else ''}{host}:{port}/{db}"


def driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise StoreUnavailable(
            "store.url names PostgreSQL but the psycopg driver is not installed: pip install 'clawmem[postgres]'"
        ) from None
    return psycopg


def server_reason(exc: Exception) -> str:
    """The server's or libpq's own words, on one line, without the connection string: the part
    after the last ``failed:`` of ``connection to server … failed: FATAL:  role … does not exist``."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    line = lines[0].rsplit("failed:", 1)[-1].strip() or lines[0]
    for prefix in ("FATAL:", "ERROR:"):
        line = line.removeprefix(prefix).strip()
    return " ".join(line.split())


def connect(url: str, *, application: str = "clawmem") -> Any:
    """An open psycopg connection (autocommit off) to a database that has pgvector, or
    :class:`StoreUnavailable`. Creates the ``vector`` extension when it is available but not
    yet created (which needs the right to); refuses when the server does not have it."""
    if not is_postgres_url(url):
        raise StoreUnavailable(f"store.url must start with postgresql:// (got {url.split(':', 1)[0]!r})")
    psycopg = driver()
    where = describe(url)
    try:
        conn = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, application_name=application)
    except psycopg.OperationalError as exc:
        reason = server_reason(exc)
        low = reason.lower()
        if any(k in low for k in ("password authentication failed", "no password supplied", 'role "')):
            raise StoreUnavailable(f"PostgreSQL at {where} refused the credentials: {reason}") from None
        if "does not exist" in low and "database" in low:
            raise StoreUnavailable(
                f"PostgreSQL at {where}: {reason} (create it, or name another in store.url)"
            ) from None
        raise StoreUnavailable(f"cannot reach PostgreSQL at {where}: {reason}") from None
    except psycopg.Error as exc:
        raise StoreUnavailable(f"cannot use PostgreSQL at {where}: {server_reason(exc)}") from None
    # Never prepared statements: psycopg prepares a query after five runs, and the server may
    # then plan it once for any parameters. A search's full-text queries take the tsquery as a
    # parameter, and how many chunks a term matches decides the plan (the GIN index or a walk
    # of the table), so each query is planned with its own values.
    conn.prepare_threshold = None
    try:
        _ensure_vector(conn, where, psycopg)
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_vector(conn: Any, where: str, psycopg: Any) -> None:
    row = conn.execute(
        "SELECT installed_version, default_version FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()
    if row is None:
        conn.rollback()
        raise StoreUnavailable(
            f"PostgreSQL at {where} has no pgvector extension: install pgvector on the server "
            "(clawmem keeps its vectors there)"
        )
    if row[0] is None:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.commit()
        except psycopg.Error as exc:
            conn.rollback()
            raise StoreUnavailable(
                f"PostgreSQL at {where} has pgvector but it is not enabled in this database, and "
                f"clawmem may not enable it ({server_reason(exc)}): run CREATE EXTENSION vector as its owner"
            ) from None
    else:
        conn.rollback()


def server_version(conn: Any) -> tuple[str, str]:
    """(PostgreSQL version, pgvector version) of an open connection."""
    pg = conn.execute("SHOW server_version").fetchone()[0]
    vec = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    conn.rollback()
    return str(pg), str(vec[0]) if vec else ""
