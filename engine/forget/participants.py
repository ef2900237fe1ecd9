"""The participants of a lineage forget: one per kind of artifact a session leaves in the store.

Each has the same three steps, which the service runs in a fixed order (engine/forget/service.py):
``plan`` (what it would remove, into the draft; what it keeps and why, by ``draft.keep``),
``delete`` (inside the transaction the service opened for its stage) and ``residual`` (what is
still found afterwards). A step a participant has nothing to do in is the no-op of the base class.
The file-side participants (memory files, flush segments, curated entries, session notes) are in
engine/forget/memory_files.py. SQL lives with each table's owner in engine/store/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import apsw
from clawmem.engine.forget.draft import Draft, ResidualQuery, Run
from clawmem.engine.forget.plan import ChunkItem, OriginItem, RecallItem, ResidualHit, StateItem, Survivor
from clawmem.engine.forget.text import NEVER_EDITED, USER_MD_NOTE, excerpt, first_match, holds, matches
from clawmem.engine.sessions import index as session_index
from clawmem.engine.sessions import trust
from clawmem.engine.store import dreaming_rows, index_rows, line_vector_rows, recall_rows
from clawmem.engine.store import sessions_rows as srows


class Participant:
    """One kind of artifact: plan it, delete it, look for what is left of it."""

    name = "participant"

    def plan(self, draft: Draft) -> None:
        """Find what this kind holds of the selected sessions (reads only)."""

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        """Delete what the plan listed, on ``conn`` (inside the stage's transaction)."""

    def residual(self, q: ResidualQuery) -> Iterator[ResidualHit]:
        """What is still found of the snippets or the sessions."""
        return iter(())


class Origins(Participant):
    """Origin rows (``memory_entry_origins``): which MEMORY.md entries the sessions produced.

    Planned first: every other participant works from the entry keys it finds."""

    name = "origins"

    def plan(self, draft: Draft) -> None:
        conn, agent, ids = draft.conn, draft.agent, draft.ids
        selected = set(ids)
        origin_rows = [o for o in srows.origins_for_sessions(conn, ids) if o.agent_id == agent]
        draft.entry_keys = tuple(dict.fromkeys(o.entry_key for o in origin_rows))
        draft.entry_origins = [o for o in srows.origins_for_entries(conn, draft.entry_keys) if o.agent_id == agent]
        for o in draft.entry_origins:
            draft.sessions_of.setdefault(o.entry_key, []).append(o.session_id)
        draft.mixed = tuple(k for k in draft.entry_keys if any(s not in selected for s in draft.sessions_of.get(k, [])))
        draft.keyed = srows.entry_keys_with_origins(conn, agent)
        items = [OriginItem(o.entry_key, o.session_id, o.session_key, o.origin_class) for o in draft.entry_origins]
        items += [
            OriginItem(o.entry_key, o.session_id, o.session_key, o.origin_class)
            for o in origin_rows
            if o.entry_key not in draft.entry_keys
        ]
        draft.origin_items = items
        draft.origin_count = srows.origin_row_count(conn, keys=draft.entry_keys, session_ids=ids, agent_id=agent)
        others = srows.other_agent_origin_count(conn, ids, agent)
        if others:
            draft.keep(
                self.name, Survivor(f"{others} origin row(s)", "other agents", "forget works on one agent's store")
            )

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        srows.delete_origins_for_entries(conn, run.draft.entry_keys, run.draft.agent)
        srows.delete_origins_for_sessions(conn, run.draft.ids, run.draft.agent)

    def residual(self, q: ResidualQuery) -> Iterator[ResidualHit]:
        for o in srows.origins_for_sessions(q.conn, q.session_ids):
            if o.agent_id == q.agent:
                yield ResidualHit("origin", o.entry_key, o.session_id, f"origin row of session {o.session_id}")
        for o in srows.origins_for_entries(q.conn, q.entry_keys):
            if o.agent_id == q.agent and o.session_id not in q.session_ids:
                yield ResidualHit("origin", o.entry_key, o.session_id, f"origin row of session {o.session_id}")


class Transcripts(Participant):
    """Transcript events and session windows: the sessions' words (the first snippets), kept unless
    purged; other sessions' words are protected (never deleted as snippets)."""

    name = "transcripts"

    def plan(self, draft: Draft) -> None:
        conn = draft.conn
        for sid in draft.live:
            for ev in srows.events(conn, sid):
                draft.transcript_probes.extend(trust.snippet_lines(str(json.loads(ev.event_json).get("text", ""))))
        draft.protected = [trust.normalize(t) for t in srows.event_texts_except(conn, draft.ids)]
        for res in draft.resolutions:
            if res.source != "live":
                continue
            if draft.purge:
                draft.events += res.event_count
            else:
                draft.keep(
                    self.name,
                    Survivor(
                        f"transcript of session {res.session_id} ({res.event_count} events)",
                        "session store",
                        "transcripts are kept, as in OpenClaw (the tombstone blocks re-import and re-indexing); "
                        "--purge-transcript deletes them",
                    ),
                )

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        if run.draft.purge:
            for sid in run.draft.ids:
                srows.delete_window(conn, sid)

    def residual(self, q: ResidualQuery) -> Iterator[ResidualHit]:
        if q.purge:
            for sid, seq, text in srows.transcript_fts_texts(q.conn, q.session_ids):
                yield ResidualHit("transcript", f"{sid}#{seq}", sid, excerpt(text))


class IndexChunks(Participant):
    """Index sources, chunks, their FTS and vector rows, and the session-index chunks.

    Whole sources go (a later sync re-indexes the file), so every chunk of a listed source is deleted."""

    name = "index"

    def plan(self, draft: Draft) -> None:
        changed = {c.path for c in draft.changes}
        chunks: list[ChunkItem] = []
        sources: list[tuple[str, str]] = []
        hashes: list[str] = []
        surviving: set[str] = set()
        session_paths = {session_index.session_path(s) for s in draft.ids}
        session_paths |= {session_index.openclaw_session_path(s) for s in draft.ids}
        for c in index_rows.chunk_texts(draft.conn):
            held = matches(c.text, draft.probes) is not None
            if c.source == "memory" and c.path in changed:
                f = draft.by_rel[c.path]
                take = True
                held = held or any(c.start_line <= n <= c.end_line for n in f.remove)
            elif c.source == session_index.SOURCE and c.path in session_paths:
                take, held = True, True
            elif held and c.path not in NEVER_EDITED:
                take = True  # stale: the file no longer holds it (or it is not indexed from a file)
            else:
                take = False
            if take:
                chunks.append(ChunkItem(c.id, c.path, c.source, c.start_line, c.end_line, False, held))
                if (c.path, c.source) not in sources:
                    sources.append((c.path, c.source))
                if held:
                    hashes.append(c.hash)
            else:
                surviving.add(c.hash)
                if held:
                    draft.keep(
                        self.name,
                        Survivor(
                            "an index chunk holding a selected snippet",
                            f"{c.path}:{c.start_line}-{c.end_line}",
                            "its file is USER.md, which forget never edits",
                        ),
                    )
        draft.vectors = index_rows.vector_ids(draft.conn, [c.chunk_id for c in chunks])
        draft.chunks = [
            ChunkItem(c.chunk_id, c.path, c.source, c.start_line, c.end_line, c.chunk_id in draft.vectors, c.holds_text)
            for c in chunks
        ]
        draft.cache_hashes = [h for h in dict.fromkeys(hashes) if h not in surviving]
        draft.sources = [s for s in sources if index_rows.source_exists(draft.conn, *s)]

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        index_rows.delete_sources(conn, run.draft.sources)
        index_rows.delete_chunk_ids(conn, [c.chunk_id for c in run.draft.chunks])
        run.reindex.update(p for p, s in run.draft.sources if s == "memory")

    def residual(self, q: ResidualQuery) -> Iterator[ResidualHit]:
        for c in index_rows.chunk_texts(q.conn):
            p = matches(c.text, q.probes)
            if p is not None or (
                c.source == session_index.SOURCE
                and any(
                    c.path in (session_index.session_path(s), session_index.openclaw_session_path(s))
                    for s in q.session_ids
                )
            ):
                note = USER_MD_NOTE if c.path in NEVER_EDITED else None
                where = f"{c.id} {c.path}:{c.start_line}-{c.end_line}"
                yield ResidualHit("chunk", where, p or "", excerpt(c.text, p), note)
        for cid, fts_path, text in index_rows.fts_texts(q.conn):
            p = matches(text, q.probes)
            if p is not None:
                note = USER_MD_NOTE if fts_path in NEVER_EDITED else None
                yield ResidualHit("fts", f"{cid} {fts_path}", p, excerpt(text, p), note)


class EmbeddingCache(Participant):
    """Embedding-cache rows and line vectors computed from text that held a snippet (the text
    hashes the index participant listed: no surviving chunk holds them)."""

    name = "embedding-cache"

    def plan(self, draft: Draft) -> None:
        draft.cache_rows = index_rows.cache_rows(draft.conn, draft.cache_hashes)

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        delete_cached_vectors(conn, run.draft.cache_hashes)

    def residual(self, q: ResidualQuery) -> Iterator[ResidualHit]:
        for row in index_rows.cache_rows(q.conn, q.cache_hashes):
            where = f"{row.provider}/{row.model} {row.hash[:12]}"
            yield ResidualHit("embedding-cache", where, "", "a vector computed from forgotten text")


def delete_cached_vectors(conn: apsw.Connection, hashes: list[str]) -> None:
    """The forgotten texts' line vectors and their cached chunk vectors."""
    wanted = list(dict.fromkeys(hashes))
    line_vector_rows.delete_hashes_present(conn, wanted)
    index_rows.delete_cache_hashes(conn, wanted)


class RecallStore(Participant):
    """Short-term recall entries and their query events: by entry key, by removed line, by snippet."""

    name = "recall"

    def plan(self, draft: Draft) -> None:
        for rr in recall_rows.all_rows(draft.conn):
            why: str | None = None
            if rr.entry_key in draft.entry_keys:
                why = "entry key"
            elif rr.path in draft.new_bytes and draft.new_bytes[rr.path] is None:
                why = "file deleted"
            elif rr.path in draft.by_rel and any(
                rr.start_line <= n <= rr.end_line for n in draft.by_rel[rr.path].remove
            ):
                why = "removed lines"
            elif matches(rr.snippet, draft.probes) is not None:
                why = "snippet"
            if why:
                draft.recall_items.append(
                    RecallItem(rr.entry_key, rr.path, rr.start_line, rr.end_line, rr.snippet, why)
                )

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        recall_rows.delete_recall(conn, run.draft.recall_keys)

    def residual(self, q: ResidualQuery) -> Iterator[ResidualHit]:
        for r in recall_rows.all_rows(q.conn):
            p = matches(r.snippet, q.probes)
            if p is not None or r.entry_key in q.entry_keys:
                yield ResidualHit("recall", r.entry_key, p or r.entry_key, excerpt(r.snippet, p))


class DreamingCandidates(Participant):
    """Dreaming's candidate state for the removed recall entries: daily-ingestion ledger rows
    (seen-hash scopes, also those of deleted files) and candidate rejections."""

    name = "dreaming-candidates"

    def plan(self, draft: Draft) -> None:
        keys, deleted = draft.recall_keys, draft.deleted_files
        draft.ledger = [r for r in dreaming_rows.ledger_rows(draft.conn) if r.claim_key in keys or r.path in deleted]

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        dreaming_rows.delete_ledger(conn, run.draft.ledger)
        dreaming_rows.delete_rejections(conn, run.draft.recall_keys)


class DreamingReview(Participant):
    """Review-queue proposals and preimages that hold a snippet or a removed entry key (deleted: a
    rewrite whose preimage is gone cannot be reverted), and run reports (checked, never edited)."""

    name = "dreaming-review"

    def plan(self, draft: Draft) -> None:
        for prop in dreaming_rows.proposals(draft.conn):
            if any(holds(t, draft.probes, draft.entry_keys) for t in prop.texts):
                draft.proposal_ids.append(prop.id)
                draft.state.append(StateItem("proposal", prop.id, prop.id, prop.status))
        for pre in dreaming_rows.preimages(draft.conn):
            if pre.proposal_id in draft.proposal_ids or holds(pre.text, draft.probes, draft.entry_keys):
                draft.preimage_keys.append(pre.key)
                draft.state.append(StateItem("preimage", pre.key, pre.proposal_id, None))

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        dreaming_rows.delete_proposals(conn, run.draft.proposal_ids)
        dreaming_rows.delete_preimages(conn, run.draft.preimage_keys)

    def residual(self, q: ResidualQuery) -> Iterator[ResidualHit]:
        for pre in dreaming_rows.preimages(q.conn):
            for line in pre.text.split("\n"):
                p = matches(line, q.probes)
                if p is not None:
                    yield ResidualHit("preimage", pre.key, p, excerpt(line, p))
                    break
        for prop in dreaming_rows.proposals(q.conn):
            for t in prop.texts:
                p = first_match(t, q.probes)
                if p is not None:
                    yield ResidualHit("proposal", prop.id, p, excerpt(t, p))
                    break
        for run_id, report in dreaming_rows.run_reports(q.conn):
            p = first_match(report, q.probes)
            if p is not None:
                yield ResidualHit("run-report", run_id, p, excerpt(report, p))
