"""Short-term recall signals (docs/memory-core.md §5): what searches keep finding, for Dreaming to promote.

Every recorded search hit with source ``memory`` and a short-term path (a dated note under
``memory/``, not ``memory/dreaming/``) updates its entry ``memory:<path>:<a>:<b>:<claimHash>``:
recall count (once per query per day), total and max score (each hit clamped to [0, 1]), the
query hash and day bucket (capped at 32 and 16), concept tags, and provenance (the least trusted
origin wins). Only interactive searches add to ``user_query_hashes``, the set the Deep
``minUniqueQueries`` gate counts. Searches made with ``record=False`` leave no trace.

Daily-note ingestion (:func:`record_daily`, driven by ``engine.dreaming.ingest``) adds
``dailyCount`` to ``memory:claim:<claimHash>`` entries under a synthetic query key, or to the
recall entry that already carries the same claim hash, as OpenClaw does.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import apsw
from clawmem.engine.config import Clock
from clawmem.engine.kinds import ORIGIN_CLASSES
from clawmem.engine.search.tokens import extract_keywords, has_cjk, query_concepts
from clawmem.engine.search.types import SearchHit
from clawmem.engine.store import recall_rows as rows
from clawmem.engine.store.db import immediate
from clawmem.engine.store.recall_rows import RecallRow
from clawmem.engine.workspace.files import is_short_term_path

MAX_ENTRIES = 512
MAX_SNIPPET = 800
MAX_QUERY_HASHES = 32
MAX_RECALL_DAYS = 16
MAX_CONCEPT_TAGS = 6
_TAG_SCAN_LIMIT = 256
_QUERY_TERM_LIMIT = 32
_TAG_STOP_WORDS = frozenset({"every", "another", "several", "per", "via", "whether", "within", "without", "across"})
TRUST_ORDER = ORIGIN_CLASSES  # later = less trusted
CLAIM_KEY_PREFIX = "memory:claim:"
SESSION_KINDS = ("interactive", "cron", "heartbeat", "subagent", "unknown")  # the recall table's CHECK

_CONTAMINATION = re.compile(
    r"openclaw:dreaming|openclaw-memory-(?:promotion|lineage)|^\s*#+\s*(?:light|rem|deep) sleep\b|"
    r"\[score=[\d.]+ .*recalls=|^\s*-\s*candidate:",
    re.IGNORECASE | re.MULTILINE,
)
_MARKER_ONLY = re.compile(r"^(?:[-*+>]\s*)+")
_WORD = re.compile(r"[^\W_]", re.UNICODE)
_HEADING = re.compile(r"^#{1,6}\s+\S")


def normalize_snippet(text: str) -> str:
    """OpenClaw's snippet normalization: trimmed, every whitespace run collapsed to one space."""
    return re.sub(r"\s+", " ", text.strip())


def normalize_claim(text: str) -> str:
    """Lowercased, comment- and bullet-free text (input for concept tags)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"<!--.*?-->", " ", text)
    text = re.sub(r"^\s*[-*+]\s+", "", text, flags=re.MULTILINE)
    return re.sub(r"\s+", " ", text).strip()


def claim_hash(text: str) -> str:
    return hashlib.sha1(normalize_snippet(text).encode("utf-8")).hexdigest()[:12]


def query_hash(query: str) -> str:
    return hashlib.sha1(query.strip().lower().encode("utf-8")).hexdigest()[:12]


def entry_key(path: str, start: int, end: int, snippet: str) -> str:
    return f"memory:{path}:{start}:{end}:{claim_hash(snippet)}"


def claim_entry_key(hash_: str) -> str:
    return f"{CLAIM_KEY_PREFIX}{hash_}"


def is_contaminated(snippet: str) -> bool:
    return bool(_CONTAMINATION.search(snippet))


def _marker_only(line: str) -> bool:
    stripped = _MARKER_ONLY.sub("", line.strip()).strip()
    return not stripped or not _WORD.search(stripped)


def is_unpromotable(snippet: str) -> bool:
    """Empty, dreaming output, or a Markdown skeleton (OpenClaw's ``isUnpromotableShortTermSnippet``)."""
    normalized = normalize_snippet(snippet)
    if not normalized or is_contaminated(snippet) or _marker_only(normalized):
        return True
    return _skeleton(snippet)


def _skeleton(raw: str) -> bool:
    """Only list markers and headings, with at least one placeholder line (``- ``, ``- # x``, ``# x -``)."""
    lines = [ln.strip() for ln in raw.splitlines() if ln.strip()]
    if not lines:
        return True
    placeholder = False
    for line in lines:
        if _marker_only(line):
            placeholder = True
            continue
        bare = _MARKER_ONLY.sub("", line).strip()
        if _HEADING.match(bare):
            if bare != line or re.search(r"(?:^|\s)[-*+>]\s*$", line):
                placeholder = True
            continue
        return False
    return placeholder


def tag_candidates(text: str) -> list[str]:
    """Every keyword of the text, in order, minus CJK fragments of a longer one.

    A CJK run yields its content pieces (split at function words) and then their trigrams and
    bigrams; those n-grams are search aids, not concepts (``周六下`` and ``六下午`` are fragments
    of ``周六下午``), so only whole pieces are kept. Words of other scripts are whole words
    already; a few quantifiers the search stop list lets through (``every``) are left out.
    """
    claim = normalize_claim(text)
    pieces = set(query_concepts(claim))
    return [
        t
        for t in extract_keywords(claim, limit=_TAG_SCAN_LIMIT)
        if (t in pieces if has_cjk(t) else t not in _TAG_STOP_WORDS)
    ]


def concept_tags(snippet: str, term_hits: Mapping[str, int] | None = None) -> tuple[str, ...]:
    """Up to 6 concept tags: the terms recalling queries hit most often first, then the terms the
    text repeats, then text order (deterministic). The first three become the ``trigger``
    annotation of a promoted entry, so they should be what people actually ask about."""
    candidates = tag_candidates(snippet)
    text = normalize_claim(snippet)
    hits = term_hits or {}
    order = sorted(range(len(candidates)), key=lambda i: (-hits.get(candidates[i], 0), -text.count(candidates[i]), i))
    return tuple(candidates[i] for i in order[:MAX_CONCEPT_TAGS])


def query_terms(query: str) -> list[str]:
    """The query's terms, lowercased: its content words and CJK pieces (a one-word query such as
    ``退房`` is its own term), then the n-grams search also probes."""
    return list(dict.fromkeys([*query_concepts(query), *extract_keywords(query, limit=_QUERY_TERM_LIMIT)]))


def term_hit(query_term: str, term: str) -> bool:
    """A query term names a concept term: equal, or (CJK) one inside the other, or (other scripts)
    one a prefix of the other of at least 4 letters (``rotation`` / ``rotates`` do not, ``rotat…`` do)."""
    if query_term == term:
        return True
    short, long = sorted((query_term, term), key=len)
    if has_cjk(short) or has_cjk(long):
        return len(short) >= 2 and short in long
    return len(short) >= 4 and long.startswith(short)


def matched_lines(terms: Sequence[str], snippet: str, start_line: int, end_line: int) -> list[int]:
    """File lines of a hit whose text contains one of the query's terms (the snippet is the
    chunk text from ``start_line`` on)."""
    usable = [t for t in terms if len(t) >= (2 if has_cjk(t) else 3)]
    out = []
    for offset, line in enumerate(snippet.split("\n")):
        number = start_line + offset
        if number > end_line:
            break
        lowered = unicodedata.normalize("NFKC", line).lower()
        if line.strip() and any(t in lowered for t in usable):
            out.append(number)
    return out


def least_trusted(a: str, b: str) -> str:
    ia = TRUST_ORDER.index(a) if a in TRUST_ORDER else len(TRUST_ORDER)
    ib = TRUST_ORDER.index(b) if b in TRUST_ORDER else len(TRUST_ORDER)
    return a if ia >= ib else b


def _merge_session_kind(current: str, incoming: str) -> str:
    return current if current == incoming else "unknown"


def _merge_project(current: str | None, incoming: str | None) -> str | None:
    keys = [k.strip() for part in (current, incoming) if part for k in part.split(";") if k.strip()]
    return "; ".join(dict.fromkeys(keys)) or None


def _merge_distinct(existing: tuple[str, ...], value: str, cap: int) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*existing, value)))[-cap:]


def _clamp(score: float) -> float:
    return 0.0 if score != score else max(0.0, min(1.0, score))


def eligible(hit: SearchHit) -> bool:
    return hit.source == "memory" and is_short_term_path(hit.path) and not is_unpromotable(hit.snippet)


@dataclass(frozen=True)
class Observation:
    """One search hit as the recall store takes it: everything :func:`apply_observations` needs,
    worked out from the query and the hit, so the query text itself is never kept (only its
    hash). A machine sharing an index journals these for the others (engine/recall_sharing.py)."""

    query_hash: str
    day: str  # the searcher's local day: the once-per-query-per-day bucket
    at: int  # epoch milliseconds
    interactive: bool
    path: str
    start_line: int
    end_line: int
    snippet: str  # normalized, at most MAX_SNIPPET
    score: float  # clamped to [0, 1]
    origin_class: str
    session_kind: str
    project_key: str | None
    terms_hit: tuple[str, ...]  # the entry's concept candidates the query named (interactive only)
    lines: tuple[int, ...]  # file lines holding a query term (interactive only)

    @property
    def key(self) -> str:
        return entry_key(self.path, self.start_line, self.end_line, self.snippet)

    def to_json(self) -> dict[str, object]:
        return {
            "queryHash": self.query_hash,
            "day": self.day,
            "at": self.at,
            "interactive": self.interactive,
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "snippet": self.snippet,
            "score": self.score,
            "originClass": self.origin_class,
            "sessionKind": self.session_kind,
            "projectKey": self.project_key,
            "termsHit": list(self.terms_hit),
            "lines": list(self.lines),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Observation:
        """The inverse of :meth:`to_json`; ValueError (or KeyError, TypeError) on anything else."""
        origin, kind = str(data["originClass"]), str(data["sessionKind"])
        if origin not in ORIGIN_CLASSES or kind not in SESSION_KINDS:
            raise ValueError(f"unknown origin class or session kind {origin!r}, {kind!r}")
        project = data.get("projectKey")
        return cls(
            query_hash=str(data["queryHash"]),
            day=str(data["day"]),
            at=int(data["at"]),  # type: ignore[call-overload]
            interactive=bool(data["interactive"]),
            path=str(data["path"]),
            start_line=int(data["startLine"]),  # type: ignore[call-overload]
            end_line=int(data["endLine"]),  # type: ignore[call-overload]
            snippet=str(data["snippet"])[:MAX_SNIPPET],
            score=_clamp(float(data["score"])),  # type: ignore[arg-type]
            origin_class=origin,
            session_kind=kind,
            project_key=None if project is None else str(project),
            terms_hit=tuple(str(t) for t in data.get("termsHit") or ()),  # type: ignore[attr-defined]
            lines=tuple(int(n) for n in data.get("lines") or ()),  # type: ignore[attr-defined]
        )


def observe(query: str, hits: Sequence[SearchHit], clock: Clock, *, interactive: bool = True) -> list[Observation]:
    """What one search's results add to the recall store: its eligible hits (docs/memory-core.md §5)."""
    qhash = query_hash(query)
    qterms = query_terms(query)
    now_ms = int(clock.timestamp() * 1000)
    day = clock.today()
    out: list[Observation] = []
    for hit in hits:
        if not eligible(hit):
            continue
        snippet = normalize_snippet(hit.snippet)[:MAX_SNIPPET]
        terms_hit: tuple[str, ...] = ()
        lines: tuple[int, ...] = ()
        if interactive:
            terms_hit = tuple(t for t in tag_candidates(snippet) if any(term_hit(q, t) for q in qterms))
            lines = tuple(matched_lines(qterms, hit.snippet, hit.start_line, hit.end_line))
        out.append(
            Observation(
                qhash,
                day,
                now_ms,
                interactive,
                hit.path,
                hit.start_line,
                hit.end_line,
                snippet,
                _clamp(hit.score),
                hit.provenance.origin_class,
                hit.provenance.session_kind,
                "; ".join(hit.project_keys) or None,
                terms_hit,
                lines,
            )
        )
    return out


def record_search(
    conn: apsw.Connection, query: str, hits: Sequence[SearchHit], clock: Clock, *, interactive: bool = True
) -> int:
    """Record recall signals for one search's results; returns how many entries changed."""
    return apply_observations(conn, observe(query, hits, clock, interactive=interactive))


def apply_observations(conn: apsw.Connection, observations: Sequence[Observation]) -> int:
    """Add observations to the recall store, in one transaction; returns how many entries changed.
    Idempotent: an (entry, query, day) already counted is skipped, so a journal replayed twice,
    or the same query on the same day on two machines, counts once."""
    changed = 0
    with immediate(conn):
        for ob in observations:
            key = ob.key
            if rows.has_event(conn, key, ob.query_hash, ob.day):
                continue  # the same query on the same day counts once
            term_hits: dict[str, int] = {}
            if ob.interactive:
                term_hits = rows.term_query_counts(conn, key, except_query=ob.query_hash)
                for t in ob.terms_hit:
                    term_hits[t] = term_hits.get(t, 0) + 1
            current = rows.get(conn, key) or _new_row(
                key,
                ob.path,
                ob.start_line,
                ob.end_line,
                ob.snippet,
                ob.origin_class,
                ob.session_kind,
                ob.project_key,
                ob.at,
            )
            rows.upsert(
                conn,
                replace(
                    current,
                    snippet=ob.snippet,
                    recall_count=current.recall_count + 1,
                    total_score=current.total_score + ob.score,
                    max_score=max(current.max_score, ob.score),
                    query_hashes=_merge_distinct(current.query_hashes, ob.query_hash, MAX_QUERY_HASHES),
                    user_query_hashes=_merge_distinct(current.user_query_hashes, ob.query_hash, MAX_QUERY_HASHES)
                    if ob.interactive
                    else current.user_query_hashes,
                    recall_days=tuple(sorted(set((*current.recall_days, ob.day))))[-MAX_RECALL_DAYS:],
                    concept_tags=concept_tags(ob.snippet, term_hits or rows.term_query_counts(conn, key))
                    or current.concept_tags,
                    origin_class=least_trusted(current.origin_class, ob.origin_class),
                    session_kind=_merge_session_kind(current.session_kind, ob.session_kind),
                    project_key=_merge_project(current.project_key, ob.project_key),
                    last_recalled_at=max(ob.at, current.last_recalled_at or 0),
                    last_query_day=max(ob.day, current.last_query_day or ""),
                    updated_at=max(ob.at, current.updated_at),
                ),
            )
            rows.add_event(conn, key, ob.query_hash, ob.day, ob.score, ob.interactive, ob.at)
            if ob.interactive:
                rows.record_match(conn, key, ob.query_hash, ob.lines, ob.terms_hit, ob.at)
            changed += 1
        rows.evict_beyond(conn, MAX_ENTRIES)
    return changed


@dataclass(frozen=True)
class DailyClaim:
    """One bullet or short paragraph of a daily note, as daily ingestion sees it."""

    path: str
    start_line: int
    end_line: int
    snippet: str  # "<heading>: <ancestors> > <bullet>" context form
    score: float
    origin_class: str = "agent"
    session_kind: str = "unknown"
    project_key: str | None = None

    @property
    def claim_hash(self) -> str:
        return claim_hash(self.snippet)

    @property
    def key(self) -> str:
        return claim_entry_key(self.claim_hash)


def daily_target_key(conn: apsw.Connection, claim: DailyClaim) -> str:
    """Where a daily signal lands: an existing recall entry with the same claim, else the claim key."""
    existing = rows.find_non_claim_by_claim_hash(conn, claim.claim_hash)
    return existing.entry_key if existing is not None else claim.key


def record_daily(
    conn: apsw.Connection, query: str, claims: Sequence[DailyClaim], clock: Clock, *, day_bucket: str
) -> list[str]:
    """Add one daily signal per claim (the caller makes this idempotent per day); returns the keys touched.

    ``query`` is the synthetic ``__dreaming_daily__:<day>`` key: it joins ``query_hashes`` but never
    ``user_query_hashes``. The day bucket is the note's own day, as in OpenClaw.
    """
    qhash = query_hash(query)
    now_ms = int(clock.timestamp() * 1000)
    touched: list[str] = []
    for claim in claims:
        snippet = normalize_snippet(claim.snippet)[:MAX_SNIPPET]
        if is_unpromotable(snippet):
            continue
        key = daily_target_key(conn, claim)
        existing = rows.get(conn, key)
        current = existing or _new_row(
            key,
            claim.path,
            claim.start_line,
            claim.end_line,
            snippet,
            claim.origin_class,
            claim.session_kind,
            claim.project_key,
            now_ms,
        )
        keep_time = existing is not None and qhash in existing.query_hashes and existing.snippet == snippet
        score = _clamp(claim.score)
        rows.upsert(
            conn,
            replace(
                current,
                snippet=snippet
                if existing is None or existing.entry_key.startswith(CLAIM_KEY_PREFIX)
                else current.snippet,
                claim_hash=current.claim_hash,
                daily_count=current.daily_count + 1,
                total_score=current.total_score + score,
                max_score=max(current.max_score, score),
                query_hashes=_merge_distinct(current.query_hashes, qhash, MAX_QUERY_HASHES),
                recall_days=_merge_distinct(current.recall_days, day_bucket, MAX_RECALL_DAYS),
                concept_tags=concept_tags(snippet, rows.term_query_counts(conn, key)) or current.concept_tags,
                origin_class=least_trusted(current.origin_class, claim.origin_class)
                if existing
                else claim.origin_class,
                session_kind=_merge_session_kind(current.session_kind, claim.session_kind)
                if existing
                else claim.session_kind,
                project_key=_merge_project(current.project_key, claim.project_key),
                last_recalled_at=(current.last_recalled_at if keep_time else now_ms),
                updated_at=now_ms,
            ),
        )
        touched.append(key)
    rows.evict_beyond(conn, MAX_ENTRIES)
    return touched


def _new_row(
    key: str,
    path: str,
    start: int,
    end: int,
    snippet: str,
    origin: str,
    session_kind: str,
    project: str | None,
    now_ms: int,
) -> RecallRow:
    return RecallRow(
        entry_key=key,
        path=path,
        start_line=start,
        end_line=end,
        snippet=snippet,
        claim_hash=key.removeprefix(CLAIM_KEY_PREFIX) if key.startswith(CLAIM_KEY_PREFIX) else claim_hash(snippet),
        recall_count=0,
        daily_count=0,
        grounded_count=0,
        total_score=0.0,
        max_score=0.0,
        query_hashes=(),
        user_query_hashes=(),
        recall_days=(),
        concept_tags=concept_tags(snippet),
        origin_class=origin,
        session_kind=session_kind,
        project_key=project,
        first_recalled_at=now_ms,
        last_recalled_at=None,
        last_query_day=None,
        promoted_at=None,
        light_hits=0,
        rem_hits=0,
        last_light_at=None,
        last_rem_at=None,
        last_rem_considered_at=None,
        updated_at=now_ms,
    )


def recall_entries(conn: apsw.Connection) -> list[RecallRow]:
    return rows.all_rows(conn)
