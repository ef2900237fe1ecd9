"""The index's sync → embed loop for a long-lived front end (the app, the MCP server), written once.

One worker runs a pass (:func:`run_pass`). Requests — a text sync of some files, of every file,
or a rebuild — that arrive while it works are queued on its :class:`IndexRun`: the embedding pass
stops after its current text, the queued files are synced, and embedding resumes where it
stopped, so a file change never cancels anything. ``cancel`` stops the pass (the user's Escape,
or the front end closing). Text is synced first because it makes keyword search complete within
seconds; vectors follow in the background (docs/design.md §4).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import apsw

if TYPE_CHECKING:
    from clawmem.engine.index.service import IndexService, SyncReport

Request = tuple[bool, frozenset[str] | None]  # (force: a rebuild, only: these files; None: every file)


def merge_requests(requests: list[Request]) -> Request:
    """Queued requests as one: a rebuild if any asked for one, every file if any did."""
    force = any(f for f, _ in requests)
    if any(o is None for _, o in requests):
        return force, None
    return force, frozenset().union(*(o for _, o in requests if o is not None))


@dataclass
class IndexRun:
    """One pass's state, shared by the front end's thread and the worker under ``lock``."""

    queue: list[Request]  # requests not synced yet; ``only`` empty: nothing to sync, embed only
    embed: bool  # embed after syncing (False after the user cancelled embedding)
    cancel: threading.Event = field(default_factory=threading.Event)  # the user cancelled, or closing
    stop_embedding: threading.Event = field(default_factory=threading.Event)  # new work, or cancel
    lock: threading.Lock = field(default_factory=threading.Lock)
    finished: bool = False

    def request(self, force: bool, only: frozenset[str] | None, *, embed: bool) -> bool:
        """Queue onto this pass and interrupt its embedding; False when it has ended or was
        cancelled (then the caller starts a new pass)."""
        with self.lock:
            if self.finished or self.cancel.is_set():
                return False
            self.queue.append((force, only))
            self.embed = self.embed or embed
            self.stop_embedding.set()
            return True

    def cancel_all(self) -> bool:
        """Stop the pass and drop what is queued; False when nothing was running."""
        with self.lock:
            if self.finished or self.cancel.is_set():
                return False
            self.queue.clear()
            self.cancel.set()
            self.stop_embedding.set()
            return True

    def _take(self) -> list[Request]:
        with self.lock:
            requests, self.queue = self.queue, []
            if not self.cancel.is_set():
                self.stop_embedding.clear()
            return requests

    def _finish_if_idle(self) -> bool:
        """End the pass unless requests arrived meanwhile (then the loop goes round again)."""
        with self.lock:
            if self.queue:
                return False
            self.finished = True
            return True


@dataclass(frozen=True)
class PassEvents:
    """What a pass tells its front end, from the worker's thread (the front end hands it over)."""

    # (phase: text | embed | lines | wait, done, total[, seconds left for the embedding pass])
    progress: Callable[..., None]
    synced: Callable[[frozenset[str]], None]  # the index changed: these files (empty: vectors only)
    warning: Callable[[str], None]  # a sync's warning (a skipped file, a missing model …)


@dataclass(frozen=True)
class PassOutcome:
    phase: str  # done | paused (text only: embedding was cancelled before) | cancelled
    done: int  # chunks embedded (done), or chunks with a vector (paused)
    total: int  # chunks that were pending (done), or all chunks (paused)
    detail: str = ""  # cancelled: the step it stopped in (text | embed)


SYNC_ATTEMPTS = 3  # a text sync that lost its write lock to another connection is run again


def _sync_text(
    index: IndexService, run: IndexRun, events: PassEvents, force: bool, only: frozenset[str] | None
) -> SyncReport:
    """The text sync, run again when another connection of this app or another process took the
    write lock between its read and its write (SQLite's busy snapshot): it is idempotent."""
    for attempt in range(SYNC_ATTEMPTS):
        try:
            return index.sync(
                force=force,
                only=set(only) if only is not None else None,
                embed=False,
                cancel=run.cancel,
                progress=events.progress,
            )
        except apsw.BusyError:
            if attempt == SYNC_ATTEMPTS - 1:
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


def _embed_progress(events: PassEvents, base: int, done: int, pending: int, seconds_left: float | None) -> None:
    """Chunks count from those embedded before, so a resumed pass goes on where it stopped."""
    events.progress("embed", base + done, base + pending, seconds_left)


def run_pass(index: IndexService, run: IndexRun, events: PassEvents) -> PassOutcome:
    """Sync what is queued, then embed, until nothing is queued (on the worker's thread).

    Raises the engine's errors; the caller reports them and marks the run finished."""
    while True:
        requests = run._take()
        if requests:
            force, only = merge_requests(requests)
            if only is None or only:  # an empty ``only``: a writer synced its file itself, embed it
                report = _sync_text(index, run, events, force, only)
                events.synced(frozenset(only or ()))
                for warning in report.warnings:
                    events.warning(warning)
            if run.cancel.is_set():
                return PassOutcome("cancelled", 0, 0, "text")
        if not run.embed:
            if not run._finish_if_idle():
                continue
            embedded, total = index.vector_coverage()
            return PassOutcome("paused", embedded, total)
        base, _ = index.vector_coverage()  # progress counts every chunk, so a resumed pass goes on
        stats = index.embed_pending(
            cancel=run.stop_embedding,
            lock_timeout=None,  # a pass still finishing (ours, or another process's): wait for it
            on_wait=lambda: events.progress("wait", 0, 0),
            progress=partial(_embed_progress, events, base),
            line_progress=lambda done, pending, seconds_left: events.progress("lines", done, pending, seconds_left),
        )
        events.synced(frozenset())
        if run.cancel.is_set():
            return PassOutcome("cancelled", 0, 0, "embed")
        if run._finish_if_idle():
            return PassOutcome("done", stats.embedded if stats else 0, stats.pending if stats else 0)
        # files changed meanwhile: sync them, then embed on
