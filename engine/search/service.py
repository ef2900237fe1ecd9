"""``SearchService``: the memory search of one agent, and the caches that make it fast.

It validates the request, brings the index up to date (text only, without waiting for a busy
writer), picks the vectors it may use, runs the staged pipeline (:mod:`.pipeline`) and records
the recall signals Dreaming promotes from. The in-memory vector matrix and the calibration
background live here, one per open agent, and are rebuilt when the index changes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import replace

import apsw
from clawmem.engine import recall, recall_sharing
from clawmem.engine.errors import ClawmemError, IndexBusy
from clawmem.engine.index.line_requests import ask_elsewhere, ask_shared
from clawmem.engine.index.service import IndexService
from clawmem.engine.kinds import LEG_CHOICES, SCORING_MODES
from clawmem.engine.runtime import Runtime
from clawmem.engine.search.caches import SearchCaches
from clawmem.engine.search.calibration import SAMPLE_SIZE, Background, build_background
from clawmem.engine.search.pipeline import SearchRequest, VectorContext, run_search
from clawmem.engine.search.types import Legs, ScoringMode, SearchResponse
from clawmem.engine.search.vector import VectorMatrix, build_matrix
from clawmem.engine.store.index_rows import blob_to_vec
from clawmem.engine.store.postgres.connect import StoreUnavailable, driver
from clawmem.engine.store.postgres.search_reader import PostgresSearchReader
from clawmem.engine.store.schema import fts_tokenizer_in_use
from clawmem.engine.store.search_reader import SearchReader, SqliteSearchReader

MATRIX_REBUILD_S = 30.0
TEXT_PENDING = "the index is being built and its text is not in yet: searched what is there"


class SearchService:
    def __init__(self, runtime: Runtime, index: IndexService) -> None:
        self.runtime = runtime
        self.index = index
        self.settings = runtime.settings
        self.store = runtime.store
        self.clock = runtime.clock
        self._background: tuple[tuple[str, int, str], Background | None] | None = None
        self._matrix: tuple[tuple[str, int, int, str], VectorMatrix | None] | None = None
        self._matrix_built_at = 0.0
        self._searches = 0
        self.caches = SearchCaches()  # line vectors, term counts, the query-embedding thread

    def close(self) -> None:
        """Stop the query-embedding thread (an engine is closed once its process is done with it)."""
        self.caches.close()

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        project_keys: tuple[str, ...] = (),
        scoring: ScoringMode | None = None,
        legs: Legs = "hybrid",
        record: bool = True,
        sync: bool = True,
        include_untrusted: bool = False,
        sources: tuple[str, ...] | None = None,
        wait_for_text: bool = True,
    ) -> SearchResponse:
        """Hybrid search with a breakdown per hit and the near-misses (docs/design.md §5).

        ``record=False`` keeps the search out of the recall signals Dreaming promotes from
        (previews, the TUI's search-as-you-type until a result is opened, ``--no-record``).
        Untrusted-origin hits (web pages, other people) are left out and listed among the
        near-misses with the reason, unless ``include_untrusted``; then they are labelled.
        ``sources`` defaults to the indexed sources (``index.sources``: memory, and sessions when
        session indexing is on). An index that was never built is built (its text) before the
        search, waiting for a pass that is building it already; ``wait_for_text=False`` searches
        what is there with a warning instead (the app, whose own pass is building it and which
        searches again when its text is in).
        """
        max_results, min_score, scoring = self._checked(query, max_results, min_score, scoring, legs)
        self.runtime.foreground.touch()  # someone waits for this answer: a pass leaves them a core
        warnings: list[str] = []
        conn = self.store.conn()
        self._sync_before(sync, warnings, wait_for_text)
        with self._reading() as reader:
            response = self._search(
                reader, query, max_results, min_score, project_keys, scoring, legs, include_untrusted, sources, warnings
            )
        if record and not self.store.read_only:
            observations = recall.observe(query, response.results, self.clock)
            if self.runtime.shared is None:
                recall.apply_observations(conn, observations)
            else:  # journalled for, and caught up with, the other machines (engine/recall_sharing.py)
                try:
                    recall_sharing.record(conn, self.runtime.shared, observations, int(self.clock.timestamp() * 1000))
                except StoreUnavailable as exc:  # the answer stands; the recall stays on this machine
                    note = f"this search's recall signals were kept on this machine only ({exc})"
                    response = replace(response, warnings=(*response.warnings, note))
        return response

    @contextlib.contextmanager
    def _reading(self) -> Iterator[SearchReader]:
        """The index this search reads: the shared one when store.url names it, else this machine's."""
        shared = self.runtime.shared
        if shared is None:
            yield SqliteSearchReader(self.store.conn())
            return
        with shared.connection() as pg:
            yield PostgresSearchReader(pg, shared.key)

    def _search(
        self,
        reader: SearchReader,
        query: str,
        max_results: int,
        min_score: float,
        project_keys: tuple[str, ...],
        scoring: ScoringMode,
        legs: Legs,
        include_untrusted: bool,
        sources: tuple[str, ...] | None,
        warnings: list[str],
    ) -> SearchResponse:
        conn = self.store.conn()
        choice = self.index.provider_choice() if legs != "keyword" else None
        state = self.index.index_state(choice) if choice is not None else None
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
        ident = self.index.embedder_identity(choice) if provider is not None else None
        if self.runtime.shared is None:
            embedded, total = self.index.vector_coverage()
        else:
            embedded, total = reader.vector_count(), reader.index_state().chunks
        coverage = embedded / total if total else 0.0
        vctx = VectorContext(
            provider=provider,
            model=ident.model if ident else None,
            use_vec=self.store.vec_available or self.runtime.shared is not None,  # pgvector has its own KNN
            background=lambda: self._background_matrix(reader, ident.model if ident else ""),
            paused_reason=paused,
            matrix=lambda: self._vector_matrix(reader, ident.model if ident else ""),
            provider_key=ident.provider_key if ident and self.settings.embedding.line_vectors else None,
        )
        if choice is not None and choice.error:
            warnings.append(f"{choice.error}; keyword-only")
        if legs == "vector" and provider is None:
            raise ClawmemError("vector search needs an embedding model, and none is available")
        response = run_search(
            reader,
            self.caches,
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
            embedding_active=coverage < 1.0 and self.index.embedding_active(),
            warnings=warnings,
        )
        response = self._ask_for_lines(reader, response)
        if choice is not None and choice.error:
            response = replace(response, fallback=choice.error)
        if state is not None and state.mismatched:
            response = replace(response, stale=True, action="clawmem index --force")
        return replace(response, keyword_ranking=reader.keyword_ranking)

    def _ask_for_lines(self, reader: SearchReader, response: SearchResponse) -> SearchResponse:
        """Results the line pass has not reached yet (no best line, and their score will move):
        their lines are asked for first (engine/index/line_requests.py), and the response says so."""
        pending = [hit.chunk_id for hit in response.results if hit.breakdown.line_pending]
        if not pending:
            return response
        meta = reader.chunk_meta(pending)
        hashes = [meta[cid].hash for cid in pending if cid in meta]
        many = len(pending) > 1
        its = "their" if many else "its"
        if self.store.read_only:
            then = f"this index is read-only here, so {'they stay' if many else 'it stays'} without one"
        elif self.runtime.shared is not None:  # searches read the server: a pass publishes asked lines at once
            then = self._ask_shared_index(hashes, its, many)
        elif self.index.passing:
            self.index.line_requests.ask(hashes)
            then = f"the line pass embeds {its} lines first"
        elif self.index.embedding_active():  # another process's pass
            try:
                ask_elsewhere(self.store.conn(), hashes)
                then = f"the line pass of the clawmem indexing now embeds {its} lines first"
            except apsw.BusyError:  # the answer stands; the pass reaches them in its own order
                then = f"the line pass of the clawmem indexing now reaches {'them' if many else 'it'} in its order"
        else:
            self.index.line_requests.ask(hashes)  # the next pass of this process takes them first
            then = f"run `clawmem index` to embed {its} lines"
        head = f"{len(pending)} of these results have" if many else "1 of these results has"
        note = f"{head} no best line yet, so {its} {'scores' if many else 'score'} will still move: {then}"
        return replace(response, warnings=(*response.warnings, note))

    def _ask_shared_index(self, hashes: list[str], its: str, many: bool) -> str:
        """Ask for lines on a shared index: this process's pass, another process's pass on this
        machine, or, with neither, the pass of any machine that publishes to the server; what
        the warning says happens then."""
        shared = self.runtime.shared
        assert shared is not None
        if self.index.passing:
            self.index.line_requests.ask(hashes)
            return f"the line pass embeds {its} lines first and publishes them to the shared index"
        if self.index.embedding_active():
            try:
                ask_elsewhere(self.store.conn(), hashes)
                return f"the line pass of the clawmem indexing now embeds {its} lines first"
            except apsw.BusyError:
                pass
        else:
            try:
                with shared.connection() as pg:
                    ask_shared(pg, hashes)
                return f"the next line pass publishing to the shared index embeds {its} lines first"
            except (StoreUnavailable, driver().Error):  # away, or this role may only read
                pass
        return f"a line pass publishing to the shared index reaches {'them' if many else 'it'} in its order"

    def _checked(
        self, query: str, max_results: int | None, min_score: float | None, scoring: ScoringMode | None, legs: Legs
    ) -> tuple[int, float, ScoringMode]:
        """The request's limits and mode (the settings' where not given), or a one-line error."""
        if not query.strip():
            raise ClawmemError("the query is empty")
        if not query.isascii() and not _encodable(query):
            raise ClawmemError("the query is not valid text (undecodable bytes or a lone surrogate)")
        s = self.settings.search
        max_results = s.max_results if max_results is None else max_results
        min_score = s.min_score if min_score is None else min_score
        if not 1 <= max_results <= 200:
            raise ClawmemError("max results must be between 1 and 200")
        if not 0.0 <= min_score <= 1.0:
            raise ClawmemError("min score must be between 0 and 1")
        if scoring is not None and scoring not in SCORING_MODES:
            raise ClawmemError(f"unknown scoring {scoring!r} (calibrated or openclaw)")
        if legs not in LEG_CHOICES:
            raise ClawmemError(f"unknown search mode {legs!r} (hybrid, keyword or vector)")
        return max_results, min_score, scoring or s.scoring

    def _sync_before(self, sync: bool, warnings: list[str], wait_for_text: bool = True) -> None:
        """Bring the text up to date without waiting for a busy writer (a busy one is a warning)."""
        if not self.runtime.workspace.is_dir():
            return
        if self.store.read_only:  # search the index as it is; nothing is recorded for Dreaming
            warnings.append(
                f"the database is {self.store.read_only}: searched the index as it is "
                "(not refreshed; this search is not recorded for Dreaming)"
            )
            return
        if self.index.stored_identity() is None:
            # docs/memory-core.md: an empty index runs one sync first. Callers that sync themselves
            # (the app's background worker) get the text only; the worker embeds.
            if wait_for_text:
                self.index.sync(embed=sync)
                return
            try:
                self.index.sync(embed=False, lock_timeout=0.0)
            except (IndexBusy, apsw.BusyError):  # the first pass is indexing the text (seconds)
                warnings.append(TEXT_PENDING)
        elif sync:
            try:
                self.index.sync(embed=False, lock_timeout=0.0)
            except ClawmemError as exc:  # busy elsewhere: search what is there
                warnings.append(str(exc))
            except apsw.BusyError:  # another process holds the write lock past the busy timeout
                warnings.append("the index is being written by another process; searched what is there")

    def _vector_matrix(self, reader: SearchReader, model: str) -> VectorMatrix | None:
        """All vectors in memory, for processes that search more than once (the app, benches).

        A one-shot CLI search keeps using sqlite-vec (loading 100k vectors costs ~1 s); while
        the embedding pass is adding vectors the matrix is rebuilt at most every 30 s, and
        sqlite-vec answers in between, so results are always complete.
        """
        self._searches += 1
        if self._searches < 2 or not model:
            return None
        key = (reader.key, reader.index_state().revision, reader.vector_count(), model)
        if self._matrix is not None and self._matrix[0] == key:
            return self._matrix[1]
        if self._matrix is not None and time.monotonic() - self._matrix_built_at < MATRIX_REBUILD_S:
            return None
        matrix = build_matrix(reader, model)
        self._matrix = (key, matrix)
        self._matrix_built_at = time.monotonic()
        return matrix

    def _background_matrix(self, reader: SearchReader, model: str) -> Background | None:
        """A spread of stored vectors for calibration, cached until the vector count changes."""
        key = (reader.key, reader.vector_count(), model)
        if self._background is not None and self._background[0] == key:
            return self._background[1]
        sample = reader.background_sample(model, SAMPLE_SIZE)
        background = build_background([blob_to_vec(b) for b, _ in sample], [t for _, t in sample])
        self._background = (key, background)
        return background


def _encodable(text: str) -> bool:
    """True when ``text`` is valid Unicode (no lone surrogate): the index, recall hashes and JSON need UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
