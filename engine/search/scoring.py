"""Stage 2 of a search: scoring. One scorer per mode, chosen once per search
(:func:`scorer_for`):

- :class:`CalibratedScorer` — clawmem's default: the vector leg calibrated against the
  workspace's background, the keyword part as the query's coverage, dates as a concept;
- :class:`OpenClawScorer` — OpenClaw 2026.9.6's exact formula (``--scoring openclaw``).

Both share the spec's arithmetic (content = 0.7·vector + 0.3·keyword, then importance, project
and decay) in :meth:`Scorer.score`; each says what differs — how the legs run
(:meth:`Scorer.policy`), the keyword part, the exact-path tier, age and what it does to the rank
(:meth:`Scorer.age_factor`), which score the threshold judges (:meth:`Scorer.eligibility`), what
the rescue returns, and the order within a group (:meth:`Scorer.group_key`, :meth:`Scorer.mmr`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from clawmem.engine.config import SearchSettings
from clawmem.engine.kinds import ScoringMode, SearchMode
from clawmem.engine.search import calibration as cal
from clawmem.engine.search.candidates import BestLine, Candidate, CandidatePolicy, CandidatePool, probe_match_limit
from clawmem.engine.search.keyword import KeywordHit, exact_tier
from clawmem.engine.search.ranking import (
    decay_factor,
    diary_age_days,
    importance_factor,
    mmr_picks,
    openclaw_age_days,
    openclaw_snippet_tokens,
    prepare_mmr_tokens,
    project_factor,
    snippet_of,
    snippet_tokens,
)
from clawmem.engine.search.tokens import concept_coverage
from clawmem.engine.search.types import ScoreBreakdown
from clawmem.engine.store import search_queries as q
from clawmem.engine.workspace.annotations import INVALID_PROJECT_ANNOTATION

if TYPE_CHECKING:
    from clawmem.engine.search.pipeline import SearchRequest

CANDIDATE_WINDOW = 200  # OpenClaw 2026.9.6: every leg ranks a 200-wide window; results are cut at the end
# Calibrated scoring: every leg ranks 64 candidates (8 × the default 6 results, the spec's own KNN
# factor, rounded up), more only when more than 64 results are asked for. On the bilingual fixture and
# LoCoMo it returns the same rankings as 200 (bench/RESULTS.md), and MMR, which is quadratic in
# the candidates, gets a third of them. The window does not grow with max_results below 64, so
# asking for more results extends the list and never reorders or rescores its head.
CALIBRATED_WINDOW = 64
# Calibrated scoring: a chunk with line vectors gets this share of its vector score from its best
# line, calibrated against the same background as the chunks (bench/RESULTS.md: LoCoMo recall@5
# over the same candidates 0.827 -> 0.844 at 0.3; 0.837 at 0.5, 0.832 at 0.7; against a background
# of line vectors instead, 0.838-0.841).
LINE_WEIGHT = 0.3
UNTRUSTED_LEFT_OUT = "untrusted origin: left out unless you search untrusted memory explicitly"


class Score(NamedTuple):
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
    recency: float
    decay: float
    importance: int | None
    importance_factor: float
    project_factor: float
    pre_threshold: float
    qualifying: float
    vector_z: float | None
    vector_note: str | None
    line: BestLine | None = None
    line_vector: float | None = None
    date_match: float | None = None
    line_pending: bool = False

    def breakdown(self, mmr_rank: int | None, passed: bool) -> ScoreBreakdown:
        return ScoreBreakdown(
            vector_raw=round(self.vector_raw, 6) if self.vector_raw is not None else None,
            vector=round(self.vector, 6),
            keyword_raw=round(self.keyword_raw, 6) if self.keyword_raw is not None else None,
            keyword=round(self.keyword, 6),
            path_tier=self.path_tier,
            content=round(self.content, 6),
            age_days=round(self.age_days, 3) if self.age_days is not None else None,
            recency=round(self.recency, 6),
            decay=round(self.decay, 6),
            importance=self.importance,
            importance_factor=round(self.importance_factor, 4),
            project_factor=round(self.project_factor, 4),
            pre_threshold=self.pre_threshold,
            qualifying=round(self.qualifying, 6),
            mmr_rank=mmr_rank,
            passed_threshold=passed,
            vector_z=round(self.vector_z, 3) if self.vector_z is not None else None,
            vector_note=self.vector_note,
            line=self.line.number if self.line else None,
            line_cosine=round(self.line.cosine, 6) if self.line else None,
            line_vector=round(self.line_vector, 6) if self.line_vector is not None else None,
            date_match=round(self.date_match, 4) if self.date_match is not None else None,
            line_pending=self.line_pending,
        )


class Scored(NamedTuple):
    """A scored candidate: its chunk, its score factors, the score shown (and ranked by), why it
    is left out of the results (an invalid project annotation, an untrusted origin) or None, and
    the score the threshold judges (:meth:`Scorer.eligibility`)."""

    cand: Candidate
    score: Score
    public: float
    excluded: str | None
    qualifies: float


class Scorer:
    """What both modes share; subclasses say what differs."""

    name: ScoringMode

    def __init__(self, settings: SearchSettings, req: SearchRequest, now: datetime) -> None:
        self.s = settings
        self.req = req
        self.query = req.query.strip()
        self.now = now

    # ---- stage 1: how the legs run

    def policy(self, *, tokenizer: str, chunk_total: int) -> CandidatePolicy:
        raise NotImplementedError

    # ---- stage 2: one candidate

    def tier(self, c: Candidate) -> int:
        """The exact-path tier (3 full path, 2 basename, 1 stem, 0 none)."""
        raise NotImplementedError

    def keyword_part(self, c: Candidate, tier: int, dm: float | None, pool: CandidatePool) -> float:
        raise NotImplementedError

    def ranking_base(self, c: Candidate, content: float, pool: CandidatePool) -> float:
        """The score before decay of a candidate outside the exact tiers."""
        return content

    def age(self, c: Candidate, m: q.ChunkMeta, pool: CandidatePool) -> float | None:
        raise NotImplementedError

    def score(self, c: Candidate, m: q.ChunkMeta, pool: CandidatePool) -> Scored:
        s, mode, calib = self.s, pool.mode, pool.calib
        kw = c.kw
        v_raw = c.cosine
        # A heading-only entry's cosine is no evidence (calibration.has_content): shown, not counted.
        evidence = v_raw is not None and (calib.method == "raw" or cal.has_content(c.text))
        z = calib.z_score(v_raw, c.text) if v_raw is not None and evidence and calib.method != "raw" else None
        vec = (calib.relevance(z) if z is not None else calib.apply(v_raw)) if v_raw is not None and evidence else 0.0
        best = pool.lines.get(c.id) if z is not None else None
        # The best line against the chunks' own background (of its script): one scale for both.
        line_vec = calib.relevance(calib.z_score(best.cosine, best.text)) if best else None
        if line_vec is not None:
            vec = LINE_WEIGHT * line_vec + (1 - LINE_WEIGHT) * vec
        tier = self.tier(c)
        dm = pool.dated.match_of(c.path, c.source, c.text) if pool.dated.weight else None
        k = self.keyword_part(c, tier, dm, pool)
        if mode == "hybrid":
            content = s.vector_weight * vec + s.text_weight * k
        elif mode == "vector-only":
            content = vec
        else:
            content = k
        if tier:
            pre = (1 + max(0.0, min(1.0, content))) / 2 if s.decay_enabled else (content if content > 0 else 1.0)
        else:
            pre = self.ranking_base(c, content, pool)
        age = self.age(c, m, pool)
        recency = decay_factor(age, s.half_life_days) if s.decay_enabled else 1.0
        decay = self.age_factor(recency)
        imp_f = importance_factor(m.importance)
        keys = tuple(k_.strip() for k_ in (m.project_key or "").split(";") if k_.strip())
        excluded = "dropped: invalid project annotation" if INVALID_PROJECT_ANNOTATION in keys else None
        if excluded is None and m.origin_class == "untrusted" and not self.req.include_untrusted:
            excluded = UNTRUSTED_LEFT_OUT
        proj_f = project_factor(keys, self.req.project_keys)
        qualifying = pre * imp_f * proj_f
        final = qualifying * decay
        if tier:
            public = proj_f
        elif mode == "hybrid" and content == 0:
            public = 0.0
        else:
            public = final
        bd = Score(
            vector_raw=v_raw,
            vector=vec,
            keyword_raw=kw.bm25_rank if kw else None,
            keyword=k,
            path_tier=tier,
            content=content,
            age_days=age,
            recency=recency,
            decay=decay,
            importance=m.importance,
            importance_factor=imp_f,
            project_factor=proj_f,
            pre_threshold=round(final, 6),  # rounded here: the order below compares what is shown
            qualifying=qualifying,
            vector_z=z,
            vector_note=None if evidence or v_raw is None else "heading only: its cosine is not evidence",
            line=best,
            line_vector=line_vec,
            date_match=dm,
            line_pending=best is None and z is not None and c.id in pool.lines_pending,
        )
        return Scored(c, bd, public, excluded, self.eligibility(public, qualifying, tier, mode, content))

    @property
    def max_decay(self) -> float | None:
        """The most age takes off a ranking score (None: the spec's multiplier, unbounded)."""
        return None

    def age_factor(self, recency: float) -> float:
        """What age multiplies the ranking score by, given the spec's multiplier ``recency``."""
        raise NotImplementedError

    def eligibility(self, public: float, qualifying: float, tier: int, mode: SearchMode, content: float) -> float:
        """The score min_score is tested on."""
        raise NotImplementedError

    rescues_without_keywords = False
    # A changed fact's newer version above the older (engine/search/versions.py); OpenClaw's own
    # scoring has no such rule and stays exactly OpenClaw's order.
    orders_versions = False

    def rescues(self, x: Scored) -> bool:
        """Whether a hit is returned when nothing qualifies (OpenClaw: its keyword hits)."""
        return x.cand.kw is not None and x.public >= 0

    def near_misses(self, misses: list[Scored], min_score: float) -> list[Scored]:
        """Which of the live hits not returned count as near-misses (the excluded always do)."""
        return misses

    # ---- stage 3: the order within a group, and whether spare places are filled

    def group_key(self, tier: int, mode: SearchMode) -> Callable[[Scored], tuple[object, ...]]:
        raise NotImplementedError

    def mmr(self, group: list[Scored]) -> Iterable[Scored]:
        raise NotImplementedError

    def fills_spare_places(self, mode: SearchMode) -> bool:
        """Whether keyword-only hits without a vector fill places the threshold left empty."""
        return True


class CalibratedScorer(Scorer):
    """Eligibility before decay (the brief's rule, spec "Docs vs code" 2): min_score judges
    content × importance × project; age only reorders what qualifies, and by at most
    ``search.max_decay`` of its score (README "How old memories rank")."""

    name: ScoringMode = "calibrated"

    @property
    def max_decay(self) -> float | None:
        return self.s.max_decay

    def age_factor(self, recency: float) -> float:
        return 1.0 - self.s.max_decay * (1.0 - recency)

    def eligibility(self, public: float, qualifying: float, tier: int, mode: SearchMode, content: float) -> float:
        if tier or (mode == "hybrid" and content == 0):
            return public
        return round(qualifying, 6)

    rescues_without_keywords = True
    orders_versions = True

    def rescues(self, x: Scored) -> bool:
        return x.public > 0

    def near_misses(self, misses: list[Scored], min_score: float) -> list[Scored]:
        # What failed eligibility; a qualifying memory ranked below the last result is not a miss.
        return [x for x in misses if x.qualifies < min_score]

    def policy(self, *, tokenizer: str, chunk_total: int) -> CandidatePolicy:
        window = min(CANDIDATE_WINDOW, max(CALIBRATED_WINDOW, self.req.max_results))
        # English words are probed and counted in the word index (every index opened through the
        # store has it: its migration runs on open).
        words = tokenizer == "trigram"
        return CandidatePolicy(
            window=window,
            openclaw_keywords=False,
            probe_limit=probe_match_limit(chunk_total, window) if chunk_total else None,
            words=words,
            known_counts=words and bool(chunk_total),
            stem=True,
            idf_weights=True,
            dated=True,
            best_keyword_hits=True,
            calibrate=True,
            fill_cosines=True,
            prepare=self._preparer(),
        )

    def _preparer(self) -> Callable[[str], None]:
        """What scoring will ask of a candidate's text (its script, whether it holds more than
        headings, its MMR tokens), computed into their caches while the query embeds."""
        s = self.s
        mmr = s.mmr_enabled and self.req.legs == "hybrid"

        def prepare(text: str) -> None:
            cal.script_of(text)
            cal.has_content(text)
            if mmr:
                prepare_mmr_tokens(snippet_tokens(snippet_of(text, s.snippet_max_chars)))

        return prepare

    def tier(self, c: Candidate) -> int:
        return c.kw.exact_tier if c.kw else 0

    def keyword_part(self, c: Candidate, tier: int, dm: float | None, pool: CandidatePool) -> float:
        """The query's coverage, whichever leg brought the chunk (so a chunk's score never
        depends on a probe it was not in the window of), with the date concept's share."""
        kw = c.kw
        if kw is None:
            covers = pool.mode == "hybrid"  # every candidate's keyword part is its coverage
            return (
                pool.dated.keyword(concept_coverage(pool.concepts, c.text, pool.weights), dm) if covers or dm else 0.0
            )
        if kw.has_body:
            k = (
                pool.coverage_of[c.id]
                if c.id in pool.coverage_of
                else concept_coverage(pool.concepts, c.text, pool.weights)
            )
            return pool.dated.keyword(k, dm)
        return _path_only_part(kw, tier, pool.mode)

    def age(self, c: Candidate, m: q.ChunkMeta, pool: CandidatePool) -> float | None:
        if c.source != "memory":
            return None
        age = diary_age_days(c.path, self.now)
        if age is not None and pool.dated.weight:  # a question about a past day: age from that day
            age = pool.dated.age_days(c.path, age)
        return age

    def group_key(self, tier: int, mode: SearchMode) -> Callable[[Scored], tuple[object, ...]]:
        if tier:
            return lambda x: (-x.score.pre_threshold, x.cand.path, x.cand.start_line)
        return lambda x: (-x.public, -x.score.pre_threshold, x.cand.path, x.cand.start_line, x.cand.end_line)

    def mmr(self, group: list[Scored]) -> Iterable[Scored]:
        s = self.s
        return mmr_picks(
            group,
            relevance=lambda x: x.score.pre_threshold,
            tokens=lambda x: snippet_tokens(snippet_of(x.cand.text, s.snippet_max_chars)),
            lam=s.mmr_lambda,
        )


class OpenClawScorer(Scorer):
    """OpenClaw 2026.9.6: the spec's multiplier as is, and min_score tested after it."""

    name: ScoringMode = "openclaw"

    def __init__(self, settings: SearchSettings, req: SearchRequest, now: datetime) -> None:
        super().__init__(settings, req, now)
        self.lexical: dict[str, float] = {}  # hybrid: a substring-only body hit's rank when content is 0

    def age_factor(self, recency: float) -> float:
        return recency

    def eligibility(self, public: float, qualifying: float, tier: int, mode: SearchMode, content: float) -> float:
        return public

    def policy(self, *, tokenizer: str, chunk_total: int) -> CandidatePolicy:
        return CandidatePolicy(
            window=CANDIDATE_WINDOW,
            openclaw_keywords=True,
            probe_limit=None,
            words=False,
            known_counts=False,
            stem=False,
            idf_weights=False,
            dated=False,
            best_keyword_hits=False,
            calibrate=False,
            fill_cosines=False,
            prepare=None,
        )

    def tier(self, c: Candidate) -> int:
        # OpenClaw 2026.9.6 gives every candidate of a file the query names exactly (vector hits and
        # body hits too, not only the path leg's first chunk) that file's exact tier.
        return exact_tier(self.query, c.path)

    def keyword_part(self, c: Candidate, tier: int, dm: float | None, pool: CandidatePool) -> float:
        kw = c.kw
        if kw is None:
            return 0.0
        return _path_only_part(kw, tier, pool.mode)

    def ranking_base(self, c: Candidate, content: float, pool: CandidatePool) -> float:
        kw = c.kw
        if pool.mode == "hybrid" and content == 0 and kw is not None and kw.has_body:
            self.lexical[c.id] = kw.boosted
            return kw.boosted
        return content

    def age(self, c: Candidate, m: q.ChunkMeta, pool: CandidatePool) -> float | None:
        return openclaw_age_days(c.path, self.now, m.observed_at) if c.source == "memory" else None

    def group_key(self, tier: int, mode: SearchMode) -> Callable[[Scored], tuple[object, ...]]:
        """OpenClaw 2026.9.6: score, ranking score, lexical rank, path, lines (hybrid); keyword-only
        breaks score ties by text score, then path score (non-exact hits)."""
        lexical = self.lexical

        def key(x: Scored) -> tuple[object, ...]:
            c, bd = x.cand, x.score
            if mode == "fts-only":
                kw = c.kw
                text = kw.text_score if kw else 0.0
                path_s = kw.path_score if kw and not bd.path_tier else 0.0
                return (-bd.pre_threshold, -text, -path_s, c.path, c.start_line, c.end_line)
            rank = (-bd.pre_threshold, -lexical.get(c.id, 0.0), c.path, c.start_line, c.end_line)
            return rank if bd.path_tier else (-x.public, *rank)

        return key

    def mmr(self, group: list[Scored]) -> Iterable[Scored]:
        # OpenClaw's MMR relevance is the shown score (0 for a hit with no content) outside the
        # exact tiers and the ranking score inside them; its tokens and tie rule are its own.
        s = self.s
        return mmr_picks(
            group,
            relevance=lambda x: x.score.pre_threshold if x.score.path_tier else x.public,
            tokens=lambda x: openclaw_snippet_tokens(snippet_of(x.cand.text, s.snippet_max_chars)),
            lam=s.mmr_lambda,
            exact_ties=True,
        )

    def fills_spare_places(self, mode: SearchMode) -> bool:
        return mode != "fts-only"  # OpenClaw's keyword-only search does not fill


def _path_only_part(kw: KeywordHit, tier: int, mode: SearchMode) -> float:
    """The keyword part of a hit the calibrated coverage does not score: the boosted text score
    (keyword-only ranks every body hit by it), none for an exact path, else the path score."""
    if kw.text_score > 0 or (kw.has_body and mode == "fts-only"):
        return kw.boosted
    if tier:
        return 0.0
    return kw.path_score


def scorer_for(settings: SearchSettings, req: SearchRequest, now: datetime) -> Scorer:
    """The scorer of the request's mode, chosen once for the whole search."""
    return OpenClawScorer(settings, req, now) if req.scoring == "openclaw" else CalibratedScorer(settings, req, now)
