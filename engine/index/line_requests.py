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
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import apsw
from clawmem.engine.store import index_rows
from clawmem.engine.store.db import immediate

MAX_ASKED = 1_000  # hashes held at once; a search asks for at most its results (≤ 200)
ELSEWHERE_KEY = "line_vectors_asked"  # index meta: space-separated hashes another process asked for


def ask_elsewhere(conn: apsw.Connection, hashes: Iterable[str]) -> None:
    """Leave an ask for the pass another process runs on this index (one short write)."""
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        return
    with immediate(conn):
        held = (index_rows.get_meta(conn, ELSEWHERE_KEY) or "").split()
        again = set(wanted)
        merged = ([h for h in held if h not in again] + wanted)[-MAX_ASKED:]  # oldest first, as asked
        index_rows.set_meta(conn, ELSEWHERE_KEY, " ".join(merged))


def _take_elsewhere(conn: apsw.Connection) -> list[str]:
    if index_rows.get_meta(conn, ELSEWHERE_KEY) is None:  # the common case: one read, no write
        return []
    with immediate(conn):
        held = (index_rows.get_meta(conn, ELSEWHERE_KEY) or "").split()
        index_rows.delete_meta(conn, ELSEWHERE_KEY)
    return held


class LineRequests:
    """A thread-safe set of chunk text hashes in the order asked, which the line pass takes."""

    def __init__(self) -> None:
        self._asked: dict[str, None] = {}
        self._lock = threading.Lock()

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
        ``conn``) those other processes left in it; both are empty after."""
        with self._lock:
            out = list(reversed(self._asked))
            self._asked.clear()
        if conn is not None:
            out = list(dict.fromkeys([*out, *reversed(_take_elsewhere(conn))]))
        return out

    def __len__(self) -> int:
        with self._lock:
            return len(self._asked)
