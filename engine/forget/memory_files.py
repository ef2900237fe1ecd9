"""The file-side participants of a lineage forget: the lines a session left in memory files.

Flush segments, curated entries and session notes mark the lines they own in the files as read
(``read_files``); the memory-files participant then selects the snippets (the session's words
and the facts of the marked lines), marks every other line holding one, and rewrites or deletes
the files — whole lines only, hash-checked, each in its own transaction.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import apsw
from clawmem.engine.errors import ConflictError
from clawmem.engine.forget.draft import Draft, MemoryFile, ResidualQuery, Run
from clawmem.engine.forget.participants import Participant
from clawmem.engine.forget.plan import EntryItem, FileChange, LineItem, Refusal, ResidualHit, SegmentItem, Survivor
from clawmem.engine.forget.text import (
    BOILERPLATE,
    COMMENT,
    CORPUS_DIR,
    CURATED,
    DREAMING_HEADING,
    HEADING,
    NEVER_EDITED,
    PREFIX_PROBE_CHARS,
    ROOT_FILES,
    SESSION_ID,
    USER_MD_NOTE,
    excerpt,
    fact,
    matches,
    split_lines,
)
from clawmem.engine.sessions import flush as flushing
from clawmem.engine.sessions import trust
from clawmem.engine.store import sessions_rows as srows
from clawmem.engine.store.db import begin_immediate
from clawmem.engine.workspace.entries import parse_entries
from clawmem.engine.workspace.files import discover
from clawmem.engine.workspace.reading import sha256_bytes
from clawmem.engine.workspace.writes import replace_file


def read_files(draft: Draft) -> None:
    """Read the memory files and the session corpus into the draft (what cannot be read is kept,
    as a survivor of the memory-files participant)."""
    files: list[MemoryFile] = []
    for mf in discover(draft.workspace, draft.extra_paths):
        if mf.rel.startswith("/") or ":" in mf.rel[:3] or mf.path.is_symlink():
            continue
        loaded = _load(draft, mf.rel, mf.path)
        if loaded is not None:
            files.append(loaded)
    corpus_dir = draft.workspace / CORPUS_DIR
    if corpus_dir.is_dir() and not corpus_dir.is_symlink():
        known = {f.rel for f in files}
        for cp in sorted(corpus_dir.rglob("*")):
            rel = cp.relative_to(draft.workspace).as_posix()
            if cp.is_file() and not cp.is_symlink() and cp.suffix in (".md", ".txt") and rel not in known:
                loaded = _load(draft, rel, cp)
                if loaded is not None:
                    files.append(loaded)
    for f in files:
        f.corpus = f.rel.startswith(CORPUS_DIR)
    draft.files = files
    draft.by_rel = {f.rel: f for f in files}


def _load(draft: Draft, rel: str, path: Path) -> MemoryFile | None:
    keep = MemoryFiles.name
    try:
        if path.stat().st_size > draft.max_file_bytes:
            draft.keep(keep, Survivor(rel, rel, "larger than the index's file size limit; not checked"))
            return None
        data = path.read_bytes()
    except OSError as exc:
        draft.keep(keep, Survivor(rel, rel, f"cannot be read ({exc.strerror or exc}); not checked"))
        return None
    lines = split_lines(data)
    if lines is None:
        draft.keep(keep, Survivor(rel, rel, "not UTF-8 text with \\n or \\r\\n line ends; not checked"))
        return None
    return MemoryFile(rel, path, data, lines, False)


def section(lines: list[str], n: int) -> range:
    """The lines of the section around line ``n``: its nearest heading up to the next heading
    of the same or a higher level (just line ``n`` when no heading precedes it)."""
    head = None
    level = 0
    for k in range(n - 1, 0, -1):
        m = HEADING.match(lines[k - 1])
        if m:
            head, level = k, len(m.group(1))
            break
    if head is None:
        return range(n, n + 1)
    end = len(lines)
    for k in range(n + 1, len(lines) + 1):
        m = HEADING.match(lines[k - 1])
        if m and len(m.group(1)) <= level:
            end = k - 1
            break
    return range(head, end + 1)


def drop_empty_dreaming_sections(f: MemoryFile) -> None:
    """A Dreaming-written section whose entries all go loses its heading and blank lines too
    (and, at the end of the file, the blank lines Dreaming put before it)."""
    lines = f.lines
    changed = True
    while changed:
        changed = False
        for n, line in enumerate(lines, start=1):
            if n in f.remove or not DREAMING_HEADING.match(line):
                continue
            m = HEADING.match(line)
            level = len(m.group(1)) if m else 2
            end = len(lines)
            for k in range(n + 1, len(lines) + 1):
                h = HEADING.match(lines[k - 1])
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


class FlushSegments(Participant):
    """Flush provenance segments (``memory_flush_segments``): the diary lines a session's flushes
    wrote. Other sessions' segments are protected; a segment that cannot be located is refused."""

    name = "segments"

    def plan(self, draft: Draft) -> None:
        conn, selected = draft.conn, set(draft.ids)
        for rel in sorted(srows.segment_paths(conn)):
            sf = draft.by_rel.get(rel)
            data = sf.data if sf is not None else b""
            prov = flushing.load(conn, rel, data)
            spans = flushing.line_spans(data)
            for loc in prov.located:
                seg_sid = loc.row.session_id
                if seg_sid is not None and seg_sid in selected:
                    draft.segments.append(
                        SegmentItem(rel, loc.row.seq, seg_sid, loc.row.kind, loc.line_start, loc.line_end)
                    )
                    if sf is not None:
                        first = loc.line_start
                        if loc.byte_start > spans[first - 1][0]:
                            first += 1  # starts mid-line (after text without a final newline): keep that line
                        for n in range(first, loc.line_end + 1):
                            if sf.lines[n - 1].strip():
                                sf.remove.setdefault(n, "segment")
                elif seg_sid is not None and sf is not None:
                    draft.protected.extend(
                        trust.normalize(sf.lines[n - 1]) for n in range(loc.line_start, loc.line_end + 1)
                    )
            for seg in prov.lost:
                if seg.session_id in selected:
                    draft.segments.append(SegmentItem(rel, seg.seq, seg.session_id or "", seg.kind, None, None))
                    draft.refusals.append(
                        Refusal(
                            f"{rel} ({seg.kind} of session {seg.session_id})",
                            "changed after it was written and cannot be located; its record is deleted and the "
                            "residual check searches for its text",
                        )
                    )

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        srows.delete_segments_for_sessions(conn, run.draft.ids)

    def residual(self, q: ResidualQuery) -> Iterator[ResidualHit]:
        for s in srows.segments_for_sessions(q.conn, q.session_ids):
            where = f"{s.path}#{s.seq}"
            yield ResidualHit("segment", where, s.session_id or "", f"flush segment of session {s.session_id}")


class CuratedEntries(Participant):
    """MEMORY.md entries whose origin rows name a selected session, removed whole with their
    promotion markers; markers without any origin row are kept (untargetable)."""

    name = "entries"

    def plan(self, draft: Draft) -> None:
        mixed = draft.mixed
        for rel in CURATED:
            cf = draft.by_rel.get(rel)
            if cf is None:
                continue
            text = "\n".join(cf.lines)
            for ent in parse_entries(rel, text, curated_root=True):
                key = ent.promotion_key
                if key is None:
                    continue
                if key in draft.entry_keys:
                    for n in range(ent.marker_line, ent.end_line + 1):
                        cf.remove.setdefault(n, "entry")
                    draft.entries.append(
                        EntryItem(
                            key,
                            rel,
                            ent.marker_line,
                            ent.end_line,
                            "\n".join(cf.lines[ent.marker_line - 1 : ent.end_line]),
                            tuple(dict.fromkeys(draft.sessions_of.get(key, []))),
                            key in mixed,
                        )
                    )
                    at = max((o.observed_at for o in draft.entry_origins if o.entry_key == key), default=0)
                    draft.observed[rel] = max(draft.observed.get(rel, 0), at)
                elif key not in draft.keyed:
                    draft.untargetable.append(key)
                    draft.keep(
                        self.name,
                        Survivor(f"entry {key}", "MEMORY.md", "a legacy promotion marker with no origin rows"),
                    )
            drop_empty_dreaming_sections(cf)


class SessionNotes(Participant):
    """Session-memory notes: sections that name a selected ``Session ID``, and the windows' note paths."""

    name = "notes"

    def plan(self, draft: Draft) -> None:
        selected = set(draft.ids)
        for f in draft.files:
            if f.rel in NEVER_EDITED:
                continue
            for n, line in enumerate(f.lines, start=1):
                m = SESSION_ID.search(line)
                if m and m.group(1).rstrip(".,;:") in selected:
                    for k in section(f.lines, n):
                        f.remove.setdefault(k, "section")

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        for sid in run.draft.ids:
            srows.set_note_path(conn, sid, None)


class MemoryFiles(Participant):
    """Memory files and the session corpus: the lines marked so far, every other line holding a
    selected snippet (anywhere but USER.md; the session id too, in the corpus), and the new bytes."""

    name = "memory-files"

    def plan(self, draft: Draft) -> None:
        draft.probes = self._select_snippets(draft)
        selected = set(draft.ids)
        for f in draft.files:
            for n, line in enumerate(f.lines, start=1):
                if n in f.remove or not line.strip():
                    continue
                hit = matches(line, draft.probes)
                if f.corpus and hit is None and any(sid in line for sid in selected):
                    hit = "session id"
                if hit is None:
                    continue
                if f.rel in NEVER_EDITED:
                    draft.keep(self.name, Survivor("a line holding a selected snippet", f"{f.rel}:{n}", USER_MD_NOTE))
                    continue
                f.remove[n] = "corpus" if f.corpus else "snippet"
            if f.rel in CURATED:
                drop_empty_dreaming_sections(f)
        for f in draft.files:
            if not f.remove:
                continue
            new = flushing.remove_lines(f.data, set(f.remove))
            remaining = new.decode("utf-8", "replace").replace("\ufeff", "")
            delete = not remaining.strip() and f.rel not in ROOT_FILES
            draft.new_bytes[f.rel] = None if delete else new
            listed = [n for n in sorted(f.remove) if f.lines[n - 1].strip()]
            draft.changes.append(FileChange(f.rel, "delete" if delete else "rewrite", f.sha, len(listed), f.corpus))
            draft.line_items.extend(LineItem(f.rel, n, f.lines[n - 1], f.remove[n]) for n in listed)

    def _select_snippets(self, draft: Draft) -> list[str]:
        """The session's transcript lines plus the facts of the lines marked so far, but not text
        another session owns; long snippets also by their prefix."""
        removed_facts: list[str] = []
        for f in draft.files:
            for n, reason in f.remove.items():
                line = f.lines[n - 1]
                if (
                    reason in ("entry", "section", "segment")
                    and not HEADING.match(line)
                    and COMMENT.sub("", line).strip()
                    and not BOILERPLATE.match(trust.normalize(line))
                ):
                    text = fact(line)
                    if len(text) >= trust.MIN_SNIPPET_CHARS:
                        removed_facts.append(text)
        candidates = list(dict.fromkeys([*draft.transcript_probes, *removed_facts]))
        protected = draft.protected
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
            draft.keep(
                self.name,
                Survivor(
                    f"{len(shared)} line(s) of text",
                    "other sessions",
                    "the same text is in another session's transcript or flush, so lines holding it are kept",
                ),
            )
        return probes

    def delete(self, conn: apsw.Connection, run: Run) -> None:
        """Memory files, then the session corpus; a file that changed since it was read is refused."""
        draft = run.draft
        for f in sorted(draft.files, key=lambda f: (f.corpus, f.rel)):
            if f.rel not in draft.new_bytes:
                continue
            try:
                self._write(conn, f, draft.new_bytes[f.rel], run.now)
            except (ConflictError, OSError) as exc:
                reason = str(exc) if isinstance(exc, ConflictError) else (exc.strerror or str(exc))
                run.refusals.append(Refusal(f.rel, f"not changed: {reason}; run the forget again"))
                continue
            run.reindex.add(f.rel)

    @staticmethod
    def _write(conn: apsw.Connection, f: MemoryFile, new: bytes | None, now: int) -> None:
        """Write one file in its own transaction, keeping its flush provenance in step."""
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

    def residual(self, q: ResidualQuery) -> Iterator[ResidualHit]:
        paths = [(mf.rel, mf.path) for mf in discover(q.workspace, q.extra_paths) if not mf.rel.startswith("/")]
        corpus_dir = q.workspace / CORPUS_DIR
        if corpus_dir.is_dir():
            have = {r for r, _ in paths}
            paths += [
                (cp.relative_to(q.workspace).as_posix(), cp)
                for cp in sorted(corpus_dir.rglob("*.txt"))
                if cp.relative_to(q.workspace).as_posix() not in have
            ]
        for rel, path in paths:
            hits: list[ResidualHit] = []
            with contextlib.suppress(OSError, UnicodeDecodeError):
                text = path.read_bytes().decode("utf-8")
                for n, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
                    p = matches(line, q.probes)
                    if p is not None:
                        note = USER_MD_NOTE if rel in NEVER_EDITED else None
                        hits.append(ResidualHit("file", f"{rel}:{n}", p, excerpt(line, p), note))
            yield from hits
