"""``CurationService``: mark an entry superseded by its newer version, undo it, and the supersessions
agents propose (issue 36).

**The marker** (docs/memory-core.md §1, extended): the line directly above the older entry's bullet
becomes ``<!-- observed: YYYY-MM-DD | status: superseded | by: PATH#LN -->`` — PATH the newer
entry's workspace-relative path, LN the 1-based line of its bullet in the file as written. An
``observed … | status: active`` marker the entry already has (USER.md's form, above the bullet or at
the end of it) is turned into that marker in place; otherwise a line is inserted. ``observed`` keeps
the date of the marker the entry had, else the date of its diary (``memory/YYYY-MM-DD….md``), else
today (the engine's clock).

**The write** goes through :func:`~clawmem.engine.workspace.writes.replace_file`: under the lock of
the file's folder (held from the read to the rename), only over the bytes that were read (their
SHA-256), temp file, fsync, rename, read-back. Then the file's text is re-indexed.

**Undo** puts back exactly what was there: every write is recorded (``memory_supersessions``), so
an inserted line is removed and a replaced line gets its old text back, byte for byte. A marker
clawmem did not write (by hand, another agent's database) is undone by the convention of its file:
in USER.md, where every entry carries a marker, it becomes ``status: active``; elsewhere it is removed.

**Proposals**: an agent (the MCP server) cannot write a marker; it proposes one, which is checked
like a supersede and kept until the person accepts (the same write) or rejects it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from clawmem.engine.curation.edit import RawFile, bullet_key, pointer_free
from clawmem.engine.curation.refs import EntryRef, as_ref
from clawmem.engine.errors import ClawmemError
from clawmem.engine.paths import resolve_memory_path
from clawmem.engine.runtime import Reindexer, Runtime
from clawmem.engine.store import curation_rows as rows
from clawmem.engine.workspace.annotations import (
    OBSERVED_MARKER,
    StatusMarker,
    entry_status,
    format_status_marker,
    inline_status_marker,
    marker_line_above,
)
from clawmem.engine.workspace.entries import Entry, forget_markers, parse_entries
from clawmem.engine.workspace.files import KIND_DREAM_REPORT, KIND_DREAM_STATE, KIND_DREAMS, classify
from clawmem.engine.workspace.names import CURATED_ROOT_FILES, USER_FILE
from clawmem.engine.workspace.writes import directory_lock, replace_file

MAX_EDIT_BYTES = 16 * 1024 * 1024
MAX_REASON_CHARS = 1_000
MAX_PENDING = 200
MIN_ID_PREFIX = 4
PROPOSAL_STATUSES = ("pending", "accepted", "rejected", "stale")


@dataclass(frozen=True)
class SupersedeResult:
    path: str  # the older entry's file: the one written
    line: int  # the older entry's bullet, after the write
    marker_line: int  # where the marker is (the line above the bullet, or the bullet itself when inline)
    marker: str  # the marker as written
    observed: str
    newer_path: str
    newer_line: int  # the newer entry's bullet, after the write
    action: str  # "added" (a marker line inserted) | "replaced" (a marker line changed) | "inline"
    sha256: str  # of the file now
    previous_sha256: str
    supersession_id: int
    proposal_id: str | None
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class UnsupersedeResult:
    path: str
    line: int  # the entry's bullet, after the undo
    action: str  # "removed" (the marker line) | "restored" (the line that was there) | "reactivated" (status: active)
    exact: bool  # True when clawmem's record of its own write decided (the file is as it was before)
    marker_before: str  # the superseded marker that was there
    line_after: str | None  # what the marker's line (or the bullet line, inline) is now; None when removed
    sha256: str
    previous_sha256: str
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class SupersedeProposal:
    id: str
    short_id: str
    older_path: str
    older_line: int
    older_text: str
    newer_path: str
    newer_line: int
    newer_text: str
    reason: str
    origin_class: str
    status: str  # pending | accepted | rejected | stale
    created_at: datetime
    decided_at: datetime | None
    decision_note: str | None
    supersession_id: int | None
    duplicate: bool = False  # propose: an identical pending proposal was already there (returned as it is)


@dataclass(frozen=True)
class _Located:
    """One entry found in one read of its file."""

    rel: str
    path: Path
    raw: RawFile
    entry: Entry
    index: int  # 0-based index of the bullet line
    marker: StatusMarker | None


@dataclass(frozen=True)
class _Plan:
    """What a supersede would write (computed without writing)."""

    older: _Located
    newer: _Located
    after: RawFile
    kind: str
    before_line: str | None
    after_line: str
    marker: str
    observed: str
    line: int
    marker_line: int
    newer_line: int


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def _when(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


def _proposal(r: rows.ProposalRow, *, duplicate: bool = False) -> SupersedeProposal:
    return SupersedeProposal(
        id=r.id,
        short_id=r.id[:8],
        older_path=r.older_path,
        older_line=r.older_line,
        older_text=r.older_text,
        newer_path=r.newer_path,
        newer_line=r.newer_line,
        newer_text=r.newer_text,
        reason=r.reason,
        origin_class=r.origin_class,
        status=r.status,
        created_at=_when(r.created_at) or datetime.fromtimestamp(0, UTC),
        decided_at=_when(r.decided_at),
        decision_note=r.decision_note,
        supersession_id=r.supersession_id,
        duplicate=duplicate,
    )


def _describe_line(raw: RawFile, entries: list[Entry], ref: str, index: int) -> str:
    """Why the line at ``index`` is not the first line of a bullet entry, in words."""
    line = raw.lines[index].strip()
    number = index + 1
    for e in entries:
        if e.start_line < number <= e.end_line:
            return f"{ref} is inside the entry that starts at line {e.start_line}; give that line"
        if e.marker_line <= number < e.start_line and e.kind == "bullet":
            return f"{ref} is a marker line of the entry at line {e.start_line}; give that line"
    if not line:
        return f"{ref} is a blank line, not a bullet entry"
    if line.startswith("#"):
        return f"{ref} is a heading, not a bullet entry"
    if line.startswith("<!--"):
        return f"{ref} is a comment, not a bullet entry"
    return f"{ref} is not a bullet entry"


class CurationService:
    def __init__(self, runtime: Runtime, reindexer: Reindexer) -> None:
        self.runtime = runtime
        self.reindexer = reindexer

    # ------------------------------------------------------------------ reading

    def _resolve(self, ref: EntryRef, what: str) -> tuple[str, Path]:
        self.runtime.require_workspace()
        try:
            path = resolve_memory_path(self.runtime.workspace, ref.path)
        except ClawmemError as exc:
            raise ClawmemError(f"the {what}: {exc}") from None
        rel = path.relative_to(self.runtime.workspace.resolve()).as_posix()
        kind, _ = classify(rel)
        if kind in (KIND_DREAMS, KIND_DREAM_REPORT, KIND_DREAM_STATE):
            raise ClawmemError(
                f"the {what}: {rel} is Dreaming's, not curated memory "
                "(supersede entries of MEMORY.md, USER.md or memory/…)"
            )
        return rel, path

    def _locate(self, ref: EntryRef, what: str, raw: RawFile | None = None) -> _Located:
        rel, path = self._resolve(ref, what)
        raw = raw if raw is not None and raw.rel == rel else read_raw(rel, path, what)
        shown = f"{rel}:{ref.line}"
        total = len(raw.lines) - (1 if len(raw.lines) > 1 and not raw.lines[-1] else 0)
        if ref.line > total:
            raise ClawmemError(f"the {what} {shown} is past the end ({rel} has {total} lines)")
        entries = parse_entries(rel, raw.text, curated_root=rel in CURATED_ROOT_FILES)
        entry = next((e for e in entries if e.start_line == ref.line), None)
        if entry is None:
            raise ClawmemError(f"the {what}: {_describe_line(raw, entries, shown, ref.line - 1)}")
        if entry.kind != "bullet":
            raise ClawmemError(f"the {what}: {shown} is a {entry.kind}, not a bullet entry")
        index = ref.line - 1
        return _Located(rel, path, raw, entry, index, entry_status(raw.lines, index))

    # ------------------------------------------------------------------ planning

    def _observed(self, older: _Located) -> str:
        if older.marker is not None:
            return older.marker.observed
        if older.entry.observed:
            return older.entry.observed
        _, day = classify(older.rel)
        return day or self.runtime.clock.today()

    def _plan(self, older_ref: EntryRef, newer_ref: EntryRef) -> _Plan:
        older = self._locate(older_ref, "older entry")
        newer = self._locate(newer_ref, "newer entry", older.raw)
        if older.rel == newer.rel and older.index == newer.index:
            raise ClawmemError(f"{older.rel}:{older.index + 1} cannot supersede itself; give the newer entry with --by")
        if newer.marker is not None and newer.marker.superseded:
            by = f" by {newer.marker.by}" if newer.marker.by else ""
            raise ClawmemError(
                f"the newer entry {newer.rel}:{newer.index + 1} is itself superseded{by}; point at its successor"
            )
        m = older.marker
        if m is not None and m.superseded and m.by_path == newer.rel and m.by_line == newer.index + 1:
            here, there = f"{older.rel}:{older.index + 1}", f"{newer.rel}:{newer.index + 1}"
            raise ClawmemError(f"{here} is already superseded by {there}; nothing was changed")
        observed = self._observed(older)
        after = older.raw.copy()
        above = marker_line_above(after.lines, older.index)
        inline = inline_status_marker(after.lines[older.index]) if above is None else None
        newer_line = newer.index + 1
        if above is None and inline is None:
            after.insert(older.index, "")  # moves this file's pointers below it, the newer one's included
            if newer.rel == older.rel and newer.index >= older.index:
                newer_line += 1
            kind, before_line, marker_index, bullet_index = "added", None, older.index, older.index + 1
        elif above is not None:
            kind, before_line, marker_index, bullet_index = "replaced", after.lines[above], above, older.index
        else:
            kind, before_line, marker_index, bullet_index = "inline", after.lines[older.index], older.index, older.index
        marker = format_status_marker(StatusMarker(observed, "superseded", newer.rel, newer_line))
        if kind == "added":
            after.lines[marker_index] = marker
        elif kind == "replaced":
            line = after.lines[above] if above is not None else ""
            found = OBSERVED_MARKER.search(line)
            assert found is not None
            after.lines[marker_index] = line[: found.start()] + marker + line[found.end() :]
        else:
            assert inline is not None
            line = after.lines[older.index]
            after.lines[marker_index] = line[: inline.start()] + marker + line[inline.end() :]
        return _Plan(
            older=older,
            newer=newer,
            after=after,
            kind=kind,
            before_line=before_line,
            after_line=after.lines[marker_index],
            marker=marker,
            observed=observed,
            line=bullet_index + 1,
            marker_line=marker_index + 1,
            newer_line=newer_line,
        )

    # ------------------------------------------------------------------ supersede and undo

    def supersede(
        self, older: EntryRef | str, newer: EntryRef | str, *, proposal_id: str | None = None
    ) -> SupersedeResult:
        """Mark the entry at ``older`` (``PATH:LINE``) superseded by the one at ``newer``; see the module."""
        older_ref, newer_ref = as_ref(older, "the older entry"), as_ref(newer, "the newer entry")
        self.runtime.store.require_writable()  # before the file is touched
        folder = self._resolve(older_ref, "older entry")[1].parent
        with directory_lock(folder):  # from the read to the rename: no other clawmem writer in between
            plan = self._plan(older_ref, newer_ref)
            written = replace_file(plan.older.path, plan.after.to_bytes(), expected_sha256=plan.older.raw.sha256)
            with self.runtime.store.write() as conn:
                sid = rows.insert_supersession(
                    conn,
                    path=plan.older.rel,
                    bullet_text=bullet_key(plan.older.raw.lines[plan.older.index]),
                    kind=plan.kind,
                    before_line=plan.before_line,
                    after_line=plan.after_line,
                    newer_path=plan.newer.rel,
                    newer_line=plan.newer_line,
                    proposal_id=proposal_id,
                    created_at=_ms(self.runtime.clock.now()),
                )
        return SupersedeResult(
            path=plan.older.rel,
            line=plan.line,
            marker_line=plan.marker_line,
            marker=plan.marker,
            observed=plan.observed,
            newer_path=plan.newer.rel,
            newer_line=plan.newer_line,
            action=plan.kind,
            sha256=written.sha256,
            previous_sha256=plan.older.raw.sha256,
            supersession_id=sid,
            proposal_id=proposal_id,
            warnings=tuple(self._reindex(plan.older.rel)),
        )

    def unsupersede(self, older: EntryRef | str) -> UnsupersedeResult:
        """Undo the supersede of the entry at ``older`` (``PATH:LINE``); see the module."""
        ref = as_ref(older, "the entry")
        self.runtime.store.require_writable()  # before the file is touched
        folder = self._resolve(ref, "entry")[1].parent
        with directory_lock(folder):
            loc = self._locate(ref, "entry")
            if loc.marker is None or not loc.marker.superseded:
                raise ClawmemError(f"{loc.rel}:{loc.index + 1} is not marked superseded; nothing was changed")
            after = loc.raw.copy()
            above = marker_line_above(after.lines, loc.index)
            at = above if above is not None else loc.index
            current = after.lines[at]
            record = self._record(loc, current)
            exact = record is not None
            if record is not None and record.kind == "added":
                after.remove(at)
                action, line_after = "removed", None
            elif record is not None:
                after.lines[at] = record.before_line or ""
                action, line_after = "restored", after.lines[at]
            else:
                action, line_after = _undo_by_convention(after, loc, above)
            written = replace_file(loc.path, after.to_bytes(), expected_sha256=loc.raw.sha256)
            if record is not None:
                with self.runtime.store.write() as conn:
                    rows.mark_undone(conn, record.id, _ms(self.runtime.clock.now()))
        bullet = loc.index + 1 - (len(loc.raw.lines) - len(after.lines))
        return UnsupersedeResult(
            path=loc.rel,
            line=bullet,
            action=action,
            exact=exact,
            marker_before=format_status_marker(loc.marker),
            line_after=line_after,
            sha256=written.sha256,
            previous_sha256=loc.raw.sha256,
            warnings=tuple(self._reindex(loc.rel)),
        )

    def _record(self, loc: _Located, current: str) -> rows.SupersessionRow | None:
        """clawmem's record of the write that put the current marker there, if it is one."""
        key = bullet_key(loc.raw.lines[loc.index])
        for r in rows.applied_supersessions(self.runtime.store.conn(), loc.rel, key):
            if pointer_free(r.after_line) == pointer_free(current):
                return r
        return None

    def _reindex(self, rel: str) -> list[str]:
        forget_markers(self.runtime.workspace / rel)
        forget_markers(self.runtime.workspace.resolve() / rel)
        try:
            self.reindexer.sync(only={rel}, embed=False, lock_timeout=5.0)
        except ClawmemError as exc:
            return [f"the index was not refreshed for {rel} ({exc}); the next sync will do it"]
        return []

    # ------------------------------------------------------------------ proposals

    def propose(
        self, older: EntryRef | str, newer: EntryRef | str, reason: str, *, origin_class: str = "agent"
    ) -> SupersedeProposal:
        """Record an agent's proposal (checked like a supersede, nothing written to the files)."""
        text = " ".join(str(reason).split())
        if not text:
            raise ClawmemError("the reason is empty: say why the newer entry replaces the older one")
        if len(text) > MAX_REASON_CHARS:
            raise ClawmemError(f"the reason is {len(text):,} characters; at most {MAX_REASON_CHARS:,}")
        if origin_class not in ("owner", "agent", "untrusted", "system"):
            raise ClawmemError(f"unknown origin class {origin_class!r}")
        plan = self._plan(as_ref(older, "the older entry"), as_ref(newer, "the newer entry"))
        o, n = plan.older, plan.newer
        older_text, newer_text = bullet_key(o.raw.lines[o.index]), bullet_key(n.raw.lines[n.index])
        conn = self.runtime.store.conn()
        for earlier in rows.same_pair(conn, o.rel, older_text, n.rel, newer_text):
            if earlier.status == "pending":
                return _proposal(earlier, duplicate=True)
            if earlier.status == "rejected":
                day = (_when(earlier.decided_at) or datetime.fromtimestamp(0, UTC)).date().isoformat()
                note = f" ({earlier.decision_note})" if earlier.decision_note else ""
                raise ClawmemError(f"the person rejected this supersession on {day}{note}; it is not proposed again")
        if len(rows.list_proposals(conn, ("pending",))) >= MAX_PENDING:
            raise ClawmemError(f"{MAX_PENDING} proposals are waiting for the person already; none was added")
        row = rows.ProposalRow(
            id=uuid.uuid4().hex,
            older_path=o.rel,
            older_line=o.index + 1,
            older_text=older_text,
            newer_path=n.rel,
            newer_line=n.index + 1,
            newer_text=newer_text,
            reason=text,
            origin_class=origin_class,
            status="pending",
            created_at=_ms(self.runtime.clock.now()),
            decided_at=None,
            decision_note=None,
            supersession_id=None,
        )
        with self.runtime.store.write() as wconn:
            rows.insert_proposal(wconn, row)
        return _proposal(row)

    def proposals(self, status: str | None = "pending") -> list[SupersedeProposal]:
        """Proposals in one state (``None``: all), oldest first."""
        if status is not None and status not in PROPOSAL_STATUSES:
            raise ClawmemError(f"unknown proposal status {status!r} ({', '.join(PROPOSAL_STATUSES)})")
        found = rows.list_proposals(self.runtime.store.conn(), None if status is None else (status,))
        return [_proposal(r) for r in found]

    def proposal(self, ident: str) -> SupersedeProposal:
        return _proposal(self._resolve_proposal(ident))

    def _resolve_proposal(self, ident: str) -> rows.ProposalRow:
        conn = self.runtime.store.conn()
        key = str(ident).strip().lower()
        if not key:
            raise ClawmemError("give the proposal's id (see `clawmem supersede --proposals`)")
        row = rows.get_proposal(conn, key)
        if row is not None:
            return row
        if len(key) < MIN_ID_PREFIX:
            raise ClawmemError(f"give the proposal's id or at least its first {MIN_ID_PREFIX} characters")
        found = rows.proposals_by_prefix(conn, key)
        if not found:
            raise ClawmemError(f"no supersede proposal with id {ident.strip()!r} (see `clawmem supersede --proposals`)")
        if len(found) > 1:
            raise ClawmemError(f"id prefix {ident.strip()!r} matches several proposals; give more characters")
        return found[0]

    def _decide(
        self, row: rows.ProposalRow, status: str, note: str | None, sid: int | None = None
    ) -> SupersedeProposal:
        now = _ms(self.runtime.clock.now())
        with self.runtime.store.write() as conn:
            rows.decide(conn, row.id, status, now, note, sid)
        return _proposal(replace(row, status=status, decided_at=now, decision_note=note, supersession_id=sid))

    def _pending(self, ident: str) -> rows.ProposalRow:
        row = self._resolve_proposal(ident)
        if row.status != "pending":
            raise ClawmemError(f"proposal {row.id[:8]} is {row.status} already; nothing was changed")
        return row

    def _find_again(self, path: str, line: int, text: str, what: str) -> EntryRef | str:
        """The entry a proposal named, at its line or — when lines moved — the one bullet with its
        text; a note (str) saying why it cannot be found otherwise."""
        ref = EntryRef(path, line)
        rel, file = self._resolve(ref, what)
        raw = read_raw(rel, file, what)
        if line <= len(raw.lines) and bullet_key(raw.lines[line - 1]) == text:
            return ref
        entries = parse_entries(rel, raw.text, curated_root=rel in CURATED_ROOT_FILES)
        same = [e for e in entries if e.kind == "bullet" and bullet_key(raw.lines[e.start_line - 1]) == text]
        if len(same) == 1:
            return EntryRef(path, same[0].start_line)
        if not same:
            return f"the {what} {path}:{line} changed since it was proposed"
        return f"the {what}'s text is now at {len(same)} places in {path}"

    def accept(self, ident: str) -> tuple[SupersedeProposal, SupersedeResult]:
        """Apply a pending proposal with the same write as :meth:`supersede`; a proposal whose
        entries changed since is marked stale and refused (nothing written)."""
        row = self._pending(ident)
        older = self._find_again(row.older_path, row.older_line, row.older_text, "older entry")
        newer = self._find_again(row.newer_path, row.newer_line, row.newer_text, "newer entry")
        for found in (older, newer):
            if isinstance(found, str):
                self._decide(row, "stale", found)
                raise ClawmemError(f"proposal {row.id[:8]} is stale: {found}; nothing was written")
        assert isinstance(older, EntryRef) and isinstance(newer, EntryRef)
        result = self.supersede(older, newer, proposal_id=row.id)
        return self._decide(row, "accepted", None, result.supersession_id), result

    def reject(self, ident: str, reason: str | None = None) -> SupersedeProposal:
        row = self._pending(ident)
        note = " ".join((reason or "").split()) or None
        return self._decide(row, "rejected", note)


def read_raw(rel: str, path: Path, what: str) -> RawFile:
    """One read of a memory file for an edit: its lines with their ends and the hash of its bytes."""
    try:
        if path.is_symlink() or not path.is_file():
            raise FileNotFoundError
        if path.stat().st_size > MAX_EDIT_BYTES:
            raise ClawmemError(f"the {what}'s file {rel} is larger than {MAX_EDIT_BYTES:,} bytes")
        data = path.read_bytes()
    except FileNotFoundError:
        raise ClawmemError(f"the {what}'s file {rel} does not exist") from None
    except OSError as exc:
        raise ClawmemError(f"the {what}'s file {rel} cannot be read: {exc.strerror or exc}") from None
    try:
        return RawFile.from_bytes(rel, data)
    except ValueError as exc:
        raise ClawmemError(f"the {what}'s file {rel} cannot be read: {exc}") from None


def _undo_by_convention(after: RawFile, loc: _Located, above: int | None) -> tuple[str, str | None]:
    """Undo a superseded marker clawmem has no record of: in USER.md it becomes ``status: active``
    (every USER.md entry carries a marker); elsewhere it is removed."""
    assert loc.marker is not None
    active = format_status_marker(StatusMarker(loc.marker.observed, "active"))
    at = above if above is not None else loc.index
    line = after.lines[at]
    found = OBSERVED_MARKER.search(line) if above is not None else inline_status_marker(line)
    assert found is not None
    if loc.rel == USER_FILE:
        after.lines[at] = line[: found.start()] + active + line[found.end() :]
        return "reactivated", after.lines[at]
    if above is not None:
        after.remove(above)
        return "removed", None
    start = found.start()
    while start > 0 and line[start - 1] in " \t":
        start -= 1
    after.lines[at] = line[:start] + line[found.end() :]
    return "removed", after.lines[at]


__all__ = [
    "PROPOSAL_STATUSES",
    "CurationService",
    "SupersedeProposal",
    "SupersedeResult",
    "UnsupersedeResult",
    "read_raw",
]
