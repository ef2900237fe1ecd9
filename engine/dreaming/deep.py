"""Deep sleep ranking (docs/memory-core.md §5 Ranking): components, phase boosts, gates, and why.

Every recall entry is explained, not only the winners: each of the six components, its weighted
share, the light/REM boost, every gate with what it needed and what the entry has, and one plain
reason line. Entries whose origin is untrusted or system, session-derived entries from
non-interactive sessions, non-short-term paths and contaminated snippets are excluded before
ranking. The rest must pass signals ≥ minRecallCount, unique interactive queries ≥
minUniqueQueries, age ≤ maxAgeDays and score ≥ minScore; they are sorted by score, then recall
count, then path, and the first ``deep_limit`` are selected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from clawmem.engine.config import DreamingSettings
from clawmem.engine.dreaming.eligibility import is_session_derived, origin_blocked, session_blocked
from clawmem.engine.dreaming.models import CandidateExplanation, Components, GateCheck
from clawmem.engine.recall import is_unpromotable, least_trusted
from clawmem.engine.store.dreaming_rows import RejectionRow
from clawmem.engine.store.recall_rows import RecallRow
from clawmem.engine.times import DAY_MS, iso_ms
from clawmem.engine.workspace.files import is_short_term_path

WEIGHTS = Components(frequency=0.24, relevance=0.30, diversity=0.15, recency=0.15, consolidation=0.10, conceptual=0.06)
LIGHT_BOOST_MAX = 0.06
REM_BOOST_MAX = 0.09
PHASE_SIGNAL_HALF_LIFE_DAYS = 14.0


def clamp(value: float) -> float:
    if not math.isfinite(value):
        return 0.0
    return max(0.0, min(1.0, value))


def recency(age_days: float, half_life_days: float) -> float:
    if not math.isfinite(age_days) or age_days < 0 or half_life_days <= 0:
        return 1.0
    return math.exp(-math.log(2) / half_life_days * age_days)


def consolidation_from_days(days: Sequence[str]) -> float:
    """0 for no recall day, 0.2 for one, else 0.55·ln(n)/ln 5 + 0.45·span/7."""
    from datetime import date

    if not days:
        return 0.0
    parsed = sorted({date.fromisoformat(d) for d in days if _is_day(d)})
    if len(parsed) <= 1:
        return 0.2
    span = (parsed[-1] - parsed[0]).days
    spacing = clamp(math.log1p(len(parsed) - 1) / math.log1p(4))
    return clamp(0.55 * spacing + 0.45 * clamp(span / 7))


def _is_day(text: str) -> bool:
    from datetime import date

    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _boost(hits: int, last_at: int | None, now_ms: int, maximum: float) -> float:
    strength = clamp(math.log1p(max(0, hits)) / math.log1p(6))
    if last_at is None:
        return 0.0
    age = max(0.0, (now_ms - last_at) / DAY_MS)
    return maximum * strength * clamp(recency(age, PHASE_SIGNAL_HALF_LIFE_DAYS))


def effective_origin(row: RecallRow, file_origin: str | None) -> str:
    """The least trusted of the entry's merged origin and its file's (flush quarantine is file-level)."""
    return least_trusted(row.origin_class, file_origin) if file_origin else row.origin_class


@dataclass(frozen=True)
class _Scored:
    """The score of one entry and every number it is made of (shown in full by `dream explain`)."""

    avg: float
    age: float
    components: Components
    weighted: Components
    light: float
    rem: float
    boost: float
    score: float


def _score(row: RecallRow, settings: DreamingSettings, now_ms: int) -> _Scored:
    """The six components, their weighted shares and the light/REM boost, summed into the clamped score.

    Kept apart from the gates because the score is computed for every entry, excluded or not:
    `dream explain` shows it either way.
    """
    signals = row.signal_count
    uq = len(row.user_query_hashes)
    avg = clamp(row.total_score / max(1, signals)) if signals > 0 else 0.0
    age = max(0.0, (now_ms - row.last_recalled_at) / DAY_MS) if row.last_recalled_at is not None else 0.0
    comps = Components(
        frequency=clamp(math.log1p(signals) / math.log1p(10)),
        relevance=avg,
        diversity=clamp(uq / 5),
        recency=clamp(recency(age, settings.deep_recency_half_life_days)),
        consolidation=max(consolidation_from_days(row.recall_days), clamp(row.grounded_count / 3)),
        conceptual=clamp(len(row.concept_tags) / 6),
    )
    weighted = Components(*(getattr(comps, f) * getattr(WEIGHTS, f) for f in _FIELDS))
    light = _boost(row.light_hits, row.last_light_at, now_ms, LIGHT_BOOST_MAX)
    rem = _boost(row.rem_hits, row.last_rem_at, now_ms, REM_BOOST_MAX)
    boost = clamp(light + rem)
    score = clamp(sum(getattr(weighted, f) for f in _FIELDS) + boost)
    return _Scored(avg, age, comps, weighted, light, rem, boost, score)


def _exclusion_gates(row: RecallRow, origin: str) -> list[GateCheck]:
    """The gates that exclude an entry before ranking: short-term path, origin, session, snippet.

    A failure here makes the entry "excluded" whatever its score or history.
    """
    gates: list[GateCheck] = []
    short = is_short_term_path(row.path)
    gates.append(
        GateCheck(
            "short-term-path",
            short,
            row.path,
            "a dated note under memory/",
            "dated short-term note" if short else "not a dated short-term note under memory/",
        )
    )
    blocked = origin_blocked(origin)
    gates.append(
        GateCheck(
            "origin",
            not blocked,
            origin,
            "owner or agent",
            f"origin {origin}" if blocked else f"origin {origin} is trusted",
        )
    )
    sess_blocked = session_blocked(row.path, row.session_kind)
    gates.append(
        GateCheck(
            "session",
            not sess_blocked,
            row.session_kind,
            "interactive (session-derived entries)" if is_session_derived(row.path) else "any (file-derived entry)",
            f"session-derived from a {row.session_kind} session; only interactive sessions count"
            if sess_blocked
            else ("interactive session" if is_session_derived(row.path) else "from a memory file"),
        )
    )
    bad_snippet = is_unpromotable(row.snippet)
    gates.append(
        GateCheck(
            "snippet",
            not bad_snippet,
            "contaminated or empty" if bad_snippet else "ok",
            "real content, not dreaming output",
            "the snippet is dreaming output or has no content" if bad_snippet else "real content",
        )
    )
    return gates


def _history_gates(row: RecallRow, rejection: RejectionRow | None) -> list[GateCheck]:
    """What already happened to the entry: promoted before, or rejected and not yet given new signals.

    The "rejected" gate exists only when there is a rejection; it holds until the entry gains signals.
    """
    signals = row.signal_count
    promoted = row.promoted_at is not None
    gates = [
        GateCheck(
            "promoted",
            not promoted,
            iso_ms(row.promoted_at) or "no",
            "not yet promoted",
            f"already promoted on {(iso_ms(row.promoted_at) or '')[:10]}" if promoted else "not promoted yet",
        )
    ]
    held = rejection is not None and signals <= rejection.signal_count
    if rejection is not None:
        gates.append(
            GateCheck(
                "rejected",
                not held,
                f"{signals} signals now",
                f"more than {rejection.signal_count} (at rejection)",
                (
                    f"rejected on {(iso_ms(rejection.rejected_at) or '')[:10]}"
                    + (f" ({rejection.reason})" if rejection.reason else "")
                    + f"; waits for new signals ({rejection.signal_count} at rejection, {signals} now)"
                )
                if held
                else f"rejected before, but gained signals ({rejection.signal_count} → {signals})",
            )
        )
    return gates


def _threshold_gates(row: RecallRow, settings: DreamingSettings, age: float, score: float) -> list[GateCheck]:
    """The configured minimums an entry must reach (docs/memory-core.md §5 Ranking).

    signals ≥ minRecallCount, unique interactive queries ≥ minUniqueQueries, age ≤ maxAgeDays, score ≥ minScore.
    """
    signals = row.signal_count
    uq = len(row.user_query_hashes)
    return [
        GateCheck(
            "signals",
            signals >= settings.deep_min_recall_count,
            str(signals),
            f"≥ {settings.deep_min_recall_count}",
            f"{signals} signals of {settings.deep_min_recall_count} needed "
            f"(recalls {row.recall_count} + daily {row.daily_count} + grounded {row.grounded_count})",
        ),
        GateCheck(
            "unique-queries",
            uq >= settings.deep_min_unique_queries,
            str(uq),
            f"≥ {settings.deep_min_unique_queries}",
            f"{uq} unique queries of {settings.deep_min_unique_queries} needed",
        ),
        GateCheck(
            "age",
            age <= settings.deep_max_age_days,
            f"{age:.1f} days",
            f"≤ {settings.deep_max_age_days:g} days",
            f"last recalled {age:.1f} days ago, {settings.deep_max_age_days:g} allowed",
        ),
        GateCheck(
            "score",
            score >= settings.deep_min_score,
            f"{score:.3f}",
            f"≥ {settings.deep_min_score:g}",
            f"score {score:.3f} of {settings.deep_min_score:g} needed",
        ),
    ]


def _verdict(gates: Sequence[GateCheck], score: float, settings: DreamingSettings) -> tuple[str, str]:
    """The status and its one plain reason, by precedence: excluded, promoted, rejected, below gates, promotable."""
    excluded = [g for g in gates if g.name in ("short-term-path", "origin", "session", "snippet") and not g.passed]
    below = [g for g in gates if g.name in ("signals", "unique-queries", "age", "score") and not g.passed]
    promoted = any(g.name == "promoted" and not g.passed for g in gates)
    held = any(g.name == "rejected" and not g.passed for g in gates)
    if excluded:
        return "excluded", excluded[0].detail
    if promoted:
        return "promoted", next(g.detail for g in gates if g.name == "promoted")
    if held:
        return "rejected", next(g.detail for g in gates if g.name == "rejected")
    if below:
        return "below-gates", "; ".join(g.detail for g in below)
    return "promotable", f"passes every gate (score {score:.3f} ≥ {settings.deep_min_score:g})"


def explain_entry(
    row: RecallRow,
    settings: DreamingSettings,
    now_ms: int,
    *,
    rejection: RejectionRow | None = None,
    file_origin: str | None = None,
) -> CandidateExplanation:
    """Components, score and every gate of one entry (rank and the limit are set by :func:`rank`)."""
    s = _score(row, settings, now_ms)
    origin = effective_origin(row, file_origin)
    gates = [
        *_exclusion_gates(row, origin),
        *_history_gates(row, rejection),
        *_threshold_gates(row, settings, s.age, s.score),
    ]
    status, reason = _verdict(gates, s.score, settings)
    return CandidateExplanation(
        key=row.entry_key,
        path=row.path,
        start_line=row.start_line,
        end_line=row.end_line,
        snippet=row.snippet,
        origin_class=origin,
        session_kind=row.session_kind,
        recall_count=row.recall_count,
        daily_count=row.daily_count,
        grounded_count=row.grounded_count,
        signal_count=row.signal_count,
        unique_queries=len(row.user_query_hashes),
        recall_days=row.recall_days,
        concept_tags=row.concept_tags,
        avg_score=s.avg,
        max_score=clamp(row.max_score),
        age_days=s.age,
        components=s.components,
        weights=WEIGHTS,
        weighted=s.weighted,
        light_hits=row.light_hits,
        rem_hits=row.rem_hits,
        light_boost=s.light,
        rem_boost=s.rem,
        phase_boost=s.boost,
        score=s.score,
        gates=tuple(gates),
        status=status,
        reason=reason,
        rank=None,
        promoted_at=iso_ms(row.promoted_at),
        last_recalled_at=iso_ms(row.last_recalled_at),
    )


_FIELDS = ("frequency", "relevance", "diversity", "recency", "consolidation", "conceptual")


def rank(
    rows: Sequence[RecallRow],
    settings: DreamingSettings,
    now_ms: int,
    *,
    rejections: Mapping[str, RejectionRow] | None = None,
    file_origins: Mapping[str, str] | None = None,
) -> list[CandidateExplanation]:
    """Every entry explained; gate-passing ones ranked (score, recall count, path) and limited."""
    explained = [
        explain_entry(
            r,
            settings,
            now_ms,
            rejection=(rejections or {}).get(r.entry_key),
            file_origin=(file_origins or {}).get(r.path),
        )
        for r in rows
    ]
    passing = sorted(
        (e for e in explained if e.status == "promotable"), key=lambda e: (-e.score, -e.recall_count, e.path)
    )
    ranked: dict[str, CandidateExplanation] = {}
    total = len(passing)
    for i, e in enumerate(passing, start=1):
        limit_gate = GateCheck(
            "limit",
            i <= settings.deep_limit,
            f"#{i}",
            f"≤ #{settings.deep_limit}",
            f"ranked #{i} of {total}; the deep limit is {settings.deep_limit}",
        )
        if i <= settings.deep_limit:
            ranked[e.key] = replace(
                e, rank=i, gates=(*e.gates, limit_gate), reason=f"{e.reason}; ranked #{i} of {total}"
            )
        else:
            ranked[e.key] = replace(
                e, rank=i, gates=(*e.gates, limit_gate), status="beyond-limit", reason=limit_gate.detail
            )
    out = [ranked.get(e.key, e) for e in explained]
    order = {"promotable": 0, "beyond-limit": 1, "below-gates": 2, "rejected": 3, "promoted": 4, "excluded": 5}
    out.sort(key=lambda e: (order.get(e.status, 9), e.rank or 0, -e.score, e.path, e.key))
    return out
