"""The state a forget passes between its participants: what was selected, the workspace files as
read, and what each participant found (planning), then what a run did (execution)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import apsw
from clawmem.engine.forget.plan import (
    ChunkItem,
    EntryItem,
    FileChange,
    LineItem,
    OriginItem,
    RecallItem,
    Refusal,
    SegmentItem,
    SessionResolution,
    StateItem,
    Survivor,
)
from clawmem.engine.store import dreaming_rows, index_rows
from clawmem.engine.store import sessions_rows as srows
from clawmem.engine.workspace.reading import sha256_bytes


@dataclass
class MemoryFile:
    """A workspace file as read at planning time, and the lines the participants mark for removal."""

    rel: str
    path: Path
    data: bytes
    lines: list[str]  # decoded line texts (no newline), numbered like the index
    corpus: bool
    remove: dict[int, str] = field(default_factory=dict)  # line -> reason, in the order it was marked

    @property
    def sha(self) -> str:
        return sha256_bytes(self.data)


@dataclass
class Draft:
    """A forget being planned. The service fills the selection; each participant then writes only
    its own fields (grouped below by participant) and reads those of participants before it."""

    conn: apsw.Connection
    agent: str
    workspace: Path
    extra_paths: tuple[str, ...]
    max_file_bytes: int
    selectors: tuple[str, ...]
    resolutions: tuple[SessionResolution, ...]
    purge: bool
    refusals: list[Refusal] = field(default_factory=list)
    kept: dict[str, list[Survivor]] = field(default_factory=dict)  # participant name -> its survivors
    files: list[MemoryFile] = field(default_factory=list)
    by_rel: dict[str, MemoryFile] = field(default_factory=dict)
    # origins
    entry_keys: tuple[str, ...] = ()
    mixed: tuple[str, ...] = ()
    sessions_of: dict[str, list[str]] = field(default_factory=dict)  # entry key -> sessions its rows name
    entry_origins: list[srows.OriginRow] = field(default_factory=list)  # every row of the entry keys
    keyed: set[str] = field(default_factory=set)  # entry keys with any origin row of this agent
    origin_items: list[OriginItem] = field(default_factory=list)
    origin_count: int = 0
    # transcripts
    transcript_probes: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)  # normalized texts other sessions own
    events: int = 0
    # flush segments
    segments: list[SegmentItem] = field(default_factory=list)
    # curated entries
    entries: list[EntryItem] = field(default_factory=list)
    untargetable: list[str] = field(default_factory=list)
    observed: dict[str, int] = field(default_factory=dict)  # curated file -> newest origin observed_at
    # memory files
    probes: list[str] = field(default_factory=list)  # the selected snippets
    new_bytes: dict[str, bytes | None] = field(default_factory=dict)  # None: delete the file
    changes: list[FileChange] = field(default_factory=list)
    line_items: list[LineItem] = field(default_factory=list)
    # index
    chunks: list[ChunkItem] = field(default_factory=list)
    sources: list[tuple[str, str]] = field(default_factory=list)  # (path, source) rows that exist
    vectors: set[str] = field(default_factory=set)
    cache_hashes: list[str] = field(default_factory=list)  # texts no surviving chunk holds
    # embedding cache
    cache_rows: list[index_rows.CacheRow] = field(default_factory=list)
    # recall store
    recall_items: list[RecallItem] = field(default_factory=list)
    # dreaming candidates
    ledger: list[dreaming_rows.LedgerRow] = field(default_factory=list)
    # dreaming review
    state: list[StateItem] = field(default_factory=list)
    proposal_ids: list[str] = field(default_factory=list)
    preimage_keys: list[str] = field(default_factory=list)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.session_id for r in self.resolutions)

    @property
    def live(self) -> list[str]:
        return [r.session_id for r in self.resolutions if r.source == "live"]

    @property
    def recall_keys(self) -> list[str]:
        return [r.entry_key for r in self.recall_items]

    @property
    def deleted_files(self) -> set[str]:
        return {rel for rel, b in self.new_bytes.items() if b is None}

    def keep(self, participant: str, survivor: Survivor) -> None:
        self.kept.setdefault(participant, []).append(survivor)


@dataclass
class Run:
    """A forget being executed: the draft it plans from, and what the deletes report back."""

    draft: Draft
    now: int
    refusals: list[Refusal]  # the plan's, plus files that changed during the run
    reindex: set[str] = field(default_factory=set)  # memory files to re-index afterwards


@dataclass(frozen=True)
class ResidualQuery:
    """What the residual check looks for: the snippets, and records of these sessions and entries."""

    conn: apsw.Connection
    agent: str
    workspace: Path
    extra_paths: tuple[str, ...]
    probes: list[str]
    session_ids: tuple[str, ...]
    entry_keys: tuple[str, ...]
    cache_hashes: tuple[str, ...]
    purge: bool
