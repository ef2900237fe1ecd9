"""The shared PostgreSQL index that ``store.url`` names, as one open agent uses it.

Connections are opened on first use and kept in a small pool: a psycopg connection carries one
transaction at a time, and a search (on a worker thread of the app, or of the MCP server) must
never share one with a publish running on the index thread. The first connection creates or
upgrades the schema (engine/store/postgres/schema.py); every one points its ``search_path`` at it.
A connection that broke is dropped, not returned to the pool.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from clawmem.engine.store.postgres import locks
from clawmem.engine.store.postgres.connect import (
    StoreUnavailable,
    connect,
    describe,
    driver,
    server_reason,
    server_version,
)
from clawmem.engine.store.postgres.schema import ensure_schema, use_schema

POOL = 4  # idle connections kept: the index thread, a search, the app's status, one spare


class SharedIndex:
    """The index in ``schema`` of the PostgreSQL database at ``url``."""

    def __init__(self, url: str, schema: str, *, lock_timeout: float = 30.0) -> None:
        self.url = url
        self.schema = schema
        self.lock_timeout = lock_timeout  # how long a Markdown write waits for another machine's
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._ready = False  # the schema has been created or checked by this process

    @property
    def where(self) -> str:
        """``user@host:port/db, schema s`` (never the password), for messages and ``status``."""
        return f"{describe(self.url)}, schema {self.schema}"

    @property
    def key(self) -> str:
        """What names this index in the search caches."""
        return f"postgresql://{describe(self.url)}#{self.schema}"

    def _open(self) -> Any:
        conn = connect(self.url)
        try:
            if not self._ready:
                ensure_schema(conn, self.schema)
                self._ready = True
            else:
                use_schema(conn, self.schema)
        except StoreUnavailable:
            conn.close()
            raise
        except Exception as exc:  # a server that vanished between connect and the schema
            conn.close()
            raise StoreUnavailable(f"cannot use PostgreSQL at {self.where}: {str(exc).splitlines()[0]}") from None
        return conn

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """A connection of this process's own (from the pool, or new) for one unit of work,
        returned to the pool after it unless it broke; any transaction left open is rolled back.
        The server going away mid-work is :class:`StoreUnavailable`, one line."""
        psycopg = driver()
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._open()
        try:
            yield conn
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"lost PostgreSQL at {self.where}: {server_reason(exc)}") from None
        finally:
            self._give_back(conn)

    def _give_back(self, conn: Any) -> None:
        """Back to the pool when it is healthy and the pool has room; closed otherwise."""
        healthy = False
        if not (conn.closed or conn.broken):
            with contextlib.suppress(Exception):
                conn.rollback()
                healthy = True
        with self._lock:
            if healthy and len(self._idle) < POOL:
                self._idle.append(conn)
                return
        with contextlib.suppress(Exception):
            conn.close()

    @contextlib.contextmanager
    def file_lock(self, rel_path: str) -> Iterator[None]:
        """Hold this workspace file's advisory lock on the server (engine/store/postgres/locks.py)
        for the ``with`` body: a write of it on another machine waits, then gives up in one line."""
        with self.connection() as conn, locks.file_lock(conn, self.schema, rel_path, timeout=self.lock_timeout):
            yield

    def check(self) -> None:
        """Connect now (and create the schema): :class:`StoreUnavailable`, one line, when it
        cannot be used — before the caller writes anything."""
        with self.connection():
            pass

    def summary(self) -> str:
        """One line for ``status``: the server, where, and what the shared index holds; the
        one-line reason instead when it cannot be reached (status never fails for it)."""
        try:
            with self.connection() as conn:
                pg, vector = server_version(conn)
                revision, chunks, files, embedded = conn.execute(
                    "SELECT revision, chunks, sources, vectors FROM memory_index_state WHERE id = 1"
                ).fetchone()
        except StoreUnavailable as exc:
            return f"unavailable: {exc}"
        return (
            f"PostgreSQL {pg} + pgvector {vector} at {self.where} · revision {revision} · "
            f"{files} files · {chunks} chunks ({embedded} embedded) · searched there"
        )

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            with contextlib.suppress(Exception):
                conn.close()
