"""One long-lived engine for the MCP server, with its index kept in sync as the app keeps it.

At start-up one background thread loads the model while another syncs the text of every file
(keyword search is complete within seconds) and then embeds what lacks a vector; a search meanwhile
searches what exists — keyword-only until the model is in memory (``model_ready``), so a host's
first call is answered at once, then with vectors as they are written. The workspace watcher queues a text
sync of the files that changed and interrupts the embedding pass, which then goes on where it
stopped — the loop of engine/index/schedule.py, which the app's index worker runs too. An append
made through the server syncs its diary at once, in the caller's thread, so the next search finds it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

import apsw
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.index.schedule import IndexRun, PassEvents, run_pass
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
        self._run = IndexRun(queue=[(False, None)] if sync else [], embed=self._embed)  # start-up: every file
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watcher: WorkspaceWatcher | None = None
        self.ready = threading.Event()  # the first text sync finished (or failed)
        self.model_ready = threading.Event()  # the embedding model is in memory (or will never be)
        self._load = embed and engine.settings.embedding.provider != "none"
        if not self._load:
            self.model_ready.set()
        self.last_error: str | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        if self.engine.settings.store.url and not self.engine.workspace.is_dir():
            # A machine without the files (a laptop beside the server): it searches the shared
            # index store.url names and syncs nothing; an append says the workspace is missing.
            self._sync = self._embed = self._watch = False
            self._run = IndexRun(queue=[], embed=False)
            self.ready.set()
        else:
            self.engine.require_workspace()
        if self._load:
            threading.Thread(target=self._load_model, name="clawmem-mcp-model", daemon=True).start()
        self._thread = threading.Thread(target=self._loop, name="clawmem-mcp-index", daemon=True)
        self._thread.start()
        self._wake.set()
        if self._watch:
            self._watcher = self.engine.watch(self._on_change)

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            self._run.cancel_all()
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
        """Queue a sync of ``paths`` (None: every file; empty: nothing to sync, embed what is new)."""
        if not self._sync or self._stop.is_set():
            return
        only = None if paths is None else frozenset(paths)
        with self._lock:
            if not self._run.request(False, only, embed=self._embed):
                self._run = IndexRun(queue=[(False, only)], embed=self._embed)
        self._wake.set()

    def synced_now(self, rel: str) -> None:
        """A file this server just wrote: sync its text at once (the caller's thread), embed later."""
        try:
            self.engine.sync(only={rel}, embed=False, lock_timeout=30.0)
        except (ClawmemError, apsw.BusyError) as exc:  # the watcher will catch up
            log.warning("could not index %s now: %s", rel, exc)
        self.request(())  # wake the worker so it embeds the new chunk

    # ------------------------------------------------------------------ the worker

    def _synced(self, paths: frozenset[str]) -> None:
        self.ready.set()

    def _load_model(self) -> None:
        """Load the model beside the text sync (llama.cpp loads outside the GIL); the embedding pass
        waits for it, searches go keyword-only until it is done."""
        try:
            self.engine.load_model()
        except Exception as exc:  # the search reports a broken model itself (keyword-only, with a warning)
            log.warning("loading the embedding model: %s", exc)
        finally:
            self.model_ready.set()

    def _loop(self) -> None:
        events = PassEvents(
            progress=lambda *_progress: None,  # (phase, done, total[, seconds left]): nobody watches it
            synced=self._synced,
            warning=lambda text: log.warning("indexing: %s", text),
        )
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            with self._lock:
                run = self._run
            try:
                if not run.finished:
                    run_pass(self.engine.index, run, events)
            except (ClawmemError, apsw.BusyError) as exc:
                self.last_error = str(exc)
                log.warning("indexing: %s", exc)
            except Exception as exc:  # never let the worker die silently
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("indexing failed")
            finally:
                with run.lock:
                    run.finished = True
                self.ready.set()
