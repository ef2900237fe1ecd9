"""What Dreaming returns across the engine/UI wall (frozen dataclasses only).

Times are ISO 8601 UTC strings with milliseconds (``2026-11-05T09:00:00.000Z``), the form
OpenClaw writes into DREAMS.md.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from clawmem.engine.kinds import ProposalStatus


@dataclass(frozen=True)
class Components:
    """The six Deep ranking components, each clamped to [0, 1] (docs/memory-core.md §5 Ranking)."""

    frequency: float
    relevance: float
    diversity: float
    recency: float
    consolidation: float
    conceptual: float


@dataclass(frozen=True)
class GateCheck:
    """One promotion gate: what was needed, what the entry has, and whether it passes."""

    name: str  # short-term-path, origin, session, snippet, promoted, rejected, signals, unique-queries, age, score,
    # limit
    passed: bool
    actual: str
    needed: str
    detail: str  # one plain sentence, e.g. "2 unique queries of 3 needed"


@dataclass(frozen=True)
class CandidateExplanation:
    """Everything `dream explain` shows for one recall entry."""

    key: str
    path: str
    start_line: int
    end_line: int
    snippet: str
    origin_class: str
    session_kind: str
    recall_count: int
    daily_count: int
    grounded_count: int
    signal_count: int
    unique_queries: int
    recall_days: tuple[str, ...]
    concept_tags: tuple[str, ...]
    avg_score: float
    max_score: float
    age_days: float
    components: Components
    weights: Components  # what each component counts for in the score (deep.WEIGHTS)
    weighted: Components  # each component times its weight
    light_hits: int
    rem_hits: int
    light_boost: float
    rem_boost: float
    phase_boost: float
    score: float
    gates: tuple[GateCheck, ...]
    status: str  # promotable | excluded | below-gates | beyond-limit | promoted | rejected
    reason: str  # one plain line
    rank: int | None  # 1-based position among gate-passing candidates
    promoted_at: str | None
    last_recalled_at: str | None
    # What promotion would write (set by `dream explain` / the candidate list, which read the file):
    promoted_text: str | None = None
    promoted_source: str | None = None  # path#La-Lb of promoted_text
    focus_detail: str | None = None  # why those lines (engine.dreaming.focus)
    line_matches: tuple[tuple[int, int], ...] = ()  # (file line, distinct recalling queries that matched it)

    @property
    def promotable(self) -> bool:
        return self.status == "promotable"

    @property
    def source(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"


@dataclass(frozen=True)
class StagedEntry:
    """A Light candidate line (deduplicated within its file)."""

    key: str
    path: str
    start_line: int
    end_line: int
    snippet: str
    confidence: float
    recall_count: int
    source_keys: tuple[str, ...]


@dataclass(frozen=True)
class LightReport:
    considered: int  # entries inside the lookback before dedupe
    staged: tuple[StagedEntry, ...]
    body_lines: tuple[str, ...]


@dataclass(frozen=True)
class Theme:
    tag: str
    strength: float  # REM pattern strength: min(1, 2 × memories with the tag / memories considered)
    count: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Truth:
    key: str
    snippet: str
    confidence: float
    evidence: str


@dataclass(frozen=True)
class RemReport:
    considered: int
    used_light_staging: bool
    themes: tuple[Theme, ...]
    truths: tuple[Truth, ...]
    body_lines: tuple[str, ...]


@dataclass(frozen=True)
class Operation:
    """One candidate's place in a proposed MEMORY.md rewrite."""

    action: str  # added | merged | superseded
    candidate_key: str
    path: str
    start_line: int
    end_line: int
    snippet: str
    score: float
    components: Components
    signal_count: int
    recall_count: int
    unique_queries: int
    avg_score: float
    result_entry: str  # the exact MEMORY.md line written
    prior_entries: tuple[str, ...]  # exact prior lines it replaces (merged / superseded)
    lineage_key: str | None
    project_key: str | None
    concept_tags: tuple[str, ...]
    # The recall entry's whole chunk as rehydrated (start_line..end_line above may be the part of it
    # the recalls matched); approval re-checks the live file against it. None in older proposals.
    chunk_start_line: int | None = None
    chunk_end_line: int | None = None
    chunk_snippet: str | None = None

    @property
    def source(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"


@dataclass(frozen=True)
class NotPromoted:
    """A ranked candidate that Deep did not put into the rewrite, and why."""

    key: str
    category: str  # origin | consolidation origin/session | contamination | already promoted | rejected |
    # selection limit | source rehydration | source changed | already in MEMORY.md | duplicate | memory budget |
    # superseded (its entry is marked superseded: an old fact)
    reason: str


@dataclass(frozen=True)
class Proposal:
    id: str
    run_id: str | None
    created_at: str
    status: ProposalStatus
    mode: str  # rewrite (consolidation) | append (the append-only fallback)
    base_sha256: str
    before_text: str
    after_text: str
    result_sha256: str | None
    operations: tuple[Operation, ...]
    added: int
    merged: int
    superseded: int
    highlights: tuple[str, ...]
    fallback_reason: str | None
    reason: str | None
    decided_at: str | None

    @property
    def short_id(self) -> str:
        return self.id[:8]

    def diff(self, context: int = 3) -> str:
        """Unified diff of MEMORY.md, before → after."""
        return unified_diff(self.before_text, self.after_text, context=context)


def unified_diff(before: str, after: str, *, context: int = 3, a: str = "MEMORY.md", b: str = "MEMORY.md") -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{a}", f"b/{b}", n=context
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


@dataclass(frozen=True)
class DeepReport:
    candidates: tuple[CandidateExplanation, ...]  # every gate-passing entry, ranked
    selected: tuple[str, ...]  # keys within the deep limit
    operations: tuple[Operation, ...]
    not_promoted: tuple[NotPromoted, ...]
    mode: str | None  # rewrite | append | None (nothing to write)
    fallback_reason: str | None  # why the consolidated rewrite was not used
    skipped_reason: str | None  # why MEMORY.md stays unchanged although candidates exist
    body_lines: tuple[str, ...]


@dataclass(frozen=True)
class ApplyResult:
    proposal: Proposal
    applied: bool
    message: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class RevertResult:
    proposal_id: str
    reverted: bool
    message: str
    preimage_text: str
    rewrite_text: str
    current_text: str | None  # None when MEMORY.md is missing
    warnings: tuple[str, ...] = ()  # done, with a part left undone (DREAMS.md's entry not written)


@dataclass(frozen=True)
class HistoryItem:
    """An applied (or since reverted) rewrite of MEMORY.md."""

    proposal_id: str
    status: str  # applied | reverted
    mode: str
    applied_at: str | None
    reverted_at: str | None
    added: int
    merged: int
    superseded: int
    result_sha256: str | None
    preimage_key: str | None
    preimage_available: bool
    is_current: bool  # MEMORY.md still has this rewrite's result hash


@dataclass(frozen=True)
class DreamRun:
    id: str
    started_at: str
    finished_at: str
    phases: tuple[str, ...]
    trigger: str
    ingested: int  # daily claims counted by this run's ingestion
    light: LightReport | None
    rem: RemReport | None
    deep: DeepReport | None
    proposal: Proposal | None
    applied: ApplyResult | None
    diary_entry: str
    dreams_path: str
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class ScheduledRun:
    """What `dream --at HH:MM` decided."""

    ran: bool
    reason: str
    run: DreamRun | None
