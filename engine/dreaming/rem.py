"""REM sleep (docs/memory-core.md §5): themes across recent memories; never touches MEMORY.md.

As OpenClaw's ``previewRemDreaming``, after Deep's trust exclusions (see
:func:`engine.dreaming.eligibility.phase_excluded`): the memories of the lookback (7 days) —
those Light staged and REM has not yet considered, when there are any — are grouped by concept
tag. A tag's
*pattern strength* is ``min(1, 2 × memories carrying it / memories considered)``; themes at or
above ``min_pattern_strength`` (0.75) are reflected, strongest first, at most ``limit`` (10).
"Possible lasting truths" are the most confident unpromoted memories (dedupe 0.88, confidence
``0.45·avg + 0.25·recall strength + 0.2·days/3 + 0.1·tags/6`` ≥ 0.45, at most 3); each gets a REM
phase hit.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from clawmem.engine.dreaming.eligibility import phase_excluded
from clawmem.engine.dreaming.light import (
    Merged,
    dedupe,
    display_snippet,
    lookback_cutoff,
    source_exists,
    within_lookback,
)
from clawmem.engine.dreaming.models import RemReport, Theme, Truth
from clawmem.engine.store.recall_rows import RecallRow

TRUTH_DEDUPE = 0.88
TRUTH_MIN_CONFIDENCE = 0.45


def normalize_tag(tag: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", tag).lower().split())


def light_staged_pending(row: RecallRow) -> bool:
    """Light staged it and REM has not considered it since (OpenClaw's ``readLightStagedKeys``)."""
    if row.light_hits <= 0:
        return False
    if row.last_light_at is None:
        return row.last_rem_at is None
    consumed = max(row.last_rem_at or -1, row.last_rem_considered_at or -1)
    return row.last_light_at > consumed


def truth_confidence(m: Merged) -> float:
    recall_strength = min(1.0, math.log1p(m.recall_count) / math.log1p(6))
    consolidation = min(1.0, len(m.recall_days) / 3)
    conceptual = min(1.0, len(m.concept_tags) / 6)
    value = m.average_score * 0.45 + recall_strength * 0.25 + consolidation * 0.2 + conceptual * 0.1
    return max(0.0, min(1.0, value))


def themes(rows: Sequence[RecallRow], limit: int, min_strength: float) -> list[Theme]:
    stats: dict[str, tuple[int, list[str]]] = {}
    for row in rows:
        for tag in dict.fromkeys(normalize_tag(t) for t in row.concept_tags):
            if not tag:
                continue
            count, evidence = stats.get(tag, (0, []))
            ev = f"{row.path}:{row.start_line}-{row.end_line}"
            stats[tag] = (count + 1, evidence if ev in evidence else [*evidence, ev])
    ranked = [
        Theme(tag, min(1.0, count / max(1, len(rows)) * 2), count, tuple(evidence))
        for tag, (count, evidence) in stats.items()
    ]
    ranked = [t for t in ranked if t.strength >= min_strength]
    ranked.sort(key=lambda t: (-t.strength, -t.count, t.tag))
    return ranked[: max(0, limit)]


def truths(rows: Sequence[RecallRow], limit: int, display: Callable[[RecallRow], str] | None = None) -> list[Truth]:
    if limit <= 0:
        return []
    merged = dedupe([r for r in rows if r.promoted_at is None], TRUTH_DEDUPE)
    show = display or (lambda r: display_snippet(r.snippet))
    out = [
        Truth(
            m.row.entry_key,
            show(m.row) or "(no snippet captured)",
            truth_confidence(m),
            f"{m.row.path}:{m.row.start_line}-{m.row.end_line}",
        )
        for m in merged
    ]
    out = [t for t in out if t.confidence >= TRUTH_MIN_CONFIDENCE]
    out.sort(key=lambda t: (-t.confidence, t.snippet))
    return out[:limit]


def run_rem(
    rows: Sequence[RecallRow],
    *,
    workspace: Path,
    now_ms: int,
    lookback_days: float,
    limit: int,
    min_strength: float,
    file_origins: Mapping[str, str] | None = None,
    display: Callable[[RecallRow], str] | None = None,
) -> tuple[RemReport, list[str]]:
    """The REM report and the keys REM considered from Light's staging (for the 'considered' mark).

    The same trust exclusions as Deep apply first (``file_origins``: path → file-level origin)."""
    cutoff = lookback_cutoff(now_ms, lookback_days)
    origins = file_origins or {}
    recent = [
        r
        for r in rows
        if within_lookback(r, cutoff)
        and source_exists(workspace, r.path)
        and not phase_excluded(r.path, r.origin_class, r.session_kind, origins.get(r.path))
    ]
    staged = [r for r in recent if light_staged_pending(r)]
    considered = staged or recent
    found = themes(considered, limit, min_strength)
    lasting = truths(considered, max(1, min(3, limit)), display)
    return (
        RemReport(
            considered=len(considered),
            used_light_staging=bool(staged),
            themes=tuple(found),
            truths=tuple(lasting),
            body_lines=tuple(rem_body(found, lasting)),
        ),
        [r.entry_key for r in staged],
    )


def rem_body(found: Sequence[Theme], lasting: Sequence[Truth]) -> list[str]:
    lines = ["### Reflections"]
    if not found:
        lines.append("- No strong patterns surfaced.")
    for t in found:
        lines += [
            f"- Theme: `{t.tag}` kept surfacing across {t.count} memories.",
            f"  - confidence: {t.strength:.2f}",
            f"  - evidence: {', '.join(t.evidence[:3])}",
            "  - note: reflection",
        ]
    lines += ["", "### Possible Lasting Truths"]
    if not lasting:
        lines.append("- No strong candidate truths surfaced.")
    for truth in lasting:
        lines.append(f"- {truth.snippet} [confidence={truth.confidence:.2f} evidence={truth.evidence}]")
    return lines
