"""``SessionService`` (``engine.sessions``): transcripts, session-memory notes and the append-only flush.

**Import** (``clawmem session import FILE.jsonl``): one JSON object per line with ``session_id``,
``session_key``, ``kind`` (interactive/cron/heartbeat/subagent), ``channel``, ``sender``, ``role``
(user/assistant/tool), ``text``, ``network`` (true for a tool result fetched from the web) and
``ts`` (ISO 8601; without a zone it is UTC). Blank lines are skipped; other keys are kept in the
stored event. A file may hold several sessions; a session's key, kind and channel must agree on
every line. Every line is checked before anything is written and the whole file is imported in
one transaction, so a bad line (reported as ``line N: …``) leaves nothing half-imported. A
forgotten session (tombstoned) is refused; re-importing identical events is a no-op.

Each event's origin class is assigned at import by :func:`engine.sessions.trust.classify_events` (role,
session kind, channel and turn order — never the text) and stored beside it.

**Session-memory note** (OpenClaw's ``session-memory`` hook, written on ``/new``):
``memory/YYYY-MM-DD-<slug>.md`` with ``# Session: <date> <time> UTC``, the ``Session Key``,
``Session ID`` and ``Source`` bullets and a ``## Conversation Summary`` of the last 15 user and
assistant messages (commands starting with ``/`` skipped), one message per line. clawmem leaves
out every turn whose origin is not owner or agent (network-tainted replies, non-owner messages),
so a poisoned web page never reaches a note. The date and time are the session's last event
(UTC); the slug comes from the first user message written into it (ASCII words, else
``session``). Notes are written for interactive sessions only, as OpenClaw's hook runs on ``/new``.

**Flush** (``flush``): appends whole lines to ``memory/<date>.md`` and records a provenance
segment (:mod:`engine.sessions.flush`) with the session, tagged ``agent`` or ``untrusted`` by the program
(docs/memory-core.md §8): ``untrusted`` when the session's current turn is network-tainted or untrusted (so a
paraphrase of a poisoned page is untrusted too), or when the text repeats an untrusted turn. The
caller may lower the class to ``untrusted``, never raise it: ``origin="agent"`` on a tainted
session is refused and nothing is written.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw
from clawmem.engine.config import parse_instant
from clawmem.engine.errors import ClawmemError, ConfigError
from clawmem.engine.sessions import flush as flushing
from clawmem.engine.sessions import trust
from clawmem.engine.store import sessions_rows as rows
from clawmem.engine.store.sessions_rows import SegmentRow, WindowRow
from clawmem.engine.times import iso_ms

if TYPE_CHECKING:
    from clawmem.engine.runtime import Runtime

KINDS = ("interactive", "cron", "heartbeat", "subagent")
ROLES = ("user", "assistant", "tool")
REQUIRED = ("session_id", "session_key", "kind", "channel", "sender", "role", "text", "network", "ts")
NOTE_MESSAGES = 15  # OpenClaw's session-memory default ``messages``
MAX_IMPORT_BYTES = 64 * 1024 * 1024
MAX_ID_CHARS = 256
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# ------------------------------------------------------------------------------------ results


@dataclass(frozen=True)
class TrustCounts:
    owner: int = 0
    agent: int = 0
    system: int = 0
    untrusted: int = 0


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    session_key: str
    kind: str
    channel: str
    sender: str
    started_at: str  # ISO 8601 UTC
    ended_at: str
    event_count: int
    imported_at: str
    source_file: str | None
    note_path: str | None
    channel_trusted: bool
    trust: TrustCounts
    tainted_turns: int  # assistant/tool events produced after a network result in their turn
    network_results: int
    lowest_origin: str  # least trusted class among the events
    flush_segments: int
    forgotten_at: str | None  # the tombstone's date (the transcript is kept after a forget)


@dataclass(frozen=True)
class TranscriptTurn:
    seq: int
    turn: int  # 1-based user turn this event belongs to (0: before the first user message)
    role: str
    sender: str
    text: str
    network: bool
    ts: str
    origin_class: str
    tainted: bool


@dataclass(frozen=True)
class SegmentView:
    """One flush-provenance segment, where it is now and the class it gives its lines."""

    path: str
    seq: int
    kind: str  # flush | note | external | changed
    origin_class: str  # as recorded (agent | untrusted)
    effective_class: str  # what the lines get (system for a non-interactive session)
    session_id: str | None
    session_key: str | None
    line_start: int | None  # None: the bytes are no longer in the file
    line_end: int | None
    created_at: str


@dataclass(frozen=True)
class SessionDetail:
    summary: SessionSummary
    turns: tuple[TranscriptTurn, ...]
    segments: tuple[SegmentView, ...]
    entry_keys: tuple[str, ...]  # MEMORY.md entries with an origin row pointing at this session


@dataclass(frozen=True)
class NoteResult:
    session_id: str
    path: str
    line_count: int
    turns_included: int
    turns_left_out: int  # untrusted or system turns not written into the note


@dataclass(frozen=True)
class ImportedSession:
    session_id: str
    session_key: str
    kind: str
    channel: str
    event_count: int
    status: str  # imported | unchanged
    trust: TrustCounts
    tainted_turns: int
    note: NoteResult | None
    note_skipped: str | None  # why no note was written, when one was asked for


@dataclass(frozen=True)
class ImportResult:
    source_file: str
    sessions: tuple[ImportedSession, ...]
    events: int  # events written now
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class FlushResult:
    session_id: str
    path: str
    line_start: int
    line_end: int
    origin_class: str  # as recorded on the segment: agent | untrusted
    origin_derived: bool  # the class came from the session's turns (the caller did not lower it)
    untrusted_regions: int  # non-append changes found since the last tracked write
    external_appends: int  # appends by someone else, recorded as agent segments
    origin_reason: str | None = None  # why untrusted (the tainted turn, a repeat, or the caller)
    effective_class: str = "agent"  # what indexing gives the lines (system for non-interactive sessions)


@dataclass(frozen=True)
class AppendResult:
    """A sessionless append to today's diary (an agent writing through the MCP server)."""

    path: str
    line_start: int
    line_end: int
    origin_class: str  # as recorded on the segment: agent | untrusted
    origin_reason: str  # why this class (the writer's own, or what lowered it)
    untrusted_regions: int  # non-append changes found since the last tracked write
    external_appends: int  # appends by someone else, recorded as agent segments


@dataclass(frozen=True)
class TranscriptHit:
    session_id: str
    seq: int
    role: str
    snippet: str
    origin_class: str


@dataclass(frozen=True)
class FileProvenanceView:
    path: str
    tracked: bool
    file_class: str | None  # least trusted line class; None: no line has flush provenance
    consistent: bool  # only appends since the last tracked write
    segments: tuple[SegmentView, ...]
    changed_lines: tuple[tuple[int, int], ...]  # untrusted regions not yet recorded


@dataclass(frozen=True)
class Tombstone:
    session_id: str
    reason: str
    created_at: str


# ------------------------------------------------------------------------------------ parsing


@dataclass(frozen=True)
class _Event:
    line: int
    obj: dict[str, Any]
    role: str
    text: str
    network: bool
    ts_ms: int


@dataclass
class _Parsed:
    session_id: str
    session_key: str
    kind: str
    channel: str
    first_line: int
    events: list[_Event]


def _fail(name: str, line: int, message: str) -> ClawmemError:
    return ClawmemError(f"{name}: line {line}: {message}; nothing was imported")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_name(name: str, n: int, obj: dict[str, Any], key: str, *, allow_empty: bool = False) -> str:
    value = obj[key]
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise _fail(name, n, f"'{key}' must be a non-empty string (got {_short(value)})")
    if _CONTROL.search(value):
        raise _fail(name, n, f"'{key}' contains a control character or a line break")
    if len(value) > MAX_ID_CHARS:
        raise _fail(name, n, f"'{key}' is longer than {MAX_ID_CHARS} characters")
    return value.strip()


def parse_jsonl(data: bytes, name: str) -> list[_Parsed]:
    """Validate every line; the first problem raises a one-line ``line N: …`` error."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClawmemError(f"{name}: not UTF-8 text (byte {exc.start}); nothing was imported") from exc
    text = text.removeprefix("\ufeff")
    sessions: dict[str, _Parsed] = {}
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _fail(name, n, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise _fail(name, n, f"expected a JSON object, got {type(obj).__name__}")
        try:  # a \ud800 escape decodes to a lone surrogate, which no UTF-8 store or terminal takes
            _event_json(obj).encode("utf-8")
        except UnicodeEncodeError:
            raise _fail(name, n, "a \\u escape is a lone surrogate (\\ud800-\\udfff), not text") from None
        missing = [k for k in REQUIRED if k not in obj]
        if missing:
            raise _fail(name, n, f"missing key{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        sid = _check_name(name, n, obj, "session_id")
        key = _check_name(name, n, obj, "session_key")
        channel = _check_name(name, n, obj, "channel")
        _check_name(name, n, obj, "sender", allow_empty=True)
        kind = obj["kind"]
        if kind not in KINDS:
            raise _fail(name, n, f"'kind' must be one of {', '.join(KINDS)} (got {_short(kind)})")
        role = obj["role"]
        if role not in ROLES:
            raise _fail(name, n, f"'role' must be one of {', '.join(ROLES)} (got {_short(role)})")
        if not isinstance(obj["text"], str):
            raise _fail(name, n, f"'text' must be a string (got {_short(obj['text'])})")
        network = obj["network"]
        if not isinstance(network, bool):
            raise _fail(name, n, f"'network' must be true or false (got {_short(network)})")
        if network and role != "tool":
            raise _fail(name, n, "'network' can be true only on a tool result (role tool)")
        ts = obj["ts"]
        if not isinstance(ts, str):
            raise _fail(name, n, f"'ts' must be an ISO 8601 string (got {_short(ts)})")
        try:
            ts_ms = int(parse_instant(ts).timestamp() * 1000)
        except ConfigError:
            raise _fail(name, n, f"'ts' is not an ISO 8601 date-time (got {_short(ts)})") from None
        current = sessions.get(sid)
        if current is None:
            current = sessions[sid] = _Parsed(sid, key, kind, channel, n, [])
        else:
            for field, value in (("session_key", key), ("kind", kind), ("channel", channel)):
                first = getattr(current, field)
                if first != value:
                    raise _fail(
                        name, n, f"session {sid} has {field} {value!r} here but {first!r} on line {current.first_line}"
                    )
        current.events.append(_Event(n, obj, role, obj["text"], network, ts_ms))
    if not sessions:
        raise ClawmemError(f"{name}: no events (one JSON object per line); nothing was imported")
    return list(sessions.values())


def _event_json(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def slugify(text: str, max_words: int = 5, max_chars: int = 40) -> str:
    """A short, file-name-safe slug from words of ``text`` (ASCII letters and digits), or ``session``."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    words: list[str] = []
    for word in re.findall(r"[a-z0-9]+", folded):
        if len("-".join([*words, word])) > max_chars:
            break
        words.append(word)
        if len(words) >= max_words:
            break
    return "-".join(words) or "session"


def _counts(classes: list[str]) -> TrustCounts:
    c = Counter(classes)
    return TrustCounts(c["owner"], c["agent"], c["system"], c["untrusted"])


# ------------------------------------------------------------------------------------ service


class SessionService:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @property
    def _conn(self) -> apsw.Connection:
        return self.runtime.store.conn()

    def _now_ms(self) -> int:
        return int(self.runtime.clock.timestamp() * 1000)

    def _trusted(self, channel: str) -> bool:
        return trust.channel_trusted(channel, trust.trusted_channels(self.runtime.settings))

    def _refuse_forgotten(self, session_id: str) -> None:
        tomb = rows.tombstone(self._conn, session_id)
        if tomb is not None:
            day = (iso_ms(tomb.created_at) or "")[:10]
            raise ClawmemError(f"session {session_id} was forgotten on {day}; re-import refused")

    # -------------------------------------------------------------------------------- import

    def import_file(self, path: Path | str, *, note: bool = False) -> ImportResult:
        """Import a JSONL transcript (all or nothing); ``note`` also writes session-memory notes."""
        source = Path(path).expanduser()
        name = source.name
        try:
            if source.stat().st_size > MAX_IMPORT_BYTES:
                raise ClawmemError(f"{name}: larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MiB; nothing was imported")
            data = source.read_bytes()
        except FileNotFoundError:
            raise ClawmemError(f"{source}: no such file") from None
        except IsADirectoryError:
            raise ClawmemError(f"{source}: is a directory, not a JSONL file") from None
        except OSError as exc:
            raise ClawmemError(f"cannot read {source}: {exc.strerror or exc}") from None
        return self.import_bytes(data, name=name, source_file=str(source.resolve()), note=note)

    def import_bytes(
        self, data: bytes, *, name: str = "<stdin>", source_file: str | None = None, note: bool = False
    ) -> ImportResult:
        parsed = parse_jsonl(data, name)
        now = self._now_ms()
        imported: list[tuple[_Parsed, str, list[trust.EventTrust]]] = []
        written = 0
        with self.runtime.store.write() as conn:
            for s in parsed:
                tomb = rows.tombstone(conn, s.session_id)
                if tomb is not None:
                    day = (iso_ms(tomb.created_at) or "")[:10]
                    raise ClawmemError(
                        f"{name}: line {s.first_line}: session {s.session_id} was forgotten on {day}; "
                        "re-import refused; nothing was imported"
                    )
                trusts = trust.classify_events(
                    s.kind, self._trusted(s.channel), [trust.EventIn(e.role, e.text, e.network) for e in s.events]
                )
                existing = rows.get_window(conn, s.session_id)
                if existing is not None:
                    stored = [e.event_json for e in rows.events(conn, s.session_id)]
                    if stored != [_event_json(e.obj) for e in s.events]:
                        raise ClawmemError(
                            f"{name}: line {s.first_line}: session {s.session_id} was already imported with "
                            "different events; nothing was imported"
                        )
                    imported.append((s, "unchanged", trusts))
                    continue
                first_user = next((e for e in s.events if e.role == "user"), None)
                sender = str((first_user or s.events[0]).obj.get("sender", ""))
                rows.insert_window(
                    conn,
                    WindowRow(
                        session_id=s.session_id,
                        session_key=s.session_key,
                        kind=s.kind,
                        channel=s.channel,
                        sender=sender,
                        started_at=min(e.ts_ms for e in s.events),
                        ended_at=max(e.ts_ms for e in s.events),
                        event_count=len(s.events),
                        imported_at=now,
                        source_file=source_file,
                        note_path=None,
                    ),
                )
                for seq, (e, t) in enumerate(zip(s.events, trusts, strict=True), start=1):
                    rows.insert_event(conn, s.session_id, seq, _event_json(e.obj), e.ts_ms, t.origin_class, t.tainted)
                written += len(s.events)
                imported.append((s, "imported", trusts))
        results: list[ImportedSession] = []
        warnings: list[str] = []
        for s, status, trusts in imported:
            note_result: NoteResult | None = None
            skipped: str | None = None
            if note:
                window = rows.get_window(self._conn, s.session_id)
                if s.kind != "interactive":
                    skipped = f"{s.kind} session: notes are written for interactive sessions only"
                elif window is not None and window.note_path and (self.runtime.workspace / window.note_path).exists():
                    skipped = f"already has a note: {window.note_path}"
                else:
                    try:
                        note_result = self.write_note(s.session_id)
                    except ClawmemError as exc:
                        skipped = str(exc)
                        warnings.append(f"session {s.session_id}: no note written ({exc})")
            results.append(
                ImportedSession(
                    session_id=s.session_id,
                    session_key=s.session_key,
                    kind=s.kind,
                    channel=s.channel,
                    event_count=len(s.events),
                    status=status,
                    trust=_counts([t.origin_class for t in trusts]),
                    tainted_turns=sum(1 for t in trusts if t.tainted),
                    note=note_result,
                    note_skipped=skipped,
                )
            )
        return ImportResult(name, tuple(results), written, tuple(warnings))

    # -------------------------------------------------------------------------------- reading

    def _window(self, session_id: str) -> WindowRow:
        window = rows.get_window(self._conn, session_id)
        if window is None:
            self._refuse_forgotten(session_id)
            raise ClawmemError(
                f"no session {session_id!r}; see `clawmem session list` (import with `clawmem session import FILE`)"
            )
        return window

    def resolve(self, selector: str) -> WindowRow:
        """A session by exact id, else by key when exactly one session has it."""
        text = selector.strip()
        if not text:
            raise ClawmemError("give a session id or key (see `clawmem session list`)")
        window = rows.get_window(self._conn, text)
        if window is not None:
            return window
        by_key = rows.windows_by_key(self._conn, text)
        if len(by_key) == 1:
            return by_key[0]
        if by_key:
            raise ClawmemError(
                f"key {text!r} matches {len(by_key)} sessions; give a session id (see `clawmem session list`)"
            )
        return self._window(text)

    def summaries(self) -> tuple[SessionSummary, ...]:
        """Every imported session, newest first, with its kind, channel, trust and event counts."""
        conn = self._conn
        counts: dict[str, list[rows.TrustCount]] = {}
        for c in rows.trust_counts(conn):
            counts.setdefault(c.session_id, []).append(c)
        network = rows.network_counts(conn)
        segments = rows.segment_counts(conn)
        tombs = {t.session_id: t for t in rows.all_tombstones(conn)}
        return tuple(
            self._summary(w, counts.get(w.session_id, []), network, segments, tombs) for w in rows.all_windows(conn)
        )

    def _summary(
        self,
        w: WindowRow,
        counts: list[rows.TrustCount],
        network: dict[str, int],
        segments: dict[str, int],
        tombs: dict[str, rows.TombstoneRow],
    ) -> SessionSummary:
        per_class: Counter[str] = Counter()
        tainted = 0
        for c in counts:
            per_class[c.origin_class] += c.count
            tainted += c.count if c.tainted else 0
        present = [k for k, v in per_class.items() if v]
        tomb = tombs.get(w.session_id)
        return SessionSummary(
            session_id=w.session_id,
            session_key=w.session_key,
            kind=w.kind,
            channel=w.channel,
            sender=w.sender,
            started_at=iso_ms(w.started_at) or "",
            ended_at=iso_ms(w.ended_at) or "",
            event_count=w.event_count,
            imported_at=iso_ms(w.imported_at) or "",
            source_file=w.source_file,
            note_path=w.note_path,
            channel_trusted=self._trusted(w.channel),
            trust=TrustCounts(per_class["owner"], per_class["agent"], per_class["system"], per_class["untrusted"]),
            tainted_turns=tainted,
            network_results=network.get(w.session_id, 0),
            lowest_origin=trust.least_trusted(*present) if present else "untrusted",
            flush_segments=segments.get(w.session_id, 0),
            forgotten_at=iso_ms(tomb.created_at) if tomb else None,
        )

    def show(self, selector: str) -> SessionDetail:
        """One session's transcript with each turn's origin class, its flush segments and entries."""
        w = self.resolve(selector)
        conn = self._conn
        counts = [c for c in rows.trust_counts(conn) if c.session_id == w.session_id]
        tombs = {t.session_id: t for t in rows.all_tombstones(conn)}
        summary = self._summary(w, counts, rows.network_counts(conn), rows.segment_counts(conn), tombs)
        turns: list[TranscriptTurn] = []
        turn = 0
        for e in rows.events(conn, w.session_id):
            obj = json.loads(e.event_json)
            if obj.get("role") == "user":
                turn += 1
            turns.append(
                TranscriptTurn(
                    seq=e.seq,
                    turn=turn,
                    role=str(obj.get("role", "")),
                    sender=str(obj.get("sender", "")),
                    text=str(obj.get("text", "")),
                    network=bool(obj.get("network", False)),
                    ts=iso_ms(e.created_at) or "",
                    origin_class=e.origin_class,
                    tainted=e.tainted,
                )
            )
        segments = self._segment_views(rows.segments_for_sessions(conn, [w.session_id]))
        entries = tuple(dict.fromkeys(o.entry_key for o in rows.origins_for_sessions(conn, [w.session_id])))
        return SessionDetail(summary, tuple(turns), segments, entries)

    def _segment_views(self, segments: list[SegmentRow]) -> tuple[SegmentView, ...]:
        out: list[SegmentView] = []
        by_path: dict[str, list[SegmentRow]] = {}
        for s in segments:
            by_path.setdefault(s.path, []).append(s)
        for path, segs in by_path.items():
            prov = trust.line_trust(self._conn, self.runtime.workspace, path).provenance
            located = {loc.row.seq: loc for loc in prov.located} if prov else {}
            for s in segs:
                loc = located.get(s.seq)
                out.append(
                    SegmentView(
                        path=s.path,
                        seq=s.seq,
                        kind=s.kind,
                        origin_class=s.origin_class,
                        effective_class=trust.segment_class(s),
                        session_id=s.session_id,
                        session_key=s.session_key,
                        line_start=loc.line_start if loc else None,
                        line_end=loc.line_end if loc else None,
                        created_at=iso_ms(s.created_at) or "",
                    )
                )
        return tuple(out)

    def provenance(self, rel: str) -> FileProvenanceView:
        """Flush provenance of one memory file: segments, their classes, unrecorded changes."""
        conn = self._conn
        lt = trust.line_trust(conn, self.runtime.workspace, rel)
        prov = lt.provenance
        return FileProvenanceView(
            path=rel,
            tracked=bool(prov and prov.tracked),
            file_class=lt.file_class,
            consistent=bool(prov and prov.consistent),
            segments=self._segment_views(rows.segments_for_path(conn, rel)),
            changed_lines=prov.changed_lines if prov else (),
        )

    def search(self, query: str, *, limit: int = 20) -> tuple[TranscriptHit, ...]:
        """Full-text search over transcripts (``session_transcript_fts``), each hit with its class."""
        tokens = re.findall(r"[\w]+", query, re.UNICODE)
        if not tokens:
            raise ClawmemError("the query is empty")
        match = " AND ".join('"' + t.replace('"', '""') + '"' for t in tokens)
        conn = self._conn
        out: list[TranscriptHit] = []
        trust_by_event: dict[tuple[str, int], str] = {}
        for m in rows.search_transcripts(conn, match, limit):
            key = (m.session_id, m.seq)
            if key not in trust_by_event:
                for e in rows.events(conn, m.session_id):
                    trust_by_event[(e.session_id, e.seq)] = e.origin_class
            out.append(TranscriptHit(m.session_id, m.seq, m.role, m.snippet, trust_by_event.get(key, "untrusted")))
        return tuple(out)

    def tombstones(self) -> tuple[Tombstone, ...]:
        return tuple(
            Tombstone(t.session_id, t.reason, iso_ms(t.created_at) or "") for t in rows.all_tombstones(self._conn)
        )

    # ------------------------------------------------------------------------- note and flush

    def write_note(self, session_id: str) -> NoteResult:
        """Write the session-memory note ``memory/YYYY-MM-DD-<slug>.md`` (interactive sessions only)."""
        self.runtime.require_workspace()
        self.runtime.store.require_writable()  # before any file is touched
        self._refuse_forgotten(session_id)
        w = self._window(session_id)
        if w.kind != "interactive":
            raise ClawmemError(
                f"session {session_id} is a {w.kind} session; session-memory notes are written for interactive "
                "sessions only"
            )
        if w.note_path and (self.runtime.workspace / w.note_path).exists():
            raise ClawmemError(f"session {session_id} already has a note: {w.note_path}")
        events = rows.events(self._conn, session_id)
        objs = [json.loads(e.event_json) for e in events]
        talk = [(o, e) for o, e in zip(objs, events, strict=True) if o.get("role") in ("user", "assistant")]
        kept = [
            (o, e)
            for o, e in talk
            if trust.auto_inject_eligible(e.origin_class)
            and str(o.get("text", "")).strip()
            and not str(o.get("text", "")).lstrip().startswith("/")
        ]
        left_out = sum(1 for _, e in talk if not trust.auto_inject_eligible(e.origin_class))
        kept = kept[-NOTE_MESSAGES:]
        ended = datetime.fromtimestamp(w.ended_at / 1000, UTC)
        day = ended.date().isoformat()
        # The slug names a file the index and search show: only trusted words may go into it.
        first_user = next((str(o.get("text", "")) for o, _ in kept if o.get("role") == "user"), "")
        rel = self._free_note_path(day, slugify(first_user))
        lines = [
            f"# Session: {day} {ended:%H:%M:%S} UTC",
            "",
            f"- **Session Key**: {w.session_key}",
            f"- **Session ID**: {w.session_id}",
            f"- **Source**: {w.channel}",
            "",
        ]
        if kept:
            lines += ["## Conversation Summary", ""]
            lines += [f"{o['role']}: {' '.join(str(o.get('text', '')).split())}" for o, _ in kept]
            lines += [""]
        text = "\n".join(lines)
        written = flushing.append_segment(
            self._conn,
            self.runtime.workspace,
            rel,
            text,
            origin="agent",
            kind="note",
            session_id=w.session_id,
            session_key=w.session_key,
            session_kind=w.kind,
            now_ms=self._now_ms(),
            create_only=True,
        )
        with self.runtime.store.write() as conn:
            rows.set_note_path(conn, w.session_id, rel)
        return NoteResult(w.session_id, rel, written.line_end - written.line_start + 1, len(kept), left_out)

    def _free_note_path(self, day: str, slug: str) -> str:
        memory = self.runtime.workspace / "memory"
        for n in range(1, 1000):
            name = f"{day}-{slug}.md" if n == 1 else f"{day}-{slug}-{n}.md"
            if not (memory / name).exists() and not (memory / name).is_symlink():
                return f"memory/{name}"
        raise ClawmemError(f"too many notes named memory/{day}-{slug}*.md")

    def flush_origin(self, session_id: str, text: str = "") -> trust.FlushOrigin:
        """The class a flush of ``text`` from this session gets now, and why (nothing is written).

        From the transcript's provenance (:func:`engine.sessions.trust.flush_origin`): ``untrusted`` when the
        session's current turn is network-tainted or untrusted; a verbatim copy of an earlier
        untrusted turn's text is ``untrusted`` too (lowering only, never raising).
        """
        w = self._window(session_id)
        events = rows.events(self._conn, w.session_id)
        objs = [json.loads(e.event_json) for e in events]
        ins = [trust.EventIn(str(o.get("role", "")), str(o.get("text", "")), bool(o.get("network"))) for o in objs]
        recorded = [trust.EventTrust(e.origin_class, e.tainted) for e in events]
        derived = trust.flush_origin(w.kind, self._trusted(w.channel), ins, recorded)
        if derived.origin_class == "agent" and text.strip():
            for e, event_in in zip(events, ins, strict=True):
                if e.origin_class == "untrusted" and trust.derived_origin(text, [event_in.text]) == "untrusted":
                    reason = f"the text repeats untrusted event {e.seq} of the session"
                    return trust.FlushOrigin("untrusted", reason, derived.turn_start)
        return derived

    def flush(self, session_id: str, text: str, *, date: str | None = None, origin: str | None = None) -> FlushResult:
        """Append ``text`` to ``memory/<date>.md`` (today by default) with the session's provenance.

        The origin class is the program's (:meth:`flush_origin`). ``origin`` may only lower it:
        ``untrusted`` marks the text untrusted; ``agent`` when the program derives ``untrusted``
        is refused (nothing is written), so no caller can raise tainted text to ``agent``.
        """
        self.runtime.require_workspace()
        self.runtime.store.require_writable()  # before any file is touched
        if not text.strip():
            raise ClawmemError("nothing to flush: the text is empty")
        if origin is not None and origin not in ("agent", "untrusted"):
            raise ClawmemError(f"unknown origin {origin!r}: use agent or untrusted")
        day = date or self.runtime.clock.today()
        if not _DATE.match(day) or not _valid_date(day):
            raise ClawmemError(f"not a date: {day!r} (use YYYY-MM-DD)")
        self._refuse_forgotten(session_id)
        w = self._window(session_id)
        derived = self.flush_origin(w.session_id, text)
        if origin == "agent" and derived.origin_class != "agent":
            raise ClawmemError(
                f"--origin agent refused: this flush from session {w.session_id} is untrusted "
                f"({derived.reason}); nothing was written"
            )
        final = trust.least_trusted(derived.origin_class, origin)
        rel = f"memory/{day}.md"
        written = flushing.append_segment(
            self._conn,
            self.runtime.workspace,
            rel,
            text,
            origin=final,
            kind="flush",
            session_id=w.session_id,
            session_key=w.session_key,
            session_kind=w.kind,
            now_ms=self._now_ms(),
        )
        lowered = final != derived.origin_class
        return FlushResult(
            session_id=w.session_id,
            path=rel,
            line_start=written.line_start,
            line_end=written.line_end,
            origin_class=final,
            origin_derived=not lowered,
            untrusted_regions=written.recorded_changes,
            external_appends=written.recorded_external,
            origin_reason="lowered by the caller (--origin untrusted)" if lowered else derived.reason,
            effective_class=trust.least_trusted(final, "system") if w.kind != "interactive" else final,
        )

    def append(self, text: str, *, origin: str = "agent", reason: str | None = None) -> AppendResult:
        """Append ``text`` to today's ``memory/<date>.md`` as a flush without a session.

        For a writer that is not an imported transcript (an agent through the MCP server): the
        same append-only, atomic, provenance-recording path as :meth:`flush`, with no session on
        the segment. ``origin`` is the writer's class, ``agent`` or ``untrusted``; the caller
        decides it (it may only be lowered from ``agent``). Only today's diary, never a curated file.
        """
        self.runtime.require_workspace()
        self.runtime.store.require_writable()  # before any file is touched
        if not text.strip():
            raise ClawmemError("nothing to append: the text is empty")
        if origin not in ("agent", "untrusted"):
            raise ClawmemError(f"unknown origin {origin!r}: use agent or untrusted")
        rel = f"memory/{self.runtime.clock.today()}.md"
        written = flushing.append_segment(
            self._conn,
            self.runtime.workspace,
            rel,
            text,
            origin=origin,
            kind="flush",
            session_id=None,
            session_key=None,
            session_kind=None,
            now_ms=self._now_ms(),
        )
        return AppendResult(
            path=rel,
            line_start=written.line_start,
            line_end=written.line_end,
            origin_class=origin,
            origin_reason=reason or ("the writer's own class" if origin == "agent" else "marked untrusted"),
            untrusted_regions=written.recorded_changes,
            external_appends=written.recorded_external,
        )


def _valid_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True
