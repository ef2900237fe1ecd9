"""The derived state a session leaves behind, one participant per kind of artifact. Each plans
what it would remove (for the plan the person previews), deletes exactly that (inside the run's
transaction, after the tombstones), and reports what is still there (the residual check):

- :class:`IndexArtifacts` — index chunks, their sources, FTS and vector rows, and the cached
  (chunk and line) vectors computed from forgotten text;
- :class:`RecallArtifacts` — short-term recall entries, their daily-ingestion ledger rows and
  Dreaming rejections;
- :class:`DreamingArtifacts` — review-queue proposals and preimages that hold forgotten text
  (and run reports, which forget checks but does not rewrite).

The files themselves (memory lines, the session corpus), origins, flush segments and
transcripts stay with the service, which decides what the new text of every file is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import apsw
from clawmem.engine.forget.matching import LoadedFile, excerpt, holds, matches
from clawmem.engine.forget.plan import ChunkItem, RecallItem, ResidualHit, StateItem, Survivor
from clawmem.engine.sessions import index as session_index
from clawmem.engine.store import dreaming_rows, index_rows, line_vector_rows, recall_rows

NEVER_EDITED = ("USER.md",)
USER_MD_NOTE = "USER.md is never edited by forget"


@dataclass
class PlanContext:
    """What the service already decided when the participants plan: the snippets, the entry keys,
    the sessions, the files it changes and their new bytes; ``survives`` collects what stays."""

    conn: apsw.Connection
    probes: list[str]
    entry_keys: tuple[str, ...]
    session_ids: tuple[str, ...]
    by_rel: dict[str, LoadedFile]
    new_bytes: dict[str, bytes | None]  # None: the file is deleted
    changed: set[str]
    survives: list[Survivor] = field(default_factory=list)


# ------------------------------------------------------------------------------------------ index


@dataclass(frozen=True)
class IndexFindings:
    chunks: list[ChunkItem]
    sources: list[tuple[str, str]]  # (path, source) rows that exist: deleted whole, re-indexed after
    vectors: set[str]  # chunk ids with a vector row
    cache_hashes: list[str]  # texts whose cached vectors go (no surviving chunk has the text)
    caches: list[index_rows.CacheRow]


class IndexArtifacts:
    @staticmethod
    def plan(ctx: PlanContext) -> IndexFindings:
        chunks: list[ChunkItem] = []
        sources: list[tuple[str, str]] = []
        cache_hashes: list[str] = []
        surviving_hashes: set[str] = set()
        session_paths = {session_index.session_path(s) for s in ctx.session_ids}
        for c in index_rows.chunk_texts(ctx.conn):
            found = matches(c.text, ctx.probes) is not None
            if c.source == "memory" and c.path in ctx.changed:
                f = ctx.by_rel[c.path]
                overlaps = any(c.start_line <= n <= c.end_line for n in f.remove)
                take = True
                found = found or overlaps
            elif c.source == session_index.SOURCE and c.path in session_paths:
                take, found = True, True
            elif found and c.path not in NEVER_EDITED:
                take = True  # stale: the file no longer holds it (or it is not indexed from a file)
            else:
                take = False
            if take:
                chunks.append(ChunkItem(c.id, c.path, c.source, c.start_line, c.end_line, False, found))
                if (c.path, c.source) not in sources:
                    sources.append((c.path, c.source))
                if found:
                    cache_hashes.append(c.hash)
            else:
                surviving_hashes.add(c.hash)
                if found:
                    ctx.survives.append(
                        Survivor(
                            "an index chunk holding a selected snippet",
                            f"{c.path}:{c.start_line}-{c.end_line}",
                            "its file is USER.md, which forget never edits",
                        )
                    )
        vectors = index_rows.vector_ids(ctx.conn, [c.chunk_id for c in chunks])
        chunks = [
            ChunkItem(c.chunk_id, c.path, c.source, c.start_line, c.end_line, c.chunk_id in vectors, c.holds_text)
            for c in chunks
        ]
        # Whole sources go (a later sync re-indexes the file), so every chunk of a listed source is deleted.
        cache_hashes = [h for h in dict.fromkeys(cache_hashes) if h not in surviving_hashes]
        caches = index_rows.cache_rows(ctx.conn, cache_hashes)
        source_rows = [s for s in sources if index_rows.source_exists(ctx.conn, *s)]
        return IndexFindings(chunks, source_rows, vectors, cache_hashes, caches)

    @staticmethod
    def delete(
        conn: apsw.Connection, sources: Sequence[tuple[str, str]], chunk_ids: Sequence[str], cache_hashes: list[str]
    ) -> None:
        index_rows.delete_sources(conn, sources)
        index_rows.delete_chunk_ids(conn, chunk_ids)
        delete_cached_vectors(conn, cache_hashes)

    @staticmethod
    def residual(
        conn: apsw.Connection, probes: Sequence[str], session_ids: Sequence[str], cache_hashes: Iterable[str]
    ) -> list[ResidualHit]:
        hits: list[ResidualHit] = []
        for c in index_rows.chunk_texts(conn):
            p = matches(c.text, probes)
            if p is not None or (
                c.source == session_index.SOURCE and any(c.path == session_index.session_path(s) for s in session_ids)
            ):
                note = USER_MD_NOTE if c.path in NEVER_EDITED else None
                hits.append(
                    ResidualHit(
                        "chunk", f"{c.id} {c.path}:{c.start_line}-{c.end_line}", p or "", excerpt(c.text, p), note
                    )
                )
        for cid, fts_path, text in index_rows.fts_texts(conn):
            p = matches(text, probes)
            if p is not None:
                note = USER_MD_NOTE if fts_path in NEVER_EDITED else None
                hits.append(ResidualHit("fts", f"{cid} {fts_path}", p, excerpt(text, p), note))
        for row in index_rows.cache_rows(conn, cache_hashes):
            hits.append(
                ResidualHit(
                    "embedding-cache",
                    f"{row.provider}/{row.model} {row.hash[:12]}",
                    "",
                    "a vector computed from forgotten text",
                )
            )
        return hits


def delete_cached_vectors(conn: apsw.Connection, hashes: list[str]) -> None:
    """The forgotten texts' cached chunk vectors and the line vectors made from them."""
    index_rows.delete_cache_hashes(conn, hashes)
    line_vector_rows.delete_hashes_present(conn, hashes)


# ----------------------------------------------------------------------------------------- recall


@dataclass(frozen=True)
class RecallFindings:
    items: list[RecallItem]
    keys: list[str]
    ledger: list[dreaming_rows.LedgerRow]


class RecallArtifacts:
    @staticmethod
    def plan(ctx: PlanContext) -> RecallFindings:
        items: list[RecallItem] = []
        for rr in recall_rows.all_rows(ctx.conn):
            why: str | None = None
            if rr.entry_key in ctx.entry_keys:
                why = "entry key"
            elif rr.path in ctx.new_bytes and ctx.new_bytes[rr.path] is None:
                why = "file deleted"
            elif rr.path in ctx.by_rel and any(rr.start_line <= n <= rr.end_line for n in ctx.by_rel[rr.path].remove):
                why = "removed lines"
            elif matches(rr.snippet, ctx.probes) is not None:
                why = "snippet"
            if why:
                items.append(RecallItem(rr.entry_key, rr.path, rr.start_line, rr.end_line, rr.snippet, why))
        keys = [rr.entry_key for rr in items]
        deleted_files = {rel for rel, b in ctx.new_bytes.items() if b is None}
        ledger = [
            row for row in dreaming_rows.ledger_rows(ctx.conn) if row.claim_key in keys or row.path in deleted_files
        ]
        return RecallFindings(items, keys, ledger)

    @staticmethod
    def delete(conn: apsw.Connection, keys: Sequence[str], ledger: Sequence[dreaming_rows.LedgerRow]) -> None:
        recall_rows.delete_recall(conn, keys)
        dreaming_rows.delete_ledger(conn, ledger)
        dreaming_rows.delete_rejections(conn, keys)

    @staticmethod
    def residual(conn: apsw.Connection, probes: Sequence[str], entry_keys: Sequence[str]) -> list[ResidualHit]:
        hits: list[ResidualHit] = []
        for r in recall_rows.all_rows(conn):
            p = matches(r.snippet, probes)
            if p is not None or r.entry_key in entry_keys:
                hits.append(ResidualHit("recall", r.entry_key, p or r.entry_key, excerpt(r.snippet, p)))
        return hits


# --------------------------------------------------------------------------------------- dreaming


@dataclass(frozen=True)
class DreamingFindings:
    state: list[StateItem]
    proposal_ids: list[str]
    preimage_keys: list[str]


class DreamingArtifacts:
    @staticmethod
    def plan(ctx: PlanContext) -> DreamingFindings:
        state: list[StateItem] = []
        proposal_ids: list[str] = []
        for prop in dreaming_rows.proposals(ctx.conn):
            if any(holds(t, ctx.probes, ctx.entry_keys) for t in prop.texts):
                proposal_ids.append(prop.id)
                state.append(StateItem("proposal", prop.id, prop.id, prop.status))
        preimage_keys: list[str] = []
        for pre in dreaming_rows.preimages(ctx.conn):
            if pre.proposal_id in proposal_ids or holds(pre.text, ctx.probes, ctx.entry_keys):
                preimage_keys.append(pre.key)
                state.append(StateItem("preimage", pre.key, pre.proposal_id, None))
        return DreamingFindings(state, proposal_ids, preimage_keys)

    @staticmethod
    def delete(conn: apsw.Connection, proposal_ids: Sequence[str], preimage_keys: Sequence[str]) -> None:
        dreaming_rows.delete_proposals(conn, proposal_ids)
        dreaming_rows.delete_preimages(conn, preimage_keys)

    @staticmethod
    def residual(conn: apsw.Connection, probes: Sequence[str]) -> list[ResidualHit]:
        hits: list[ResidualHit] = []
        for pre in dreaming_rows.preimages(conn):
            for line in pre.text.split("\n"):
                p = matches(line, probes)
                if p is not None:
                    hits.append(ResidualHit("preimage", pre.key, p, excerpt(line, p)))
                    break
        for prop in dreaming_rows.proposals(conn):
            for t in prop.texts:
                p = next((matches(line, probes) for line in t.split("\n") if matches(line, probes)), None)
                if p is not None:
                    hits.append(ResidualHit("proposal", prop.id, p, excerpt(t, p)))
                    break
        for run_id, report in dreaming_rows.run_reports(conn):
            p = next((matches(line, probes) for line in report.split("\n") if matches(line, probes)), None)
            if p is not None:
                hits.append(ResidualHit("run-report", run_id, p, excerpt(report, p)))
        return hits
