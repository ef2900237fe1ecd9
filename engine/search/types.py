"""What a search returns across the engine/UI wall (frozen dataclasses, snake_case fields)."""

from __future__ import annotations

from dataclasses import dataclass

from clawmem.engine.kinds import Leg, Legs, OriginClass, ScoringMode, SearchMode

__all__ = ["Leg", "Legs", "OriginClass", "ScoringMode", "SearchMode"]


@dataclass(frozen=True)
class ScoreBreakdown:
    """How one hit's score was built, step by step (docs/design.md §5)."""

    vector_raw: float | None  # cosine similarity (None: the vector leg did not see this chunk)
    vector: float  # the value used in the merge (calibrated, or raw in openclaw scoring)
    keyword_raw: float | None  # FTS5 bm25 rank (negative = better), None when no keyword match
    keyword: float  # boosted keyword score (or path BM25) used in the merge
    path_tier: int  # 3 full path, 2 basename, 1 stem, 0 none
    content: float  # 0.7·vector + 0.3·keyword (or (1+content)/2 for exact-path hits)
    age_days: float | None  # None: evergreen (never decays)
    decay: float  # what age multiplied the ranking score by (default scoring: 1 − max_decay·(1 − recency))
    importance: int | None
    importance_factor: float
    project_factor: float
    pre_threshold: float  # content × decay × importance × project: the score the order ranks by
    mmr_rank: int | None  # position chosen by MMR within its group (1-based)
    passed_threshold: bool
    vector_z: float | None = None  # calibrated scoring: deviations above the workspace background
    vector_note: str | None = None  # why a cosine was not counted (e.g. a heading-only entry)
    line: int | None = None  # calibrated scoring: the chunk's line closest to the query (line vectors)
    line_cosine: float | None = None  # that line's own cosine
    line_vector: float | None = None  # … calibrated; ``vector`` = 0.3·this + 0.7·the chunk's
    date_match: float | None = None  # calibrated: how the diary's date covers the dates the query names
    recency: float = 1.0  # the spec's multiplier exp(−ln2/half-life · age); openclaw scoring applies it as is
    qualifying: float = 0.0  # content × importance × project: what min_score judges in the default scoring
    line_pending: bool = False  # calibrated: a multi-line chunk whose line vectors the line pass has not made yet


@dataclass(frozen=True)
class Provenance:
    origin_class: OriginClass
    session_kind: str
    observed_at: str | None  # ISO 8601


@dataclass(frozen=True)
class NewerVersion:
    """A hit is an older version of another result: that one's rank (1-based), its citation
    (``PATH#LN``), the day it was written, and whether a superseded marker said so (else the
    search found it, engine/search/versions.py)."""

    rank: int
    citation: str
    date: str | None
    marked: bool


@dataclass(frozen=True)
class SearchHit:
    chunk_id: str
    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: str
    provenance: Provenance
    breakdown: ScoreBreakdown
    triggers: tuple[str, ...] = ()
    project_keys: tuple[str, ...] = ()
    status: str = "active"  # "superseded": its entry carries a superseded marker (any memory file)
    legs: tuple[Leg, ...] = ()  # which legs found it
    note: str | None = None  # why it is a near-miss, or how it got in (returned when nothing qualified)
    superseded_by: str | None = None  # the marker's pointer to the newer entry, ``PATH#LN``, as written
    newer_version: NewerVersion | None = None  # the result this one is an older version of


@dataclass(frozen=True)
class SearchResponse:
    query: str
    results: tuple[SearchHit, ...]
    near_misses: tuple[SearchHit, ...]
    mode: SearchMode
    scoring: ScoringMode
    provider: str
    model: str
    fallback: str | None
    vector_coverage: float  # share of chunks that have a vector
    warnings: tuple[str, ...]
    timings_ms: dict[str, float]
    stale: bool = False
    action: str | None = None
    threshold_rescue: bool = False  # nothing qualified: the closest hits returned (openclaw: keyword hits only)
    calibration: str | None = None  # how cosine became the vector score, in words
    keyword_probes: tuple[str, ...] = ()  # extracted keywords searched separately
    keyword_probes_skipped: tuple[str, ...] = ()  # extracted keywords too common to probe
    keyword_probe_limit: int | None = None  # a probed term is in at most this many chunks (calibrated)
    dates: tuple[str, ...] = ()  # calibrated: the dates the query names, "2023-10-13 (October 13, 2023)"
    dated_diaries: int = 0  # … and how many daily diaries are of those dates (or the 3 days after)
    ages_from_dates: bool = False  # … so a diary's age (decay) is its distance from them, not from now
    half_life_days: float | None = None  # the decay's half-life; None: decay off
    max_decay: float | None = None  # default scoring: decay = 1 − max_decay·(1 − recency); None: decay = recency
    content_weights: tuple[float, float] = (0.7, 0.3)  # (vector, keyword) the content score was built with
    keyword_ranking: str = "SQLite FTS5 BM25"  # who ranked the keyword part (the store's text engine)


@dataclass(frozen=True)
class MemoryGetResult:
    path: str
    from_line: int
    lines: int
    text: str
    next_from: int | None  # continuation hint when truncated
    missing: bool = False
