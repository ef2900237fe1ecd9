"""Trust: origin classes, network taint, and the rules that gate promotion and auto-injection (docs/memory-core.md §8).

**Origin classes** are a closed set, assigned by the program from *where* text came from, never
from what it says: ``owner`` (typed by the owner in a trusted channel), ``agent`` (derived by the
agent from owner content), ``system`` (scaffolding: cron and heartbeat prompts, dreaming output)
and ``untrusted`` (web pages, tool output, non-owner participants). Trust order, most to least:
owner, agent, system, untrusted; wherever classes meet, the least trusted wins. Nothing ever
defaults to ``owner``.

**Transcript turns** (at import, :func:`classify_events`):

- a user message is ``owner`` in an interactive session on a trusted channel (see
  :data:`DEFAULT_TRUSTED_CHANNELS`), ``untrusted`` on any other channel; a cron or heartbeat
  prompt is ``system``; a sub-agent's task prompt (written by the parent agent) is ``agent``;
- a tool result is ``untrusted``; one flagged ``network`` also taints the rest of its turn;
- an assistant message is ``agent`` — ``untrusted`` when its turn is tainted (a network tool result
  came earlier in the same turn; the taint clears at the next user message) or when the turn's
  user message was untrusted.

**Flushes** (:func:`flush_origin`): text an agent flushes from a session is its output at the end
of the transcript, so it gets the class the *current turn* gives an assistant message — ``untrusted``
when a network tool result came after the last user message (or that message was untrusted), else
``agent``. The class comes from the transcript's provenance, so re-wording a tainted reply cannot
launder it; a caller may lower it (``untrusted``) but never raise it.

**Memory files** (at index time, :func:`origin_resolver`): the path decides first (DREAMS.md and
dreaming output are ``system``; other memory files ``agent``); lines that flush provenance
(:mod:`engine.sessions.flush`) attributes to a segment take its class — ``untrusted`` for a tainted flush or
a non-append change, ``system`` for text a cron, heartbeat or sub-agent session flushed (such
sessions never yield promotion candidates) — and a chunk gets the least trusted class of its lines.

**Gates**: promotion takes only owner/agent candidates and uses the *file-level* class — one
untrusted segment quarantines every candidate of that file (:func:`file_promotion_origins`);
automatic injection needs owner or agent (:func:`auto_inject_verdict`); session kinds other than
interactive never produce candidates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import apsw
from clawmem.engine.config import Settings
from clawmem.engine.index.sync import OriginResolver
from clawmem.engine.recall import TRUST_ORDER
from clawmem.engine.sessions import flush
from clawmem.engine.sessions.flush import FileProvenance
from clawmem.engine.store import context_rows, dreaming_rows
from clawmem.engine.store import sessions_rows as srows
from clawmem.engine.store.sessions_rows import SegmentRow
from clawmem.engine.workspace.files import MemoryFile, origin_for_rel

AUTO_INJECT_ORIGINS = ("owner", "agent")
PROMOTABLE_ORIGINS = ("owner", "agent")
# Channels where a user message is the owner typing (clawmem's default; a group or a public
# channel is not in it). Settings may override it with ``sessions.trusted_channels``.
DEFAULT_TRUSTED_CHANNELS = ("cli", "tui", "direct", "dm", "private", "webchat")
MIN_SNIPPET_CHARS = 12
_WS = re.compile(r"\s+")
_BULLET = re.compile(r"^(?:[-*+>]\s+)+")


def least_trusted(*classes: str | None) -> str:
    """The least trusted of the given classes (unknown values count as untrusted)."""
    worst = "owner"
    for c in classes:
        if c is None:
            continue
        if c not in TRUST_ORDER:
            return "untrusted"
        if TRUST_ORDER.index(c) > TRUST_ORDER.index(worst):
            worst = c
    return worst


def promotion_blocked(origin_class: str) -> bool:
    return origin_class not in PROMOTABLE_ORIGINS


def auto_inject_eligible(origin_class: str) -> bool:
    return origin_class in AUTO_INJECT_ORIGINS


def trusted_channels(settings: Settings) -> tuple[str, ...]:
    channels = settings.sessions.trusted_channels or DEFAULT_TRUSTED_CHANNELS
    return tuple(c.strip().lower() for c in channels if c.strip())


def channel_trusted(channel: str, trusted: Sequence[str]) -> bool:
    return channel.strip().lower() in trusted


# ----------------------------------------------------------------------------------- transcripts


@dataclass(frozen=True)
class EventIn:
    role: str  # user | assistant | tool
    text: str
    network: bool


@dataclass(frozen=True)
class EventTrust:
    origin_class: str
    tainted: bool  # produced after a network tool result in the same turn


def user_class(kind: str, trusted_channel: bool) -> str:
    if kind in ("cron", "heartbeat"):
        return "system"
    if kind == "subagent":
        return "agent"
    return "owner" if trusted_channel else "untrusted"


def classify_events(kind: str, trusted_channel: bool, events: Sequence[EventIn]) -> list[EventTrust]:
    """Each event's origin class and taint, from role, session kind, channel and turn order only."""
    out: list[EventTrust] = []
    turn_user = user_class(kind, trusted_channel)  # a greeting before the first user message
    tainted = False
    for e in events:
        if e.role == "user":
            tainted = False
            turn_user = user_class(kind, trusted_channel)
            out.append(EventTrust(turn_user, False))
        elif e.role == "tool":
            out.append(EventTrust("untrusted", tainted))
            tainted = tainted or e.network
        else:
            derived = "untrusted" if tainted or turn_user == "untrusted" else "agent"
            out.append(EventTrust(derived, tainted))
    return out


@dataclass(frozen=True)
class FlushOrigin:
    """The class a flush from a session gets now, and why (from the transcript, never the text)."""

    origin_class: str  # agent | untrusted
    reason: str | None  # why untrusted, for the user
    turn_start: int  # 1-based seq of the current turn's user message (0: no user message yet)


def flush_origin(
    kind: str, trusted_channel: bool, events: Sequence[EventIn], recorded: Sequence[EventTrust] = ()
) -> FlushOrigin:
    """The class of text flushed from a session at the end of its transcript (docs/memory-core.md §8 network taint).

    The flush is classified like one more assistant message after the last event: ``untrusted``
    when the current turn (from the last user message on) holds a network tool result or its
    user message is untrusted, else ``agent``. ``recorded`` (the classes stored at import) can
    only lower the result: a turn marked tainted or untrusted then stays so even if the trusted
    channels changed since.
    """
    probe = classify_events(kind, trusted_channel, [*events, EventIn("assistant", "", False)])[-1]
    start = max((i for i, e in enumerate(events) if e.role == "user"), default=-1)
    turn = range(max(start, 0), len(events))
    network = next((i for i in turn if events[i].role == "tool" and events[i].network), None)
    if network is not None:
        return FlushOrigin(
            "untrusted", f"its current turn is tainted by a network tool result (event {network + 1})", start + 1
        )
    if probe.origin_class == "untrusted":
        who = f"event {start + 1}" if start >= 0 else "before the first user message"
        return FlushOrigin(
            "untrusted", f"its current turn comes from an untrusted sender or channel ({who})", start + 1
        )
    for i in turn:
        if i < len(recorded) and (
            recorded[i].tainted or (events[i].role == "user" and recorded[i].origin_class == "untrusted")
        ):
            return FlushOrigin(
                "untrusted", f"its current turn was recorded as untrusted at import (event {i + 1})", start + 1
            )
    return FlushOrigin("agent", None, start + 1)


def normalize(text: str) -> str:
    """Whitespace collapsed, a leading list marker removed: the form texts are compared in."""
    return _BULLET.sub("", _WS.sub(" ", text).strip())


def snippet_lines(text: str, min_chars: int = MIN_SNIPPET_CHARS) -> list[str]:
    """The normalized lines of ``text`` that are long enough to identify it (12+ characters)."""
    out = []
    for line in text.splitlines():
        n = normalize(line)
        if len(n) >= min_chars:
            out.append(n)
    return list(dict.fromkeys(out))


def derived_origin(text: str, untrusted_texts: Iterable[str]) -> str:
    """``untrusted`` when ``text`` carries a line of untrusted content (or the reverse, ignoring case),
    else ``agent``.

    A second, lowering-only check for a flush after :func:`flush_origin`: a verbatim copy of a web
    page or a tainted reply from an *earlier* turn (whose taint has cleared) stays untrusted.
    It never raises a class: paraphrases are caught by the turn's provenance, not by this match.
    """
    mine = [m.casefold() for m in snippet_lines(text)]
    flat = normalize(text).casefold()
    for other in untrusted_texts:
        theirs = [t.casefold() for t in snippet_lines(other)]
        other_flat = normalize(other).casefold()
        if any(t in flat for t in theirs) or any(m in other_flat for m in mine):
            return "untrusted"
    return "agent"


# -------------------------------------------------------------------------------- memory files


def segment_class(seg: SegmentRow) -> str:
    """The class a segment gives its lines: text from a non-interactive session is ``system``."""
    if seg.session_id is not None and seg.session_kind not in (None, "interactive"):
        return least_trusted(seg.origin_class, "system")
    return seg.origin_class


@dataclass(frozen=True)
class LineTrust:
    """Per-line origin classes of one memory file, from its flush provenance (None: no segment)."""

    rel: str
    classes: tuple[str | None, ...]
    provenance: FileProvenance | None

    def span(self, start: int, end: int, base: str) -> str:
        picked = [c for c in self.classes[max(0, start - 1) : max(0, end)] if c is not None]
        return least_trusted(base, *picked)

    @property
    def file_class(self) -> str | None:
        """The least trusted class any line has (None when no line has a recorded class)."""
        present = [c for c in self.classes if c is not None]
        return least_trusted(*present) if present else None


def line_trust_from(
    rel: str, data: bytes, segments: Sequence[SegmentRow], state: srows.FileStateRow | None
) -> LineTrust:
    prov = flush.resolve(rel, data, segments, state)
    classes: list[str | None] = [None] * prov.line_count
    for loc in prov.located:
        cls = segment_class(loc.row)
        for line in range(loc.line_start, loc.line_end + 1):
            if 1 <= line <= len(classes):
                current = classes[line - 1]
                classes[line - 1] = cls if current is None else least_trusted(current, cls)
    for first, last in prov.changed_lines:
        for line in range(first, last + 1):
            if 1 <= line <= len(classes):
                classes[line - 1] = "untrusted"
    return LineTrust(rel, tuple(classes), prov)


def line_trust(conn: apsw.Connection, workspace: Path, rel: str) -> LineTrust:
    try:
        data = (workspace / rel).read_bytes()
    except OSError:
        data = b""
    return line_trust_from(rel, data, srows.segments_for_path(conn, rel), srows.file_state(conn, rel))


def untrusted_lines(conn: apsw.Connection, workspace: Path, rel: str) -> frozenset[int]:
    """1-based lines of a memory file that flush provenance marks untrusted (empty: none, or untracked).

    For readers that show or load a file line by line (startup notes, previews) and must keep
    tainted text out.
    """
    if rel not in srows.segment_paths(conn):
        return frozenset()
    lt = line_trust(conn, workspace, rel)
    return frozenset(n for n, c in enumerate(lt.classes, start=1) if c == "untrusted")


def origin_resolver(conn: apsw.Connection, workspace: Path) -> OriginResolver:
    """The index-time classifier (``sync_text``'s ``origin``): path origin, lowered by flush provenance.

    Built once per sync; files without provenance cost one set lookup.
    """
    tracked = srows.segment_paths(conn)
    cache: dict[str, LineTrust] = {}

    def resolve(file: MemoryFile, start: int, end: int) -> str:
        base = file.path_origin
        if file.rel not in tracked or base == "system":
            return base
        lt = cache.get(file.rel)
        if lt is None:
            lt = cache[file.rel] = line_trust(conn, workspace, file.rel)
        return lt.span(start, end, base)

    return resolve


def file_promotion_origins(conn: apsw.Connection, workspace: Path, paths: Iterable[str]) -> dict[str, str]:
    """File-level class for promotion, for files that have one below ``agent``.

    ``untrusted`` when the index recorded untrusted content for the file or any of its lines
    carries an untrusted segment (flush quarantine, docs/memory-core.md §5 Apply 1); ``system`` for files that
    are system by path (dreaming output). System lines *inside* a file (a cron session's flush)
    only block themselves: their chunks carry ``system`` and are excluded one by one.
    """
    tracked = srows.segment_paths(conn)
    out: dict[str, str] = {}
    for path in set(paths):
        classes = set(dreaming_rows.file_origin_classes(conn, path))
        if path in tracked and line_trust(conn, workspace, path).file_class == "untrusted":
            classes.add("untrusted")
        if "untrusted" in classes:
            out[path] = "untrusted"
        elif origin_for_rel(path) == "system":
            out[path] = "system"
    return out


@dataclass(frozen=True)
class TrustVerdict:
    eligible: bool
    origin_class: str
    reason: str | None  # why not, when not


def auto_inject_verdict(conn: apsw.Connection, workspace: Path, rel: str) -> TrustVerdict:
    """May this curated file be injected automatically? Path origin, indexed chunk origins and
    flush provenance must all be owner or agent."""
    origin = origin_for_rel(rel)
    recorded = list(context_rows.file_origin_classes(conn, rel))
    lt = line_trust(conn, workspace, rel) if rel in srows.segment_paths(conn) else None
    if lt is not None and lt.file_class is not None:
        recorded.append(lt.file_class)
    bad = [c for c in recorded if not auto_inject_eligible(c)]
    if bad:
        worst = least_trusted(*bad)
        return TrustVerdict(False, worst, f"{rel} has {worst} content (auto-injection needs owner or agent origin)")
    if not auto_inject_eligible(origin):
        return TrustVerdict(False, origin, f"{rel} has origin {origin} (auto-injection needs owner or agent)")
    return TrustVerdict(True, sorted(recorded)[0] if recorded else origin, None)
