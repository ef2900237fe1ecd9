"""Short-term recall signals (spec §5): what searches keep finding, for Dreaming to promote.

Every recorded search hit with source ``memory`` and a short-term path (a dated note under
``memory/``, not ``memory/dreaming/``) updates its entry: recall count (once per query per
day), total and max score, the query hash and day bucket (capped at 32 and 16), concept tags,
and provenance (the least trusted origin wins). Searches made with ``record=False`` — the
TUI's previews, ``--no-record`` — leave no trace.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace

import apsw

from engine.config import Clock
from engine.search.tokens import extract_keywords
from engine.search.types import SearchHit
from engine.store import recall_rows as rows
from engine.store.recall_rows import RecallRow
from engine.workspace.files import is_short_term_path

MAX_ENTRIES = 512
MAX_SNIPPET = 800
MAX_QUERY_HASHES = 32
MAX_RECALL_DAYS = 16
MAX_CONCEPT_TAGS = 6
TRUST_ORDER = ("owner", "agent", "system", "untrusted")  # later = less trusted

_CONTAMINATION = re.compile(
    r"openclaw:dreaming|openclaw-memory-(?:promotion|lineage)|^\s*#+\s*(?:light|rem|deep) sleep\b|"
    r"\[score=[\d.]+ .*recalls=|^\s*-\s*candidate:",
    re.IGNORECASE | re.MULTILINE,
)


def normalize_claim(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"<!--.*?-->", " ", text)
    text = re.sub(r"^\s*[-*+]\s+", "", text, flags=re.MULTILINE)
    return re.sub(r"\s+", " ", text).strip()


def claim_hash(text: str) -> str:
    return hashlib.sha1(normalize_claim(text).encode("utf-8")).hexdigest()[:12]


def query_hash(query: str) -> str:
    return hashlib.sha1(query.strip().lower().encode("utf-8")).hexdigest()[:12]


def entry_key(path: str, start: int, end: int, snippet: str) -> str:
    return f"memory:{path}:{start}:{end}:{claim_hash(snippet)}"


def is_contaminated(snippet: str) -> bool:
    return bool(_CONTAMINATION.search(snippet))


def concept_tags(snippet: str) -> tuple[str, ...]:
    return tuple(extract_keywords(normalize_claim(snippet), limit=MAX_CONCEPT_TAGS))


def least_trusted(a: str, b: str) -> str:
    ia = TRUST_ORDER.index(a) if a in TRUST_ORDER else len(TRUST_ORDER)
    ib = TRUST_ORDER.index(b) if b in TRUST_ORDER else len(TRUST_ORDER)
    return a if ia >= ib else b


def eligible(hit: SearchHit) -> bool:
    return hit.source == "memory" and is_short_term_path(hit.path) and not is_contaminated(hit.snippet)


def record_search(
    conn: apsw.Connection, query: str, hits: Sequence[SearchHit], clock: Clock, *, interactive: bool = True
) -> int:
    """Record recall signals for one search's results; returns how many entries changed."""
    qhash = query_hash(query)
    now_ms = int(clock.timestamp() * 1000)
    day = clock.today()
    changed = 0
    with conn:
        for hit in hits:
            if not eligible(hit):
                continue
            snippet = hit.snippet[:MAX_SNIPPET]
            key = entry_key(hit.path, hit.start_line, hit.end_line, snippet)
            current = rows.get(conn, key) or RecallRow(
                entry_key=key, path=hit.path, start_line=hit.start_line, end_line=hit.end_line, snippet=snippet,
                claim_hash=claim_hash(snippet), recall_count=0, daily_count=0, grounded_count=0, total_score=0.0,
                max_score=0.0, query_hashes=(), recall_days=(), concept_tags=concept_tags(snippet),
                origin_class=hit.provenance.origin_class, session_kind=hit.provenance.session_kind,
                first_recalled_at=now_ms, last_recalled_at=None, last_query_day=None, promoted_at=None,
                updated_at=now_ms,
            )
            if not rows.add_event(conn, key, qhash, day, hit.score, interactive, now_ms):
                continue  # the same query on the same day counts once
            hashes = tuple(dict.fromkeys((*current.query_hashes, qhash)))[-MAX_QUERY_HASHES:] if interactive \
                else current.query_hashes
            days = tuple(sorted(set((*current.recall_days, day))))[-MAX_RECALL_DAYS:]
            rows.upsert(conn, replace(
                current,
                snippet=snippet,
                recall_count=current.recall_count + 1,
                total_score=current.total_score + hit.score,
                max_score=max(current.max_score, hit.score),
                query_hashes=hashes,
                recall_days=days,
                concept_tags=concept_tags(snippet),
                origin_class=least_trusted(current.origin_class, hit.provenance.origin_class),
                session_kind=current.session_kind if current.session_kind == hit.provenance.session_kind
                else "unknown",
                last_recalled_at=now_ms,
                last_query_day=day,
                updated_at=now_ms,
            ))
            changed += 1
        rows.evict_beyond(conn, MAX_ENTRIES)
    return changed


def recall_entries(conn: apsw.Connection) -> list[RecallRow]:
    return rows.all_rows(conn)
