"""One long-lived engine for the MCP server, with its index kept in sync as the app keeps it.

At start-up a background thread loads the model, syncs the text of every file (keyword search is
complete within seconds) and then embeds what lacks a vector; a search meanwhile searches what
exists (keyword results at once, vectors as they are written). The workspace watcher queues a text
sync of the files that changed and interrupts the embedding pass, which then goes on where it
stopped — the same order the app's index worker uses (tui/app.py). An append made through the
server syncs its diary at once, in the caller's thread, so the next search finds it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

import apsw
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.index.watcher import WorkspaceWatcher

log = logging.getLogger("clawmem.mcp")


class MemoryDoor:
    """The engine plus its background indexing: ``start`` once, ``close`` at shutdown."""

    def __init__(self, engine: MemoryEngine, *, watch: bool = True, embed: bool = True, sync: bool = True) -> None:
        self.engine = engine
        self._watch = watch
        self._embed = embed and sync
        self._sync = sync
        self._lock = threading.Lock()
        self._queue: list[frozenset[str] | None] = [None]  # None: sync everything (start-up)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._stop_embedding = threading.Event()
        self._thread: threading.Thread | None = None
        self._watcher: WorkspaceWatcher | None = None
        self.ready = threading.Event()  # the first text sync finished (or failed)
        self.last_error: str | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.engine.require_workspace()
        self._thread = threading.Thread(target=self._run, name="clawmem-mcp-index", daemon=True)
        self._thread.start()
        self._wake.set()
        if self._watch:
            self._watcher = self.engine.watch(self._on_change)

    def close(self) -> None:
        self._stop.set()
        self._stop_embedding.set()
        self._wake.set()
        if self._watcher is not None:
            self._watcher.stop()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.engine.close()

    # ------------------------------------------------------------------ requests

    def _on_change(self, paths: set[str]) -> None:
        """The watcher's thread: queue a text sync of these files, interrupt embedding."""
        self.request(paths)

    def request(self, paths: Iterable[str] | None) -> None:
        with self._lock:
            self._queue.append(None if paths is None else frozenset(paths))
        self._stop_embedding.set()
        self._wake.set()

    def synced_now(self, rel: str) -> None:
        """A file this server just wrote: sync its text at once (the caller's thread), embed later."""
        try:
            self.engine.sync(only={rel}, embed=False, lock_timeout=30.0)
        except (ClawmemError, apsw.BusyError) as exc:  # the watcher will catch up
            log.warning("could not index %s now: %s", rel, exc)
        self.request(())  # wake the worker so it embeds the new chunk

    # ------------------------------------------------------------------ the worker

    def _take(self) -> tuple[bool, set[str] | None]:
        with self._lock:
            requests, self._queue = self._queue, []
            self._stop_embedding.clear()
        if not requests:
            return False, None
        if any(r is None for r in requests):
            return True, None
        merged: set[str] = set()
        for r in requests:
            merged |= set(r or ())
        return True, merged

    def _run(self) -> None:
        first = True
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                if first and self._embed:
                    self.engine.load_model()  # once, here: the first search must not wait for it
                pending, only = self._take()
                if pending and self._sync and (only is None or only):
                    self.engine.sync(only=only, embed=False, cancel=self._stop)
                if first:
                    first = False
                    self.ready.set()
                if self._embed and not self._stop.is_set():
                    self.engine.embed_pending(cancel=self._stop_embedding, lock_timeout=None)
                with self._lock:
                    if self._queue:
                        self._wake.set()  # files changed while embedding: sync them, then embed on
            except (ClawmemError, apsw.BusyError) as exc:
                self.last_error = str(exc)
                log.warning("indexing: %s", exc)
            except Exception as exc:  # never let the worker die silently
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("indexing failed")
            finally:
                if first:
                    first = False
                    self.ready.set()
