"""``MemoryEngine``: the one object the CLI and the TUI talk to.

It builds the engine's graph bottom-up, in one place — the runtime (settings, clock, store,
locks), the index, the search, the files, then each feature service with only what it needs
(a runtime, and a :class:`~clawmem.engine.runtime.Reindexer` or
:class:`~clawmem.engine.runtime.Searcher` where it must sync or search) — and only delegates.
Every method is safe to call from a worker thread. No module under ``engine/`` but this one
imports it (tests/engine/test_wall.py).
"""

from __future__ import annotations

from pathlib import Path

from clawmem.engine.blas_threads import one_blas_thread
from clawmem.engine.config import Clock, Settings
from clawmem.engine.context.service import ContextService
from clawmem.engine.curation.service import CurationService
from clawmem.engine.curation.successors import Successor, successors
from clawmem.engine.dreaming.service import DreamingService
from clawmem.engine.embed.provider import EmbeddingProvider
from clawmem.engine.errors import ClawmemError
from clawmem.engine.forget.service import ForgetService
from clawmem.engine.index.service import CONFIGURED, IndexService, IndexState, SyncReport
from clawmem.engine.intents.automation import JobService
from clawmem.engine.intents.service import IntentService
from clawmem.engine.openclaw.home import OpenClawHome
from clawmem.engine.runtime import Runtime
from clawmem.engine.search.service import SearchService
from clawmem.engine.sessions.service import SessionService
from clawmem.engine.status import StatusReport, build_status
from clawmem.engine.store.db import Store
from clawmem.engine.workspace.service import EntryView, FileService

__all__ = ["EntryView", "IndexState", "MemoryEngine", "SyncReport"]


class MemoryEngine:
    """One open agent. ``provider``: an injected embedding provider (tests, benchmarks) or
    ``None`` for keyword-only; left out, the configured model is loaded on first use.
    ``openclaw``: the OpenClaw home whose workspace this is (``clawmem --openclaw``), read in place
    and never written; its status and sessions are shown beside clawmem's own."""

    def __init__(
        self,
        settings: Settings,
        *,
        provider: EmbeddingProvider | object | None = CONFIGURED,
        openclaw: OpenClawHome | None = None,
    ) -> None:
        self.openclaw = openclaw
        one_blas_thread()  # numpy's BLAS workers spin on a core after each call (engine/blas_threads.py)
        self.runtime = runtime = Runtime(settings)
        self.index = index = IndexService(runtime, provider=provider, openclaw=openclaw)
        self.searcher = searcher = SearchService(runtime, index)
        self.workspace_files = files = FileService(runtime)

        self.intents = IntentService(runtime)
        self.jobs = JobService(runtime)
        self.sessions = SessionService(runtime)
        self.dreaming = DreamingService(runtime, index)
        self.forget = ForgetService(runtime, index, openclaw)
        self.context = ContextService(runtime, searcher)
        self.curation = curation = CurationService(runtime, index)

        # The index: provider, identity, sync, the embedding pass.
        self.provider_choice = index.provider_choice
        self.load_model = index.load_model
        self.embedder_identity = index.embedder_identity
        self.expected_identity = index.expected_identity
        self.stored_identity = index.stored_identity
        self.index_state = index.index_state
        self.files = index.files
        self.sync = index.sync
        self.embed_pending = index.embed_pending
        self.embedding_active = index.embedding_active
        self.vector_coverage = index.vector_coverage
        self.reset = index.reset
        self.watch = index.watch
        # Someone is using this process now (the app calls it on every key and click; every search
        # does): an indexing pass leaves them a core (engine/index/thread_budget.py).
        self.in_use = runtime.foreground.touch
        self.quiet_for = runtime.foreground.quiet_for  # seconds since then (the app's idle moments)
        # Search and reading.
        self.search = searcher.search
        self.get = files.get
        # Files and entries.
        self.memory_files = files.memory_files
        self.snapshot = files.snapshot
        self.entries = files.entries
        self.save_file = files.save_file
        self.disk_matches = files.disk_matches
        self.save_conflict_copy = files.save_conflict_copy
        self.require_workspace = runtime.require_workspace
        self.require_memory_to_read = runtime.require_memory_to_read
        # Curation: a changed fact marked superseded by its newer version (and undone); agents'
        # proposals are engine.curation.propose / proposals / accept / reject.
        self.supersede = curation.supersede
        self.unsupersede = curation.unsupersede

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        self.searcher.close()
        self.runtime.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ what the runtime holds

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    @property
    def clock(self) -> Clock:
        return self.runtime.clock

    @property
    def store(self) -> Store:
        return self.runtime.store

    @property
    def workspace(self) -> Path:
        return self.runtime.workspace

    @property
    def shared_index(self) -> str | None:
        """Where the index is shared (store.url: ``user@host:port/db, schema s``), or None."""
        shared = self.runtime.shared
        return shared.where if shared is not None else None

    @property
    def provider_loaded(self) -> bool:
        return self.index.provider_loaded

    def successors(self, rel: str, line: int, *, limit: int = 8) -> list[Successor]:
        """The entries that may have replaced the bullet at ``rel:line`` (the app's "superseded
        by…" picker): a search for its words, each hit taken to its bullet (engine/curation/successors.py)."""
        older = next((v.entry for v in self.entries(rel) if v.entry.start_line == line), None)
        if older is None:
            raise ClawmemError(f"{rel}:{line} is not the first line of an entry")
        return successors(self.search, lambda path: [v.entry for v in self.entries(path)], older, limit=limit)

    def status(self, *, deep: bool = False) -> StatusReport:
        """``status [--deep]``: every figure of the spec's status output."""
        return build_status(self.index, deep=deep)
