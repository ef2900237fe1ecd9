"""Stage 1 of a search: the candidates. Each leg — keyword (FTS5 probes), path, the diaries of
the dates a question names, vector (sqlite-vec or the in-memory matrix) — brings chunks; they
merge by chunk id into one :class:`Candidate` each, with what every leg knew about it, the
chunk's metadata and (calibrated scoring) the line closest to the query.

What the legs do differently per scoring mode is a :class:`CandidatePolicy`, chosen once by the
scorer (:mod:`.scoring`); nothing here tests the mode's name.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from clawmem.engine.embed.provider import EmbeddingProvider, Vector
from clawmem.engine.index.line_evidence import evidence_lines
from clawmem.engine.kinds import Leg, SearchMode
from clawmem.engine.search import calibration as cal
from clawmem.engine.search.caches import SearchCaches
from clawmem.engine.search.dated import DatedDiaries
from clawmem.engine.search.keyword import KeywordHit, keyword_leg
from clawmem.engine.search.tokens import concept_coverage, query_concepts
from clawmem.engine.search.vector import VectorMatrix, cosines_for, matrix_cosines, matrix_hits, matrix_top, vector_leg
from clawmem.engine.store import search_queries as q
from clawmem.engine.store import word_index
from clawmem.engine.store.search_reader import SearchReader

if TYPE_CHECKING:
    from clawmem.engine.search.pipeline import SearchRequest, VectorContext

PROBE_MAX_SHARE = 0.10  # calibrated scoring: keyword probes skip terms in more than this share of chunks
PROBE_MAX_WINDOWS = 32  # … or in more chunks than this many candidate windows (see probe_match_limit)


@dataclass
class Candidate:
    """One chunk some leg found, with what each leg knew about it."""

    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    cosine: float | None = None  # from the vector leg, or filled in for keyword hits (calibrated)
    kw: KeywordHit | None = None  # from the keyword/path leg
    legs: set[Leg] = field(default_factory=set)


class BestLine(NamedTuple):
    number: int  # in the file
    cosine: float
    text: str


@dataclass(frozen=True)
class CandidatePolicy:
    """How the legs run for one scoring mode (see :mod:`.scoring` for who sets what)."""

    window: int  # how many candidates each leg ranks
    openclaw_keywords: bool  # OpenClaw's keyword rules: capped, boosted, its stop words, no CJK sub-phrases
    probe_limit: int | None  # the most chunks a term may be in and still get a keyword probe
    words: bool  # English words probed and counted in the word index
    known_counts: bool  # small matches ranked from known counts instead of FTS5's IDF scans
    stem: bool  # query concepts are stemmed
    idf_weights: bool  # concepts weighted by their IDF
    dated: bool  # the dates the query names are a concept (and the date leg runs)
    best_keyword_hits: bool  # only the best-covering keyword hits go on
    calibrate: bool  # the vector leg is calibrated against the workspace background
    fill_cosines: bool  # keyword hits outside the KNN window get their true cosine
    prepare: Callable[[str], None] | None  # text work done while the query embeds


@dataclass
class CandidatePool:
    """Everything stage 1 found, for the scorer and the response."""

    cands: dict[str, Candidate]
    meta: dict[str, q.ChunkMeta]
    keyword_hits: list[KeywordHit]
    probed: list[str]
    skipped_probes: list[str]
    concepts: list[str]
    weights: dict[str, float]
    coverage_of: dict[str, float]
    dated: DatedDiaries
    calib: cal.Calibration
    lines: dict[str, BestLine]
    semantic: bool
    mode: SearchMode
    notes: list[str]
    timings: dict[str, float]
    # chunk id -> text hash of the candidates whose lines have no vectors yet (the line pass has
    # not reached them): their score lacks the best line it will have
    lines_pending: dict[str, str] = field(default_factory=dict)


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


@dataclass(frozen=True)
class TermCounts:
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
    def of(cls, caches: SearchCaches, reader: SearchReader, tokenizer: str, total: int, words: bool) -> TermCounts:
        return cls(
            caches.term_counter(reader, tokenizer, total),
            caches.term_counter(reader, q.WORDS, total),
            caches.term_counter(reader, q.WORD_PREFIXES, total),
            words,
        )

    def probe(self, term: str) -> int:
        return self.word(term) if self.words and word_index.handles(term) else self.exact(term)

    def idf(self, term: str) -> int:
        return self.prefix(term) if self.words and word_index.handles(term) else self.exact(term)


def best_keyword_hits(
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


def line_matrices(
    caches: SearchCaches, reader: SearchReader, chunks: Sequence[q.ChunkMeta], provider_key: str, dims: int
) -> dict[str, np.ndarray]:
    """Chunk id -> the line vectors of its text, for the chunks that have them."""
    matrices = caches.line_matrices(reader, {m.hash: m.text for m in chunks}, provider_key, dims)
    return {m.id: matrices[m.hash] for m in chunks if m.hash in matrices}


def lines_pending(
    caches: SearchCaches, reader: SearchReader, chunks: Sequence[q.ChunkMeta], provider_key: str
) -> dict[str, str]:
    """Chunk id -> text hash of the multi-line chunks whose line vectors are not computed yet
    (asked after :func:`line_matrices` read them: what it found is cached)."""
    multi = [m for m in chunks if evidence_lines(m.text)]
    missing = caches.lines_not_read(reader, [m.hash for m in multi], provider_key)
    return {m.id: m.hash for m in multi if m.hash in missing}


def best_lines(
    caches: SearchCaches, reader: SearchReader, query_vec: Vector, chunks: Sequence[q.ChunkMeta], provider_key: str
) -> dict[str, BestLine]:
    """For each chunk with line vectors: its line closest to the query."""
    qv = np.asarray(query_vec, dtype=np.float32)
    qv = qv / (np.linalg.norm(qv) or 1.0)
    by_id = {m.id: m for m in chunks}
    found = list(line_matrices(caches, reader, chunks, provider_key, len(qv)).items())
    if not found:
        return {}
    sims = np.concatenate([m for _, m in found]).astype(np.float32) @ qv  # one product for all their lines
    out = {}
    start = 0
    for cid, m in found:
        i = int(np.argmax(sims[start : start + len(m)]))
        line_offset, line_text = evidence_lines(by_id[cid].text)[i]
        out[cid] = BestLine(by_id[cid].start_line + line_offset, float(sims[start + i]), line_text)
        start += len(m)
    return out


@dataclass(frozen=True)
class QueryVector:
    vector: Vector
    embed_ms: float
    top: list[tuple[int, float]] | None  # the in-memory matrix's best rows, when there is one
    rank_ms: float


def embed_and_rank(
    provider: EmbeddingProvider, query: str, vm: VectorMatrix | None, sources: Sequence[str], window: int
) -> QueryVector:
    """Embed the query and, over the in-memory matrix, rank every vector (numpy, no database)."""
    t = time.perf_counter()
    vec = provider.embed_query(query)
    embed_ms = (time.perf_counter() - t) * 1000
    if vm is None:
        return QueryVector(vec, embed_ms, None, 0.0)
    t = time.perf_counter()
    top = matrix_top(vm, vec, sources, window)
    return QueryVector(vec, embed_ms, top, (time.perf_counter() - t) * 1000)


@dataclass
class _KeywordSide:
    """What the keyword side found while the query embeds: the hits, the query's concepts and the dated diaries."""

    hits: list[KeywordHit]
    probed: list[str]
    skipped_probes: list[str]
    concepts: list[str]
    weights: dict[str, float]
    dated: DatedDiaries
    coverage_of: dict[str, float]


@dataclass
class _VectorSide:
    """What the vector leg found: its candidates, the calibration, and the query vector for the later steps."""

    cands: dict[str, Candidate]
    calib: cal.Calibration
    qvec: Vector | None
    from_matrix: bool  # the query was ranked against the in-memory vectors


def _start_embedding(
    caches: SearchCaches, req: SearchRequest, vctx: VectorContext, query: str, window: int
) -> tuple[Future[QueryVector], VectorMatrix | None]:
    """Submit the query's embedding (and its ranking over the in-memory matrix, when there is one) to
    the embedder's thread, so the keyword leg runs meanwhile."""
    assert vctx.provider is not None
    vm = vctx.matrix() if vctx.matrix is not None else None
    return caches.embedder.submit(embed_and_rank, vctx.provider, query, vm, req.sources, window), vm


def _keyword_side(
    reader: SearchReader,
    caches: SearchCaches,
    req: SearchRequest,
    policy: CandidatePolicy,
    now: datetime,
    query: str,
    *,
    tokenizer: str,
    chunk_total: int,
) -> _KeywordSide:
    """The keyword and path leg, the query's concepts and their weights, and the date leg's diaries.

    With ``best_keyword_hits`` only the hits that cover most of the query go on.
    """
    window = policy.window
    keyword_hits: list[KeywordHit] = []
    probe_limit = policy.probe_limit
    probed: list[str] = []
    skipped_probes: list[str] = []
    counts = TermCounts.of(caches, reader, tokenizer, chunk_total, policy.words)
    if req.legs in ("hybrid", "keyword"):
        keyword_hits, probed, skipped_probes = keyword_leg(
            reader,
            query,
            tokenizer=tokenizer,
            sources=req.sources,
            limit=window,
            cap=policy.openclaw_keywords,
            cjk_subphrases=not policy.openclaw_keywords,
            boost=policy.openclaw_keywords,
            # No probe for a term in more chunks than the limit, and small matches ranked from
            # known counts instead of FTS5's IDF scans.
            probe_filter=(lambda term: counts.probe(term) <= probe_limit) if probe_limit else None,
            stop_words=policy.openclaw_keywords,
            hits_of=counts.idf if policy.known_counts else None,
            words=policy.words,
            path_indexes=caches.path_indexes,
        )
    concepts = query_concepts(query, stem=policy.stem)
    weights = concept_weights(concepts, chunk_total, counts.idf) if policy.idf_weights else {}
    dated = (
        DatedDiaries.of(reader, query, req, now, chunk_total, concepts, weights, window)
        if policy.dated
        else DatedDiaries()
    )
    coverage_of: dict[str, float] = {}
    if policy.best_keyword_hits and keyword_hits:
        keyword_hits = best_keyword_hits(keyword_hits, concepts, weights, window, coverage_of)
    return _KeywordSide(keyword_hits, probed, skipped_probes, concepts, weights, dated, coverage_of)


def _prepare_keyword_hits(
    reader: SearchReader, caches: SearchCaches, policy: CandidatePolicy, vctx: VectorContext, kw: _KeywordSide
) -> dict[str, q.ChunkMeta]:
    """The keyword hits' share of the scoring, done while the query embeds; returns their metadata.

    The query embedding runs on its own thread (llama.cpp computes outside the GIL). Meanwhile
    the keyword hits' share of what follows is done rather than waited for: their metadata,
    coverage, script and MMR tokens (cached per text). Calibrated scoring only: OpenClaw's
    has little to do per hit, and measured no faster for it.
    """
    assert policy.prepare is not None
    meta = reader.chunk_meta([h.id for h in kw.hits])
    for h in kw.hits:
        if h.has_body and h.id not in kw.coverage_of:
            kw.coverage_of[h.id] = concept_coverage(kw.concepts, h.text, kw.weights)
        policy.prepare(h.text)
    if vctx.provider_key and vctx.provider is not None:  # their line vectors, read into the cache
        line_matrices(caches, reader, list(meta.values()), vctx.provider_key, vctx.provider.dims)
    return meta


def _vector_runs(
    semantic: bool, req: SearchRequest, vctx: VectorContext, coverage: float, embedding_active: bool, notes: list[str]
) -> bool:
    """Whether the vector leg runs after all: not when no chunk has a vector yet. Notes why it is
    paused or skipped."""
    if vctx.paused_reason and req.legs != "keyword":
        notes.append(vctx.paused_reason)
    if semantic and coverage <= 0:
        notes.append(
            "keyword-only: no chunk has a vector yet ("
            + ("embedding is running)" if embedding_active else "run `clawmem index` to embed them)")
        )
        return False
    return semantic


def _vector_side(
    reader: SearchReader,
    caches: SearchCaches,
    req: SearchRequest,
    policy: CandidatePolicy,
    vctx: VectorContext,
    embedding: Future[QueryVector] | None,
    vm: VectorMatrix | None,
    meta: dict[str, q.ChunkMeta],
    timings: dict[str, float],
) -> _VectorSide:
    """Wait for the query vector, take the vector leg's hits (from the in-memory matrix's ranking, or
    from the database), and measure the calibration against the workspace background."""
    assert vctx.provider is not None and vctx.model is not None
    assert embedding is not None
    qv = embedding.result()
    qvec, timings["embed"] = qv.vector, qv.embed_ms
    from_matrix = vm is not None and qv.top is not None
    t1 = time.perf_counter()
    leg = (
        matrix_hits(reader, vm, qv.top, meta)
        if vm is not None and qv.top is not None
        else vector_leg(
            reader,
            qvec,
            model=vctx.model,
            sources=req.sources,
            limit=policy.window,
            use_vec=vctx.use_vec,
            filter_free=caches.filter_free,
        )
    )
    cands: dict[str, Candidate] = {}
    for vh in leg:
        cands[vh.id] = Candidate(
            vh.id, vh.path, vh.source, vh.start_line, vh.end_line, vh.text, vh.cosine, None, {"vector"}
        )
    calib = cal.measure(qvec, vctx.background()) if policy.calibrate else cal.RAW
    timings["vector"] = qv.rank_ms + (time.perf_counter() - t1) * 1000  # ranking ran beside the keyword leg
    return _VectorSide(cands, calib, qvec, from_matrix)


def _merge(cands: dict[str, Candidate], keyword_hits: list[KeywordHit], dated: DatedDiaries) -> None:
    """Add the keyword/path hits and the date leg's rows to the vector candidates, one per chunk id.

    A keyword hit's text replaces the vector hit's; each leg that found a chunk is recorded.
    """
    for kh in keyword_hits:
        c = cands.get(kh.id)
        legs: set[Leg] = {"keyword"} if kh.has_body else set()
        if kh.exact_tier or kh.path_score > 0:
            legs.add("path")
        if c is None:
            cands[kh.id] = Candidate(kh.id, kh.path, kh.source, kh.start_line, kh.end_line, kh.text, None, kh, legs)
        else:
            c.kw = kh
            c.legs |= legs
            if kh.text:
                c.text = kh.text

    for row in dated.rows:  # the date leg: the named days' diaries, when they are few
        if row.id in cands:
            cands[row.id].legs.add("date")
        else:
            cands[row.id] = Candidate(
                row.id, row.path, row.source, row.start_line, row.end_line, row.text, legs={"date"}
            )


def _fill_cosines(
    reader: SearchReader, cands: dict[str, Candidate], vec: _VectorSide, vm: VectorMatrix | None, model: str
) -> None:
    """Give the candidates no vector hit brought their true cosine.

    Keyword hits outside the KNN window still get their true similarity, so the
    breakdown never shows "vector 0" for a chunk that simply was not fetched.
    """
    assert vec.qvec is not None
    missing = [cid for cid, c in cands.items() if c.cosine is None]
    found = (
        matrix_cosines(vm, vec.qvec, missing)
        if vec.from_matrix and vm is not None
        else cosines_for(reader, vec.qvec, missing, model)
    )
    for cid, cos in found.items():
        cands[cid].cosine = cos


def _mode(
    semantic: bool, req: SearchRequest, coverage: float, chunk_total: int, embedding_active: bool, notes: list[str]
) -> SearchMode:
    """Which search this was, noting when a hybrid one covered only part of the chunks."""
    mode: SearchMode = "hybrid" if semantic and req.legs == "hybrid" else ("vector-only" if semantic else "fts-only")
    if mode == "hybrid" and coverage < 1.0:
        pending = max(0, chunk_total - round(coverage * chunk_total))
        notes.append(
            f"hybrid search over {coverage * 100:.0f} % embedded chunks ("
            + ("embedding is running)" if embedding_active else f"{pending:,} not embedded yet: run `clawmem index`)")
        )
    return mode


def gather(
    reader: SearchReader,
    caches: SearchCaches,
    req: SearchRequest,
    policy: CandidatePolicy,
    now: datetime,
    vctx: VectorContext,
    *,
    tokenizer: str,
    coverage: float,
    chunk_total: int,
    embedding_active: bool,
    warnings: Sequence[str],
    started: float,
) -> CandidatePool:
    """Run the legs and merge what they found by chunk id."""
    timings: dict[str, float] = {}
    query = req.query.strip()
    notes = list(warnings)

    semantic = vctx.provider is not None and vctx.model is not None and req.legs in ("hybrid", "vector")
    embedding: Future[QueryVector] | None = None
    vm: VectorMatrix | None = None
    if semantic and coverage > 0:
        embedding, vm = _start_embedding(caches, req, vctx, query, policy.window)

    kw = _keyword_side(reader, caches, req, policy, now, query, tokenizer=tokenizer, chunk_total=chunk_total)
    timings["keyword"] = (time.perf_counter() - started) * 1000
    meta: dict[str, q.ChunkMeta] = {}
    if embedding is not None and kw.hits and policy.prepare is not None:
        meta = _prepare_keyword_hits(reader, caches, policy, vctx, kw)

    semantic = _vector_runs(semantic, req, vctx, coverage, embedding_active, notes)
    vec = _VectorSide({}, cal.RAW, None, False)
    if semantic:
        vec = _vector_side(reader, caches, req, policy, vctx, embedding, vm, meta, timings)
    cands = vec.cands
    _merge(cands, kw.hits, kw.dated)
    if semantic and policy.fill_cosines and vec.qvec is not None:
        _fill_cosines(reader, cands, vec, vm, vctx.model or "")

    meta.update(reader.chunk_meta([cid for cid in cands if cid not in meta]))
    lines: dict[str, BestLine] = {}
    pending: dict[str, str] = {}
    if semantic and policy.calibrate and vec.qvec is not None and vec.calib.method != "raw" and vctx.provider_key:
        t2 = time.perf_counter()
        in_pool = [m for cid, m in meta.items() if cid in cands]
        lines = best_lines(caches, reader, vec.qvec, in_pool, vctx.provider_key)
        pending = lines_pending(caches, reader, [m for m in in_pool if m.id not in lines], vctx.provider_key)
        timings["lines"] = (time.perf_counter() - t2) * 1000
    mode = _mode(semantic, req, coverage, chunk_total, embedding_active, notes)
    return CandidatePool(
        cands=cands,
        meta=meta,
        keyword_hits=kw.hits,
        probed=kw.probed,
        skipped_probes=kw.skipped_probes,
        concepts=kw.concepts,
        weights=kw.weights,
        coverage_of=kw.coverage_of,
        dated=kw.dated,
        calib=vec.calib,
        lines=lines,
        semantic=semantic,
        mode=mode,
        notes=notes,
        timings=timings,
        lines_pending=pending,
    )
