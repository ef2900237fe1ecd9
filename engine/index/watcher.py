"""Watch the workspace for memory-file changes (watchdog), debounced 1.5 s (docs/memory-core.md §3).

The callback receives the set of workspace-relative paths that changed (created, modified,
moved or deleted) once no further event arrived for the debounce interval. It runs on the
watcher's timer thread: the TUI forwards it with ``post_message``; the engine only reports.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from clawmem.engine.workspace.names import CURATED_ROOT_FILES, DREAMS_FILES
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

ChangeCallback = Callable[[set[str]], None]


class _StoppedEmitterNoise(logging.Filter):
    """watchdog logs an ERROR when its inotify thread is asked for events just as it is stopped
    (a race inside watchdog 7.1 at every shutdown that loses nothing). An MCP server's stderr
    showed it after its one-line error; the filter drops that record and no other."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "called when the thread is inactive" not in record.getMessage()


logging.getLogger("watchdog.observers.inotify").addFilter(_StoppedEmitterNoise())


def is_watched(rel: str) -> bool:
    if not rel.lower().endswith(".md"):
        return False
    return rel in CURATED_ROOT_FILES or rel in DREAMS_FILES or rel.startswith("memory/")


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: WorkspaceWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self.watcher._note(Path(str(raw)))


class WorkspaceWatcher:
    def __init__(self, workspace: Path, callback: ChangeCallback, debounce_ms: int = 1500) -> None:
        self.workspace = workspace.resolve()
        self.callback = callback
        self.debounce = debounce_ms / 1000.0
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._observer: Observer | None = None  # type: ignore[valid-type]

    def start(self) -> WorkspaceWatcher:
        if self._observer is not None or not self.workspace.is_dir():
            return self
        observer = Observer()
        observer.schedule(_Handler(self), str(self.workspace), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer
        return self

    def stop(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None

    def _note(self, path: Path) -> None:
        try:
            rel = path.relative_to(self.workspace).as_posix()
        except ValueError:
            return
        if not is_watched(rel):
            return
        with self._lock:
            self._pending.add(rel)
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.debounce, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            changed, self._pending = self._pending, set()
            self._timer = None
        if changed:
            self.callback(changed)
