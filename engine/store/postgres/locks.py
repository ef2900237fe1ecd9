"""An advisory lock per Markdown file, for writers on several machines (issue 39).

The folder lock (engine/workspace/writes.py) keeps two writers on one machine apart; two
machines that share a workspace over a network volume share no lock file they can trust. With a
PostgreSQL store they share the server, so a Markdown write also takes a transaction-level
advisory lock keyed by the file (the index schema and the workspace-relative path): a second
machine's write of the same file waits for the first to commit or to die (a dropped connection
releases its locks), and gives up after ``timeout`` seconds with one line.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from typing import Any

from clawmem.engine.errors import ClawmemError


class FileLockTimeout(ClawmemError):
    """Another clawmem process holds the file's lock on the shared store for too long."""


def lock_key(schema: str, rel_path: str) -> int:
    """The signed 64-bit advisory key of one file of one shared index."""
    digest = hashlib.blake2b(f"{schema}\0{rel_path}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@contextlib.contextmanager
def file_lock(conn: Any, schema: str, rel_path: str, *, timeout: float = 30.0) -> Iterator[None]:
    """Hold the file's advisory lock for the ``with`` body (one transaction on ``conn``)."""
    import psycopg  # only a PostgreSQL store gets here (clawmem[postgres])

    try:
        conn.execute(f"SET LOCAL lock_timeout = '{max(1, int(timeout * 1000))}ms'")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(schema, rel_path),))
    except psycopg.errors.LockNotAvailable:
        conn.rollback()
        raise FileLockTimeout(
            f"{rel_path} is being written by another clawmem on the shared store; nothing was written "
            f"(waited {timeout:g} s) — try again"
        ) from None
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.commit()
