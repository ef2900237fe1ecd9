"""What a lineage forget shows and returns: the plan (every artifact it would remove, what
survives and why, its fingerprint), the result of a run and the residual check's hits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clawmem.engine.json_form import json_form


@dataclass(frozen=True)
class SessionResolution:
    selector: str
    session_id: str
    session_key: str | None
    source: str  # live | archived | unresolved | openclaw (read in place from its agent database)
    kind: str | None
    event_count: int


@dataclass(frozen=True)
class LineItem:
    path: str
    line: int  # 1-based, in the file as it is now
    text: str
    reason: str  # entry | section | segment | snippet | heading | corpus


@dataclass(frozen=True)
class EntryItem:
    entry_key: str
    path: str
    start_line: int  # first marker line
    end_line: int
    text: str
    sessions: tuple[str, ...]  # every session its origin rows name
    mixed: bool  # also derived from sessions that are not being forgotten


@dataclass(frozen=True)
class FileChange:
    path: str
    action: str  # rewrite | delete
    base_sha256: str
    lines_removed: int  # lines with text (blank lines between them go too, unlisted)
    corpus: bool


@dataclass(frozen=True)
class ChunkItem:
    chunk_id: str
    path: str
    source: str
    start_line: int
    end_line: int
    has_vector: bool
    holds_text: bool  # its text holds a selected snippet (its cached embedding is deleted too)


@dataclass(frozen=True)
class CacheItem:
    provider: str
    model: str
    hash: str


@dataclass(frozen=True)
class RecallItem:
    entry_key: str
    path: str
    start_line: int
    end_line: int
    snippet: str
    why: str  # entry key | removed lines | snippet | file deleted


@dataclass(frozen=True)
class LedgerItem:
    day: str
    path: str
    claim_key: str


@dataclass(frozen=True)
class StateItem:
    """A preimage or a review-queue proposal that holds forgotten text."""

    kind: str  # preimage | proposal
    key: str  # preimage key or proposal id
    proposal_id: str
    status: str | None  # the proposal's status


@dataclass(frozen=True)
class OriginItem:
    entry_key: str
    session_id: str
    session_key: str | None
    origin_class: str


@dataclass(frozen=True)
class SegmentItem:
    path: str
    seq: int
    session_id: str
    kind: str
    line_start: int | None
    line_end: int | None


@dataclass(frozen=True)
class CuratedWrite:
    relative_path: str
    observed_at: str | None


@dataclass(frozen=True)
class Survivor:
    what: str
    where: str
    reason: str


@dataclass(frozen=True)
class Refusal:
    what: str
    reason: str


@dataclass(frozen=True)
class ArtifactCounts:
    memory_files: int = 0
    memory_entries: int = 0
    memory_lines: int = 0
    session_corpus_files: int = 0
    session_corpus_lines: int = 0
    index_chunks: int = 0
    index_sources: int = 0
    fts_rows: int = 0
    vector_rows: int = 0
    embedding_cache_rows: int = 0
    short_term_entries: int = 0
    seen_hash_scopes: int = 0
    backups: int = 0
    origin_rows: int = 0
    proposals: int = 0
    flush_segments: int = 0
    transcript_events: int = 0

    def spec(self) -> dict[str, int]:
        """The spec's ``artifacts`` object (camelCase, its fields only)."""
        return {
            "memoryFiles": self.memory_files,
            "memoryEntries": self.memory_entries,
            "memoryLines": self.memory_lines,
            "sessionCorpusFiles": self.session_corpus_files,
            "sessionCorpusLines": self.session_corpus_lines,
            "indexChunks": self.index_chunks,
            "indexSources": self.index_sources,
            "ftsRows": self.fts_rows,
            "vectorRows": self.vector_rows,
            "embeddingCacheRows": self.embedding_cache_rows,
            "shortTermEntries": self.short_term_entries,
            "seenHashScopes": self.seen_hash_scopes,
            "backups": self.backups,
            "originRows": self.origin_rows,
        }


@dataclass(frozen=True)
class ForgetPlan:
    agent_id: str
    dry_run: bool
    selectors: tuple[str, ...]
    session_ids: tuple[str, ...]
    resolutions: tuple[SessionResolution, ...]
    entry_keys: tuple[str, ...]
    mixed_lineage_entry_keys: tuple[str, ...]
    untargetable_entry_keys: tuple[str, ...]
    curated_writes: tuple[CuratedWrite, ...]
    refusals: tuple[Refusal, ...]
    artifacts: ArtifactCounts
    files: tuple[FileChange, ...]
    entries: tuple[EntryItem, ...]
    lines: tuple[LineItem, ...]
    chunks: tuple[ChunkItem, ...]
    index_sources: tuple[tuple[str, str], ...]  # (path, source)
    cache_rows: tuple[CacheItem, ...]
    recall_entries: tuple[RecallItem, ...]
    seen_hash_scopes: tuple[LedgerItem, ...]
    state: tuple[StateItem, ...]
    origin_rows: tuple[OriginItem, ...]
    segments: tuple[SegmentItem, ...]
    survives: tuple[Survivor, ...]
    snippets: tuple[str, ...]  # what the residual check searches for
    purge_transcripts: bool
    fingerprint: str
    openclaw_commands: tuple[str, ...] = ()  # OpenClaw's own forget of its selected sessions

    def report(self) -> dict[str, Any]:
        """The spec's dry-run JSON report (§7), camelCase, plus clawmem's ``details``."""
        return {
            "agentId": self.agent_id,
            "dryRun": self.dry_run,
            "sessionIds": list(self.session_ids),
            "sessionResolutions": [
                {"sessionId": r.session_id, "sessionKey": r.session_key, "source": r.source} for r in self.resolutions
            ],
            "entryKeys": list(self.entry_keys),
            "mixedLineageEntryKeys": list(self.mixed_lineage_entry_keys),
            "untargetableEntryKeys": list(self.untargetable_entry_keys),
            "curatedWrites": [
                {"relativePath": w.relative_path, "observedAt": w.observed_at} for w in self.curated_writes
            ],
            "refusals": [{"what": r.what, "reason": r.reason} for r in self.refusals],
            "artifacts": self.artifacts.spec(),
        }

    def details(self) -> dict[str, Any]:
        """clawmem's own part of the report: every file, entry, line, chunk and row the forget
        would touch, the OpenClaw commands that forget the same sessions there, and the fingerprint
        the apply checks the preview against."""
        return dict(
            json_form(
                {
                    "files": self.files,
                    "entries": self.entries,
                    "lines": self.lines,
                    "chunks": self.chunks,
                    "indexSources": [{"path": p, "source": s} for p, s in self.index_sources],
                    "cacheRows": self.cache_rows,
                    "recallEntries": self.recall_entries,
                    "seenHashScopes": self.seen_hash_scopes,
                    "state": self.state,
                    "originRows": self.origin_rows,
                    "segments": self.segments,
                    "survives": self.survives,
                    "openclawCommands": self.openclaw_commands,
                    "snippets": len(self.snippets),
                    "fingerprint": self.fingerprint,
                }
            )
        )


@dataclass(frozen=True)
class ResidualHit:
    where: str  # file | chunk | fts | embedding-cache | recall | recall-journal | preimage | proposal | run-report
    # | origin | segment | transcript
    location: str  # path:line, chunk id, entry key, preimage key, proposal id …
    snippet: str  # the selected snippet found (or what is left)
    excerpt: str
    note: str | None = None  # why it is expected (e.g. USER.md is never edited)


@dataclass(frozen=True)
class ForgetResult:
    plan: ForgetPlan
    tombstoned: tuple[str, ...]
    refusals: tuple[Refusal, ...]  # the plan's, plus files that changed during the run
    warnings: tuple[str, ...]
    residual: tuple[ResidualHit, ...]

    @property
    def residual_count(self) -> int:
        return len(self.residual)
