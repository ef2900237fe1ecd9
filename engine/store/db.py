"""The apsw connection: WAL, busy timeout, foreign keys, sqlite-vec loaded when possible.

Each thread gets its own connection (the TUI searches while a worker embeds); WAL lets
readers proceed while one writer commits. ``Store`` is cheap to share between threads.

Opening an up-to-date database writes nothing (so ``status``, ``search`` and ``forget --dry-run``
work while another process holds the write lock); a write that cannot get the lock within the
busy timeout raises :class:`~engine.errors.DatabaseLocked`, a one-line user error.

A database in a folder that cannot be written (a read-only disk or mount, another user's home)
is opened read-only: reading and search work from the index as it is, and every write is
refused up front with one line naming the database (tests/faults/test_read_only.py).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
from clawmem.engine.errors import ClawmemError, DatabaseLocked
from clawmem.engine.store import bm25, cjk_index

BUSY_TIMEOUT_MS = 10_000


def _load_vec(conn: apsw.Connection) -> str | None:
    """Load sqlite-vec; return None on success or the reason it failed."""
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        return None
    except Exception as exc:  # any failure means: use the pure-Python vector fallback
        return f"sqlite-vec could not be loaded: {exc}"


def read_only_reason(path: Path | str) -> str | None:
    """Why the database at ``path`` cannot be written (None: it can): an existing database in a
    folder, or a file, that this process may not write (``os.access`` sees a read-only mount)."""
    if str(path) == ":memory:" or not Path(path).is_file():
        return None
    for target in (Path(path).parent, Path(path)):
        if not os.access(target, os.W_OK):
            read_only_mount = os.statvfs(target).f_flag & os.ST_RDONLY
            return "on a read-only file system" if read_only_mount else "not writable by this user"
    return None


def open_connection(
    path: Path | str, *, load_vec: bool = True, read_only: bool = False
) -> tuple[apsw.Connection, str | None]:
    """Open (creating if needed) a database with the engine's pragmas; ``read_only`` opens an
    existing one without writing anything (no journal-mode change, no -wal or -shm files)."""
    if read_only:
        return _open_read_only(path, load_vec)
    if str(path) != ":memory:":
        folder = Path(path).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file in the way, a read-only or virtual file system (/proc)
            raise ClawmemError(f"cannot create the database folder {folder}: {exc.strerror or exc}") from None
        if not folder.is_dir():
            raise ClawmemError(f"cannot create the database folder {folder}: not a directory")
    try:
        conn = apsw.Connection(str(path))
    except apsw.Error as exc:
        raise ClawmemError(f"cannot open database {path}: {exc}") from None
    conn.setbusytimeout(BUSY_TIMEOUT_MS)
    vec_error = _load_vec(conn) if load_vec else "sqlite-vec disabled"
    cjk_index.register(conn)  # its Python tokenizer must be known before the bigram table is used
    bm25.register(conn)
    with _usable(path, conn.close):
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    return conn, vec_error


def _open_read_only(path: Path | str, load_vec: bool) -> tuple[apsw.Connection, str | None]:
    """A read-only connection. A WAL database whose -shm file cannot be created is opened
    ``immutable`` (SQLite then trusts that no one writes it; a read-only folder ensures that) —
    but only with no -wal file holding writes, which immutable mode would not see."""
    uri = Path(path).resolve().as_uri()
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    conn: apsw.Connection | None = None
    wal = Path(f"{path}-wal")
    pending = wal.is_file() and wal.stat().st_size > 0
    for query in ("?mode=ro",) if pending else ("?mode=ro", "?mode=ro&immutable=1"):
        try:
            conn = apsw.Connection(uri + query, flags=flags)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
            break
        except apsw.Error as exc:
            error = exc
            if conn is not None:
                conn.close()
            conn = None
    if conn is None:
        raise ClawmemError(f"cannot open database {path} read-only: {error}") from None
    vec_error = _load_vec(conn) if load_vec else "sqlite-vec disabled"
    cjk_index.register(conn)
    bm25.register(conn)
    return conn, vec_error


@contextmanager
def _usable(path: Path | str, close: Callable[[], object]) -> Iterator[None]:
    """SQLite errors while setting a database up, as one-line errors (``close`` runs first):
    the write lock held elsewhere is :class:`DatabaseLocked`, anything else "not usable"."""
    try:
        yield
    except apsw.BusyError:
        close()
        raise DatabaseLocked(path) from None
    except apsw.Error as exc:
        close()
        raise ClawmemError(f"database {path} is not usable: {exc}") from None


@contextmanager
def immediate(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """A write transaction that takes the write lock when it begins (``BEGIN IMMEDIATE``).

    ``with conn:`` begins a deferred transaction, which reads first and asks for the write lock
    at its first write; in WAL mode, if another process committed in between, that upgrade fails
    at once with "database is locked" (SQLITE_BUSY_SNAPSHOT), whatever the busy timeout. Taking
    the lock first makes it wait its turn instead (the race of every writer in
    tests/faults/test_race.py found this). Inside a transaction already: a savepoint of it.
    """
    if conn.in_transaction:
        with conn:
            yield conn
        return
    begin_immediate(conn)
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def begin_immediate(conn: apsw.Connection) -> None:
    """``BEGIN IMMEDIATE``, or :class:`DatabaseLocked` when another process keeps the write lock."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except apsw.BusyError:
        raise DatabaseLocked(conn.filename or "(memory)") from None


class Store:
    """Per-thread apsw connections to one database file."""

    def __init__(self, path: Path, *, load_vec: bool = True) -> None:
        self.path = path
        self._load_vec = load_vec
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[apsw.Connection] = []
        self.vec_error: str | None = None
        self.read_only = read_only_reason(path)  # None: writable; else why not
        conn = self.conn()  # open once now so errors surface early
        from clawmem.engine.store.schema import ensure_schema

        with _usable(path, self.close):
            try:
                ensure_schema(conn)  # writes only when a component is behind
            except apsw.ReadOnlyError:
                raise ClawmemError(
                    f"database {path} is {self.read_only} and needs an upgrade this version cannot write"
                ) from None

    @property
    def vec_available(self) -> bool:
        return self.vec_error is None

    def conn(self) -> apsw.Connection:
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn, vec_error = open_connection(self.path, load_vec=self._load_vec, read_only=bool(self.read_only))
            self.vec_error = vec_error
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def require_writable(self) -> None:
        """Refuse a write up front, in one line, when the database cannot be written: a command
        that writes files and the database checks this before it touches a file."""
        if self.read_only:
            raise ClawmemError(
                f"cannot write the database {self.path}: it is {self.read_only}; nothing was changed "
                "(reading and search work from it as it is)"
            )

    @contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A write transaction taken immediately (no deadlock on upgrade from read)."""
        self.require_writable()
        with immediate(self.conn()) as conn:
            yield conn

    def query(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        return list(self.conn().execute(sql, params))

    def scalar(self, sql: str, params: Any = ()) -> Any:
        row = next(iter(self.conn().execute(sql, params)), None)
        return None if row is None else row[0]

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                try:
                    conn.close()
                except apsw.Error:
                    pass
            self._all.clear()
        self._local = threading.local()
