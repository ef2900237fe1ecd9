"""The keyword and path legs (docs/memory-core.md §4 steps 2–3).

Keyword: query tokens quoted and AND-joined into an FTS5 MATCH; under the trigram tokenizer a
token shorter than 3 characters cannot be a trigram, so it becomes a substring (LIKE) filter.
BM25 ranks become scores and get the spec's boost (query-token overlap, density, path tokens,
length). A row found only by substring filters (no MATCH term, or a MATCH the FTS engine
refused) has no BM25 score: its text score is 0 and its ranking score is the boost alone, as in
OpenClaw 2026.9.6. When the full query finds fewer than ``limit`` hits, up to 6 extracted
keywords are searched one by one and merged by chunk id (max score), so natural questions still
match.

Path: exact tiers (3 full path, 2 basename, 1 stem) on normalised paths, each file represented by
its first chunk; partial matches ranked by BM25 over the paths FTS table.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from clawmem.engine.paths import normalize_for_match
from clawmem.engine.search.tokens import content_tokens, extract_keywords, lower_tokens, nfc, query_tokens
from clawmem.engine.store import search_queries as q
from clawmem.engine.store import word_index
from clawmem.engine.store.index_rows import IndexState
from clawmem.engine.store.search_reader import MatchRefused, SearchReader

KEYWORD_FALLBACK_TERMS = 6
EXACT_PATH_LIMIT = 200


@dataclass(frozen=True)
class KeywordHit:
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    text_score: float  # BM25-derived (0 when only the path or only substring filters matched)
    bm25_rank: float | None  # the raw FTS5 rank, for the breakdown
    boosted: float  # the spec's boosted ranking score
    path_score: float  # partial path BM25 score
    exact_tier: int  # 3, 2, 1 or 0
    has_body: bool


def _hit_of(
    row: q.BodyRow,
    *,
    text_score: float = 0.0,
    boosted: float = 0.0,
    path_score: float = 0.0,
    exact_tier: int = 0,
    has_body: bool = False,
) -> KeywordHit:
    """A chunk row as a keyword hit with the given scores (a path hit unless ``has_body``)."""
    return KeywordHit(
        id=row.id,
        path=row.path,
        source=row.source,
        start_line=int(row.start_line),
        end_line=int(row.end_line),
        text=row.text,
        text_score=text_score,
        bm25_rank=row.rank if has_body else None,
        boosted=boosted,
        path_score=path_score,
        exact_tier=exact_tier,
        has_body=has_body,
    )


def bm25_to_score(rank: float) -> float:
    if not math.isfinite(rank):
        return 0.001
    return (-rank) / (1 - rank) if rank < 0 else 1 / (1 + rank)


def fts_quote(term: str) -> str:
    return '"' + term.replace('"', "") + '"'


def plan(tokens: Sequence[str], tokenizer: str) -> tuple[str | None, list[str], list[str]]:
    """(MATCH string or None, substring terms, the MATCH string's terms in order)."""
    match_terms: list[str] = []
    substrings: list[str] = []
    for tok in tokens:
        if tokenizer == "trigram" and len(tok) < 3:
            substrings.append(tok)
        else:
            match_terms.append(tok)
    match = " AND ".join(fts_quote(t) for t in match_terms) if match_terms else None
    return match, substrings, match_terms


def boosted_score(base: float, query: str, text: str, path: str) -> float:
    """min(1, s + 0.45·overlap share + 0.2·density + 0.18 per query token in the path + length)."""
    return _Booster(query).score(base, "", text, path)


class _Booster:
    """The boost of one search's ranking query, computed once per chunk (probes reuse it).

    Summed as OpenClaw sums it: the lexical boost first (0.18 added once per path token), then
    added to the BM25 score.
    """

    def __init__(self, query: str, *, enabled: bool = True) -> None:
        # Only OpenClaw's ranking uses the boost; calibrated scoring scores coverage instead and
        # skips tokenising every hit (a third of a search's time at 10k chunks).
        self.qtoks = list(dict.fromkeys(lower_tokens(query))) if enabled else []
        self._lexical: dict[str, float] = {}

    def score(self, base: float, chunk_id: str, text: str, path: str) -> float:
        if not self.qtoks:
            return base
        lexical = self._lexical.get(chunk_id) if chunk_id else None
        if lexical is None:
            lexical = self._lexical_boost(text, path)
            if chunk_id:
                self._lexical[chunk_id] = lexical
        return min(1.0, base + lexical)

    def _lexical_boost(self, text: str, path: str) -> float:
        qtoks = self.qtoks
        text_set = set(lower_tokens(text))
        overlap = sum(1 for t in qtoks if t in text_set)
        unique_overlap = overlap / len(qtoks)
        density = overlap / max(len(text_set), 1)
        npath = nfc(path).lower()
        path_boost = 0.0
        for t in qtoks:
            if t in npath:
                path_boost += 0.18
        length_boost = min(len(text.encode("utf-16-le")) / 2 / 160, 0.18)
        return 0.45 * unique_overlap + 0.2 * density + path_boost + length_boost


@dataclass(frozen=True)
class _BodySearch:
    """What every body statement of one keyword leg shares: the full query's and each probe's."""

    reader: SearchReader
    booster: _Booster
    tokenizer: str
    sources: Sequence[str]
    limit: int
    hits_of: Callable[[str], int] | None = None
    words: bool = False
    path_indexes: PathIndexes | None = None

    def body(self, terms_query: str) -> list[KeywordHit]:
        tokens = query_tokens(terms_query)
        if not tokens:
            return []
        match, substrings, phrases = plan(tokens, self.tokenizer)
        counts = [self.hits_of(t) for t in phrases] if match and self.hits_of else None
        try:
            rows = self.reader.body_match(match, substrings, self.sources, self.limit, counts, phrases=phrases)
        except MatchRefused:
            # MATCH syntax the FTS engine refuses: substring filters on every token instead.
            rows = self.reader.body_match(None, tokens, self.sources, self.limit)
        return self._hits(rows)

    def _hits(self, rows: Sequence[q.BodyRow]) -> list[KeywordHit]:
        hits = []
        for r in rows:
            base = bm25_to_score(r.rank) if r.rank is not None else 0.0
            boosted = self.booster.score(base, r.id, r.text, r.path)
            hits.append(_hit_of(r, text_score=base, boosted=boosted, has_body=True))
        return hits

    def probe(self, term: str) -> list[KeywordHit]:
        """One extracted keyword's body hits, then its path hits (no exact tiers: only the full
        query claims those). With ``words``, an ASCII word is looked up in the word index."""
        if self.words and word_index.handles(term):
            body = self._hits(self.reader.word_match(term, self.sources, self.limit))
        else:
            body = self.body(term)
        return [
            *body,
            *path_leg(self.reader, term, self.sources, self.limit, exact_tiers=False, path_indexes=self.path_indexes),
        ]


def exact_tier(query: str, path: str) -> int:
    nq = normalize_for_match(query)
    if not nq or nq == ".":
        return 0
    np_ = normalize_for_match(path)
    if nq == np_:
        return 3
    if "/" in nq:
        return 0
    base = posixpath.basename(np_)
    if nq == base:
        return 2
    dot = base.rfind(".")
    stem = base[:dot] if dot > 0 else base
    return 1 if nq == stem else 0


@dataclass(frozen=True)
class _PathIndex:
    """Indexed paths by normalised full path, basename and stem (exact tiers in O(1))."""

    by_key: dict[str, list[tuple[str, str]]]


# (database file, sources) -> (index state, index): rebuilt when the indexed paths change. One
# per SearchService (search/caches.py); None (a leg called on its own) builds the index each time.
PathIndexes = dict[tuple[str, tuple[str, ...]], tuple[IndexState, _PathIndex]]


def _path_index(reader: SearchReader, sources: Sequence[str], cache: PathIndexes | None) -> _PathIndex:
    key = (reader.key, tuple(sources))
    stamp = reader.index_state()
    # In-memory databases: no cache.
    cached = cache.get(key) if cache is not None and reader.key else None
    if cached is not None and cached[0] == stamp:
        return cached[1]
    by_key: dict[str, list[tuple[str, str]]] = {}
    for path, source in reader.all_indexed_paths(sources):
        np_ = normalize_for_match(path)
        base = posixpath.basename(np_)
        dot = base.rfind(".")
        for k in dict.fromkeys((np_, base, base[:dot] if dot > 0 else base)):
            by_key.setdefault(k, []).append((path, source))
    index = _PathIndex(by_key)
    if cache is not None and reader.key:
        cache[key] = (stamp, index)
    return index


def path_leg(
    reader: SearchReader,
    query: str,
    sources: Sequence[str],
    limit: int,
    *,
    exact_tiers: bool = True,
    path_indexes: PathIndexes | None = None,
) -> list[KeywordHit]:
    """Path hits; ``exact_tiers=False`` for keyword probes (only the full query claims a tier);
    ``path_indexes`` caches each database's path index between searches."""
    hits: dict[str, KeywordHit] = {}
    exact: list[tuple[int, str, str]] = []
    nq = normalize_for_match(query)
    if exact_tiers and nq and nq != ".":
        for path, source in _path_index(reader, sources, path_indexes).by_key.get(nq, ()):
            tier = exact_tier(query, path)
            if tier:
                exact.append((tier, path, source))
    exact.sort(key=lambda t: (-t[0], t[1], t[2]))
    exact = exact[:EXACT_PATH_LIMIT]
    firsts = reader.first_chunks([(path, source) for _, path, source in exact])
    for tier, path, source in exact:
        row = firsts.get((path, source))
        if row is not None:
            hits[row.id] = _hit_of(row, exact_tier=tier)
    tokens = query_tokens(query)
    if tokens:
        match = " AND ".join(fts_quote(t) for t in tokens)
        try:
            rows = reader.path_match(match, sources, limit + EXACT_PATH_LIMIT)
        except MatchRefused:
            rows = []
        firsts = reader.first_chunks([(pr.path, pr.source) for pr in rows])
        partial = 0
        for pr in rows:
            tier = exact_tier(query, pr.path) if exact_tiers else 0
            row = firsts.get((pr.path, pr.source))
            if row is None:
                continue
            score = bm25_to_score(pr.rank) if pr.rank is not None else 1.0
            if row.id in hits:
                hits[row.id] = replace(hits[row.id], path_score=max(hits[row.id].path_score, score))
                continue
            if tier == 0 and partial < limit:
                partial += 1
                hits[row.id] = _hit_of(row, path_score=score)
    return list(hits.values())


def _merge(into: dict[str, KeywordHit], hits: Sequence[KeywordHit]) -> None:
    for h in hits:
        cur = into.get(h.id)
        if cur is None:
            into[h.id] = h
            continue
        rank = cur.bm25_rank if cur.text_score >= h.text_score else h.bm25_rank
        into[h.id] = replace(
            cur,
            text_score=max(cur.text_score, h.text_score),
            bm25_rank=rank,
            boosted=max(cur.boosted, h.boosted),
            path_score=max(cur.path_score, h.path_score),
            exact_tier=max(cur.exact_tier, h.exact_tier),
            has_body=cur.has_body or h.has_body,
        )


def merged_score(hit: KeywordHit) -> float:
    """A merged keyword hit's ranking score: body score, else 1 for an exact path, else path BM25."""
    if hit.has_body:
        return hit.boosted
    return 1.0 if hit.exact_tier else hit.path_score


def _openclaw_order(hit: KeywordHit) -> tuple[float, ...] | tuple[object, ...]:
    """OpenClaw's keyword hit order: exact tier, body before path-only among exact hits, score,
    text score, path score (non-exact), then path and start line (code-point order, where
    OpenClaw uses localeCompare; it only decides exact ties)."""
    return (
        -hit.exact_tier,
        -int(hit.has_body) if hit.exact_tier else 0,
        -merged_score(hit),
        -hit.text_score,
        0.0 if hit.exact_tier else -hit.path_score,
        hit.path,
        hit.start_line,
        hit.id,
    )


def limit_hits(hits: Sequence[KeywordHit], limit: int) -> list[KeywordHit]:
    """At most ``limit`` non-exact hits (best first) plus every exact-path hit, as OpenClaw keeps them."""
    ranked = sorted(hits, key=_openclaw_order)
    exact = [h for h in ranked if h.exact_tier]
    return [*exact, *[h for h in ranked if not h.exact_tier][:limit]]


def keyword_leg(
    reader: SearchReader,
    query: str,
    *,
    tokenizer: str,
    sources: Sequence[str],
    limit: int,
    cap: bool = False,
    cjk_subphrases: bool = True,
    boost: bool = True,
    probe_filter: Callable[[str], bool] | None = None,
    stop_words: bool = True,
    hits_of: Callable[[str], int] | None = None,
    words: bool = False,
    path_indexes: PathIndexes | None = None,
) -> tuple[list[KeywordHit], list[str], list[str]]:
    """Keyword + path hits merged by chunk id, the extracted keywords that were probed, and
    those ``probe_filter`` turned down (too common to be worth a ranked probe).

    ``cap`` (openclaw scoring) does what OpenClaw's merge does: every hit of a file the query
    names exactly gets that file's tier, and only the best ``limit`` non-exact hits are kept
    beside the exact ones (the calibrated scoring re-ranks by concept coverage, so it keeps all).
    The probes are skipped when they would AND exactly the query's own terms (in order), or,
    in calibrated scoring, would repeat a one-word full query.
    ``boost=False`` leaves ``boosted`` at the BM25 score (the calibrated scoring never reads it).
    ``stop_words=False`` (calibrated scoring) leaves stop words out of the full query's AND.
    ``hits_of(term)``, the number of chunks that hold a MATCH term, lets a small match be ranked
    without SQLite's IDF scans (``engine.store.bm25``: exact counts give identical ranks; the
    calibrated scoring's word-index estimates give BM25 with their IDFs), and an AND through its
    rarest phrase.
    ``words`` (calibrated scoring) looks up the probes of ASCII words in the word index
    (``engine.store.word_index``: whole words and their Porter stems, not substrings); the full
    query's AND still matches substrings, so a word typed halfway finds the chunks it starts.
    ``path_indexes``: the service's cache of path indexes (None: built for this call).
    """
    search = _BodySearch(
        reader,
        _Booster(query, enabled=boost),
        tokenizer,
        sources,
        limit,
        hits_of,
        words,
        path_indexes,
    )
    merged: dict[str, KeywordHit] = {}
    full = query if stop_words else " ".join(content_tokens(query))
    _merge(merged, search.body(full))
    _merge(merged, path_leg(reader, query, sources, limit, path_indexes=path_indexes))
    probed: list[str] = []
    skipped: list[str] = []
    non_exact = sum(1 for h in merged.values() if not h.exact_tier)
    if non_exact < limit:
        terms = [
            t
            for t in extract_keywords(query, limit=KEYWORD_FALLBACK_TERMS, cjk_subphrases=cjk_subphrases)
            if t != query.strip().lower()
        ]
        # OpenClaw skips the probes when they are the query's own words and it found something;
        # the calibrated leg ANDed only the content words, so only a one-word repeat is skipped.
        same_query = lower_tokens(full) == lower_tokens(" ".join(terms)) and (stop_words or len(terms) == 1)
        if terms and not (merged and same_query):
            for term in terms:
                if probe_filter is not None and not probe_filter(term):
                    skipped.append(term)
                else:
                    probed.append(term)
            for term in probed:
                _merge(merged, search.probe(term))
    hits = list(merged.values())
    if not cap:
        return hits, probed, skipped
    # OpenClaw's merge: every hit of a file the full query names exactly carries that file's tier.
    hits = [h if h.exact_tier == (t := exact_tier(query, h.path)) else replace(h, exact_tier=t) for h in hits]
    return limit_hits(hits, limit), probed, skipped
