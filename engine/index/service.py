"""``IndexService``: the derived index of one agent — the embedding provider, the index's
identity, incremental sync and shadow rebuild, the embedding pass, reset and the watcher.

It owns the provider choice (loaded once, on first use) and writes the index under the
reindex lock, so a watcher sync, a forced rebuild and another clawmem process never write it
at the same time; the embedding pass runs outside that lock under its own (``embed.lock``).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import apsw
from clawmem.engine.config import default_threads
from clawmem.engine.embed.provider import EmbeddingProvider, provider_key
from clawmem.engine.embed.select import ProviderChoice, select_provider
from clawmem.engine.errors import IndexBusy
from clawmem.engine.index.chunking import CHUNKING_VERSION
from clawmem.engine.index.embedding_pass import EmbedProgress, EmbedStats, embed_pending
from clawmem.engine.index.identity import (
    FTS_ONLY_MODEL,
    IndexIdentity,
    scope_hash,
    semantic_only_differences,
)
from clawmem.engine.index.line_requests import LineRequests, take_shared
from clawmem.engine.index.model_calls import ModelCalls
from clawmem.engine.index.rebuild import shadow_rebuild
from clawmem.engine.index.sync import EmbedderIdentity, Progress, TextSyncStats, sync_text
from clawmem.engine.index.thread_budget import ThreadBudget
from clawmem.engine.index.watcher import ChangeCallback, WorkspaceWatcher
from clawmem.engine.runtime import Runtime
from clawmem.engine.sessions import index as session_index
from clawmem.engine.sessions import trust
from clawmem.engine.store import index_rows as rows
from clawmem.engine.store.db import immediate
from clawmem.engine.store.postgres import mirror
from clawmem.engine.store.postgres.connect import StoreUnavailable
from clawmem.engine.store.postgres.mirror import PublishStats
from clawmem.engine.store.schema import (
    drop_derived,
    ensure_chunks_fts,
    ensure_schema,
    ensure_vec_table,
    fts_tokenizer_in_use,
)
from clawmem.engine.workspace.files import MemoryFile, discover

if TYPE_CHECKING:
    from clawmem.engine.openclaw.home import OpenClawHome

CONFIGURED: object = object()
"""The ``provider`` default: the configured embedding provider, chosen on first use."""


@dataclass(frozen=True)
class IndexState:
    stored: IndexIdentity | None
    expected: IndexIdentity
    differences: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return self.stored is None

    @property
    def mismatched(self) -> bool:
        return self.stored is not None and bool(self.differences)

    @property
    def semantic_paused(self) -> bool:
        """Vectors in the index were made differently from the query's: don't mix them."""
        if self.stored is None or not self.stored.semantic:
            return False
        return self.mismatched


@dataclass(frozen=True)
class SyncReport:
    files: int
    chunks: int
    embedded: int  # vectors computed by the model in this run
    cache_hits: int  # vectors reused from the embedding cache
    skipped: tuple[tuple[str, str], ...]  # (path, reason)
    warnings: tuple[str, ...]
    duration_ms: int
    rebuilt: bool
    changed_files: int
    removed_files: int
    pending_embeddings: int  # chunks still without a vector
    cancelled: bool
    embedded_lines: int = 0  # line vectors computed by the model in this run (line evidence)
    reused_lines: int = 0  # line vectors taken from the same line in a replaced text (no model call)
    shared: PublishStats | None = None  # the publishes to the shared index (store.url)


@dataclass(frozen=True)
class _TextPass:
    """What a text sync reads the files with: the files, their origins, progress and cancel."""

    files: list[MemoryFile]
    origin: trust.OriginResolver
    progress: Progress | None
    cancel: threading.Event | None


class IndexService:
    """The index of ``runtime``'s agent. ``provider``: an injected embedding provider (tests,
    benchmarks), ``None`` for keyword-only; left out, the configured one is chosen on first use."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        provider: EmbeddingProvider | object | None = CONFIGURED,
        openclaw: OpenClawHome | None = None,
    ) -> None:
        """``openclaw``: the OpenClaw home whose agent's sessions join the ``sessions`` source."""
        self.runtime = runtime
        self.openclaw = openclaw
        self.settings = runtime.settings
        self.store = runtime.store
        self.clock = runtime.clock
        self._choice_lock = threading.Lock()
        self._choice: ProviderChoice | None = None
        self._last_publish: PublishStats | None = None
        # chunk texts whose lines a search wants before the pass reaches them (in-process, and
        # with a shared index those other machines left on it)
        self.line_requests = LineRequests(self._shared_asks if runtime.shared is not None else None)
        self.passing = False  # an embedding pass of this process is running (it takes line_requests)
        conn = self.store.conn()
        if fts_tokenizer_in_use(conn) is None:
            ensure_chunks_fts(conn, self.settings.index.fts_tokenizer)
        if provider is not CONFIGURED:
            self._choice = ProviderChoice(
                provider if provider is not None else None,  # type: ignore[arg-type]
                "injected",
                False,
                None,
            )

    def provider_choice(self, progress: Callable[[str], None] | None = None) -> ProviderChoice:
        """The embedding provider for this run, loaded on first use (raises if required and broken)."""
        with self._choice_lock:
            if self._choice is None:
                self._choice = select_provider(self.settings, progress=progress)
            return self._choice

    @property
    def provider_loaded(self) -> bool:
        """Whether the provider is chosen and its model in memory (nothing to load when none)."""
        choice = self._choice
        return choice is not None and bool(getattr(choice.provider, "loaded", True))

    def load_model(self, progress: Callable[[str], None] | None = None) -> None:
        """Choose the provider and load its model now, so the first search does not wait."""
        provider = self.provider_choice(progress=progress).provider
        load = getattr(provider, "load", None)
        if load is not None:
            load()

    def embedder_identity(self, choice: ProviderChoice | None = None) -> EmbedderIdentity | None:
        choice = choice or self.provider_choice()
        p = choice.provider
        if p is None:
            return None
        return EmbedderIdentity(provider=p.provider_id, model=p.model, provider_key=provider_key(p), dims=p.dims)

    def expected_identity(self, choice: ProviderChoice | None = None) -> IndexIdentity:
        ident = self.embedder_identity(choice)
        idx = self.settings.index
        return IndexIdentity(
            model=ident.model if ident else FTS_ONLY_MODEL,
            provider=ident.provider if ident else "none",
            providerKey=ident.provider_key if ident else "",
            sources=tuple(idx.sources),
            scopeHash=scope_hash(tuple(idx.extra_paths)),
            chunkTokens=idx.chunk_tokens,
            chunkOverlap=idx.chunk_overlap,
            chunkingVersion=CHUNKING_VERSION,
            vectorDims=ident.dims if ident else 0,
            ftsTokenizer=idx.fts_tokenizer,
        )

    def stored_identity(self) -> IndexIdentity | None:
        text = rows.get_meta(self.store.conn(), "identity")
        return IndexIdentity.from_json(text) if text else None

    def index_state(self, choice: ProviderChoice | None = None) -> IndexState:
        expected = self.expected_identity(choice)
        stored = self.stored_identity()
        diffs = tuple(expected.differences(stored)) if stored else ()
        return IndexState(stored=stored, expected=expected, differences=diffs)

    # ------------------------------------------------------------------ indexing

    def files(self) -> list[MemoryFile]:
        return discover(self.runtime.workspace, self.settings.index.extra_paths)

    def sync(
        self,
        *,
        force: bool = False,
        only: set[str] | None = None,
        embed: bool = True,
        progress: Progress | None = None,
        embed_progress: EmbedProgress | None = None,
        line_progress: EmbedProgress | None = None,
        cancel: threading.Event | None = None,
        lock_timeout: float = 30.0,
    ) -> SyncReport:
        """Bring the index up to date with the files (a shadow rebuild when needed).

        ``embed=False`` writes text, FTS and cached vectors only (seconds); the caller runs
        :meth:`embed_pending` afterwards, e.g. in a background worker.
        """
        self.runtime.require_workspace()
        self.runtime.store.require_writable()  # before any file is touched
        if self.runtime.shared is not None:
            self.runtime.shared.check()  # … and the shared index, when store.url names one
        started = time.perf_counter()
        choice = self.provider_choice()
        warnings: list[str] = []
        if choice.error:
            warnings.append(f"{choice.error}; search is keyword-only")
        embedder = self.embedder_identity(choice)
        vec = self.store.vec_available
        if not vec and embedder is not None:
            warnings.append(f"{self.store.vec_error}; vector search uses the slower built-in scan")
        with self.runtime.lock("reindex", timeout=lock_timeout):
            conn = self.store.conn()
            state = self.index_state(choice)
            keep_semantic = state.stored is not None and semantic_only_differences(state.stored, state.expected)
            text = _TextPass(self.files(), trust.origin_resolver(conn, self.runtime.workspace), progress, cancel)
            rebuilt = force or state.empty or (state.mismatched and not keep_semantic)
            if rebuilt:
                stats = self._rebuild(conn, text, state.expected, embedder, warnings)
            else:
                if keep_semantic:
                    warnings.append(
                        "the index was built with a model that is not available now; new text is "
                        "keyword-only until it loads (the semantic index is kept)"
                    )
                    embedder = None
                stats = self._sync_changed(conn, text, embedder, only, warnings)
            shared = None if stats.cancelled else self._publish(conn, embedder, full=rebuilt)
        # Embedding runs after the text phase released the reindex lock: it can take minutes,
        # and a watcher sync or another search must not wait for it.
        embed_stats: EmbedStats | None = None
        if embed and embedder is not None and not keep_semantic and not stats.cancelled:
            self._last_publish = None
            embed_stats = self.embed_pending(progress=embed_progress, line_progress=line_progress, cancel=cancel)
            later = self._last_publish
            shared = shared.then(later) if shared is not None and later is not None else later or shared
        total, embedded_total = rows.count_chunks(conn)
        for rel, reason in stats.skipped:
            warnings.append(f"skipped {rel}: {reason}")
        return SyncReport(
            files=stats.files,
            chunks=total,
            embedded=embed_stats.model_calls if embed_stats else 0,
            cache_hits=stats.cache_hits
            + (embed_stats.cache_hits if embed_stats else 0)
            + (shared.seeded if shared is not None else 0),
            skipped=tuple(stats.skipped),
            warnings=tuple(warnings),
            duration_ms=int((time.perf_counter() - started) * 1000),
            rebuilt=rebuilt,
            changed_files=stats.changed,
            removed_files=stats.removed,
            pending_embeddings=(total - embedded_total) if embedder is not None else 0,
            cancelled=stats.cancelled or bool(embed_stats and embed_stats.cancelled),
            embedded_lines=embed_stats.line_calls if embed_stats else 0,
            reused_lines=embed_stats.lines_reused if embed_stats else 0,
            shared=shared,
        )

    def _publish(
        self, conn: apsw.Connection, embedder: EmbedderIdentity | None, *, full: bool = False
    ) -> PublishStats | None:
        """Bring the shared index (store.url) to this one, under the reindex lock the caller holds
        (engine/store/postgres/mirror.py); None without a shared index."""
        shared = self.runtime.shared
        if shared is None:
            return None
        with shared.connection() as pg:
            seeded = 0
            if embedder is not None:  # first what the shared index already has: it is published back, not lost
                seeded, _ = mirror.seed_vectors(
                    conn,
                    pg,
                    embedder,
                    lines=self.settings.embedding.line_vectors,
                    vec=self.store.vec_available,
                    now=self.clock.timestamp(),
                )
            stats = mirror.publish_changes(
                conn,
                pg,
                provider_key=embedder.provider_key if embedder else None,
                dims=embedder.dims if embedder else None,
                identity=rows.get_meta(conn, "identity"),
                full=full,
            )
            if embedder is not None:  # and what this machine embedded, for machines at other versions of a file
                mirror.push_cache(
                    conn, pg, shared.key, self.settings.embedding.cache_max_entries, self.clock.timestamp()
                )
        stats = dataclasses.replace(stats, seeded=seeded)
        self._last_publish = stats
        return stats

    def _rebuild(
        self,
        conn: apsw.Connection,
        text: _TextPass,
        identity: IndexIdentity,
        embedder: EmbedderIdentity | None,
        warnings: list[str],
    ) -> TextSyncStats:
        """Every file (and, with the sessions source, every transcript) into a shadow database,
        published when complete."""
        sessions = (
            session_index.rebuild_hook(conn, self.settings, self.clock, embedder, self.openclaw, warnings.append)
            if session_index.enabled(self.settings)
            else None
        )
        result = shadow_rebuild(
            conn,
            self.settings.db_path,
            self.settings,
            self.clock,
            text.files,
            identity=identity,
            embedder=embedder,
            vec=self.store.vec_available,
            origin=text.origin,
            progress=text.progress,
            cancel=text.cancel,
            before_publish=sessions,
        )
        return result.stats

    def _sync_changed(
        self,
        conn: apsw.Connection,
        text: _TextPass,
        embedder: EmbedderIdentity | None,
        only: set[str] | None,
        warnings: list[str],
    ) -> TextSyncStats:
        """The files whose hash changed (``only`` these), then the transcripts of a full sync."""
        vec = self.store.vec_available and embedder is not None
        if embedder is not None and vec:
            with immediate(conn):
                ensure_vec_table(conn, embedder.dims)
        stats = sync_text(
            conn,
            self.settings,
            self.clock,
            text.files,
            embedder=embedder,
            vec=vec,
            only=only,
            origin=text.origin,
            progress=text.progress,
            cancel=text.cancel,
        )
        if session_index.enabled(self.settings) and only is None and not stats.cancelled:
            session_index.sync_sessions(
                conn, conn, self.settings, self.clock, embedder=embedder, openclaw=self.openclaw, warn=warnings.append
            )
        return stats

    def embed_pending(
        self,
        *,
        progress: EmbedProgress | None = None,
        line_progress: EmbedProgress | None = None,
        cancel: threading.Event | None = None,
        limit: int | None = None,
        lock_timeout: float | None = 0.0,
        on_wait: Callable[[], None] | None = None,
    ) -> EmbedStats | None:
        """Compute vectors for chunks that lack one, then line vectors for the multi-line chunks
        that lack them (resumable; None when keyword-only). ``progress`` counts chunks,
        ``line_progress`` chunk texts whose lines are embedded.

        Not under the reindex lock: each batch is its own transaction, and a chunk replaced
        by a concurrent text sync simply no longer matches (its vector still lands in the cache).
        One pass at a time per agent (``embed.lock``): ``lock_timeout`` is how long to wait for
        another pass to finish (0: return None at once; None: wait until it is free, or until
        ``cancel`` is set); ``on_wait`` is called once when this pass has to wait.
        """
        choice = self.provider_choice()
        if choice.provider is None or self.index_state(choice).semantic_paused:
            return None
        lock = self.runtime.lock("embed", timeout=lock_timeout)
        if not lock.acquire(cancel=cancel, on_wait=on_wait):
            return None  # another pass is embedding this agent's chunks (or we were cancelled waiting)
        self.passing = True
        try:
            return self._embed_locked(progress, line_progress, cancel, limit)
        finally:
            self.passing = False
            lock.release()

    def _embed_locked(
        self,
        progress: EmbedProgress | None,
        line_progress: EmbedProgress | None,
        cancel: threading.Event | None,
        limit: int | None,
    ) -> EmbedStats | None:
        choice = self.provider_choice()
        ident = self.embedder_identity(choice)
        if choice.provider is None or ident is None:
            return None
        conn = self.store.conn()
        vec = self.store.vec_available
        if vec:
            with immediate(conn):
                ensure_vec_table(conn, ident.dims)
        embedding = self.settings.embedding
        budget = ThreadBudget(
            embedding.index_threads, embedding.threads or default_threads(), foreground=self.runtime.foreground
        )
        seeded = 0
        if self.runtime.shared is not None:  # what another machine already embedded is not embedded again
            with self.runtime.shared.connection() as pg:
                seeded, _lines = mirror.seed_vectors(
                    conn, pg, ident, lines=embedding.line_vectors, vec=vec, now=self.clock.timestamp()
                )
        midway: list[PublishStats] = []  # the publish between the chunk and the line pass
        asked_lines = [0]  # texts whose asked-for lines were published as they were stored

        def chunks_done() -> None:
            if (published := self._publish_between_passes(conn, ident)) is not None:
                midway.append(published)

        def lines_answered(hashes: list[str]) -> None:
            asked_lines[0] += self._publish_asked_lines(conn, ident, hashes)

        shared = self.runtime.shared is not None
        stats = embed_pending(
            conn,
            ModelCalls(choice.provider, budget, cancel),
            ident,
            self.clock,
            vec=vec,
            batch_size=embedding.batch_size,
            cache_cap=embedding.cache_max_entries,
            limit=limit,
            progress=progress,
            line_progress=line_progress,
            lines=embedding.line_vectors,
            line_requests=self.line_requests,
            chunks_done=chunks_done if shared else None,
            lines_answered=lines_answered if shared else None,
        )
        final: PublishStats | None = None
        if shared and (stats.embedded or stats.line_calls or stats.lines_reused or seeded):
            try:
                with self.runtime.lock("reindex", timeout=30.0):  # the files must not change under the publish
                    final = self._publish(conn, ident)
            except IndexBusy:
                pass  # a sync holds the index: it publishes these vectors with its own changes
        if midway or asked_lines[0]:  # the pass's publishes as one, for the report
            first = midway[0] if midway else None
            whole = first.then(final) if first is not None and final is not None else first or final
            if whole is not None:
                self._last_publish = dataclasses.replace(whole, lines=whole.lines + asked_lines[0])
        return dataclasses.replace(stats, cache_hits=stats.cache_hits + seeded) if seeded else stats

    def _publish_between_passes(self, conn: apsw.Connection, ident: EmbedderIdentity) -> PublishStats | None:
        """The chunk vectors, published before the line pass starts: searches read the shared
        index, and its hybrid search need not wait minutes for the lines (bench/RESULTS.md §3).
        None when a sync holds the index (it publishes them with its own changes) or the server
        is away (the publish at the pass's end says so)."""
        try:
            with self.runtime.lock("reindex", timeout=30.0):
                return self._publish(conn, ident)
        except (IndexBusy, StoreUnavailable):
            return None

    def _publish_asked_lines(self, conn: apsw.Connection, ident: EmbedderIdentity, hashes: list[str]) -> int:
        """The line vectors a search asked for, on the shared index as soon as they are stored
        here (engine/index/line_requests.py); the rest wait for the pass's end. How many texts."""
        shared = self.runtime.shared
        if shared is None:
            return 0
        try:
            with shared.connection() as pg:
                return mirror.publish_lines(conn, pg, hashes, ident.provider_key)
        except StoreUnavailable:
            return 0  # the publish at the pass's end carries them, or says why it cannot

    def _shared_asks(self) -> list[str]:
        """What searches on other machines asked for on the shared index (none when it is away)."""
        shared = self.runtime.shared
        if shared is None:
            return []
        try:
            with shared.connection() as pg:
                return take_shared(pg)
        except StoreUnavailable:
            return []

    def vector_coverage(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks)."""
        total, embedded = rows.count_chunks(self.store.conn())
        return embedded, total

    def reset(self) -> None:
        """Drop the derived tables (docs/memory-core.md §2); sessions, origins, intents … are kept."""
        with self.runtime.lock("reindex", timeout=30.0):
            conn = self.store.conn()
            drop_derived(conn)
            ensure_schema(conn)
            ensure_chunks_fts(conn, self.settings.index.fts_tokenizer)

    def watch(self, callback: ChangeCallback) -> WorkspaceWatcher:
        """Start a debounced watcher; the caller stops it."""
        return WorkspaceWatcher(self.runtime.workspace, callback, self.settings.index.watch_debounce_ms).start()

    def embedding_active(self) -> bool:
        """Whether an embedding pass (this process's worker or another clawmem) is running now."""
        if self.runtime.store.read_only:  # nothing can write this index's vectors
            return False
        probe = self.runtime.lock("embed", timeout=0.0)
        if probe.acquire():
            probe.release()
            return False
        return True
