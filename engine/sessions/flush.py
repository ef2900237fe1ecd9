"""Flush provenance (docs/memory-core.md §8, OpenClaw's ``daily-provenance``): who wrote which lines of a memory file.

Every write clawmem makes to a daily note (the pre-compaction flush) or a session-memory note is
recorded as a *segment*: a line-aligned byte range with the SHA-256 of its bytes, tagged ``agent``
or ``untrusted`` and linked to the session it came from. Each tracked file also keeps the size and
hash it had after the last tracked write, so the next write (or an index run) can tell:

- **only appends since**: the old bytes are a prefix of the file. Bytes added by someone else
  (the agent's own tools, the user) are recorded as an ``external`` segment — ``agent``, no
  session: workspace files are inside the operator's trust boundary;
- **a non-append change**: the old bytes are not a prefix any more. Segments are found again by
  their hash (line-aligned), and every line that no segment accounts for from the first changed
  segment on becomes a ``changed`` segment tagged ``untrusted``.

A file counts as untrusted for promotion when any of its segments is (:mod:`engine.sessions.trust`).
Lines are numbered like the index numbers them (split on ``\\n``, 1-based), so a segment's line
range maps onto chunk line ranges directly.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import apsw
from clawmem.engine.errors import ClawmemError, ConflictError
from clawmem.engine.store import sessions_rows as rows
from clawmem.engine.store.db import begin_immediate
from clawmem.engine.store.sessions_rows import FileStateRow, SegmentRow
from clawmem.engine.workspace.writes import MISSING, WriteResult, append_text, directory_lock, replace_file

BOM = b"\xef\xbb\xbf"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def line_spans(data: bytes) -> list[tuple[int, int]]:
    """Byte span [start, end) of each line, newline included; as many lines as ``text.split("\\n")``."""
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        nl = data.find(b"\n", start)
        if nl < 0:
            spans.append((start, len(data)))
            return spans
        spans.append((start, nl + 1))
        start = nl + 1


def line_of(spans: Sequence[tuple[int, int]], offset: int) -> int:
    """1-based line that contains byte ``offset`` (the last line for an offset at the end)."""
    lo, hi = 0, len(spans) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if spans[mid][0] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def last_line_of(spans: Sequence[tuple[int, int]], start: int, end: int) -> int:
    """The last line a non-empty byte range [start, end) touches."""
    return line_of(spans, max(start, end - 1))


# ------------------------------------------------------------------------------------ resolution


@dataclass(frozen=True)
class LocatedSegment:
    """A stored segment found in the current bytes (at its stored place, or moved by an edit)."""

    row: SegmentRow
    byte_start: int
    byte_end: int
    line_start: int
    line_end: int
    moved: bool


@dataclass(frozen=True)
class FileProvenance:
    """What the segments of one file say about its current bytes."""

    rel: str
    tracked: bool  # clawmem has written or checked this file before
    consistent: bool  # only appends since the last tracked write
    located: tuple[LocatedSegment, ...]
    lost: tuple[SegmentRow, ...]  # live segments whose bytes are no longer in the file
    changed_lines: tuple[tuple[int, int], ...]  # untrusted line runs a non-append change left
    appended_from_line: int | None  # first line appended outside tracked writes (agent, no session)
    line_count: int


def _find(data: bytes, spans: Sequence[tuple[int, int]], seg: SegmentRow) -> tuple[int, int] | None:
    """The segment's bytes at its stored place, else the nearest line-aligned window with its hash."""
    length = seg.byte_end - seg.byte_start
    if seg.byte_end <= len(data) and sha256(data[seg.byte_start : seg.byte_end]) == seg.sha256:
        return seg.byte_start, seg.byte_end
    best: tuple[int, int] | None = None
    for start, _ in spans:
        end = start + length
        if end > len(data):
            break
        if end < len(data) and data[end - 1 : end] != b"\n" and length:
            continue
        if sha256(data[start:end]) == seg.sha256 and (
            best is None or abs(start - seg.byte_start) < abs(best[0] - seg.byte_start)
        ):
            best = (start, end)
    return best


def resolve(rel: str, data: bytes, segments: Sequence[SegmentRow], state: FileStateRow | None) -> FileProvenance:
    """Place every stored segment in ``data`` and find what changed outside tracked writes."""
    spans = line_spans(data)
    live = [s for s in segments if s.status == "live"]
    consistent = state is not None and len(data) >= state.size and sha256(data[: state.size]) == state.sha256
    located: list[LocatedSegment] = []
    lost: list[SegmentRow] = []
    proven_end = 0  # bytes up to here are unchanged since the last tracked write
    prefix_ok = True
    for seg in sorted(live, key=lambda s: (s.byte_start, s.seq)):
        found = (seg.byte_start, seg.byte_end) if consistent else _find(data, spans, seg)
        if found is None:
            lost.append(seg)
            prefix_ok = False
            continue
        moved = found != (seg.byte_start, seg.byte_end)
        if moved:
            prefix_ok = False
        elif prefix_ok:
            proven_end = max(proven_end, found[1])
        a, b = found
        located.append(
            LocatedSegment(
                seg, a, b, line_of(spans, a), last_line_of(spans, a, b) if b > a else line_of(spans, a), moved
            )
        )
    changed: list[tuple[int, int]] = []
    appended_from: int | None = None
    if state is not None and not consistent:
        # Everything after the unchanged prefix that no located segment accounts for is untrusted.
        covered: set[int] = set()
        for loc in located:
            if loc.moved or loc.byte_start >= proven_end:
                covered.update(range(loc.line_start, loc.line_end + 1))
        first = line_of(spans, proven_end) if proven_end < len(data) else None
        if first is not None:
            run_start: int | None = None
            for line in range(first, len(spans) + 1):
                a, b = spans[line - 1]
                content = b > a
                if line in covered or not content:
                    if run_start is not None:
                        changed.append((run_start, line - 1))
                        run_start = None
                    continue
                if run_start is None:
                    run_start = line
            if run_start is not None:
                changed.append((run_start, len(spans)))
    elif state is not None and consistent and len(data) > state.size:
        appended_from = line_of(spans, state.size)
    return FileProvenance(
        rel=rel,
        tracked=state is not None or bool(segments),
        consistent=consistent,
        located=tuple(located),
        lost=tuple(lost),
        changed_lines=tuple(changed),
        appended_from_line=appended_from,
        line_count=len(spans),
    )


def load(conn: apsw.Connection, rel: str, data: bytes) -> FileProvenance:
    return resolve(rel, data, rows.segments_for_path(conn, rel), rows.file_state(conn, rel))


# ------------------------------------------------------------------------------- reconciliation


def _span_bytes(spans: Sequence[tuple[int, int]], first: int, last: int) -> tuple[int, int]:
    return spans[first - 1][0], spans[last - 1][1]


def reconcile(conn: apsw.Connection, rel: str, data: bytes, now_ms: int) -> FileProvenance:
    """Record what happened to a tracked file since the last tracked write (call inside a transaction).

    External appends become an ``external`` agent segment, a non-append change becomes ``changed``
    untrusted segments, moved segments get their new place, vanished ones are marked ``lost``; the
    file state is set to ``data``. Afterwards every live segment sits at its stored range.
    """
    prov = load(conn, rel, data)
    spans = line_spans(data)
    state = rows.file_state(conn, rel)
    seq = rows.next_segment_seq(conn, rel)

    def add(kind: str, origin: str, start: int, end: int) -> None:
        nonlocal seq
        if end <= start:
            return
        rows.insert_segment(
            conn,
            SegmentRow(
                rel,
                seq,
                start,
                end,
                line_of(spans, start),
                last_line_of(spans, start, end),
                sha256(data[start:end]),
                origin,
                kind,
                None,
                None,
                None,
                "live",
                now_ms,
            ),
        )
        seq += 1

    for loc in prov.located:
        if loc.moved:
            rows.update_segment_range(
                conn, rel, loc.row.seq, loc.byte_start, loc.byte_end, loc.line_start, loc.line_end, loc.row.sha256
            )
    for seg in prov.lost:
        rows.mark_segment_lost(conn, rel, seg.seq)
    for first, last in prov.changed_lines:
        add("changed", "untrusted", *_span_bytes(spans, first, last))
    if state is None and not prov.located and data:
        add("external", "agent", 0, len(data))  # content that was there before clawmem's first write
    elif state is not None and prov.consistent and len(data) > state.size:
        add("external", "agent", state.size, len(data))
    rows.set_file_state(conn, rel, len(data), sha256(data), now_ms)
    return load(conn, rel, data)


# --------------------------------------------------------------------------------------- writes


@dataclass(frozen=True)
class WrittenSegment:
    rel: str
    line_start: int
    line_end: int
    origin_class: str
    write: WriteResult
    recorded_changes: int  # untrusted regions found (a non-append change since the last write)
    recorded_external: int  # external appends recorded as agent segments


def _read(path: Path) -> bytes:
    if path.is_symlink():
        raise ClawmemError(f"{path.name} is a symbolic link; clawmem does not write through links")
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise ClawmemError(f"cannot read {path.name}: {exc.strerror or exc}") from exc


APPEND_ATTEMPTS = 5  # a writer outside clawmem changed the file between our read and our write: re-read


def append_segment(
    conn: apsw.Connection,
    workspace: Path,
    rel: str,
    text: str,
    *,
    origin: str,
    kind: str,
    session_id: str | None,
    session_key: str | None,
    session_kind: str | None,
    now_ms: int,
    create_only: bool = False,
) -> WrittenSegment:
    """Append ``text`` (whole lines) to ``rel`` and record it as one segment.

    ``create_only`` writes a new file and refuses when it exists (session-memory notes). The file
    write is atomic and hash-checked against the bytes read here; the provenance rows are written
    in one transaction around it. Appenders are serialized by the folder's :func:`directory_lock`, and a write
    refused because a program outside clawmem changed the file meanwhile is retried on the new bytes.
    """
    if origin not in ("agent", "untrusted"):
        raise ClawmemError(f"unknown flush origin {origin!r} (agent or untrusted)")
    path = workspace / rel
    with directory_lock(path.parent):
        for attempt in range(APPEND_ATTEMPTS):
            seen = _read(path)
            try:
                return _append_locked(
                    conn,
                    path,
                    rel,
                    text,
                    origin=origin,
                    kind=kind,
                    session_id=session_id,
                    session_key=session_key,
                    session_kind=session_kind,
                    now_ms=now_ms,
                    create_only=create_only,
                )
            except ConflictError:
                # Retry only when our bytes did not land (a retry must never write a line twice).
                landed = text.replace("\r\n", "\n").strip().encode("utf-8") in _read(path)[len(seen) :]
                if create_only or landed or attempt == APPEND_ATTEMPTS - 1:
                    raise
                time.sleep(0.01 * (attempt + 1))
    raise AssertionError("unreachable")


def _append_locked(
    conn: apsw.Connection,
    path: Path,
    rel: str,
    text: str,
    *,
    origin: str,
    kind: str,
    session_id: str | None,
    session_key: str | None,
    session_kind: str | None,
    now_ms: int,
    create_only: bool,
) -> WrittenSegment:
    old = _read(path)
    if create_only and (old or path.exists()):
        raise ClawmemError(f"{rel} already exists; nothing was written")
    body = text if text.endswith("\n") else text + "\n"
    before = len(rows.segments_for_path(conn, rel))
    begin_immediate(conn)  # DatabaseLocked when another process writes
    try:
        if old or rows.file_state(conn, rel) is not None:
            reconcile(conn, rel, old, now_ms)
        if create_only:
            write = replace_file(path, body.replace("\r\n", "\n").encode("utf-8"), expected_sha256=MISSING)
        else:
            write = append_text(path, body, expected_sha256=sha256(old) if old else MISSING)
        new = path.read_bytes()
        if not new.startswith(old):
            raise ClawmemError(f"{rel} changed during the write; check the file")
        spans = line_spans(new)
        start = len(old) + (0 if not old or old.endswith(b"\n") else (2 if b"\r\n" in old else 1))
        start = min(start, len(new))
        end = len(new)
        seq = rows.next_segment_seq(conn, rel)
        rows.insert_segment(
            conn,
            SegmentRow(
                rel,
                seq,
                start,
                end,
                line_of(spans, start),
                last_line_of(spans, start, end),
                sha256(new[start:end]),
                origin,
                kind,
                session_id,
                session_key,
                session_kind,
                "live",
                now_ms,
            ),
        )
        rows.set_file_state(conn, rel, len(new), sha256(new), now_ms)
        after = rows.segments_for_path(conn, rel)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    new_rows = after[before:]
    changes = sum(1 for s in new_rows if s.kind == "changed")
    external = sum(1 for s in new_rows if s.kind == "external")
    return WrittenSegment(rel, line_of(spans, start), last_line_of(spans, start, end), origin, write, changes, external)


# ------------------------------------------------------------------------------- line removal


def remove_lines(data: bytes, remove: set[int]) -> bytes:
    """``data`` without the given 1-based lines; every other byte is kept (a leading BOM too)."""
    spans = line_spans(data)
    out = bytearray()
    for n, (a, b) in enumerate(spans, start=1):
        if n in remove:
            if n == 1 and data.startswith(BOM):
                out += BOM
            continue
        out += data[a:b]
    return bytes(out)


def remap_after_removal(
    conn: apsw.Connection, rel: str, old: bytes, new: bytes, removed: set[int], now_ms: int
) -> None:
    """Move every segment of ``rel`` onto ``new`` (``old`` minus ``removed`` lines), inside a transaction.

    Segments whose lines were all removed are deleted; the others keep their provenance with the
    range and hash of their remaining lines. ``rel`` must have been reconciled against ``old``.
    """
    old_spans = line_spans(old)
    new_spans = line_spans(new)
    mapping: dict[int, int] = {}
    kept = 0
    for n in range(1, len(old_spans) + 1):
        if n in removed:
            continue
        kept += 1
        mapping[n] = kept
    for seg in rows.segments_for_path(conn, rel):
        if seg.status != "live":
            continue
        lines = [mapping[n] for n in range(seg.line_start, seg.line_end + 1) if n in mapping]
        lines = [n for n in lines if n <= len(new_spans)]
        if not lines or not any(new_spans[n - 1][1] > new_spans[n - 1][0] for n in lines):
            rows.delete_segment(conn, rel, seg.seq)
            continue
        first, last = lines[0], lines[-1]
        a = new_spans[first - 1][0]
        b = new_spans[last - 1][1]
        if first == mapping.get(seg.line_start):
            # Keep a mid-line start (a segment appended after content without a final newline).
            a = new_spans[first - 1][0] + max(0, seg.byte_start - old_spans[seg.line_start - 1][0])
        if seg.line_end in mapping and mapping[seg.line_end] == last:
            b = new_spans[last - 1][0] + (seg.byte_end - old_spans[seg.line_end - 1][0])
        b = min(max(a, b), len(new))
        rows.update_segment_range(conn, rel, seg.seq, a, b, first, last, sha256(new[a:b]))
    if new:
        rows.set_file_state(conn, rel, len(new), sha256(new), now_ms)
    else:
        rows.delete_file_state(conn, rel)


def forget_file(conn: apsw.Connection, rel: str) -> None:
    """A tracked file was deleted: its provenance goes with it."""
    rows.delete_segments_for_path(conn, rel)
    rows.delete_file_state(conn, rel)
