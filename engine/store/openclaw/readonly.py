"""Open one of OpenClaw's SQLite files read-only, creating and changing no file beside it.

A plain ``mode=ro`` open is not enough: on a WAL-mode database SQLite creates ``-wal`` and
``-shm`` files when it can, and a reader writes its read mark into an existing ``-shm``. What
is safe depends on what is beside the file (checked before each read):

- **WAL database, no ``-wal`` file:** no connection has it open (a WAL connection keeps its
  ``-wal`` until the last one closes), so it is read with ``immutable=1`` (no locks, no side
  files). Should a gateway open it meanwhile, the read is repeated the next way.
- **WAL database with ``-wal`` and ``-shm``:** a gateway is running (or stopped uncleanly). It is
  read with ``mode=ro&readonly_shm=1``: the WAL's committed frames are seen, the ``-shm`` is
  opened read-only and never written, and the writer is never blocked (readers take no write
  locks in WAL mode).
- **WAL database with a ``-wal`` but no ``-shm``** (left by a crash): SQLite cannot read the WAL
  without creating a ``-shm``, so the database and its WAL are copied into a temporary folder
  outside the home and read there.
- **Rollback-journal database:** ``mode=ro`` with normal locking (a reader creates no journal).

Every failure is a one-line :class:`~engine.errors.ClawmemError`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

import apsw
from clawmem.engine.errors import ClawmemError

T = TypeVar("T")
BUSY_TIMEOUT_MS = 2_000
_HEADER = b"SQLite format 3\x00"

IMMUTABLE = "immutable"  # WAL database that no connection has open
READONLY_SHM = "readonly-shm"  # WAL database with a live (or stale) -wal and -shm
WAL_COPY = "wal-copy"  # WAL without -shm: read from a private copy
LOCKING = "locking"  # rollback-journal database, shared lock while reading


def side_file(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def journal_mode(path: Path) -> str:
    """``wal`` or ``rollback`` from the header (bytes 18–19 are 2 in WAL mode)."""
    try:
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise ClawmemError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(header) < 100 or not header.startswith(_HEADER):
        raise ClawmemError(f"{path} is not an SQLite database")
    return "wal" if header[18] == 2 and header[19] == 2 else "rollback"


def read_mode(path: Path) -> str:
    """How :func:`read` would open ``path`` now (see the module docstring)."""
    if journal_mode(path) != "wal":
        return LOCKING
    if not side_file(path, "-wal").exists():
        return IMMUTABLE
    return READONLY_SHM if side_file(path, "-shm").exists() else WAL_COPY


def _uri(path: Path, params: str) -> str:
    return f"file:{quote(str(path.resolve()))}?{params}"


def _connect(uri: str) -> apsw.Connection:
    conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    conn.setbusytimeout(BUSY_TIMEOUT_MS)
    return conn


def _run(conn: apsw.Connection, fn: Callable[[apsw.Connection], T]) -> T:
    """``fn`` inside one read transaction, so its queries see one consistent state."""
    try:
        conn.execute("BEGIN")
        try:
            return fn(conn)
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()


def _read_copy(path: Path, fn: Callable[[apsw.Connection], T]) -> T:
    with tempfile.TemporaryDirectory(prefix="clawmem-openclaw-") as tmp:
        copy = Path(tmp) / path.name
        shutil.copyfile(path, copy)
        shutil.copyfile(side_file(path, "-wal"), side_file(copy, "-wal"))
        conn = apsw.Connection(str(copy))
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        return _run(conn, fn)


def read(path: Path, fn: Callable[[apsw.Connection], T]) -> T:
    """Run ``fn`` on a read-only connection to ``path`` (see the module docstring)."""
    try:
        for _attempt in range(3):
            mode = read_mode(path)
            if mode == WAL_COPY:
                return _read_copy(path, fn)
            params = {IMMUTABLE: "immutable=1", READONLY_SHM: "mode=ro&readonly_shm=1", LOCKING: "mode=ro"}[mode]
            result = _run(_connect(_uri(path, params)), fn)
            if mode == IMMUTABLE and side_file(path, "-wal").exists():
                continue  # a writer opened it while we read without locks: read again through its WAL
            return result
        raise ClawmemError(f"{path} kept changing while it was read; try again")
    except apsw.BusyError:
        raise ClawmemError(f"{path} is busy (OpenClaw is recovering it); try again") from None
    except apsw.Error as exc:
        raise ClawmemError(f"cannot read {path}: {exc}") from None
    except OSError as exc:
        raise ClawmemError(f"cannot read {path}: {exc.strerror or exc}") from None
