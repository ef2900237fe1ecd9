"""The keyword and path legs (spec §4 steps 2–3).

Keyword: query tokens quoted and AND-joined into an FTS5 MATCH; under the trigram tokenizer a
token shorter than 3 characters cannot be a trigram, so it becomes a substring (LIKE) filter.
BM25 ranks become scores and get the spec's boost (query-token overlap, density, path tokens,
length). When the full query finds fewer than ``limit`` hits, up to 6 extracted keywords are
searched one by one and merged by chunk id (max score), so natural questions still match.

Path: exact tiers (3 full path, 2 basename, 1 stem) on normalised paths, each file represented by
its first chunk; partial matches ranked by BM25 over the paths FTS table.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, replace

import apsw

from engine.paths import normalize_for_match
from engine.search.tokens import extract_keywords, lower_tokens, nfc, query_tokens
from engine.store import search_queries as q

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
    text_score: float  # BM25-derived (0 when only the path matched)
    bm25_rank: float | None  # the raw FTS5 rank, for the breakdown
    boosted: float  # the spec's boosted ranking score
    path_score: float  # partial path BM25 score
    exact_tier: int  # 3, 2, 1 or 0
    has_body: bool


def bm25_to_score(rank: float) -> float:
    if not math.isfinite(rank):
        return 0.001
    return (-rank) / (1 - rank) if rank < 0 else 1 / (1 + rank)


def fts_quote(term: str) -> str:
    return '"' + term.replace('"', "") + '"'


def plan(tokens: Sequence[str], tokenizer: str) -> tuple[str | None, list[str]]:
    """(MATCH string or None, substring terms)."""
    match_terms: list[str] = []
    substrings: list[str] = []
    for tok in tokens:
        if tokenizer == "trigram" and len(tok) < 3:
            substrings.append(tok)
        else:
            match_terms.append(tok)
    match = " AND ".join(fts_quote(t) for t in match_terms) if match_terms else None
    return match, substrings


def boosted_score(base: float, query: str, text: str, path: str) -> float:
    """min(1, s + 0.45·overlap share + 0.2·density + 0.18 per query token in the path + length)."""
    qtoks = list(dict.fromkeys(lower_tokens(query)))
    if not qtoks:
        return base
    text_set = set(lower_tokens(text))
    overlap = sum(1 for t in qtoks if t in text_set)
    unique_overlap = overlap / len(qtoks)
    density = overlap / max(len(text_set), 1)
    npath = nfc(path).lower()
    path_boost = 0.18 * sum(1 for t in qtoks if t in npath)
    length_boost = min(len(text.encode("utf-16-le")) / 2 / 160, 0.18)
    return min(1.0, base + 0.45 * unique_overlap + 0.2 * density + path_boost + length_boost)


def _body_search(
    conn: apsw.Connection,
    terms_query: str,
    ranking_query: str,
    tokenizer: str,
    sources: Sequence[str],
    limit: int,
    substring_base: float,
) -> list[KeywordHit]:
    tokens = query_tokens(terms_query)
    if not tokens:
        return []
    match, substrings = plan(tokens, tokenizer)
    try:
        rows = q.body_match(conn, match, substrings, sources, limit)
    except apsw.SQLError:
        # MATCH syntax the FTS engine refuses: substring filters on every token instead.
        rows = q.body_match(conn, None, tokens, sources, limit)
        match = None
    hits = []
    for r in rows:
        base = bm25_to_score(r.rank) if r.rank is not None else substring_base
        hits.append(
            KeywordHit(
                id=r.id,
                path=r.path,
                source=r.source,
                start_line=int(r.start_line),
                end_line=int(r.end_line),
                text=r.text,
                text_score=base,
                bm25_rank=r.rank,
                boosted=boosted_score(base, ranking_query, r.text, r.path),
                path_score=0.0,
                exact_tier=0,
                has_body=True,
            )
        )
    return hits


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


def path_leg(
    conn: apsw.Connection, query: str, sources: Sequence[str], limit: int, *, exact_tiers: bool = True
) -> list[KeywordHit]:
    """Path hits; ``exact_tiers=False`` for keyword probes (only the full query claims a tier)."""
    hits: dict[str, KeywordHit] = {}
    exact: list[tuple[int, str, str]] = []
    for path, source in q.all_indexed_paths(conn, sources) if exact_tiers else []:
        tier = exact_tier(query, path)
        if tier:
            exact.append((tier, path, source))
    exact.sort(key=lambda t: (-t[0], t[1], t[2]))
    for tier, path, source in exact[:EXACT_PATH_LIMIT]:
        row = q.first_chunk(conn, path, source)
        if row is not None:
            hits[row.id] = KeywordHit(
                id=row.id,
                path=row.path,
                source=row.source,
                start_line=int(row.start_line),
                end_line=int(row.end_line),
                text=row.text,
                text_score=0.0,
                bm25_rank=None,
                boosted=0.0,
                path_score=0.0,
                exact_tier=tier,
                has_body=False,
            )
    tokens = query_tokens(query)
    if tokens:
        match = " AND ".join(fts_quote(t) for t in tokens)
        try:
            rows = q.path_match(conn, match, sources, limit + EXACT_PATH_LIMIT)
        except apsw.SQLError:
            rows = []
        partial = 0
        for pr in rows:
            tier = exact_tier(query, pr.path) if exact_tiers else 0
            row = q.first_chunk(conn, pr.path, pr.source)
            if row is None:
                continue
            score = bm25_to_score(pr.rank) if pr.rank is not None else 1.0
            if row.id in hits:
                hits[row.id] = replace(hits[row.id], path_score=max(hits[row.id].path_score, score))
                continue
            if tier == 0 and partial < limit:
                partial += 1
                hits[row.id] = KeywordHit(
                    id=row.id,
                    path=row.path,
                    source=row.source,
                    start_line=int(row.start_line),
                    end_line=int(row.end_line),
                    text=row.text,
                    text_score=0.0,
                    bm25_rank=None,
                    boosted=0.0,
                    path_score=score,
                    exact_tier=0,
                    has_body=False,
                )
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


def keyword_leg(
    conn: apsw.Connection,
    query: str,
    *,
    tokenizer: str,
    sources: Sequence[str],
    limit: int,
    substring_base: float = 1.0,
) -> tuple[list[KeywordHit], list[str]]:
    """Keyword + path hits merged by chunk id, and the extracted keywords that were probed."""
    merged: dict[str, KeywordHit] = {}
    _merge(merged, _body_search(conn, query, query, tokenizer, sources, limit, substring_base))
    _merge(merged, path_leg(conn, query, sources, limit))
    probed: list[str] = []
    non_exact = sum(1 for h in merged.values() if not h.exact_tier)
    if non_exact < limit:
        terms = [t for t in extract_keywords(query, limit=KEYWORD_FALLBACK_TERMS) if t != query.strip().lower()]
        full_tokens = [t.lower() for t in query_tokens(query)]
        if terms and not (merged and sorted(full_tokens) == sorted(t.lower() for t in terms)):
            for term in terms:
                probed.append(term)
                _merge(merged, _body_search(conn, term, query, tokenizer, sources, limit, substring_base))
                _merge(merged, path_leg(conn, term, sources, limit, exact_tiers=False))
    return list(merged.values()), probed
