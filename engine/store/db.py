"""The apsw connection: WAL, busy timeout, foreign keys, sqlite-vec loaded when possible.

Each thread gets its own connection (the TUI searches while a worker embeds); WAL lets
readers proceed while one writer commits. ``Store`` is cheap to share between threads.

Opening an up-to-date database writes nothing (so ``status``, ``search`` and ``forget --dry-run``
work while another process holds the write lock); a write that cannot get the lock within the
busy timeout raises :class:`~engine.errors.DatabaseLocked`, a one-line user error.
"""

from __future__ import annotations

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


def open_connection(path: Path | str, *, load_vec: bool = True) -> tuple[apsw.Connection, str | None]:
    """Open (creating if needed) a database with the engine's pragmas."""
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
        conn = self.conn()  # open once now so errors surface early
        from clawmem.engine.store.schema import ensure_schema

        with _usable(path, self.close):
            ensure_schema(conn)  # writes only when a component is behind

    @property
    def vec_available(self) -> bool:
        return self.vec_error is None

    def conn(self) -> apsw.Connection:
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn, vec_error = open_connection(self.path, load_vec=self._load_vec)
            self.vec_error = vec_error
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A write transaction taken immediately (no deadlock on upgrade from read)."""
        conn = self.conn()
        begin_immediate(conn)
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

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
