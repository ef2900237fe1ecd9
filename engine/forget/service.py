"""Lineage forget (spec §7): a plan that shows every artifact, a run that deletes them, and a
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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import apsw
from clawmem.engine.errors import ClawmemError, ConflictError
from clawmem.engine.forget.matching import LoadedFile, excerpt, matches
from clawmem.engine.forget.participants import (
    NEVER_EDITED,
    USER_MD_NOTE,
    DreamingArtifacts,
    IndexArtifacts,
    PlanContext,
    RecallArtifacts,
)
from clawmem.engine.forget.plan import (
    ArtifactCounts,
    CacheItem,
    CuratedWrite,
    EntryItem,
    FileChange,
    ForgetPlan,
    ForgetResult,
    LedgerItem,
    LineItem,
    OriginItem,
    Refusal,
    ResidualHit,
    SegmentItem,
    SessionResolution,
    Survivor,
)
from clawmem.engine.sessions import flush as flushing
from clawmem.engine.sessions import trust
from clawmem.engine.store import dreaming_rows, sessions_rows
from clawmem.engine.store import sessions_rows as srows
from clawmem.engine.store.db import begin_immediate
from clawmem.engine.times import iso_ms
from clawmem.engine.workspace.entries import parse_entries
from clawmem.engine.workspace.files import discover
from clawmem.engine.workspace.reading import decode_memory_bytes, sha256_bytes
from clawmem.engine.workspace.writes import replace_file

if TYPE_CHECKING:
    from clawmem.engine.runtime import Reindexer, Runtime

CURATED = ("MEMORY.md", "memory.md")
ROOT_FILES = ("MEMORY.md", "memory.md", "USER.md", "DREAMS.md", "dreams.md")
CORPUS_DIR = "memory/.dreams/session-corpus/"
PREFIX_PROBE_CHARS = 100  # long snippets also match by their first 100 characters (truncated copies)
_SESSION_ID = re.compile(r"^\s*(?:[-*+]\s+)?\**Session ID\**\s*:\s*\**\s*([^\s*]+?)\**\s*$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s")
_DREAMING_HEADING = re.compile(
    r"^(?:## Consolidated Memory \(|## Promoted From Short-Term Memory \(|### Project: |### Global\s*$)"
)
_BOILERPLATE = re.compile(
    r"^(?:#\s*Session:|\**Session Key\**\s*:|\**Source\**\s*:|#+\s*Conversation Summary|#+\s*Consolidated Memory|"
    r"#+\s*Promoted From Short-Term Memory|#+\s*Long-Term Memory)",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_SOURCE_TAIL = re.compile(r"\s+Source:\s+\S+#L\d+-L\d+\s*$")
_SCORE_TAIL = re.compile(r"\s+\[score=[^\]]*\]\s*$")
_ROLE = re.compile(r"^(?:user|assistant|tool):\s*")


# ---------------------------------------------------------------------------------- computation


@dataclass
class _Work:
    plan: ForgetPlan
    files: list[LoadedFile]
    new_bytes: dict[str, bytes | None]  # None: delete the file
    probes: list[str]
    deleted_sources: list[tuple[str, str]]
    cache_hashes: list[str]
    recall_keys: list[str]
    ledger: list[dreaming_rows.LedgerRow]
    preimage_keys: list[str]
    proposal_ids: list[str]
    lost_segments: list[srows.SegmentRow]


def _split_lines(data: bytes) -> list[str] | None:
    """Line texts numbered like the index (None when the file has bare CR line ends)."""
    try:
        text, _, _ = decode_memory_bytes(data)
    except ValueError:
        return None
    raw = data.decode("utf-8")
    if "\r" in raw.replace("\r\n", ""):
        return None
    return text.split("\n")


def _fact(text: str) -> str:
    """An entry or note line reduced to its fact: no comments, Source/score tails, bullets or role."""
    out = _COMMENT.sub(" ", text)
    out = _SOURCE_TAIL.sub("", out)
    out = _SCORE_TAIL.sub("", out)
    out = trust.normalize(out)
    return _ROLE.sub("", out)


class ForgetService:
    def __init__(self, runtime: Runtime, reindexer: Reindexer) -> None:
        self.runtime = runtime
        self.reindexer = reindexer

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

    # ------------------------------------------------------------------------------------ plan

    def plan(self, selectors: Sequence[str], *, purge_transcripts: bool = False) -> ForgetPlan:
        """What a forget of these sessions would delete and keep; writes nothing."""
        return self._compute(selectors, purge_transcripts).plan

    def _compute(self, selectors: Sequence[str], purge: bool) -> _Work:
        cleaned = tuple(dict.fromkeys(s.strip() for s in selectors if s.strip()))
        if not cleaned:
            raise ClawmemError("give at least one --session ID or KEY (see `clawmem session list`)")
        self.runtime.require_workspace()
        conn = self._conn
        agent = self.runtime.settings.agent_id
        workspace = self.runtime.workspace
        resolutions = self.resolve(cleaned)
        ids = tuple(r.session_id for r in resolutions)
        selected = set(ids)
        live = [r.session_id for r in resolutions if r.source == "live"]
        refusals: list[Refusal] = []
        survives: list[Survivor] = []

        # Origin rows → entry keys.
        origin_rows = [o for o in srows.origins_for_sessions(conn, ids) if o.agent_id == agent]
        entry_keys = tuple(dict.fromkeys(o.entry_key for o in origin_rows))
        all_rows = [o for o in srows.origins_for_entries(conn, entry_keys) if o.agent_id == agent]
        sessions_of: dict[str, list[str]] = {}
        for o in all_rows:
            sessions_of.setdefault(o.entry_key, []).append(o.session_id)
        mixed = tuple(k for k in entry_keys if any(s not in selected for s in sessions_of.get(k, [])))
        keyed = srows.entry_keys_with_origins(conn, agent)

        # Transcript snippets, and texts other sessions own (never deleted as snippets).
        transcript_probes: list[str] = []
        for sid in live:
            for ev in srows.events(conn, sid):
                transcript_probes.extend(trust.snippet_lines(str(json.loads(ev.event_json).get("text", ""))))
        protected = [trust.normalize(t) for t in srows.event_texts_except(conn, ids)]

        # Files.
        files: list[LoadedFile] = []
        for mf in discover(workspace, self.runtime.settings.index.extra_paths):
            if mf.rel.startswith("/") or ":" in mf.rel[:3] or mf.path.is_symlink():
                continue
            loaded = self._load(mf.rel, mf.path, refusals, survives)
            if loaded is not None:
                files.append(loaded)
        corpus_dir = workspace / CORPUS_DIR
        if corpus_dir.is_dir() and not corpus_dir.is_symlink():
            known = {f.rel for f in files}
            for cp in sorted(corpus_dir.rglob("*")):
                rel = cp.relative_to(workspace).as_posix()
                if cp.is_file() and not cp.is_symlink() and cp.suffix in (".md", ".txt") and rel not in known:
                    loaded = self._load(rel, cp, refusals, survives)
                    if loaded is not None:
                        files.append(loaded)
        for f in files:
            f.corpus = f.rel.startswith(CORPUS_DIR)
        by_rel = {f.rel: f for f in files}

        # Segments of the selected sessions, and the texts other sessions' segments hold.
        segments: list[SegmentItem] = []
        lost: list[srows.SegmentRow] = []
        for rel in sorted(srows.segment_paths(conn)):
            sf = by_rel.get(rel)
            data = sf.data if sf is not None else b""
            prov = flushing.load(conn, rel, data)
            spans = flushing.line_spans(data)
            for loc in prov.located:
                seg_sid = loc.row.session_id
                if seg_sid is not None and seg_sid in selected:
                    segments.append(SegmentItem(rel, loc.row.seq, seg_sid, loc.row.kind, loc.line_start, loc.line_end))
                    if sf is not None:
                        first = loc.line_start
                        if loc.byte_start > spans[first - 1][0]:
                            first += 1  # starts mid-line (after text without a final newline): keep that line
                        for n in range(first, loc.line_end + 1):
                            if sf.lines[n - 1].strip():
                                sf.remove.setdefault(n, "segment")
                elif seg_sid is not None and sf is not None:
                    protected.extend(trust.normalize(sf.lines[n - 1]) for n in range(loc.line_start, loc.line_end + 1))
            for seg in prov.lost:
                if seg.session_id in selected:
                    lost.append(seg)
                    segments.append(SegmentItem(rel, seg.seq, seg.session_id or "", seg.kind, None, None))
                    refusals.append(
                        Refusal(
                            f"{rel} ({seg.kind} of session {seg.session_id})",
                            "changed after it was written and cannot be located; its record is deleted and the "
                            "residual check searches for its text",
                        )
                    )

        # Entries with origin rows; markers without any.
        entries: list[EntryItem] = []
        untargetable: list[str] = []
        observed: dict[str, int] = {}
        for rel in CURATED:
            cf = by_rel.get(rel)
            if cf is None:
                continue
            text = "\n".join(cf.lines)
            for ent in parse_entries(rel, text, curated_root=True):
                key = ent.promotion_key
                if key is None:
                    continue
                if key in entry_keys:
                    for n in range(ent.marker_line, ent.end_line + 1):
                        cf.remove.setdefault(n, "entry")
                    entries.append(
                        EntryItem(
                            key,
                            rel,
                            ent.marker_line,
                            ent.end_line,
                            "\n".join(cf.lines[ent.marker_line - 1 : ent.end_line]),
                            tuple(dict.fromkeys(sessions_of.get(key, []))),
                            key in mixed,
                        )
                    )
                    at = max((o.observed_at for o in all_rows if o.entry_key == key), default=0)
                    observed[rel] = max(observed.get(rel, 0), at)
                elif key not in keyed:
                    untargetable.append(key)
            self._drop_empty_dreaming_sections(cf)

        # Sections naming a selected Session ID.
        for f in files:
            if f.rel in NEVER_EDITED:
                continue
            for n, line in enumerate(f.lines, start=1):
                m = _SESSION_ID.search(line)
                if m and m.group(1).rstrip(".,;:") in selected:
                    for k in self._section(f.lines, n):
                        f.remove.setdefault(k, "section")

        # Selected snippets: transcript lines plus the facts of what was removed so far.
        removed_facts: list[str] = []
        for f in files:
            for n, reason in f.remove.items():
                line = f.lines[n - 1]
                if (
                    reason in ("entry", "section", "segment")
                    and not _HEADING.match(line)
                    and _COMMENT.sub("", line).strip()
                    and not _BOILERPLATE.match(trust.normalize(line))
                ):
                    fact = _fact(line)
                    if len(fact) >= trust.MIN_SNIPPET_CHARS:
                        removed_facts.append(fact)
        candidates = list(dict.fromkeys([*transcript_probes, *removed_facts]))
        probes: list[str] = []
        shared: list[str] = []
        for p in candidates:
            if any(p in t for t in protected):
                shared.append(p)
            else:
                probes.append(p)
        for p in list(probes):
            if len(p) > PREFIX_PROBE_CHARS:
                prefix = p[:PREFIX_PROBE_CHARS]
                if prefix not in probes and not any(prefix in t for t in protected):
                    probes.append(prefix)
        if shared:
            survives.append(
                Survivor(
                    f"{len(shared)} line(s) of text",
                    "other sessions",
                    "the same text is in another session's transcript or flush, so lines holding it are kept",
                )
            )

        # Lines holding a snippet, anywhere but USER.md; session ids in the corpus.
        for f in files:
            for n, line in enumerate(f.lines, start=1):
                if n in f.remove or not line.strip():
                    continue
                hit = matches(line, probes)
                if f.corpus and hit is None and any(sid in line for sid in selected):
                    hit = "session id"
                if hit is None:
                    continue
                if f.rel in NEVER_EDITED:
                    survives.append(
                        Survivor(
                            "a line holding a selected snippet", f"{f.rel}:{n}", "USER.md is never edited by forget"
                        )
                    )
                    continue
                f.remove[n] = "corpus" if f.corpus else "snippet"
            if f.rel in CURATED:
                self._drop_empty_dreaming_sections(f)

        # New bytes per file.
        new_bytes: dict[str, bytes | None] = {}
        changes: list[FileChange] = []
        line_items: list[LineItem] = []
        for f in files:
            if not f.remove:
                continue
            new = flushing.remove_lines(f.data, set(f.remove))
            remaining = new.decode("utf-8", "replace").replace("\ufeff", "")
            delete = not remaining.strip() and f.rel not in ROOT_FILES
            new_bytes[f.rel] = None if delete else new
            listed = [n for n in sorted(f.remove) if f.lines[n - 1].strip()]
            changes.append(FileChange(f.rel, "delete" if delete else "rewrite", f.sha, len(listed), f.corpus))
            line_items.extend(LineItem(f.rel, n, f.lines[n - 1], f.remove[n]) for n in listed)
        changed = {c.path for c in changes}

        # The derived state: index, recall store, Dreaming's queue (engine/forget/participants.py).
        ctx = PlanContext(conn, probes, entry_keys, ids, by_rel, new_bytes, changed, survives)
        index = IndexArtifacts.plan(ctx)
        chunks, vectors, caches, source_rows, cache_hashes = (
            index.chunks,
            index.vectors,
            index.caches,
            index.sources,
            index.cache_hashes,
        )
        recall = RecallArtifacts.plan(ctx)
        recall_items, recall_keys, ledger = recall.items, recall.keys, recall.ledger
        dreaming = DreamingArtifacts.plan(ctx)
        state, proposal_ids, preimage_keys = dreaming.state, dreaming.proposal_ids, dreaming.preimage_keys

        # Origins and segments.
        origin_items = [OriginItem(o.entry_key, o.session_id, o.session_key, o.origin_class) for o in all_rows]
        origin_items += [
            OriginItem(o.entry_key, o.session_id, o.session_key, o.origin_class)
            for o in origin_rows
            if o.entry_key not in entry_keys
        ]
        origin_count = sessions_rows.origin_row_count(conn, keys=entry_keys, session_ids=ids, agent_id=agent)
        others = sessions_rows.other_agent_origin_count(conn, ids, agent)
        if others:
            survives.append(Survivor(f"{others} origin row(s)", "other agents", "forget works on one agent's store"))

        # Transcripts.
        events = 0
        for res in resolutions:
            if res.source != "live":
                continue
            if purge:
                events += res.event_count
            else:
                survives.append(
                    Survivor(
                        f"transcript of session {res.session_id} ({res.event_count} events)",
                        "session store",
                        "transcripts are kept, as in OpenClaw (the tombstone blocks re-import and re-indexing); "
                        "--purge-transcript deletes them",
                    )
                )
        for key in untargetable:
            survives.append(Survivor(f"entry {key}", "MEMORY.md", "a legacy promotion marker with no origin rows"))
        survives.append(
            Survivor(
                "text that paraphrases the session",
                "any file",
                "forget removes tracked entries, the session's own lines and exact copies of its text",
            )
        )

        curated = tuple(
            CuratedWrite(rel, iso_ms(observed[rel]) if observed.get(rel) else None) for rel in CURATED if rel in changed
        )
        counts = ArtifactCounts(
            memory_files=sum(1 for c in changes if not c.corpus),
            memory_entries=len(entries),
            memory_lines=sum(c.lines_removed for c in changes if not c.corpus),
            session_corpus_files=sum(1 for c in changes if c.corpus),
            session_corpus_lines=sum(c.lines_removed for c in changes if c.corpus),
            index_chunks=len(chunks),
            index_sources=len(source_rows),
            fts_rows=len(chunks),
            vector_rows=len(vectors),
            embedding_cache_rows=len(caches),
            short_term_entries=len(recall_items),
            seen_hash_scopes=len(ledger),
            backups=len(preimage_keys),
            origin_rows=origin_count,
            proposals=len(proposal_ids),
            flush_segments=len(segments),
            transcript_events=events,
        )
        plan = ForgetPlan(
            agent_id=agent,
            dry_run=True,
            selectors=cleaned,
            session_ids=ids,
            resolutions=resolutions,
            entry_keys=entry_keys,
            mixed_lineage_entry_keys=mixed,
            untargetable_entry_keys=tuple(dict.fromkeys(untargetable)),
            curated_writes=curated,
            refusals=tuple(refusals),
            artifacts=counts,
            files=tuple(changes),
            entries=tuple(entries),
            lines=tuple(line_items),
            chunks=tuple(chunks),
            index_sources=tuple(source_rows),
            cache_rows=tuple(CacheItem(c.provider, c.model, c.hash) for c in caches),
            recall_entries=tuple(recall_items),
            seen_hash_scopes=tuple(LedgerItem(r.day, r.path, r.claim_key) for r in ledger),
            state=tuple(state),
            origin_rows=tuple(dict.fromkeys(origin_items)),
            segments=tuple(segments),
            survives=tuple(survives),
            snippets=tuple(probes),
            purge_transcripts=purge,
            fingerprint="",
        )
        from dataclasses import asdict, replace

        digest = hashlib.sha256(json.dumps(asdict(plan), sort_keys=True, default=str).encode("utf-8")).hexdigest()
        plan = replace(plan, fingerprint=digest[:16])
        return _Work(
            plan=plan,
            files=files,
            new_bytes=new_bytes,
            probes=probes,
            deleted_sources=source_rows,
            cache_hashes=cache_hashes,
            recall_keys=recall_keys,
            ledger=ledger,
            preimage_keys=preimage_keys,
            proposal_ids=proposal_ids,
            lost_segments=lost,
        )

    def _load(self, rel: str, path: Path, refusals: list[Refusal], survives: list[Survivor]) -> LoadedFile | None:
        try:
            if path.stat().st_size > self.runtime.settings.index.max_file_bytes:
                survives.append(Survivor(rel, rel, "larger than the index's file size limit; not checked"))
                return None
            data = path.read_bytes()
        except OSError as exc:
            survives.append(Survivor(rel, rel, f"cannot be read ({exc.strerror or exc}); not checked"))
            return None
        lines = _split_lines(data)
        if lines is None:
            survives.append(Survivor(rel, rel, "not UTF-8 text with \\n or \\r\\n line ends; not checked"))
            return None
        return LoadedFile(rel, path, data, lines, False)

    @staticmethod
    def _section(lines: list[str], n: int) -> range:
        """The lines of the section around line ``n``: its nearest heading up to the next heading
        of the same or a higher level (just line ``n`` when no heading precedes it)."""
        head = None
        level = 0
        for k in range(n - 1, 0, -1):
            m = _HEADING.match(lines[k - 1])
            if m:
                head, level = k, len(m.group(1))
                break
        if head is None:
            return range(n, n + 1)
        end = len(lines)
        for k in range(n + 1, len(lines) + 1):
            m = _HEADING.match(lines[k - 1])
            if m and len(m.group(1)) <= level:
                end = k - 1
                break
        return range(head, end + 1)

    @staticmethod
    def _drop_empty_dreaming_sections(f: LoadedFile) -> None:
        """A Dreaming-written section whose entries all go loses its heading and blank lines too
        (and, at the end of the file, the blank lines Dreaming put before it)."""
        lines = f.lines
        changed = True
        while changed:
            changed = False
            for n, line in enumerate(lines, start=1):
                if n in f.remove or not _DREAMING_HEADING.match(line):
                    continue
                m = _HEADING.match(line)
                level = len(m.group(1)) if m else 2
                end = len(lines)
                for k in range(n + 1, len(lines) + 1):
                    h = _HEADING.match(lines[k - 1])
                    if h and len(h.group(1)) <= level:
                        end = k - 1
                        break
                body = range(n + 1, end + 1)
                content = [k for k in body if lines[k - 1].strip()]
                if not any(k in f.remove for k in body) or any(k not in f.remove for k in content):
                    continue
                f.remove[n] = "heading"
                for k in body:
                    f.remove.setdefault(k, "heading")
                if end == len(lines):
                    k = n - 1
                    while k >= 1 and not lines[k - 1].strip() and k not in f.remove:
                        f.remove[k] = "heading"
                        k -= 1
                changed = True

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
        from dataclasses import replace

        work = self._compute(selectors, purge)
        plan = work.plan
        if not allow_unresolved:
            refuse_unresolved(plan)
        if expected is not None and expected.fingerprint != plan.fingerprint:
            raise ClawmemError("the memory changed since the preview; nothing was deleted — preview again")
        agent = self.runtime.settings.agent_id
        now = int(self.runtime.clock.timestamp() * 1000)
        refusals = list(plan.refusals)
        warnings: list[str] = []

        # 1. Tombstones first.
        tombstoned: list[str] = []
        with self.runtime.store.write() as conn:
            for sid in plan.session_ids:
                if srows.insert_tombstone(conn, sid, agent, "forgotten", now):
                    tombstoned.append(sid)

        # 2. Index and plugin state.
        with self.runtime.lock("reindex", timeout=30.0), self.runtime.store.write() as conn:
            IndexArtifacts.delete(conn, work.deleted_sources, [c.chunk_id for c in plan.chunks], work.cache_hashes)
            RecallArtifacts.delete(conn, work.recall_keys, work.ledger)
            DreamingArtifacts.delete(conn, work.proposal_ids, work.preimage_keys)

        # 3–4. Memory files, then the session corpus: whole lines only, hash-checked.
        reindex: set[str] = {p for p, s in work.deleted_sources if s == "memory"}
        for f in sorted(work.files, key=lambda f: (f.corpus, f.rel)):
            if f.rel not in work.new_bytes:
                continue
            new = work.new_bytes[f.rel]
            try:
                self._write(f, new, now)
            except (ConflictError, OSError) as exc:
                reason = str(exc) if isinstance(exc, ConflictError) else (exc.strerror or str(exc))
                refusals.append(Refusal(f.rel, f"not changed: {reason}; run the forget again"))
                continue
            reindex.add(f.rel)

        # 5. Origins (and the sessions' provenance records) last.
        with self.runtime.store.write() as conn:
            sessions_rows.delete_origins_for_entries(conn, plan.entry_keys, agent)
            sessions_rows.delete_origins_for_sessions(conn, plan.session_ids, agent)
            srows.delete_segments_for_sessions(conn, plan.session_ids)
            for sid in plan.session_ids:
                srows.set_note_path(conn, sid, None)
            if purge:
                for sid in plan.session_ids:
                    srows.delete_window(conn, sid)

        # Re-index what changed, so search and the context preview see the new text at once.
        if reindex:
            try:
                self.reindexer.sync(only=reindex, embed=False, lock_timeout=30.0)
            except ClawmemError as exc:
                warnings.append(f"the index was not refreshed ({exc}); the next sync will do it")
        residual = self.residual(
            plan.snippets, plan.session_ids, plan.entry_keys, cache_hashes=work.cache_hashes, purge=purge
        )
        final = replace(plan, dry_run=False, refusals=tuple(refusals))
        return ForgetResult(final, tuple(tombstoned), tuple(refusals), tuple(warnings), residual)

    def _write(self, f: LoadedFile, new: bytes | None, now: int) -> None:
        conn = self._conn
        tracked = f.rel in srows.segment_paths(conn)
        begin_immediate(conn)  # DatabaseLocked when another process writes
        try:
            current = f.path.read_bytes()
            if sha256_bytes(current) != f.sha:
                raise ConflictError(f"{f.rel} changed on disk since it was read")
            if tracked:
                flushing.reconcile(conn, f.rel, current, now)
            if new is None:
                os.unlink(f.path)
                if tracked:
                    flushing.forget_file(conn, f.rel)
                srows.clear_note_path(conn, f.rel)
            else:
                replace_file(f.path, new, expected_sha256=f.sha)
                if tracked:
                    flushing.remap_after_removal(conn, f.rel, current, new, set(f.remove), now)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # -------------------------------------------------------------------------------- residual

    def residual(
        self,
        snippets: Sequence[str],
        session_ids: Sequence[str],
        entry_keys: Sequence[str] = (),
        *,
        cache_hashes: Iterable[str] = (),
        purge: bool = False,
    ) -> tuple[ResidualHit, ...]:
        """Every place a selected snippet (or a record of the sessions) is still found."""
        conn = self._conn
        agent = self.runtime.settings.agent_id
        probes = [p for p in snippets if len(p) >= trust.MIN_SNIPPET_CHARS]
        hits: list[ResidualHit] = []
        workspace = self.runtime.workspace
        paths = [
            (mf.rel, mf.path)
            for mf in discover(workspace, self.runtime.settings.index.extra_paths)
            if not mf.rel.startswith("/")
        ]
        corpus_dir = workspace / CORPUS_DIR
        if corpus_dir.is_dir():
            have = {r for r, _ in paths}
            paths += [
                (cp.relative_to(workspace).as_posix(), cp)
                for cp in sorted(corpus_dir.rglob("*.txt"))
                if cp.relative_to(workspace).as_posix() not in have
            ]
        for rel, path in paths:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                text = path.read_bytes().decode("utf-8")
                for n, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
                    p = matches(line, probes)
                    if p is not None:
                        note = USER_MD_NOTE if rel in NEVER_EDITED else None
                        hits.append(ResidualHit("file", f"{rel}:{n}", p, excerpt(line, p), note))
        hits += IndexArtifacts.residual(conn, probes, session_ids, cache_hashes)
        hits += RecallArtifacts.residual(conn, probes, entry_keys)
        hits += DreamingArtifacts.residual(conn, probes)
        for o in srows.origins_for_sessions(conn, session_ids):
            if o.agent_id == agent:
                hits.append(ResidualHit("origin", o.entry_key, o.session_id, f"origin row of session {o.session_id}"))
        for o in srows.origins_for_entries(conn, entry_keys):
            if o.agent_id == agent and o.session_id not in session_ids:
                hits.append(ResidualHit("origin", o.entry_key, o.session_id, f"origin row of session {o.session_id}"))
        for s in srows.segments_for_sessions(conn, session_ids):
            hits.append(
                ResidualHit(
                    "segment", f"{s.path}#{s.seq}", s.session_id or "", f"flush segment of session {s.session_id}"
                )
            )
        if purge:
            for sid, seq, text in srows.transcript_fts_texts(conn, session_ids):
                hits.append(ResidualHit("transcript", f"{sid}#{seq}", sid, excerpt(text)))
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
