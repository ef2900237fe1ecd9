"""Lineage forget (docs/memory-core.md §7): a plan that shows every artifact, a run that deletes them, and a
residual check that proves nothing is left.

``plan(selectors)`` resolves each selector (a session id, or a session key: every session with
that key) and lists, without writing anything:

- **entries**: MEMORY.md entries whose origin rows point at a selected session, removed whole
  with their promotion and lineage markers (mixed-lineage entries too); a Dreaming section left
  empty loses its heading;
- **memory lines**: sections that name a selected ``Session ID`` (the session-memory note), the
  session's flush segments, and every other line (DREAMS.md, dreaming reports, notes, MEMORY.md)
  that contains a *selected snippet* — a 12+ character line of the session's transcript or of the
  text removed above, unless another session's transcript or flush has the same text; a
  ``memory/`` file left empty is deleted;
- the session corpus (``memory/.dreams/session-corpus/``) lines that carry a snippet or the id;
- **index**: every chunk of a changed file (re-indexed from the new text afterwards), stale
  chunks anywhere that still hold a snippet, the session's ``sessions`` chunks, their FTS and
  vector rows, and embedding-cache rows computed from text that held a snippet;
- **plugin state**: recall-store entries (by key, by line, by snippet), their daily-ingestion
  ledger rows (seen-hash scopes) and rejections; preimages and review-queue proposals that hold
  a snippet or a removed entry key (deleted: a rewrite whose preimage is gone cannot be reverted);
- **origins**: the origin rows of the removed entries and of the sessions, and their flush segments;
- what **survives** and why: transcripts (kept, as in OpenClaw, unless ``purge_transcripts``),
  USER.md (never edited), legacy entries without origin rows, other agents' rows, text that
  paraphrases the session.

``run(selectors)`` records tombstones (reason ``forgotten``) first, then deletes in the spec's
order — index and plugin state, memory files (atomic, hash-checked, removing whole lines only),
corpus, origins — re-indexes the changed files and searches every selected snippet in files,
chunks, FTS, the recall store, preimages, proposals and run reports: the residual check.

Each kind of artifact is a participant (engine/forget/participants.py, memory_files.py) with the
same three steps — plan, delete, residual; this service resolves the selectors, runs the
participants' steps in the orders below, and turns their findings into the plan and its
fingerprint.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING

import apsw
from clawmem.engine import recall_sharing
from clawmem.engine.errors import ClawmemError
from clawmem.engine.forget.draft import Draft, ResidualQuery, Run
from clawmem.engine.forget.memory_files import CuratedEntries, FlushSegments, MemoryFiles, SessionNotes, read_files
from clawmem.engine.forget.participants import (
    DreamingCandidates,
    DreamingReview,
    EmbeddingCache,
    IndexChunks,
    Origins,
    Participant,
    RecallStore,
    Transcripts,
)
from clawmem.engine.forget.plan import (
    ArtifactCounts,
    CacheItem,
    CuratedWrite,
    ForgetPlan,
    ForgetResult,
    LedgerItem,
    LineItem,
    ResidualHit,
    SessionResolution,
    Survivor,
)
from clawmem.engine.forget.text import CURATED
from clawmem.engine.openclaw.forget import RESOLVED_AS, forget_commands
from clawmem.engine.sessions import trust
from clawmem.engine.store import sessions_rows as srows
from clawmem.engine.store.postgres import vector_rows
from clawmem.engine.store.postgres.connect import StoreUnavailable
from clawmem.engine.times import iso_ms

if TYPE_CHECKING:
    from clawmem.engine.openclaw.home import OpenClawHome
    from clawmem.engine.openclaw.sessions import OpenClawSession
    from clawmem.engine.runtime import Reindexer, Runtime

__all__ = ["ForgetPlan", "ForgetResult", "ForgetService", "plan_lines_by_reason", "refuse_unresolved"]

PARAPHRASE = Survivor(
    "text that paraphrases the session",
    "any file",
    "forget removes tracked entries, the session's own lines and exact copies of its text",
)


class ForgetService:
    """``openclaw``: the OpenClaw home whose sessions may be selected too (engine/openclaw/forget.py
    says what forgetting one of them removes, and what stays with OpenClaw)."""

    def __init__(self, runtime: Runtime, reindexer: Reindexer, openclaw: OpenClawHome | None = None) -> None:
        self.runtime = runtime
        self.reindexer = reindexer
        self.openclaw = openclaw
        origins, transcripts, segments = Origins(), Transcripts(), FlushSegments()
        entries, notes, files = CuratedEntries(), SessionNotes(), MemoryFiles()
        index, cache, recall = IndexChunks(), EmbeddingCache(), RecallStore()
        candidates, review = DreamingCandidates(), DreamingReview()
        # Planning: origins name the entries; transcripts, segments, entries and notes mark what is
        # the sessions' own; the memory files select the snippets from it; the rest search for them.
        self.planning: tuple[Participant, ...] = (
            origins,
            transcripts,
            segments,
            entries,
            notes,
            files,
            index,
            cache,
            recall,
            candidates,
            review,
        )
        # The plan lists what survives in this order (the spec's, and the fingerprint's).
        self.keeping: tuple[Participant, ...] = (files, index, origins, transcripts, entries)
        # Deleting: index and plugin state in one transaction, the files, then the provenance.
        self.state_deletes: tuple[Participant, ...] = (index, cache, recall, candidates, review)
        self.provenance_deletes: tuple[Participant, ...] = (origins, segments, notes, transcripts)
        self.files = files
        self._theirs: tuple[OpenClawSession, ...] | None = None
        self.checking: tuple[Participant, ...] = (files, index, cache, recall, review, origins, segments, transcripts)

    @property
    def _conn(self) -> apsw.Connection:
        return self.runtime.store.conn()

    # ------------------------------------------------------------------------------ resolution

    def resolve(self, selectors: Sequence[str]) -> tuple[SessionResolution, ...]:
        conn = self._conn
        out: list[SessionResolution] = []
        seen: set[str] = set()
        for raw in selectors:
            sel = raw.strip()
            found: list[SessionResolution] = []
            w = srows.get_window(conn, sel)
            if w is not None:
                found.append(SessionResolution(sel, w.session_id, w.session_key, "live", w.kind, w.event_count))
            elif theirs := [s for s in self._openclaw_sessions() if sel in (s.session_id, s.session_key)]:
                found.extend(
                    SessionResolution(sel, s.session_id, s.session_key, RESOLVED_AS, s.kind, s.event_count)
                    for s in theirs
                )
            else:
                found.extend(
                    SessionResolution(sel, k.session_id, k.session_key, "live", k.kind, k.event_count)
                    for k in srows.windows_by_key(conn, sel)
                )
                archived_key = srows.known_origin_session(conn, sel)
                segs = srows.segments_for_sessions(conn, [sel])
                if not found and (archived_key is not None or segs or srows.tombstone(conn, sel) is not None):
                    key = archived_key or (segs[0].session_key if segs else None)
                    found.append(SessionResolution(sel, sel, key or None, "archived", None, 0))
                if not found:
                    found.extend(
                        SessionResolution(sel, sid, sel, "archived", None, 0)
                        for sid in srows.origin_sessions_with_key(conn, sel)
                    )
            if not found:
                found.append(SessionResolution(sel, sel, None, "unresolved", None, 0))
            for r in found:
                if r.session_id not in seen:
                    seen.add(r.session_id)
                    out.append(r)
        return tuple(out)

    def _openclaw_sessions(self) -> tuple[OpenClawSession, ...]:
        """The OpenClaw agent's sessions (read once per forget), or none without a home."""
        if self.openclaw is None:
            return ()
        if self._theirs is None:
            self._theirs = self.openclaw.sessions()
        return self._theirs

    # ------------------------------------------------------------------------------------ plan

    def plan(self, selectors: Sequence[str], *, purge_transcripts: bool = False) -> ForgetPlan:
        """What a forget of these sessions would delete and keep; writes nothing."""
        return self._compute(selectors, purge_transcripts)[1]

    def _compute(self, selectors: Sequence[str], purge: bool) -> tuple[Draft, ForgetPlan]:
        """Resolve the selectors, read the files, let every participant plan, and seal the plan."""
        cleaned = tuple(dict.fromkeys(s.strip() for s in selectors if s.strip()))
        if not cleaned:
            raise ClawmemError("give at least one --session ID or KEY (see `clawmem session list`)")
        self.runtime.require_workspace()
        self._theirs = None  # OpenClaw's sessions are read afresh for every plan
        settings = self.runtime.settings
        draft = Draft(
            conn=self._conn,
            agent=settings.agent_id,
            workspace=self.runtime.workspace,
            extra_paths=tuple(settings.index.extra_paths),
            max_file_bytes=settings.index.max_file_bytes,
            selectors=cleaned,
            resolutions=self.resolve(cleaned),
            purge=purge,
        )
        shared = self.runtime.shared
        if shared is not None and not self.runtime.store.read_only:
            # the recall entries other machines' searches made are forgotten too (engine/recall_sharing.py)
            recall_sharing.catch_up(self._conn, shared)
        read_files(draft)
        for participant in self.planning:
            participant.plan(draft)
        return draft, self._seal(draft)

    def _seal(self, draft: Draft) -> ForgetPlan:
        """The plan of a planned draft, with its fingerprint (a digest of every field)."""
        changes, changed = draft.changes, {c.path for c in draft.changes}
        survives = [s for p in self.keeping for s in draft.kept.get(p.name, [])] + [PARAPHRASE]
        theirs = [r for r in draft.resolutions if r.source == RESOLVED_AS]
        commands = forget_commands(
            self.openclaw.agent_id if self.openclaw else draft.agent, [r.session_key or r.session_id for r in theirs]
        )
        if theirs:
            survives.append(
                Survivor(
                    "OpenClaw's own copy: the transcript, its index and recall store, the files its agent wrote",
                    ", ".join(r.session_key or r.session_id for r in theirs),
                    f"clawmem never deletes from OpenClaw's databases; OpenClaw removes them: {commands[-1]}",
                )
            )
        curated = tuple(
            CuratedWrite(rel, iso_ms(draft.observed[rel]) if draft.observed.get(rel) else None)
            for rel in CURATED
            if rel in changed
        )
        counts = ArtifactCounts(
            memory_files=sum(1 for c in changes if not c.corpus),
            memory_entries=len(draft.entries),
            memory_lines=sum(c.lines_removed for c in changes if not c.corpus),
            session_corpus_files=sum(1 for c in changes if c.corpus),
            session_corpus_lines=sum(c.lines_removed for c in changes if c.corpus),
            index_chunks=len(draft.chunks),
            index_sources=len(draft.sources),
            fts_rows=len(draft.chunks),
            vector_rows=len(draft.vectors),
            embedding_cache_rows=len(draft.cache_rows),
            short_term_entries=len(draft.recall_items),
            seen_hash_scopes=len(draft.ledger),
            backups=len(draft.preimage_keys),
            origin_rows=draft.origin_count,
            proposals=len(draft.proposal_ids),
            flush_segments=len(draft.segments),
            transcript_events=draft.events,
        )
        plan = ForgetPlan(
            agent_id=draft.agent,
            dry_run=True,
            selectors=draft.selectors,
            session_ids=draft.ids,
            resolutions=draft.resolutions,
            entry_keys=draft.entry_keys,
            mixed_lineage_entry_keys=draft.mixed,
            untargetable_entry_keys=tuple(dict.fromkeys(draft.untargetable)),
            curated_writes=curated,
            refusals=tuple(draft.refusals),
            artifacts=counts,
            files=tuple(changes),
            entries=tuple(draft.entries),
            lines=tuple(draft.line_items),
            chunks=tuple(draft.chunks),
            index_sources=tuple(draft.sources),
            cache_rows=tuple(CacheItem(c.provider, c.model, c.hash) for c in draft.cache_rows),
            recall_entries=tuple(draft.recall_items),
            seen_hash_scopes=tuple(LedgerItem(r.day, r.path, r.claim_key) for r in draft.ledger),
            state=tuple(draft.state),
            origin_rows=tuple(dict.fromkeys(draft.origin_items)),
            segments=tuple(draft.segments),
            survives=tuple(survives),
            snippets=tuple(draft.probes),
            purge_transcripts=draft.purge,
            fingerprint="",
            openclaw_commands=commands,
        )
        digest = hashlib.sha256(json.dumps(asdict(plan), sort_keys=True, default=str).encode("utf-8")).hexdigest()
        return replace(plan, fingerprint=digest[:16])

    # ------------------------------------------------------------------------------------- run

    def run(
        self,
        selectors: Sequence[str],
        *,
        purge_transcripts: bool = False,
        expected: ForgetPlan | None = None,
        allow_unresolved: bool = False,
    ) -> ForgetResult:
        """Forget the sessions: tombstones, then index and plugin state, memory files, corpus and
        origins, then a re-index of the changed files and the residual check.

        ``expected``: the plan the user confirmed; if anything changed since, nothing is done.
        A selector that names no known session (a typo) is refused and nothing is written, unless
        ``allow_unresolved``: then its id is tombstoned, so a session that arrives later with
        that id is refused on import.
        """
        self.runtime.store.require_writable()  # before any file is touched
        lock = self.runtime.lock("dreaming", timeout=5.0)
        if not lock.acquire():
            raise ClawmemError("a Dreaming run or review is in progress for this agent; try again shortly")
        try:
            return self._run(selectors, purge_transcripts, expected, allow_unresolved)
        finally:
            lock.release()

    def _run(
        self, selectors: Sequence[str], purge: bool, expected: ForgetPlan | None, allow_unresolved: bool
    ) -> ForgetResult:
        draft, plan = self._compute(selectors, purge)
        if not allow_unresolved:
            refuse_unresolved(plan)
        if expected is not None and expected.fingerprint != plan.fingerprint:
            raise ClawmemError("the memory changed since the preview; nothing was deleted — preview again")
        agent = self.runtime.settings.agent_id
        run = Run(draft, int(self.runtime.clock.timestamp() * 1000), list(plan.refusals))
        warnings: list[str] = []

        # 1. Tombstones first.
        tombstoned: list[str] = []
        with self.runtime.store.write() as conn:
            for sid in plan.session_ids:
                if srows.insert_tombstone(conn, sid, agent, "forgotten", run.now):
                    tombstoned.append(sid)

        # 2. Index and plugin state.
        with self.runtime.lock("reindex", timeout=30.0), self.runtime.store.write() as conn:
            for participant in self.state_deletes:
                participant.delete(conn, run)
        shared = self.runtime.shared
        if shared is not None:  # the shared journal's observations of them (and word to the others), the shared cache
            try:
                recall_sharing.forget(self._conn, shared, draft.recall_keys, draft.cache_hashes, run.now)
                with shared.connection() as pg:
                    vector_rows.cache_delete(pg, list(draft.cache_hashes))
            except StoreUnavailable as exc:
                warnings.append(f"the shared index still holds some of it ({exc}); forget again later")

        # 3–4. Memory files, then the session corpus: whole lines only, hash-checked, a transaction each.
        self.files.delete(self._conn, run)

        # 5. Origins (and the sessions' provenance records) last.
        with self.runtime.store.write() as conn:
            for participant in self.provenance_deletes:
                participant.delete(conn, run)

        # Re-index what changed, so search and the context preview see the new text at once.
        if run.reindex:
            try:
                self.reindexer.sync(only=run.reindex, embed=False, lock_timeout=30.0)
            except ClawmemError as exc:
                warnings.append(f"the index was not refreshed ({exc}); the next sync will do it")
        residual = self.residual(
            plan.snippets,
            plan.session_ids,
            plan.entry_keys,
            cache_hashes=run.draft.cache_hashes,
            recall_keys=draft.recall_keys,
            purge=purge,
        )
        final = replace(plan, dry_run=False, refusals=tuple(run.refusals))
        return ForgetResult(final, tuple(tombstoned), tuple(run.refusals), tuple(warnings), residual)

    # -------------------------------------------------------------------------------- residual

    def residual(
        self,
        snippets: Sequence[str],
        session_ids: Sequence[str],
        entry_keys: Sequence[str] = (),
        *,
        cache_hashes: Iterable[str] = (),
        recall_keys: Sequence[str] = (),
        purge: bool = False,
    ) -> tuple[ResidualHit, ...]:
        """Every place a selected snippet (or a record of the sessions) is still found; with a
        shared index, also the forgotten recall entries' observations left in its journal."""
        query = ResidualQuery(
            conn=self._conn,
            agent=self.runtime.settings.agent_id,
            workspace=self.runtime.workspace,
            extra_paths=tuple(self.runtime.settings.index.extra_paths),
            probes=[p for p in snippets if len(p) >= trust.MIN_SNIPPET_CHARS],
            session_ids=tuple(session_ids),
            entry_keys=tuple(entry_keys),
            cache_hashes=tuple(cache_hashes),
            purge=purge,
        )
        hits = [hit for participant in self.checking for hit in participant.residual(query)]
        shared = self.runtime.shared
        if shared is not None:
            with contextlib.suppress(StoreUnavailable):  # unreachable: the run's warning says so
                for key, n in sorted(recall_sharing.residual(shared, list(recall_keys)).items()):
                    hits.append(ResidualHit("recall-journal", key, key, f"{n} observation(s) on {shared.where}"))
                with shared.connection() as pg:
                    for provider, model, h in vector_rows.cache_keys(pg, list(query.cache_hashes)):
                        where = f"shared {provider}/{model} {h[:12]}"
                        hits.append(ResidualHit("embedding-cache", where, "", "a vector computed from forgotten text"))
        return tuple(hits)


def unresolved_selectors(plan: ForgetPlan) -> tuple[str, ...]:
    """Selectors that name no imported, archived or tombstoned session (typos, unknown keys)."""
    return tuple(dict.fromkeys(r.selector for r in plan.resolutions if r.source == "unresolved"))


def refuse_unresolved(plan: ForgetPlan, hint: str | None = None) -> None:
    """Raise a one-line error naming every unresolved selector (nothing has been written)."""
    unknown = unresolved_selectors(plan)
    if unknown:
        more = f" — {hint}" if hint else ""
        raise ClawmemError(
            f"no session matches {', '.join(unknown)} (see `clawmem session list`); nothing was forgotten{more}"
        )


def plan_lines_by_reason(plan: ForgetPlan) -> dict[str, list[LineItem]]:
    """The plan's lines grouped by why they go (for displays)."""
    out: dict[str, list[LineItem]] = {}
    for item in plan.lines:
        out.setdefault(item.reason, []).append(item)
    return out
