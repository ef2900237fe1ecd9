"""OpenClaw's transcripts, read in place: ``transcript_events`` (``event_json``, or
``event_zstd`` decoded with the ``zstandard`` binding) with ``session_windows`` for the session
key, channel, chat type and times, and a trust class for every event (docs/memory-core.md §8).

Trust comes from where an event came from, never from what it says:

- a **user** message is ``owner`` when ``commands.ownerAllowFrom`` names its sender
  (``telegram:1001``) and OpenClaw did not record the sender as a non-owner; a message typed at
  the terminal (``openclaw agent --local``: no channel, no sender, recorded as the owner) is
  ``owner`` too. Any other sender is ``untrusted``. In a cron or heartbeat session the prompt is
  ``system``, in a sub-agent session ``agent``;
- a **tool result** is ``untrusted``; one wrapped in OpenClaw's
  ``<<<EXTERNAL_UNTRUSTED_CONTENT …>>>`` markers (a web page, an email) is *external* and taints
  the rest of its turn, until the next user message;
- an **assistant** message is ``agent``, or ``untrusted`` when its turn is tainted (OpenClaw's
  own ``turnTainted`` mark counts too) or its user message was untrusted;
- other events (session header, model snapshot, thinking level …) are ``system``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import zstandard
from clawmem.engine.openclaw.config import OpenClawConfig, is_owner
from clawmem.engine.sessions.service import TrustCounts
from clawmem.engine.sessions.trust import least_trusted
from clawmem.engine.store.openclaw.rows import EventRow, WindowRow
from clawmem.engine.times import iso_ms

EXTERNAL_MARKER = "<<<EXTERNAL_UNTRUSTED_CONTENT"
MAX_EVENT_BYTES = 4 * 1024 * 1024  # OpenClaw's CHECK on event_utf8_bytes
TERMINAL = "local terminal"


@dataclass(frozen=True)
class OpenClawSession:
    session_id: str
    session_key: str
    source: str  # always "openclaw": read in place from its agent database
    kind: str  # interactive | cron | heartbeat | subagent (from the session key)
    channel: str  # telegram … or "cli" for a terminal session
    chat_type: str | None  # direct | group | channel
    account_id: str | None
    sender: str  # "Lin (telegram:1001)", "local terminal", or "-"
    sender_is_owner: bool
    status: str | None  # running | done | failed | killed | timeout
    started_at: str  # ISO 8601 UTC: the session window's creation
    ended_at: str  # its last update
    last_run_started_at: str | None  # the latest agent run in it
    last_run_ended_at: str | None
    event_count: int
    messages: int  # user, assistant and tool-result messages
    compressed_events: int  # rows stored as event_zstd
    unreadable_events: int
    trust: TrustCounts  # the same counts as clawmem's own sessions
    tainted_turns: int  # events produced after an external tool result in their turn
    external_results: int  # tool results wrapped as external untrusted content
    lowest_origin: str
    model: str | None


@dataclass(frozen=True)
class OpenClawEvent:
    seq: int
    turn: int  # 1-based user turn (0: before the first user message)
    type: str  # message | session | custom | model_change | …
    role: str  # user | assistant | tool, or "event" for the other types
    sender: str  # for user messages
    text: str  # the message text, tool calls as "→ name {args}"
    tool: str | None  # the tool a result belongs to
    origin_class: str
    external: bool  # a tool result wrapped as external untrusted content
    tainted: bool
    compressed: bool  # stored as event_zstd
    ts: str
    problem: str | None  # why the event could not be decoded


@dataclass(frozen=True)
class OpenClawSessionDetail:
    summary: OpenClawSession
    events: tuple[OpenClawEvent, ...]


def decode(row: EventRow) -> tuple[dict[str, Any] | None, str | None]:
    """The event's JSON object, or None and why not."""
    try:
        if row.event_json is not None:
            text = row.event_json
        elif row.event_zstd is not None:
            limit = min(row.event_utf8_bytes or MAX_EVENT_BYTES, MAX_EVENT_BYTES)
            text = zstandard.ZstdDecompressor().decompress(row.event_zstd, max_output_size=limit).decode("utf-8")
        else:
            return None, "the row holds no event"
        obj = json.loads(text)
    except zstandard.ZstdError as exc:
        return None, f"event_zstd cannot be decoded: {exc}"
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"the event is not JSON: {exc}"
    if not isinstance(obj, dict):
        return None, "the event is not a JSON object"
    return obj, None


def session_kind(session_key: str) -> str:
    parts = session_key.split(":")
    for kind in ("cron", "heartbeat", "subagent"):
        if kind in parts[2:]:
            return kind
    return "interactive"


def _parts_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    out: list[str] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif part.get("type") == "toolCall":
            args = json.dumps(part.get("arguments", {}), ensure_ascii=False, sort_keys=True)
            out.append(f"→ {part.get('name', '?')} {args}")
    return "\n".join(out)


@dataclass(frozen=True)
class _Sender:
    label: str
    owner: bool


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sender(message: Mapping[str, Any], config: OpenClawConfig | None) -> _Sender:
    meta = _mapping(message.get("__openclaw"))
    transport = _mapping(meta.get("transport"))
    identity = _mapping(meta.get("senderIdentity"))
    sender_id = meta.get("senderId")
    channel = transport.get("channel") or identity.get("pluginId")
    recorded = meta.get("senderIsOwner")
    if sender_id is None and channel is None:
        return _Sender(TERMINAL, recorded is True)
    sender_id = str(sender_id) if sender_id is not None else ""
    name = meta.get("senderName")
    where = f"{channel}:{sender_id}" if channel else sender_id
    label = f"{name} ({where})" if name else where
    return _Sender(label, is_owner(config, str(channel) if channel else None, sender_id) and recorded is not False)


def _user_class(kind: str, owner: bool) -> str:
    if kind in ("cron", "heartbeat"):
        return "system"
    if kind == "subagent":
        return "agent"
    return "owner" if owner else "untrusted"


def _external(message: Mapping[str, Any], text: str) -> bool:
    external = _mapping(_mapping(message.get("details")).get("externalContent"))
    return EXTERNAL_MARKER in text or external.get("untrusted") is True


@dataclass
class _Reading:
    """The state of reading one session in order: the turn, whether it is tainted, its user's class."""

    kind: str
    turn: int = 0
    tainted: bool = False
    turn_user: str = "untrusted"


def _event(r: _Reading, row: EventRow, etype: str, role: str, text: str, origin: str, **marks: Any) -> OpenClawEvent:
    """An event of ``row`` in the current turn (``marks``: sender, tool, external, tainted, problem)."""
    return OpenClawEvent(
        seq=row.seq,
        turn=r.turn,
        type=etype,
        role=role,
        sender=marks.get("sender", ""),
        text=text,
        tool=marks.get("tool"),
        origin_class=origin,
        external=marks.get("external", False),
        tainted=marks.get("tainted", False),
        compressed=row.event_json is None and row.event_zstd is not None,
        ts=iso_ms(row.created_at) or "",
        problem=marks.get("problem"),
    )


def _message_event(
    r: _Reading, row: EventRow, message: Mapping[str, Any], config: OpenClawConfig | None, senders: list[_Sender]
) -> OpenClawEvent:
    """A user message opens a turn; a tool result is untrusted (and an external one taints the rest
    of its turn); an assistant message takes the turn's class, untrusted once tainted."""
    role = str(message.get("role", ""))
    text = _parts_text(message.get("content"))
    if role == "user":
        r.turn += 1
        r.tainted = False
        sender = _sender(message, config)
        senders.append(sender)
        r.turn_user = _user_class(r.kind, sender.owner)
        return _event(r, row, "message", "user", text, r.turn_user, sender=sender.label)
    if role == "toolResult":
        external = _external(message, text)
        tool = message.get("toolName")
        event = _event(
            r,
            row,
            "message",
            "tool",
            text,
            "untrusted",
            tool=str(tool) if tool else None,
            external=external,
            tainted=r.tainted,
        )
        r.tainted = r.tainted or external
        return event
    tainted = r.tainted or _mapping(message.get("__openclaw")).get("turnTainted") is True
    origin = "untrusted" if tainted or r.turn_user == "untrusted" else least_trusted("agent", r.turn_user)
    return _event(r, row, "message", role or "assistant", text, origin, tainted=tainted)


def read_events(
    kind: str, rows: Sequence[EventRow], config: OpenClawConfig | None
) -> tuple[list[OpenClawEvent], list[_Sender]]:
    """Decode and classify one session's events in order; also the senders of its user messages."""
    out: list[OpenClawEvent] = []
    senders: list[_Sender] = []
    r = _Reading(kind, turn_user=_user_class(kind, False))
    for row in rows:
        obj, problem = decode(row)
        message = obj.get("message") if obj and obj.get("type") == "message" else None
        if obj is None or not isinstance(message, Mapping):  # scaffolding, or a row that cannot be read
            etype = str(obj.get("type", "?")) if obj else "unreadable"
            origin = "untrusted" if obj is None else "system"
            out.append(_event(r, row, etype, "event", _summary(obj), origin, problem=problem))
            continue
        out.append(_message_event(r, row, message, config, senders))
    return out, senders


def _summary(obj: Mapping[str, Any] | None) -> str:
    """One line for a non-message event."""
    if obj is None:
        return ""
    etype = obj.get("type")
    if etype == "session":
        return f"session started (cwd {obj.get('cwd', '?')})"
    if etype == "model_change":
        return f"model {obj.get('provider', '?')}/{obj.get('modelId', '?')}"
    if etype == "thinking_level_change":
        return f"thinking level {obj.get('thinkingLevel', '?')}"
    if etype == "custom":
        return f"custom: {obj.get('customType', '?')}"
    return str(etype)


def summarize(window: WindowRow, events: Sequence[OpenClawEvent], senders: Sequence[_Sender]) -> OpenClawSession:
    # Trust counts and the lowest class cover messages (and unreadable rows), not scaffolding events.
    per_class = Counter(e.origin_class for e in events if e.type == "message" or e.problem)
    kind = session_kind(window.session_key)
    first = senders[0] if senders else None
    labels = list(dict.fromkeys(s.label for s in senders))
    return OpenClawSession(
        session_id=window.session_id,
        session_key=window.session_key,
        source="openclaw",
        kind=kind,
        channel=window.channel or ("cli" if first and first.label == TERMINAL else "-"),
        chat_type=window.chat_type,
        account_id=window.account_id,
        sender=", ".join(labels) if labels else "-",
        sender_is_owner=bool(senders) and all(s.owner for s in senders),
        status=window.status,
        started_at=iso_ms(window.created_at) or "",
        ended_at=iso_ms(window.updated_at) or "",
        last_run_started_at=iso_ms(window.started_at),
        last_run_ended_at=iso_ms(window.ended_at),
        event_count=len(events),
        messages=sum(1 for e in events if e.type == "message"),
        compressed_events=sum(1 for e in events if e.compressed),
        unreadable_events=sum(1 for e in events if e.problem),
        trust=TrustCounts(per_class["owner"], per_class["agent"], per_class["system"], per_class["untrusted"]),
        tainted_turns=sum(1 for e in events if e.tainted),
        external_results=sum(1 for e in events if e.external),
        lowest_origin=least_trusted(*per_class) if per_class else "untrusted",
        model="/".join(p for p in (window.model_provider, window.model) if p) or None,
    )
