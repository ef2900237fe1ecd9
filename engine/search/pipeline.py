"""One search, end to end (docs/memory-core.md §4), as three stages, keeping every intermediate value for the
breakdown:

1. candidates (:mod:`.candidates`): keyword + path legs, the diaries of the dates the query
   names, the vector leg — merged by chunk id;
2. scoring (:mod:`.scoring`): content = 0.7·vector + 0.3·keyword → × importance → × project
   (what min_score judges, in the default scoring) → × decay (what the order ranks by), by the
   one scorer of the request's mode (calibrated or OpenClaw);
3. order (:mod:`.order`): exact tiers, MMR → threshold, rescue → results + near-misses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from clawmem.engine.config import SearchSettings, Settings
from clawmem.engine.embed.provider import EmbeddingProvider
from clawmem.engine.kinds import Legs, ScoringMode, origin_class
from clawmem.engine.search import calibration as cal
from clawmem.engine.search.caches import SearchCaches
from clawmem.engine.search.candidates import BestLine, CandidatePool, gather
from clawmem.engine.search.order import Selection, select
from clawmem.engine.search.ranking import snippet_of
from clawmem.engine.search.scoring import Scored, Scorer, scorer_for
from clawmem.engine.search.types import NewerVersion, Provenance, SearchHit, SearchResponse
from clawmem.engine.search.vector import VectorMatrix
from clawmem.engine.search.versions import OlderVersion, fact_date, order_versions
from clawmem.engine.store.search_reader import SearchReader
from clawmem.engine.times import iso_instant
from clawmem.engine.workspace.annotations import StatusMarker
from clawmem.engine.workspace.entries import entry_markers, entry_statuses


@dataclass(frozen=True)
class SearchRequest:
    query: str
    max_results: int
    min_score: float
    project_keys: tuple[str, ...] = ()
    scoring: ScoringMode = "calibrated"
    legs: Legs = "hybrid"
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


class Markers:
    """The observed/status marker of the entry each hit is about, in any memory file: the entry
    that holds the hit's best line (calibrated scoring), else the first entry the chunk holds.
    Read once per hit per search (the files' parsed markers are cached by size and mtime)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._seen: dict[str, StatusMarker | None] = {}

    def of(self, x: Scored) -> StatusMarker | None:
        c = x.cand
        if c.id not in self._seen:
            self._seen[c.id] = self._read(c.source, c.path, c.start_line, c.end_line, x.score.line)
        return self._seen[c.id]

    def _read(self, source: str, path: str, start: int, end: int, best: BestLine | None) -> StatusMarker | None:
        if source != "memory":
            return None
        markers = entry_markers(self.workspace / path, path)
        if not markers:
            return None
        starts = sorted(entry_statuses(self.workspace / path, path))
        ref = best.number if best is not None and start <= best.number <= end else start
        entry = max((s for s in starts if s <= ref), default=None)
        if entry is None or (best is None and entry < start and any(start <= s <= end for s in starts)):
            entry = next((s for s in starts if start <= s <= end), None)
        return markers.get(entry) if entry is not None else None

    def newer(self, x: Scored, pool: Sequence[Scored]) -> Scored | None:
        """The hit in ``pool`` a superseded marker on ``x``'s entry points at (its ``by``)."""
        m = self.of(x)
        if m is None or not m.superseded or m.by_path is None:
            return None
        line = m.by_line
        return next(
            (
                y
                for y in pool
                if y.cand.path == m.by_path and (line is None or y.cand.start_line <= line <= y.cand.end_line)
            ),
            None,
        )


def _miss_note(returned: bool, *, keyword: bool) -> str:
    """Why a hit below min_score is shown: a near-miss, or returned because nothing qualified."""
    if not returned:
        return "below min_score"
    how = "keyword rescue" if keyword else "nothing qualified: closest in meaning"
    return f"returned without passing min_score ({how})"


def content_weights(mode: str, vector_weight: float, text_weight: float) -> tuple[float, float]:
    """The (vector, keyword) weights the content score used: the configured ones in hybrid mode
    (engine/search/scoring.py), all on the one leg that ran otherwise."""
    if mode == "hybrid":
        return (vector_weight, text_weight)
    return (1.0, 0.0) if mode == "vector-only" else (0.0, 1.0)


def _order(
    scored: list[Scored], scorer: Scorer, s: SearchSettings, req: SearchRequest, pool: CandidatePool, markers: Markers
) -> Selection:
    """Stage 3: the order and the cut (engine/search/order.py), with a changed fact's newer
    version directly above the older (engine/search/versions.py) in the default scoring."""

    def versions(
        selected: list[Scored], qualifying: list[Scored], live: list[Scored]
    ) -> tuple[list[Scored], dict[str, OlderVersion]]:
        return order_versions(
            selected,
            qualifying,
            live,
            req.max_results,
            marked_newer=markers.newer,
            # a question that names a day asks for the fact as it was then: no version is moved
            find=s.newer_version_first and not pool.dated.weight,
        )

    return select(
        scored,
        scorer,
        s,
        pool.mode,
        max_results=req.max_results,
        min_score=req.min_score,
        keyword_found=bool(pool.keyword_hits),
        versions=versions if scorer.orders_versions else None,
    )


def _newer_version(item: Scored, chosen: Selection) -> NewerVersion | None:
    """The result ``item`` is an older version of: its rank, citation and day."""
    link = chosen.older.get(item.cand.id)
    if link is None:
        return None
    rank, y = next((i + 1, x) for i, x in enumerate(chosen.results) if x.cand.id == link.newer_id)
    day = fact_date(y.cand.path)
    line = y.score.line.number if y.score.line is not None else y.cand.start_line
    return NewerVersion(rank, f"{y.cand.path}#L{line}", day.isoformat() if day else None, link.marked)


def _to_hit(
    item: Scored,
    returned: bool,
    chosen: Selection,
    pool: CandidatePool,
    markers: Markers,
    req: SearchRequest,
    s: SearchSettings,
) -> SearchHit:
    """One scored candidate as the hit a front end shows (``returned``: a result, else a near-miss)."""
    c, bd, public, excluded, qualifies = item
    m = pool.meta[c.id]
    passed = qualifies >= req.min_score
    mark = markers.of(item)
    superseded = mark is not None and mark.superseded
    return SearchHit(
        chunk_id=c.id,
        path=c.path,
        start_line=c.start_line,
        end_line=c.end_line,
        score=round(public, 6),
        snippet=snippet_of(c.text, s.snippet_max_chars),
        source=c.source,
        provenance=Provenance(origin_class(m.origin_class), m.session_kind, iso_instant(m.observed_at)),
        breakdown=bd.breakdown(chosen.mmr_rank.get(c.id), passed),
        triggers=tuple(t for t in (m.triggers or "").split("; ") if t),
        project_keys=tuple(k_.strip() for k_ in (m.project_key or "").split(";") if k_.strip()),
        status="superseded" if superseded else "active",
        superseded_by=mark.by if mark is not None and superseded else None,
        newer_version=_newer_version(item, chosen),
        legs=tuple(sorted(c.legs)),
        note=excluded or (None if passed else _miss_note(returned, keyword=c.kw is not None)),
    )


def run_search(
    reader: SearchReader,
    caches: SearchCaches,
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
    t0 = time.perf_counter()
    query = req.query.strip()
    scorer = scorer_for(s, req, now)
    policy = scorer.policy(tokenizer=tokenizer, chunk_total=chunk_total)
    pool = gather(
        reader,
        caches,
        req,
        policy,
        now,
        vctx,
        tokenizer=tokenizer,
        coverage=coverage,
        chunk_total=chunk_total,
        embedding_active=embedding_active,
        warnings=warnings,
        started=t0,
    )
    # a chunk that vanished since a leg saw it (a concurrent sync or forget) is not scored
    scored = [scorer.score(c, m, pool) for c in pool.cands.values() if (m := pool.meta.get(c.id)) is not None]
    markers = Markers(settings.workspace)
    chosen = _order(scored, scorer, s, req, pool, markers)
    results = tuple(_to_hit(x, True, chosen, pool, markers, req, s) for x in chosen.results)
    near_misses = tuple(_to_hit(x, False, chosen, pool, markers, req, s) for x in chosen.near_misses)
    timings = pool.timings
    timings["total"] = (time.perf_counter() - t0) * 1000
    if pool.probed:
        timings["keywordProbes"] = float(len(pool.probed))
    provider = vctx.provider.provider_id if vctx.provider else "none"
    model = vctx.model if vctx.provider else "fts-only"
    return SearchResponse(
        query=query,
        results=results,
        near_misses=near_misses,
        mode=pool.mode,
        scoring=scorer.name,
        provider=provider,
        model=model or "fts-only",
        fallback=None,
        vector_coverage=round(coverage, 4),
        warnings=tuple(pool.notes),
        timings_ms={k_: round(v_, 2) for k_, v_ in timings.items()},
        threshold_rescue=chosen.rescue,
        calibration=pool.calib.describe() if pool.semantic else None,
        keyword_probes=tuple(pool.probed),
        keyword_probes_skipped=tuple(pool.skipped_probes),
        keyword_probe_limit=policy.probe_limit,
        dates=pool.dated.labels(),
        dated_diaries=len(pool.dated.match),
        ages_from_dates=bool(pool.dated.weight),
        half_life_days=s.half_life_days if s.decay_enabled else None,
        max_decay=scorer.max_decay,
        content_weights=content_weights(pool.mode, s.vector_weight, s.text_weight),
    )
