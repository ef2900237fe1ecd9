"""``MemoryEngine``: the one object the CLI and the TUI talk to.

It owns the settings, the clock, the store and the (lazily loaded) embedding provider, and
returns frozen dataclasses. Every method is safe to call from a worker thread; the index is
written under the reindex lock so a watcher sync, a forced rebuild and another clawmem
process never write it at the same time.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import apsw
from clawmem.engine import memory_get as memget
from clawmem.engine import recall
from clawmem.engine.config import Settings
from clawmem.engine.embed.provider import EmbeddingProvider, provider_key
from clawmem.engine.embed.select import ProviderChoice, select_provider
from clawmem.engine.errors import ClawmemError
from clawmem.engine.index.chunking import CHUNKING_VERSION
from clawmem.engine.index.embedding_pass import EmbedProgress, EmbedStats, embed_pending
from clawmem.engine.index.identity import (
    FTS_ONLY_MODEL,
    IndexIdentity,
    scope_hash,
    semantic_only_differences,
)
from clawmem.engine.index.lock import ReindexLock
from clawmem.engine.index.rebuild import shadow_rebuild
from clawmem.engine.index.sync import EmbedderIdentity, Progress, sync_text
from clawmem.engine.index.watcher import ChangeCallback, WorkspaceWatcher
from clawmem.engine.search.calibration import SAMPLE_SIZE, Background, build_background
from clawmem.engine.search.pipeline import SearchRequest, VectorContext, run_search
from clawmem.engine.search.types import MemoryGetResult, SearchResponse
from clawmem.engine.search.vector import VectorMatrix, build_matrix
from clawmem.engine.sessions import index as session_index
from clawmem.engine.sessions import trust
from clawmem.engine.store import index_rows as rows
from clawmem.engine.store import search_queries
from clawmem.engine.store.db import Store
from clawmem.engine.store.index_rows import blob_to_vec
from clawmem.engine.store.schema import (
    drop_derived,
    ensure_chunks_fts,
    ensure_schema,
    ensure_vec_table,
    fts_tokenizer_in_use,
)
from clawmem.engine.workspace import catalog
from clawmem.engine.workspace.catalog import FileInfo, FileSnapshot, SaveResult
from clawmem.engine.workspace.entries import Entry
from clawmem.engine.workspace.files import MemoryFile, discover

if TYPE_CHECKING:
    from clawmem.engine.context.service import ContextService
    from clawmem.engine.dreaming.service import DreamingService
    from clawmem.engine.forget.service import ForgetService
    from clawmem.engine.intents.automation import JobService
    from clawmem.engine.intents.service import IntentService
    from clawmem.engine.sessions.service import SessionService

_UNSET = object()
MATRIX_REBUILD_S = 30.0


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


class MemoryEngine:
    def __init__(self, settings: Settings, *, provider: EmbeddingProvider | object | None = _UNSET) -> None:
        self.settings = settings
        self.clock = settings.clock()
        self.store = Store(settings.db_path)
        self._choice_lock = threading.Lock()
        self._choice: ProviderChoice | None = None
        if provider is not _UNSET:
            # An injected provider (tests, benchmarks) or None for keyword-only.
            self._choice = ProviderChoice(
                provider if provider is not None else None,  # type: ignore[arg-type]
                "injected",
                False,
                None,
            )
        conn = self.store.conn()
        if fts_tokenizer_in_use(conn) is None:
            ensure_chunks_fts(conn, settings.index.fts_tokenizer)
        self.lock_path = settings.agent_dir / "reindex.lock"
        self._background: tuple[tuple[int, str], Background | None] | None = None
        self._matrix: tuple[tuple[int, int, str], VectorMatrix | None] | None = None
        self._matrix_built_at = 0.0
        self._searches = 0

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def workspace(self) -> Path:
        return self.settings.workspace

    # ------------------------------------------------------------------ feature services
    # Each feature owns its module; the facade only hands out one service per engine.

    @cached_property
    def intents(self) -> IntentService:
        from clawmem.engine.intents.service import IntentService

        return IntentService(self)

    @cached_property
    def jobs(self) -> JobService:
        from clawmem.engine.intents.automation import JobService

        return JobService(self)

    @cached_property
    def dreaming(self) -> DreamingService:
        from clawmem.engine.dreaming.service import DreamingService

        return DreamingService(self)

    @cached_property
    def sessions(self) -> SessionService:
        from clawmem.engine.sessions.service import SessionService

        return SessionService(self)

    @cached_property
    def forget(self) -> ForgetService:
        from clawmem.engine.forget.service import ForgetService

        return ForgetService(self)

    @cached_property
    def context(self) -> ContextService:
        from clawmem.engine.context.service import ContextService

        return ContextService(self)

    def require_workspace(self) -> None:
        if not self.workspace.is_dir():
            raise ClawmemError(
                f"workspace {self.workspace} does not exist (set --workspace, CLAWMEM_WORKSPACE or "
                "'workspace' in config.toml, or run `clawmem --demo`)"
            )

    # ------------------------------------------------------------------ embeddings

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
        return discover(self.workspace, self.settings.index.extra_paths)

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
        self.require_workspace()
        started = time.perf_counter()
        choice = self.provider_choice()
        warnings: list[str] = []
        if choice.error:
            warnings.append(f"{choice.error}; search is keyword-only")
        embedder = self.embedder_identity(choice)
        vec = self.store.vec_available
        if not vec and embedder is not None:
            warnings.append(f"{self.store.vec_error}; vector search uses the slower built-in scan")
        with ReindexLock(self.lock_path, timeout=lock_timeout):
            conn = self.store.conn()
            state = self.index_state(choice)
            files = self.files()
            rebuilt = False
            keep_semantic = state.stored is not None and semantic_only_differences(state.stored, state.expected)
            origin = trust.origin_resolver(conn, self.workspace)  # flush provenance lowers path origins
            sessions_on = session_index.enabled(self.settings)  # the "sessions" source; skips tombstoned
            if force or state.empty or (state.mismatched and not keep_semantic):
                result = shadow_rebuild(
                    conn,
                    self.settings.db_path,
                    self.settings,
                    self.clock,
                    files,
                    identity=state.expected,
                    embedder=embedder,
                    vec=vec,
                    origin=origin,
                    progress=progress,
                    cancel=cancel,
                    before_publish=session_index.rebuild_hook(conn, self.settings, self.clock, embedder)
                    if sessions_on
                    else None,
                )
                stats = result.stats
                rebuilt = True
            else:
                if keep_semantic:
                    warnings.append(
                        "the index was built with a model that is not available now; new text is "
                        "keyword-only until it loads (the semantic index is kept)"
                    )
                    embedder = None
                elif embedder is not None and vec:
                    with conn:
                        ensure_vec_table(conn, embedder.dims)
                stats = sync_text(
                    conn,
                    self.settings,
                    self.clock,
                    files,
                    embedder=embedder,
                    vec=vec and embedder is not None,
                    only=only,
                    origin=origin,
                    progress=progress,
                    cancel=cancel,
                )
                if sessions_on and only is None and not stats.cancelled:
                    session_index.sync_sessions(conn, conn, self.settings, self.clock, embedder=embedder)
        # Embedding runs after the text phase released the reindex lock: it can take minutes,
        # and a watcher sync or another search must not wait for it.
        embed_stats: EmbedStats | None = None
        if embed and embedder is not None and not keep_semantic and not stats.cancelled:
            embed_stats = self.embed_pending(progress=embed_progress, line_progress=line_progress, cancel=cancel)
        total, embedded_total = rows.count_chunks(conn)
        for rel, reason in stats.skipped:
            warnings.append(f"skipped {rel}: {reason}")
        return SyncReport(
            files=stats.files,
            chunks=total,
            embedded=embed_stats.model_calls if embed_stats else 0,
            cache_hits=stats.cache_hits + (embed_stats.cache_hits if embed_stats else 0),
            skipped=tuple(stats.skipped),
            warnings=tuple(warnings),
            duration_ms=int((time.perf_counter() - started) * 1000),
            rebuilt=rebuilt,
            changed_files=stats.changed,
            removed_files=stats.removed,
            pending_embeddings=(total - embedded_total) if embedder is not None else 0,
            cancelled=stats.cancelled or bool(embed_stats and embed_stats.cancelled),
            embedded_lines=embed_stats.line_calls if embed_stats else 0,
        )

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
        lock = ReindexLock(self.settings.agent_dir / "embed.lock", timeout=lock_timeout)
        if not lock.acquire(cancel=cancel, on_wait=on_wait):
            return None  # another pass is embedding this agent's chunks (or we were cancelled waiting)
        try:
            return self._embed_locked(progress, line_progress, cancel, limit)
        finally:
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
            with conn:
                ensure_vec_table(conn, ident.dims)
        return embed_pending(
            conn,
            choice.provider,
            ident,
            self.clock,
            vec=vec,
            batch_size=self.settings.embedding.batch_size,
            cache_cap=self.settings.embedding.cache_max_entries,
            limit=limit,
            progress=progress,
            line_progress=line_progress,
            cancel=cancel,
            lines=self.settings.embedding.line_vectors,
        )

    def vector_coverage(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks)."""
        total, embedded = rows.count_chunks(self.store.conn())
        return embedded, total

    def reset(self) -> None:
        """Drop the derived tables (spec §2); sessions, origins, intents … are kept."""
        with ReindexLock(self.lock_path, timeout=30.0):
            conn = self.store.conn()
            drop_derived(conn)
            ensure_schema(conn)
            ensure_chunks_fts(conn, self.settings.index.fts_tokenizer)

    def watch(self, callback: ChangeCallback) -> WorkspaceWatcher:
        """Start a debounced watcher; the caller stops it."""
        return WorkspaceWatcher(self.workspace, callback, self.settings.index.watch_debounce_ms).start()

    # ------------------------------------------------------------------ search

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        project_keys: tuple[str, ...] = (),
        scoring: str | None = None,
        legs: str = "hybrid",
        record: bool = True,
        sync: bool = True,
        include_untrusted: bool = False,
        sources: tuple[str, ...] | None = None,
    ) -> SearchResponse:
        """Hybrid search with a breakdown per hit and the near-misses (DESIGN §5).

        ``record=False`` keeps the search out of the recall signals Dreaming promotes from
        (previews, the TUI's search-as-you-type until a result is opened, ``--no-record``).
        Untrusted-origin hits (web pages, other people) are left out and listed among the
        near-misses with the reason, unless ``include_untrusted``; then they are labelled.
        ``sources`` defaults to the indexed sources (``index.sources``: memory, and sessions when
        session indexing is on).
        """
        if not query.strip():
            raise ClawmemError("the query is empty")
        s = self.settings.search
        max_results = s.max_results if max_results is None else max_results
        min_score = s.min_score if min_score is None else min_score
        if not 1 <= max_results <= 200:
            raise ClawmemError("max results must be between 1 and 200")
        if not 0.0 <= min_score <= 1.0:
            raise ClawmemError("min score must be between 0 and 1")
        scoring = scoring or s.scoring
        if scoring not in ("calibrated", "openclaw"):
            raise ClawmemError(f"unknown scoring {scoring!r} (calibrated or openclaw)")
        if legs not in ("hybrid", "keyword", "vector"):
            raise ClawmemError(f"unknown search mode {legs!r} (hybrid, keyword or vector)")
        warnings: list[str] = []
        conn = self.store.conn()
        if self.stored_identity() is None and self.workspace.is_dir():
            # The spec: an empty index runs one sync first. Callers that sync themselves (the app's
            # background worker) get the text only; the worker embeds.
            self.sync(embed=sync)
        elif sync and self.workspace.is_dir():
            try:
                self.sync(embed=False, lock_timeout=0.0)
            except ClawmemError as exc:  # busy elsewhere: search what is there
                warnings.append(str(exc))
            except apsw.BusyError:  # another process holds the write lock past the busy timeout
                warnings.append("the index is being written by another process; searched what is there")
        choice = self.provider_choice() if legs != "keyword" else None
        state = self.index_state(choice) if choice is not None else None
        provider = choice.provider if choice is not None else None
        paused = None
        if state is not None and state.semantic_paused:
            paused = (
                "semantic search is paused: the index was built with different settings "
                f"({'; '.join(state.differences)}) — run `clawmem index --force`"
            )
            provider = None
        elif state is not None and state.mismatched:
            warnings.append(
                "the index does not match the current settings "
                f"({'; '.join(state.differences)}) — run `clawmem index --force`"
            )
        ident = self.embedder_identity(choice) if provider is not None else None
        embedded, total = self.vector_coverage()
        coverage = embedded / total if total else 0.0
        vctx = VectorContext(
            provider=provider,
            model=ident.model if ident else None,
            use_vec=self.store.vec_available,
            background=lambda: self._background_matrix(ident.model if ident else ""),
            paused_reason=paused,
            matrix=lambda: self._vector_matrix(ident.model if ident else ""),
            provider_key=ident.provider_key if ident and self.settings.embedding.line_vectors else None,
        )
        if choice is not None and choice.error:
            warnings.append(f"{choice.error}; keyword-only")
        if legs == "vector" and provider is None:
            raise ClawmemError("vector search needs an embedding model, and none is available")
        from clawmem.engine.store.schema import fts_tokenizer_in_use

        response = run_search(
            conn,
            SearchRequest(
                query,
                max_results,
                min_score,
                tuple(project_keys),
                scoring,
                legs,
                include_untrusted=include_untrusted,
                sources=tuple(sources) if sources else tuple(self.settings.index.sources),
                today=self.clock.local_now().date(),
            ),
            self.settings,
            self.clock.now(),
            vctx,
            tokenizer=fts_tokenizer_in_use(conn) or self.settings.index.fts_tokenizer,
            coverage=coverage,
            chunk_total=total,
            embedding_active=coverage < 1.0 and self.embedding_active(),
            warnings=warnings,
        )
        if choice is not None and choice.error:
            from dataclasses import replace as _replace

            response = _replace(response, fallback=choice.error)
        if state is not None and state.mismatched:
            from dataclasses import replace as _replace

            response = _replace(response, stale=True, action="clawmem index --force")
        if record:
            recall.record_search(conn, query, response.results, self.clock)
        return response

    def embedding_active(self) -> bool:
        """Whether an embedding pass (this process's worker or another clawmem) is running now."""
        probe = ReindexLock(self.settings.agent_dir / "embed.lock", timeout=0.0)
        if probe.acquire():
            probe.release()
            return False
        return True

    def _vector_matrix(self, model: str) -> VectorMatrix | None:
        """All vectors in memory, for processes that search more than once (the app, benches).

        A one-shot CLI search keeps using sqlite-vec (loading 100k vectors costs ~1 s); while
        the embedding pass is adding vectors the matrix is rebuilt at most every 30 s, and
        sqlite-vec answers in between, so results are always complete.
        """
        self._searches += 1
        if self._searches < 2 or not model:
            return None
        conn = self.store.conn()
        key = (rows.revision(conn), search_queries.vector_count(conn), model)
        if self._matrix is not None and self._matrix[0] == key:
            return self._matrix[1]
        if self._matrix is not None and time.monotonic() - self._matrix_built_at < MATRIX_REBUILD_S:
            return None
        matrix = build_matrix(conn, model)
        self._matrix = (key, matrix)
        self._matrix_built_at = time.monotonic()
        return matrix

    def _background_matrix(self, model: str) -> Background | None:
        """A spread of stored vectors for calibration, cached until the vector count changes."""
        conn = self.store.conn()
        key = (search_queries.vector_count(conn), model)
        if self._background is not None and self._background[0] == key:
            return self._background[1]
        sample = search_queries.background_sample(conn, model, SAMPLE_SIZE)
        background = build_background([blob_to_vec(b) for b, _ in sample], [t for _, t in sample])
        self._background = (key, background)
        return background

    def get(self, path: str, *, from_line: int = 1, lines: int = memget.DEFAULT_LINES) -> MemoryGetResult:
        """``memory_get``: read part of a memory file under the one path rule."""
        return memget.read_lines(self.workspace, path, from_line=from_line, lines=lines)

    # ------------------------------------------------------------------ files and entries

    def memory_files(self) -> list[FileInfo]:
        """Every memory file with its kind and entry counts (DREAMS.md included)."""
        return catalog.file_infos(self.workspace, self.settings.index.extra_paths, self.settings.index.max_file_bytes)

    def snapshot(self, rel: str) -> FileSnapshot:
        """A file's text plus the hash of the bytes it came from (for a hash-checked save)."""
        return catalog.snapshot(self.workspace, rel)

    def entries(self, rel: str) -> list[EntryView]:
        """Parsed entries of a file, each with the origin class the index recorded for it."""
        entries = catalog.entries_of(self.workspace, rel)
        origins = sorted(search_queries.origins_by_line(self.store.conn(), rel))
        starts = [a for (a, _), _ in origins]
        out = []
        for e in entries:
            # The chunk that starts nearest before the entry's line and covers it (in curated files,
            # the entry's own chunk), found by bisection: a scan made a 10,000-entry MEMORY.md
            # take 10 s to open.
            origin = None
            i = bisect.bisect_right(starts, e.start_line) - 1
            for j in range(i, max(-1, i - 64), -1):
                (a, b), o = origins[j]
                if a <= e.start_line <= b:
                    origin = o
                    break
            out.append(EntryView(e, origin or "unindexed"))
        return out

    def save_file(self, base: FileSnapshot, text: str) -> SaveResult:
        """Atomic, hash-checked save; raises ConflictError when the file changed on disk."""
        return catalog.save(self.workspace, base, text)

    def disk_matches(self, base: FileSnapshot) -> bool:
        return catalog.disk_matches(self.workspace, base)

    def save_conflict_copy(self, rel: str, text: str, label: str) -> Path:
        """Keep the version not chosen in an edit conflict under ``<home>/conflicts/``."""
        stamp = self.clock.now().strftime("%Y%m%dT%H%M%SZ")
        return catalog.save_conflict_copy(self.settings.home, rel, text, label, stamp)


@dataclass(frozen=True)
class EntryView:
    entry: Entry
    origin_class: str
