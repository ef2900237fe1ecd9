"""One search, end to end (spec §4), keeping every intermediate value for the breakdown.

keyword + path legs ─┐
diaries of the dates ┤  (calibrated: the query's dates are one more keyword concept)
the query names      ├─ merge by chunk id → content = 0.7·vector + 0.3·keyword
vector leg ──────────┘     → × decay → × importance → × project → tiers, MMR → threshold
                                                                      → results + near-misses
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

import apsw
import numpy as np
from clawmem.engine.config import SearchSettings, Settings
from clawmem.engine.embed.provider import EmbeddingProvider, Vector
from clawmem.engine.index.line_evidence import evidence_lines
from clawmem.engine.search import calibration as cal
from clawmem.engine.search.dates import REPORT_DAYS, DateSpan, date_match, diary_date, query_dates
from clawmem.engine.search.keyword import KeywordHit, exact_tier, keyword_leg
from clawmem.engine.search.ranking import (
    decay_factor,
    diary_age_days,
    importance_factor,
    mmr_picks,
    openclaw_age_days,
    openclaw_snippet_tokens,
    prepare_mmr_tokens,
    project_factor,
    snippet_tokens,
)
from clawmem.engine.search.tokens import concept_coverage, query_concepts
from clawmem.engine.search.types import Provenance, ScoreBreakdown, SearchHit, SearchResponse
from clawmem.engine.search.vector import VectorMatrix, cosines_for, matrix_cosines, matrix_hits, matrix_top, vector_leg
from clawmem.engine.store import line_vector_rows, word_index
from clawmem.engine.store import search_queries as q
from clawmem.engine.workspace.annotations import INVALID_PROJECT_ANNOTATION
from clawmem.engine.workspace.entries import entry_statuses

CANDIDATE_WINDOW = 200  # OpenClaw 2026.9.6: every leg ranks a 200-wide window; results are cut at the end
# Calibrated scoring: every leg ranks 64 candidates (8 × the default 6 results, the spec's own KNN
# factor, rounded up), more only when more than 64 results are asked for. On the bilingual fixture and
# LoCoMo it returns the same rankings as 200 (bench/RESULTS.md), and MMR, which is quadratic in
# the candidates, gets a third of them. The window does not grow with max_results below 64, so
# asking for more results extends the list and never reorders or rescores its head.
CALIBRATED_WINDOW = 64
PROBE_MAX_SHARE = 0.10  # calibrated scoring: keyword probes skip terms in more than this share of chunks
PROBE_MAX_WINDOWS = 32  # … or in more chunks than this many candidate windows (see probe_match_limit)
# The query is embedded, and ranked against the in-memory vectors, on its own thread while the
# keyword leg runs: llama.cpp, numpy and SQLite all release the GIL, so on two cores the
# embedding (~12 ms) and the 100k-row matrix product (~20 ms) cost little wall time beside the
# keyword leg (10–40 ms). The thread never touches the database connection (apsw allows one
# thread at a time on it). One worker: a query embedding is one model call.
_EMBEDDER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clawmem-query-embed")
# Calibrated scoring: a chunk with line vectors gets this share of its vector score from its best
# line, calibrated against the same background as the chunks (bench/RESULTS.md: LoCoMo recall@5
# over the same candidates 0.827 -> 0.844 at 0.3; 0.837 at 0.5, 0.832 at 0.7; against a background
# of line vectors instead, 0.838-0.841).
LINE_WEIGHT = 0.3
SUPERSEDED = re.compile(r"<!--\s*observed:[^>]*status:\s*superseded\s*-->", re.IGNORECASE)


@dataclass(frozen=True)
class SearchRequest:
    query: str
    max_results: int
    min_score: float
    project_keys: tuple[str, ...] = ()
    scoring: str = "calibrated"  # or "openclaw"
    legs: str = "hybrid"  # hybrid | keyword | vector
    sources: tuple[str, ...] = ("memory",)
    include_untrusted: bool = False  # untrusted-origin hits are left out (and explained) unless asked for
    today: date | None = None  # the user's local date, for the dates a query names (default: now's UTC date)


@dataclass(frozen=True)
class VectorContext:
    """What the vector leg needs; ``provider`` None means keyword-only."""

    provider: EmbeddingProvider | None
    model: str | None
    use_vec: bool
    background: Callable[[], cal.Background | None]
    paused_reason: str | None = None
    matrix: Callable[[], VectorMatrix | None] | None = None  # in-memory vectors, when worth it
    provider_key: str | None = None  # whose line vectors the calibrated scoring may read


@dataclass
class _Cand:
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    cosine: float | None = None
    kw: KeywordHit | None = None
    legs: set[str] = field(default_factory=set)


class _BestLine(NamedTuple):
    number: int  # in the file
    cosine: float
    text: str


# (database, provider key, text hash) -> that text's line vectors (float16, as stored), None when
# it has none. Immutable per key; the same candidates come back search after search (as you type).
# ~5 KB each for a 7-line chunk: at most ~40 MB.
_LINE_CACHE: OrderedDict[tuple[str, str, str], np.ndarray | None] = OrderedDict()
_LINE_CACHE_SIZE = 8192
_LINE_LOCK = threading.Lock()


def _line_matrices(
    conn: apsw.Connection, hashes: dict[str, str], provider_key: str, dims: int
) -> dict[str, np.ndarray]:
    """Text hash -> its line vectors (hashes maps each to its text), read once, then cached."""
    out: dict[str, np.ndarray] = {}
    missing = []
    with _LINE_LOCK:
        for h in hashes:
            key = (conn.filename, provider_key, h)
            if key in _LINE_CACHE:
                _LINE_CACHE.move_to_end(key)
                if (m := _LINE_CACHE[key]) is not None:
                    out[h] = m
            else:
                missing.append(h)
    if not missing:
        return out
    read = line_vector_rows.for_hashes(conn, missing, provider_key)
    with _LINE_LOCK:
        for h in missing:
            if h not in read:
                continue  # not computed yet: ask again next time
            blob, n = read[h], len(evidence_lines(hashes[h]))
            # A blob of another line rule (or none: a one-line text) gives no evidence.
            m = line_vector_rows.unpack(blob, dims) if n and len(blob) == 2 * dims * n else None
            _LINE_CACHE[(conn.filename, provider_key, h)] = m
            if m is not None:
                out[h] = m
        while len(_LINE_CACHE) > _LINE_CACHE_SIZE:
            _LINE_CACHE.popitem(last=False)
    return out


def line_matrices(
    conn: apsw.Connection, chunks: Sequence[q.ChunkMeta], provider_key: str, dims: int
) -> dict[str, np.ndarray]:
    """Chunk id -> the line vectors of its text, for the chunks that have them."""
    matrices = _line_matrices(conn, {m.hash: m.text for m in chunks}, provider_key, dims)
    return {m.id: matrices[m.hash] for m in chunks if m.hash in matrices}


def best_lines(
    conn: apsw.Connection, query_vec: Vector, chunks: Sequence[q.ChunkMeta], provider_key: str
) -> dict[str, _BestLine]:
    """For each chunk with line vectors: its line closest to the query."""
    qv = np.asarray(query_vec, dtype=np.float32)
    qv = qv / (np.linalg.norm(qv) or 1.0)
    by_id = {m.id: m for m in chunks}
    found = list(line_matrices(conn, chunks, provider_key, len(qv)).items())
    if not found:
        return {}
    sims = np.concatenate([m for _, m in found]).astype(np.float32) @ qv  # one product for all their lines
    out = {}
    start = 0
    for cid, m in found:
        i = int(np.argmax(sims[start : start + len(m)]))
        line_offset, line_text = evidence_lines(by_id[cid].text)[i]
        out[cid] = _BestLine(by_id[cid].start_line + line_offset, float(sims[start + i]), line_text)
        start += len(m)
    return out


class _Score(NamedTuple):
    """A candidate's score factors, unrounded but for the score the order compares. Only the
    hits returned and the near-misses become a :class:`ScoreBreakdown`: building one (a frozen
    dataclass, eleven roundings) cost more than the rest of a candidate's scoring."""

    vector_raw: float | None
    vector: float
    keyword_raw: float | None
    keyword: float
    path_tier: int
    content: float
    age_days: float | None
    decay: float
    importance: int | None
    importance_factor: float
    project_factor: float
    pre_threshold: float
    vector_z: float | None
    vector_note: str | None
    line: _BestLine | None = None
    line_vector: float | None = None
    date_match: float | None = None

    def breakdown(self, mmr_rank: int | None, passed: bool) -> ScoreBreakdown:
        return ScoreBreakdown(
            vector_raw=round(self.vector_raw, 6) if self.vector_raw is not None else None,
            vector=round(self.vector, 6),
            keyword_raw=round(self.keyword_raw, 6) if self.keyword_raw is not None else None,
            keyword=round(self.keyword, 6),
            path_tier=self.path_tier,
            content=round(self.content, 6),
            age_days=round(self.age_days, 3) if self.age_days is not None else None,
            decay=round(self.decay, 6),
            importance=self.importance,
            importance_factor=round(self.importance_factor, 4),
            project_factor=round(self.project_factor, 4),
            pre_threshold=self.pre_threshold,
            mmr_rank=mmr_rank,
            passed_threshold=passed,
            vector_z=round(self.vector_z, 3) if self.vector_z is not None else None,
            vector_note=self.vector_note,
            line=self.line.number if self.line else None,
            line_cosine=round(self.line.cosine, 6) if self.line else None,
            line_vector=round(self.line_vector, 6) if self.line_vector is not None else None,
            date_match=round(self.date_match, 4) if self.date_match is not None else None,
        )


# (database, index revision, chunk count, tokenizer, term) -> chunks containing the term. Search as you type asks
# for the same terms keystroke after keystroke; a count can be a full scan (a 2-letter term).
_DF_CACHE: OrderedDict[tuple[str, int, int, str, str], int] = OrderedDict()
_DF_SEEN: dict[str, int] = {}  # the last revision seen per database
_DF_CACHE_SIZE = 4096
_DF_LOCK = threading.Lock()  # searches run on worker threads


def _document_frequencies(conn: apsw.Connection, terms: Sequence[str], tokenizer: str, total: int) -> dict[str, int]:
    """How many indexed chunks contain each term, cached per index revision."""
    revision = q.index_revision(conn) if conn.filename else -1
    with _DF_LOCK:
        if revision < _DF_SEEN.get(conn.filename, 0):  # the index was reset: its counter restarted
            for stale in [k for k in _DF_CACHE if k[0] == conn.filename]:
                del _DF_CACHE[stale]
        _DF_SEEN[conn.filename] = revision
    out = {}
    for c in terms:
        key = (conn.filename, revision, total, tokenizer, c)
        with _DF_LOCK:
            df = _DF_CACHE.get(key) if revision >= 0 else None
            if df is not None:
                _DF_CACHE.move_to_end(key)
        if df is None:
            df = q.document_frequency(conn, c, tokenizer, total)
            if revision >= 0:
                with _DF_LOCK:
                    _DF_CACHE[key] = df
                    if len(_DF_CACHE) > _DF_CACHE_SIZE:
                        _DF_CACHE.popitem(last=False)
        out[c] = df
    return out


def concept_weights(concepts: list[str], total: int, count: Callable[[str], int]) -> dict[str, float]:
    """IDF of each query concept over the ``total`` indexed chunks: ln(1 + N / (df + 1))."""
    if not total or len(concepts) < 2:
        return {}
    return {c: math.log(1 + total / (count(c) + 1)) for c in concepts}


def probe_match_limit(total: int, window: int) -> int:
    """Calibrated scoring: the most chunks a term may appear in and still get a keyword probe.

    A probe ranks every chunk that contains its term by BM25 and keeps the best ``window``.
    Past a point those best are only the shortest chunks that mention the term, not the ones
    that answer, and ranking them is most of a slow search. Two limits, whichever is lower:

    - PROBE_MAX_SHARE of the chunks: a speaker's name on every line of a transcript, "group";
    - PROBE_MAX_WINDOWS windows: at 100k chunks a term in 9,000 of them (2 ms of BM25 per
      thousand matches) would hand back its 64 shortest mentions, under 1 % of them.

    Terms in at most ``window`` chunks are always probed (the probe returns them all). A term
    left out still counts where it matters: in the coverage score of every candidate the
    other legs bring. Below 20,000 chunks only the share limit can apply.
    """
    return max(window, min(math.floor(PROBE_MAX_SHARE * total), PROBE_MAX_WINDOWS * window))


def term_counter(conn: apsw.Connection, tokenizer: str, total: int) -> Callable[[str], int]:
    """How many of the ``total`` chunks hold a term, from the per-revision cache. ASCII is folded
    as FTS5 folds it, so the full query's "Gina" shares the count of the concept "gina"; other
    scripts keep the term as written (the foldings can differ). Exact under the trigram index and
    in the word index; other counts may be estimates (``document_frequency``)."""

    def count(term: str) -> int:
        key = term.lower() if term.isascii() else term
        return _document_frequencies(conn, [key], tokenizer, total)[key]

    return count


@dataclass(frozen=True)
class _TermCounts:
    """The chunk counts one calibrated search asks for, each from the index that answers it.

    With ``words`` (trigram FTS), an English word is counted in the word index:
    a probe's filter counts the word and its stems (exactly what the probe ranks), and the
    IDFs of the full query's AND and of the coverage concepts count the words that start with
    it ("writ" → writing, writer, written), close to the substring count they stand for and
    0.2 ms instead of a trigram chain's 1–4 ms. Other terms keep the trigram and bigram counts.
    """

    exact: Callable[[str], int]
    word: Callable[[str], int]
    prefix: Callable[[str], int]
    words: bool

    @classmethod
    def of(cls, conn: apsw.Connection, tokenizer: str, total: int, words: bool) -> _TermCounts:
        return cls(
            term_counter(conn, tokenizer, total),
            term_counter(conn, q.WORDS, total),
            term_counter(conn, q.WORD_PREFIXES, total),
            words,
        )

    def probe(self, term: str) -> int:
        return self.word(term) if self.words and word_index.handles(term) else self.exact(term)

    def idf(self, term: str) -> int:
        return self.prefix(term) if self.words and word_index.handles(term) else self.exact(term)


def _best_keyword_hits(
    hits: list[KeywordHit],
    concepts: list[str],
    weights: dict[str, float],
    limit: int,
    coverage_of: dict[str, float],
) -> list[KeywordHit]:
    """Calibrated scoring: the ``limit`` body hits that cover most of the query (then BM25), plus
    every exact-path and path-only hit. Each keyword probe brings its own window of hits; scoring
    (and MMR) needs only the best of them. ``coverage_of`` is filled for reuse."""
    body = [h for h in hits if h.has_body and not h.exact_tier]
    if len(body) <= limit:
        return hits
    for h in body:
        coverage_of[h.id] = concept_coverage(concepts, h.text, weights)
    body.sort(key=lambda h: (-coverage_of[h.id], -h.text_score, h.path, h.start_line))
    keep = {h.id for h in body[:limit]}
    return [h for h in hits if h.id in keep or not h.has_body or h.exact_tier]


def _status(settings: Settings, path: str, start: int, end: int, text: str) -> str:
    """ "superseded" when the curated entry this chunk holds carries a superseded marker."""
    if path not in ("USER.md", "MEMORY.md", "memory.md"):
        return "superseded" if SUPERSEDED.search(text) else "active"
    statuses = entry_statuses(settings.workspace / path, path)
    return next((st for line, st in sorted(statuses.items()) if start <= line <= end), "active")


def snippet_of(text: str, limit: int) -> str:
    """The first ``limit`` UTF-16 code units, never splitting a character (no marker, no trim)."""
    if len(text) <= limit // 2:
        return text  # even if every character took two units
    head = text[:limit]
    if head.isascii() or len(head.encode("utf-16-le", "surrogatepass")) == 2 * len(head):
        return head  # one unit per character (only the head decides: it is all that is kept)
    units = 0
    for i, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return text[:i]
    return text


@dataclass(frozen=True)
class _QueryVector:
    vector: Vector
    embed_ms: float
    top: list[tuple[int, float]] | None  # the in-memory matrix's best rows, when there is one
    rank_ms: float


def _embed_and_rank(
    provider: EmbeddingProvider, query: str, vm: VectorMatrix | None, sources: Sequence[str], window: int
) -> _QueryVector:
    """Embed the query and, over the in-memory matrix, rank every vector (numpy, no database)."""
    t = time.perf_counter()
    vec = provider.embed_query(query)
    embed_ms = (time.perf_counter() - t) * 1000
    if vm is None:
        return _QueryVector(vec, embed_ms, None, 0.0)
    t = time.perf_counter()
    top = matrix_top(vm, vec, sources, window)
    return _QueryVector(vec, embed_ms, top, (time.perf_counter() - t) * 1000)


def _text_preparer(req: SearchRequest, s: SearchSettings) -> Callable[[str], None] | None:
    """What the calibrated scoring will ask of a candidate's text (its script, whether it holds
    more than headings, its MMR tokens), computed into their caches while the query embeds."""
    if req.scoring != "calibrated":
        return None
    mmr = s.mmr_enabled and req.legs == "hybrid"

    def prepare(text: str) -> None:
        cal.script_of(text)
        cal.has_content(text)
        if mmr:
            prepare_mmr_tokens(snippet_tokens(snippet_of(text, s.snippet_max_chars)))

    return prepare


def _iso_ms(ms: int | None) -> str | None:
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


@dataclass
class _DatedDiaries:
    """The dates a query names as one more concept of the keyword part (calibrated scoring),
    and the time decay counts from.

    A daily diary covers the concept by its date (``dates.date_match``: 1 inside a span, less
    on the few days after it). Its weight is an IDF like the words' (``concept_weights``) over
    the chunks of the diaries that match, so a day is strong evidence and a year is weak. When
    those chunks are no more than a candidate window, they are candidates themselves (the
    "date" leg): a diary of the named day is scored even if no word of the query is in it.
    """

    spans: tuple[DateSpan, ...] = ()
    match: dict[str, float] = field(default_factory=dict)  # diary path -> its date match (> 0)
    chunks: int = 0  # chunks of those diaries
    weight: float = 0.0  # the concept's weight; 0: no concept (no date, or no diary of it)
    others: float = 0.0  # the weight of the query's word concepts together
    rows: list[q.BodyRow] = field(default_factory=list)  # the date leg's candidates

    @classmethod
    def of(
        cls,
        conn: apsw.Connection,
        query: str,
        req: SearchRequest,
        now: datetime,
        total: int,
        concepts: list[str],
        weights: dict[str, float],
        window: int,
    ) -> _DatedDiaries:
        if req.scoring != "calibrated" or req.legs == "vector" or "memory" not in req.sources:
            return cls()  # vector-only search is the query's meaning alone
        spans = query_dates(query, req.today or now.date())
        if not spans:
            return cls()
        first = min(s.start for s in spans)
        last = max(s.end for s in spans) + timedelta(days=REPORT_DAYS)
        counts = q.diary_chunk_counts(conn, first.isoformat(), last.isoformat())
        match = {p: m for p in counts if (m := date_match(diary_date(p), spans)) > 0}
        chunks = sum(counts[p] for p in match)
        if not chunks:
            return cls(spans)
        if weights:  # the words have IDF weights: the date gets its own
            weight, others = math.log(1 + total / (chunks + 1)), sum(weights.get(c, 1.0) for c in concepts)
        else:  # one word or none: equal shares
            weight, others = 1.0, float(len(concepts))
        rows = q.chunks_of_paths(conn, sorted(match)) if chunks <= window else []
        return cls(spans, match, chunks, weight, others, rows)

    def match_of(self, path: str, source: str, text: str) -> float:
        """A chunk's date match: its diary's date, or the text naming the day or month itself
        (its ISO form, e.g. a MEMORY.md entry "2026-03-03: …", or the query's own words for it
        when they hold a number, "March 3")."""
        by_date = self.match.get(path, 0.0) if source == "memory" else 0.0
        if by_date >= 1.0:
            return by_date
        low = text.lower()
        for s in self.spans:
            label = s.label()
            if (len(label) in (7, 10) and label in low) or (
                any(ch.isdigit() for ch in s.phrase) and s.phrase.lower() in low
            ):
                return 1.0
        return by_date

    def age_days(self, path: str, age_from_now: float) -> float:
        """A diary's age for decay when the query names dates: its distance in days from the
        nearest span (0 inside one). "What broke on August 20?" asks about August 20, so the
        diaries of then are fresh for it and today's are not; without a date, age is from now."""
        day = diary_date(path)
        if day is None:
            return age_from_now
        return float(min(max((s.start - day).days, (day - s.end).days, 0) for s in self.spans))

    def keyword(self, coverage: float, match: float | None) -> float:
        """A chunk's keyword part: its word coverage with the date concept's share added."""
        if not self.weight or match is None:
            return coverage
        return (coverage * self.others + self.weight * match) / (self.others + self.weight)

    def labels(self) -> tuple[str, ...]:
        """The spans understood, as the response shows them: "2023-10-13 (October 13, 2023)"."""
        return tuple(f"{s.label()} ({s.phrase})" for s in self.spans)


# A scored candidate: its chunk, its score factors, the score shown, why it is left out (or None).
_Item = tuple[_Cand, _Score, float, str | None]


class _Order:
    """The final order of the live hits (exact tiers 3 → 2 → 1, then the rest; MMR within each
    group), produced only as far as it is read: each read goes on from where the last stopped,
    and every item keeps its 1-based rank within its group. ``items`` are all of them, in any
    order: what a read looks for is counted there first, so it stops when the last is found."""

    def __init__(self, items: Sequence[_Item], groups: Sequence[Iterable[_Item]]) -> None:
        self._items = items
        self._source = ((x, i + 1) for g in groups for i, x in enumerate(g))
        self._read: list[tuple[_Item, int]] = []

    def _more(self) -> bool:
        nxt = next(self._source, None)
        if nxt is None:
            return False
        self._read.append(nxt)
        return True

    def first(self, wanted: Callable[[_Item], bool], k: int) -> list[_Item]:
        """The first ``k`` items in order that are ``wanted`` (fewer when fewer are)."""
        k = min(k, sum(1 for x in self._items if wanted(x)))
        out: list[_Item] = []
        i = 0
        while len(out) < k and (i < len(self._read) or self._more()):
            x = self._read[i][0]
            if wanted(x):
                out.append(x)
            i += 1
        return out

    def ranks(self, ids: set[str]) -> dict[str, int]:
        """Rank within its group of each id asked for (reading on until all have one)."""
        found = {x[0].id: r for x, r in self._read if x[0].id in ids}
        while len(found) < len(ids) and self._more():
            x, r = self._read[-1]
            if x[0].id in ids:
                found[x[0].id] = r
        return found


def run_search(
    conn: apsw.Connection,
    req: SearchRequest,
    settings: Settings,
    now: datetime,
    vctx: VectorContext,
    *,
    tokenizer: str,
    coverage: float,
    chunk_total: int = 0,
    embedding_active: bool = False,
    warnings: Sequence[str] = (),
) -> SearchResponse:
    s = settings.search
    window = (
        CANDIDATE_WINDOW
        if req.scoring == "openclaw"
        else min(CANDIDATE_WINDOW, max(CALIBRATED_WINDOW, req.max_results))
    )
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    query = req.query.strip()
    notes = list(warnings)

    semantic = vctx.provider is not None and vctx.model is not None and req.legs in ("hybrid", "vector")
    prepare = _text_preparer(req, s)
    embedding: Future[_QueryVector] | None = None
    vm: VectorMatrix | None = None
    if semantic and coverage > 0:
        assert vctx.provider is not None
        vm = vctx.matrix() if vctx.matrix is not None else None
        embedding = _EMBEDDER.submit(_embed_and_rank, vctx.provider, query, vm, req.sources, window)

    keyword_hits: list[KeywordHit] = []
    probe_limit = probe_match_limit(chunk_total, window) if req.scoring == "calibrated" and chunk_total else None
    probed: list[str] = []
    skipped_probes: list[str] = []
    # Calibrated scoring probes English words in the word index and counts them there (every
    # index opened through the store has it: its migration runs on open).
    words = req.scoring == "calibrated" and tokenizer == "trigram"
    counts = _TermCounts.of(conn, tokenizer, chunk_total, words)
    if req.legs in ("hybrid", "keyword"):
        keyword_hits, probed, skipped_probes = keyword_leg(
            conn,
            query,
            tokenizer=tokenizer,
            sources=req.sources,
            limit=window,
            cap=req.scoring == "openclaw",
            cjk_subphrases=req.scoring != "openclaw",
            boost=req.scoring == "openclaw",
            # Calibrated scoring: no probe for a term in more chunks than the limit, and small
            # matches ranked from known counts instead of FTS5's IDF scans.
            probe_filter=(lambda term: counts.probe(term) <= probe_limit) if probe_limit else None,
            stop_words=req.scoring == "openclaw",
            hits_of=counts.idf if req.scoring == "calibrated" and tokenizer == "trigram" and chunk_total else None,
            words=words,
        )
    concepts = query_concepts(query, stem=req.scoring == "calibrated")
    weights = concept_weights(concepts, chunk_total, counts.idf) if req.scoring == "calibrated" else {}
    dated = _DatedDiaries.of(conn, query, req, now, chunk_total, concepts, weights, window)
    coverage_of: dict[str, float] = {}
    if req.scoring == "calibrated" and keyword_hits:
        keyword_hits = _best_keyword_hits(keyword_hits, concepts, weights, window, coverage_of)
    timings["keyword"] = (time.perf_counter() - t0) * 1000

    # The query embedding runs on its own thread (llama.cpp computes outside the GIL). Meanwhile
    # the keyword hits' share of what follows is done rather than waited for: their metadata,
    # coverage, script and MMR tokens (cached per text). Calibrated scoring only: OpenClaw's
    # has little to do per hit, and measured no faster for it.
    meta: dict[str, q.ChunkMeta] = {}
    if embedding is not None and keyword_hits and prepare is not None:
        meta = q.chunk_meta(conn, [h.id for h in keyword_hits])
        for h in keyword_hits:
            if h.has_body and h.id not in coverage_of:
                coverage_of[h.id] = concept_coverage(concepts, h.text, weights)
            prepare(h.text)
        if vctx.provider_key and vctx.provider is not None:  # their line vectors, read into the cache
            line_matrices(conn, list(meta.values()), vctx.provider_key, vctx.provider.dims)

    cands: dict[str, _Cand] = {}
    calib = cal.RAW
    if vctx.paused_reason and req.legs != "keyword":
        notes.append(vctx.paused_reason)
    if semantic and coverage <= 0:
        semantic = False
        notes.append(
            "keyword-only: no chunk has a vector yet ("
            + ("embedding is running)" if embedding_active else "run `clawmem index` to embed them)")
        )
    qvec = None
    from_matrix = False  # the query was ranked against the in-memory vectors
    if semantic:
        assert vctx.provider is not None and vctx.model is not None
        assert embedding is not None
        qv = embedding.result()
        qvec, timings["embed"] = qv.vector, qv.embed_ms
        from_matrix = vm is not None and qv.top is not None
        t1 = time.perf_counter()
        leg = (
            matrix_hits(conn, vm, qv.top, meta)
            if vm is not None and qv.top is not None
            else vector_leg(conn, qvec, model=vctx.model, sources=req.sources, limit=window, use_vec=vctx.use_vec)
        )
        for vh in leg:
            cands[vh.id] = _Cand(
                vh.id, vh.path, vh.source, vh.start_line, vh.end_line, vh.text, vh.cosine, None, {"vector"}
            )
        if req.scoring == "calibrated":
            calib = cal.measure(qvec, vctx.background())
        timings["vector"] = qv.rank_ms + (time.perf_counter() - t1) * 1000  # ranking ran beside the keyword leg

    for kh in keyword_hits:
        c = cands.get(kh.id)
        legs = {"keyword"} if kh.has_body else set()
        if kh.exact_tier or kh.path_score > 0:
            legs.add("path")
        if c is None:
            cands[kh.id] = _Cand(kh.id, kh.path, kh.source, kh.start_line, kh.end_line, kh.text, None, kh, legs)
        else:
            c.kw = kh
            c.legs |= legs
            if kh.text:
                c.text = kh.text

    for row in dated.rows:  # the date leg: the named days' diaries, when they are few
        if row.id in cands:
            cands[row.id].legs.add("date")
        else:
            cands[row.id] = _Cand(row.id, row.path, row.source, row.start_line, row.end_line, row.text, legs={"date"})

    if semantic and req.scoring == "calibrated" and qvec is not None:
        # Keyword hits outside the KNN window still get their true similarity, so the
        # breakdown never shows "vector 0" for a chunk that simply was not fetched.
        missing = [cid for cid, c in cands.items() if c.cosine is None]
        found = (
            matrix_cosines(vm, qvec, missing)
            if from_matrix and vm is not None
            else cosines_for(conn, qvec, missing, vctx.model or "")
        )
        for cid, cos in found.items():
            cands[cid].cosine = cos

    meta.update(q.chunk_meta(conn, [cid for cid in cands if cid not in meta]))
    lines: dict[str, _BestLine] = {}
    if semantic and req.scoring == "calibrated" and qvec is not None and calib.method != "raw" and vctx.provider_key:
        t2 = time.perf_counter()
        lines = best_lines(conn, qvec, [m for cid, m in meta.items() if cid in cands], vctx.provider_key)
        timings["lines"] = (time.perf_counter() - t2) * 1000
    mode = "hybrid" if semantic and req.legs == "hybrid" else ("vector-only" if semantic else "fts-only")
    if mode == "hybrid" and coverage < 1.0:
        pending = max(0, chunk_total - round(coverage * chunk_total))
        notes.append(
            f"hybrid search over {coverage * 100:.0f} % embedded chunks ("
            + ("embedding is running)" if embedding_active else f"{pending:,} not embedded yet: run `clawmem index`)")
        )

    openclaw = req.scoring == "openclaw"
    covers = not openclaw and mode == "hybrid"  # every candidate's keyword part is its coverage
    scored: list[tuple[_Cand, _Score, float, str | None]] = []
    lexical: dict[str, float] = {}  # openclaw hybrid: a substring-only body hit's rank when content is 0
    for c in cands.values():
        m = meta.get(c.id)
        if m is None:
            continue  # chunk vanished (concurrent sync or forget)
        kw = c.kw
        v_raw = c.cosine
        # A heading-only entry's cosine is no evidence (calibration.has_content): shown, not counted.
        evidence = v_raw is not None and (calib.method == "raw" or cal.has_content(c.text))
        z = calib.z_score(v_raw, c.text) if v_raw is not None and evidence and calib.method != "raw" else None
        vec = (calib.relevance(z) if z is not None else calib.apply(v_raw)) if v_raw is not None and evidence else 0.0
        best = lines.get(c.id) if z is not None else None
        # The best line against the chunks' own background (of its script): one scale for both.
        line_vec = calib.relevance(calib.z_score(best.cosine, best.text)) if best else None
        if line_vec is not None:
            vec = LINE_WEIGHT * line_vec + (1 - LINE_WEIGHT) * vec
        # OpenClaw 2026.9.6 gives every candidate of a file the query names exactly (vector hits and
        # body hits too, not only the path leg's first chunk) that file's exact tier.
        tier = exact_tier(query, c.path) if openclaw else (kw.exact_tier if kw else 0)
        dm = dated.match_of(c.path, c.source, c.text) if dated.weight else None
        if kw is None:
            # Calibrated hybrid: the keyword part is what the text covers, whichever leg brought
            # it, so a chunk's score never depends on a probe it was not in the window of.
            k = dated.keyword(concept_coverage(concepts, c.text, weights), dm) if covers or dm else 0.0
        elif kw.has_body and not openclaw:
            k = coverage_of[c.id] if c.id in coverage_of else concept_coverage(concepts, c.text, weights)
            k = dated.keyword(k, dm)
        elif kw.text_score > 0 or (kw.has_body and mode == "fts-only"):
            k = kw.boosted  # keyword-only OpenClaw ranks every body hit by its boosted score
        elif tier:
            k = 0.0
        else:
            k = kw.path_score
        if mode == "hybrid":
            content = s.vector_weight * vec + s.text_weight * k
        elif mode == "vector-only":
            content = vec
        else:
            content = k
        pre = content
        if tier:
            pre = (1 + max(0.0, min(1.0, content))) / 2 if s.decay_enabled else (content if content > 0 else 1.0)
        elif openclaw and mode == "hybrid" and content == 0 and kw is not None and kw.has_body:
            pre = lexical[c.id] = kw.boosted
        if openclaw:
            age = openclaw_age_days(c.path, now, m.observed_at) if c.source == "memory" else None
        else:
            age = diary_age_days(c.path, now) if c.source == "memory" else None
            if age is not None and dated.weight:  # a question about a past day: age from that day
                age = dated.age_days(c.path, age)
        decay = decay_factor(age, s.half_life_days) if s.decay_enabled else 1.0
        imp_f = importance_factor(m.importance)
        keys = tuple(k_.strip() for k_ in (m.project_key or "").split(";") if k_.strip())
        excluded = "dropped: invalid project annotation" if INVALID_PROJECT_ANNOTATION in keys else None
        if excluded is None and m.origin_class == "untrusted" and not req.include_untrusted:
            excluded = "untrusted origin: left out unless you search untrusted memory explicitly"
        proj_f = project_factor(keys, req.project_keys)
        final = pre * decay * imp_f * proj_f
        if tier:
            public = proj_f
        elif mode == "hybrid" and content == 0:
            public = 0.0
        else:
            public = final
        bd = _Score(
            vector_raw=v_raw,
            vector=vec,
            keyword_raw=kw.bm25_rank if kw else None,
            keyword=k,
            path_tier=tier,
            content=content,
            age_days=age,
            decay=decay,
            importance=m.importance,
            importance_factor=imp_f,
            project_factor=proj_f,
            pre_threshold=round(final, 6),  # rounded here: the order below compares what is shown
            vector_z=z,
            vector_note=None if evidence or v_raw is None else "heading only: its cosine is not evidence",
            line=best,
            line_vector=line_vec,
            date_match=dm,
        )
        scored.append((c, bd, public, excluded))

    # ---- order: exact tiers 3 → 2 → 1 first, then the rest; MMR within each group (hybrid)
    def key(item: _Item) -> tuple[float, float, str, int, int]:
        c, bd, public, _ = item
        return (-public, -bd.pre_threshold, c.path, c.start_line, c.end_line)

    def tier_key(item: _Item) -> tuple[float, str, int]:
        return (-item[1].pre_threshold, item[0].path, item[0].start_line)

    def openclaw_key(item: _Item) -> tuple[object, ...]:
        """OpenClaw 2026.9.6: score, ranking score, lexical rank, path, lines (hybrid); keyword-only
        breaks score ties by text score, then path score (non-exact hits)."""
        c, bd, public, _ = item
        if mode == "fts-only":
            kw = c.kw
            text = kw.text_score if kw else 0.0
            path_s = kw.path_score if kw and not bd.path_tier else 0.0
            return (-bd.pre_threshold, -text, -path_s, c.path, c.start_line, c.end_line)
        rank = (-bd.pre_threshold, -lexical.get(c.id, 0.0), c.path, c.start_line, c.end_line)
        return rank if bd.path_tier else (-public, *rank)

    live = [x for x in scored if x[3] is None]
    excluded_items = [x for x in scored if x[3] is not None]
    groups = [
        sorted((x for x in live if x[1].path_tier == t), key=openclaw_key if openclaw else tier_key) for t in (3, 2, 1)
    ]
    groups.append(sorted((x for x in live if x[1].path_tier == 0), key=openclaw_key if openclaw else key))

    def in_order(group: list[_Item]) -> Iterable[_Item]:
        if not (s.mmr_enabled and mode == "hybrid" and len(group) > 1):
            return group
        if openclaw:
            # OpenClaw's MMR relevance is the shown score (0 for a hit with no content) outside the
            # exact tiers and the ranking score inside them; its tokens and tie rule are its own.
            return mmr_picks(
                group,
                relevance=lambda x: x[1].pre_threshold if x[1].path_tier else x[2],
                tokens=lambda x: openclaw_snippet_tokens(snippet_of(x[0].text, s.snippet_max_chars)),
                lam=s.mmr_lambda,
                exact_ties=True,
            )
        return mmr_picks(
            group,
            relevance=lambda x: x[1].pre_threshold,
            tokens=lambda x: snippet_tokens(snippet_of(x[0].text, s.snippet_max_chars)),
            lam=s.mmr_lambda,
        )

    # The order is read only as far as the answer needs it: MMR's picks are the costly part, and
    # a search usually reads its first max_results passing hits and a few near-misses' ranks.
    order = _Order(live, [in_order(g) for g in groups])

    # ---- threshold (after decay and importance), the keyword rescue, spare-capacity fill
    selected = order.first(lambda x: x[2] >= req.min_score, req.max_results)
    rescue = False
    if keyword_hits and len(selected) < req.max_results:
        if not selected:  # nothing passed the threshold
            selected = order.first(lambda x: x[0].kw is not None and x[2] >= 0, req.max_results)
            rescue = bool(selected)
        elif not (openclaw and mode == "fts-only"):  # OpenClaw's keyword-only search does not fill
            chosen = {x[0].id for x in selected}
            selected += order.first(
                lambda x: x[0].id not in chosen and x[0].kw is not None and x[1].vector_raw is None,
                req.max_results - len(selected),
            )
    chosen_ids = {x[0].id for x in selected}
    misses = [x for x in live if x[0].id not in chosen_ids]
    # The best max_results of what was not returned: below the threshold, or left out (an invalid
    # project annotation, an untrusted origin) — ranked together by the score each would have had.
    near = sorted(
        [*misses, *excluded_items],
        key=lambda x: (-x[1].pre_threshold, -x[2], x[0].path, x[0].start_line, x[0].end_line, x[0].id),
    )[: req.max_results]
    # Each shown hit's MMR rank: the order is read on until every one of them has its place.
    mmr_rank = order.ranks({x[0].id for x in (*selected, *near) if x[3] is None})

    def to_hit(item: _Item, passed: bool, returned: bool) -> SearchHit:
        c, bd, public, excluded = item
        m = meta[c.id]
        return SearchHit(
            chunk_id=c.id,
            path=c.path,
            start_line=c.start_line,
            end_line=c.end_line,
            score=round(public, 6),
            snippet=snippet_of(c.text, s.snippet_max_chars),
            source=c.source,
            provenance=Provenance(m.origin_class, m.session_kind, _iso_ms(m.observed_at)),
            breakdown=bd.breakdown(mmr_rank.get(c.id), passed),
            triggers=tuple(t for t in (m.triggers or "").split("; ") if t),
            project_keys=tuple(k_.strip() for k_ in (m.project_key or "").split(";") if k_.strip()),
            status=_status(settings, c.path, c.start_line, c.end_line, m.text),
            legs=tuple(sorted(c.legs)),
            note=excluded
            or (
                "below min_score"
                if not passed
                else ("returned without passing min_score (keyword rescue)" if public < req.min_score else None)
            ),
        )

    results = tuple(to_hit(x, x[2] >= req.min_score, True) for x in selected)
    near_misses = tuple(to_hit(x, False, False) for x in near)
    timings["total"] = (time.perf_counter() - t0) * 1000
    if probed:
        timings["keyword_probes"] = float(len(probed))
    provider = vctx.provider.provider_id if vctx.provider else "none"
    model = vctx.model if vctx.provider else "fts-only"
    return SearchResponse(
        query=query,
        results=results,
        near_misses=near_misses,
        mode=mode,
        scoring=req.scoring,
        provider=provider,
        model=model or "fts-only",
        fallback=None,
        vector_coverage=round(coverage, 4),
        warnings=tuple(notes),
        timings_ms={k_: round(v_, 2) for k_, v_ in timings.items()},
        threshold_rescue=rescue,
        calibration=calib.describe() if semantic else None,
        keyword_probes=tuple(probed),
        keyword_probes_skipped=tuple(skipped_probes),
        keyword_probe_limit=probe_limit,
        dates=dated.labels(),
        dated_diaries=len(dated.match),
        ages_from_dates=bool(dated.weight),
    )
