"""Lines asked for: the chunk texts whose line vectors a search needed before the line pass got to them.

The line pass runs in its own order (curated files, then diaries newest first), and on a large
workspace it takes minutes after hybrid search is ready (bench/RESULTS.md §3, issue 41). Until it
reaches a chunk, that chunk's breakdown has no best line, and its score will move when it gets
one. So a search that returns such a chunk asks for its lines here, and the running pass takes
them before its next batch (engine/index/line_evidence.py): what a person is looking at gets its
line evidence within a batch, and the rest of the pass keeps its order.

The app and ``clawmem mcp`` run their pass beside their searches: their asks stay in memory. A
search in another process than the running pass (``clawmem search``, or ``clawmem mcp`` while
the app indexes) leaves its asks in the index's meta table (:func:`ask_elsewhere`), and the pass
reads them there before each batch too (:meth:`LineRequests.take`).

On a shared PostgreSQL index (``store.url``) searches read the server, so a pass publishes the
lines it was asked for as soon as their batch is done, not at its end; and a search on a machine
that runs no pass leaves its ask on the server (:func:`ask_shared`), where the pass of any machine
publishing to that index takes it (:func:`take_shared`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import apsw
from clawmem.engine.store import index_rows
from clawmem.engine.store.db import immediate
from clawmem.engine.store.postgres import index_rows as pg_rows

MAX_ASKED = 1_000  # hashes held at once; a search asks for at most its results (≤ 200)
ELSEWHERE_KEY = "line_vectors_asked"  # index meta: space-separated hashes another process asked for


def ask_elsewhere(conn: apsw.Connection, hashes: Iterable[str]) -> None:
    """Leave an ask for the pass another process runs on this index (one short write)."""
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        return
    with immediate(conn):
        index_rows.set_meta(conn, ELSEWHERE_KEY, _merged(index_rows.get_meta(conn, ELSEWHERE_KEY), wanted))


def _take_elsewhere(conn: apsw.Connection) -> list[str]:
    if index_rows.get_meta(conn, ELSEWHERE_KEY) is None:  # the common case: one read, no write
        return []
    with immediate(conn):
        held = (index_rows.get_meta(conn, ELSEWHERE_KEY) or "").split()
        index_rows.delete_meta(conn, ELSEWHERE_KEY)
    return held


def _merged(held: str | None, wanted: list[str]) -> str:
    """The held asks (oldest first) with ``wanted`` as the newest, at most MAX_ASKED."""
    again = set(wanted)
    return " ".join(([h for h in (held or "").split() if h not in again] + wanted)[-MAX_ASKED:])


def ask_shared(pg: Any, hashes: Iterable[str]) -> None:
    """Leave an ask on the shared PostgreSQL index for whichever machine's pass publishes to it
    (one short transaction; machines asking at once take turns on the row)."""
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        return
    try:
        held = pg_rows.meta_for_update(pg, ELSEWHERE_KEY)
        pg_rows.set_meta(pg, ELSEWHERE_KEY, _merged(held, wanted))
    except BaseException:
        pg.rollback()
        raise
    pg.commit()


def take_shared(pg: Any) -> list[str]:
    """The asks left on the shared index, oldest first; none are left there after."""
    try:
        held = pg_rows.pop_meta(pg, ELSEWHERE_KEY)
    except BaseException:
        pg.rollback()
        raise
    pg.commit()
    return (held or "").split()


class LineRequests:
    """A thread-safe set of chunk text hashes in the order asked, which the line pass takes."""

    def __init__(self, shared: Callable[[], list[str]] | None = None) -> None:
        """``shared``: what machines left on the shared index (:func:`take_shared` there, oldest
        first), read with every take; None without one."""
        self._asked: dict[str, None] = {}
        self._lock = threading.Lock()
        self._shared = shared

    def ask(self, hashes: Iterable[str]) -> None:
        """Ask for these texts' lines (a hash asked for again becomes the newest ask)."""
        with self._lock:
            for h in hashes:
                self._asked.pop(h, None)
                self._asked[h] = None
            while len(self._asked) > MAX_ASKED:  # the oldest ask is the least likely still on screen
                del self._asked[next(iter(self._asked))]

    def take(self, conn: apsw.Connection | None = None) -> list[str]:
        """Every hash asked for since the last take, newest first (search-as-you-type asks for
        each query typed on the way; the last one is on screen), then (given the index's
        ``conn``) those other processes left in it, then those other machines left on the
        shared index; all are empty after."""
        with self._lock:
            out = list(reversed(self._asked))
            self._asked.clear()
        if conn is not None:
            out = [*out, *reversed(_take_elsewhere(conn))]
            if self._shared is not None:
                out = [*out, *reversed(self._shared())]
        return list(dict.fromkeys(out))

    def __len__(self) -> int:
        with self._lock:
            return len(self._asked)
