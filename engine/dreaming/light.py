"""Light sleep (docs/memory-core.md §5): stage recent short-term entries as candidates; never touches MEMORY.md.

As OpenClaw's ``runLightDreaming``: entries recalled within the lookback (2 days) whose source
file still exists, that Light has not staged since their last recall, and that Deep's trust
exclusions let through (origin — the entry's or, for a quarantined daily note, its file's — not
untrusted or system; session-derived only from interactive sessions); newest first;
near-duplicates within one file merged when their Jaccard similarity is at least ``dedupe``
(0.9); entries a recent diary entry already covers moved to the end; at most ``limit`` (100)
staged. Each staged entry gets a light phase hit (the Deep phase boost). A
``- Candidate:`` line shows what promotion would write (see :mod:`engine.dreaming.focus`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clawmem.engine.dreaming.eligibility import phase_excluded
from clawmem.engine.dreaming.models import LightReport, StagedEntry
from clawmem.engine.dreaming.similarity import text_similarity
from clawmem.engine.store.recall_rows import RecallRow
from clawmem.engine.times import DAY_MS

DIARY_COVERAGE_SIMILARITY = 0.35
DIARY_HISTORY_LIMIT = 4


def lookback_cutoff(now_ms: int, lookback_days: float) -> int:
    return now_ms - int(max(0.0, lookback_days) * DAY_MS)


def day_within_lookback(day: str, cutoff_ms: int) -> bool:
    from datetime import UTC, datetime

    try:
        end = datetime.fromisoformat(f"{day}T23:59:59.999+00:00").astimezone(UTC)
    except ValueError:
        return False
    return int(end.timestamp() * 1000) >= cutoff_ms


def within_lookback(row: RecallRow, cutoff_ms: int) -> bool:
    """OpenClaw's ``entryWithinLookback``: by recall day, except daily-only claims; else by last recall."""
    if any(day_within_lookback(d, cutoff_ms) for d in row.recall_days):
        return True
    if row.daily_count > 0 and row.recall_count == 0 and row.grounded_count == 0:
        return False
    return row.last_recalled_at is not None and row.last_recalled_at >= cutoff_ms


def source_exists(workspace: Path, rel: str) -> bool:
    path = workspace / rel
    return path.is_file() and not path.is_symlink()


@dataclass
class Merged:
    """An entry with the near-duplicates Light or REM folded into it (OpenClaw's ``dedupeEntries``)."""

    row: RecallRow
    recall_count: int
    total_score: float
    recall_days: list[str]
    concept_tags: list[str]
    source_keys: list[str] = field(default_factory=list)

    @property
    def average_score(self) -> float:
        signals = self.recall_count + self.row.daily_count + self.row.grounded_count
        return max(0.0, min(1.0, self.total_score / signals)) if signals > 0 else 0.0


def dedupe(rows: Sequence[RecallRow], threshold: float) -> list[Merged]:
    """Merge near-duplicates within one path (the first entry is kept and absorbs the others)."""
    kept: list[Merged] = []
    for row in rows:
        dup = next(
            (m for m in kept if m.row.path == row.path and text_similarity(m.row.snippet, row.snippet) >= threshold),
            None,
        )
        if dup is not None:
            dup.source_keys.append(row.entry_key)
            dup.recall_count = max(dup.recall_count, row.recall_count)
            dup.total_score = max(dup.total_score, row.total_score)
            dup.recall_days = sorted({*dup.recall_days, *row.recall_days})
            dup.concept_tags = list(dict.fromkeys([*dup.concept_tags, *row.concept_tags]))
            continue
        kept.append(
            Merged(
                row, row.recall_count, row.total_score, list(row.recall_days), list(row.concept_tags), [row.entry_key]
            )
        )
    return kept


def covered_by_diary(snippet: str, diary_entries: Sequence[str]) -> bool:
    text = " ".join(snippet.lower().split())
    if not text:
        return False
    return any(
        text in " ".join(d.lower().split()) or text_similarity(snippet, d) >= DIARY_COVERAGE_SIMILARITY
        for d in diary_entries
    )


def run_light(
    rows: Sequence[RecallRow],
    *,
    workspace: Path,
    now_ms: int,
    lookback_days: float,
    limit: int,
    dedupe_similarity: float,
    diary_entries: Sequence[str],
    file_origins: Mapping[str, str] | None = None,
    display: Callable[[RecallRow], str] | None = None,
) -> LightReport:
    """Stage recent entries; ``file_origins`` (path → file-level origin) quarantines whole files;
    ``display`` gives the text a ``- Candidate:`` line shows (default: the snippet, cleaned)."""
    cutoff = lookback_cutoff(now_ms, lookback_days)
    recent = [
        r
        for r in rows
        if within_lookback(r, cutoff)
        and (
            r.light_hits <= 0
            or r.last_light_at is None
            or (r.last_recalled_at is not None and r.last_recalled_at > r.last_light_at)
        )
        and source_exists(workspace, r.path)
        and not phase_excluded(r.path, r.origin_class, r.session_kind, (file_origins or {}).get(r.path))
    ]
    recent.sort(key=lambda r: (-(r.last_recalled_at or 0), -r.recall_count))
    merged = dedupe(recent, dedupe_similarity)
    recent_diary = list(diary_entries)[:DIARY_HISTORY_LIMIT]
    if recent_diary:
        fresh = [m for m in merged if not covered_by_diary(m.row.snippet, recent_diary)]
        covered = [m for m in merged if covered_by_diary(m.row.snippet, recent_diary)]
        merged = fresh + covered
    capped = merged[: max(0, limit)]
    staged = tuple(
        StagedEntry(
            key=m.row.entry_key,
            path=m.row.path,
            start_line=m.row.start_line,
            end_line=m.row.end_line,
            snippet=m.row.snippet,
            confidence=m.average_score,
            recall_count=m.recall_count,
            source_keys=tuple(m.source_keys),
        )
        for m in capped
    )
    shown = {m.row.entry_key: (display or (lambda r: display_snippet(r.snippet)))(m.row) for m in capped}
    return LightReport(considered=len(recent), staged=staged, body_lines=tuple(light_body(staged, shown)))


def display_snippet(snippet: str) -> str:
    """A recall snippet as a report line shows it: comments and leading bullets removed (no ``- - x``)."""
    text = re.sub(r"<!--[\s\S]*?-->", " ", snippet)
    return " ".join(re.sub(r"^(?:[-*+]\s+)+", "", text.strip()).split())


def light_body(staged: Sequence[StagedEntry], shown: Mapping[str, str] | None = None) -> list[str]:
    if not staged:
        return ["- No notable updates."]
    lines: list[str] = []
    for s in staged:
        text = (shown or {}).get(s.key) or display_snippet(s.snippet)
        lines += [
            f"- Candidate: {text or '(no snippet captured)'}",
            f"  - confidence: {s.confidence:.2f}",
            f"  - evidence: {s.path}:{s.start_line}-{s.end_line}",
            f"  - recalls: {s.recall_count}",
            "  - status: staged",
        ]
    return lines
