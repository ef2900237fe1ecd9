"""OpenClaw's standing intents, read in place from ``standing_intents`` (agent DB), and the trigger
simulator on them: would this message, from this sender on this channel, fire one now — and if
not, which gate decides.

The simulator is a pure function of the rows read and the clock: nothing is written anywhere
(OpenClaw keeps the fire count, ``last_fired_at`` and status; clawmem only explains them).

Decoding: ``trigger_keywords`` is a JSON array of strings; ``channel_scope`` is a versioned
array ``["v1","channel",<provider>,<account>,…]`` and ``sender_scope`` ``["v1",<provider>,
<account>,<sender id>]``; NULL means unscoped. Keywords match with clawmem's own tokenizer
(OpenClaw's ``[\\p{L}\\p{N}_-]+`` tokens, every token of a keyword present). A message's
channel is compared with the scope's provider (trimmed, lowercased); its sender with the
scope's sender id, given as ``1001`` or ``telegram:1001``.

Gates, in deciding order (the vocabulary of clawmem's ``intent match``): ``no_keyword``, then
``scope`` (channel, then sender) — what the message and its sender are — then the intent's own
state: ``state`` (not armed or fired, or past its expiry), ``no_creator``, ``max_fires`` (no
fires left), ``cooldown`` (``last_fired_at + cooldown_seconds`` still ahead). An intent in
status ``fired`` is live: it fires again once its cooldown has passed and fires are left.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from clawmem.engine.intents.service import KeywordCheck, check_keyword, known_creator, prompt_tokens
from clawmem.engine.store.openclaw.rows import IntentRow
from clawmem.engine.times import local_minute

LIVE = ("armed", "fired")
COMMAND = (
    "OpenClaw has no command for standing intents: ask the agent in the conversation that created it "
    "(its `intent` tool, from an authenticated channel sender)"
)


@dataclass(frozen=True)
class OpenClawIntent:
    id: str
    source: str  # always "openclaw": read in place from its agent database
    description: str
    keywords: tuple[str, ...]
    channel: str | None  # the channel scope's provider (None: any channel)
    account: str | None  # the channel scope's account
    sender: str | None  # the sender scope's sender id (None: anyone)
    channel_scope: tuple[str, ...]  # the decoded arrays, as stored
    sender_scope: tuple[str, ...]
    creator_sender: str | None
    status: str
    fire_count: int
    max_fires: int
    fires_left: int
    cooldown_seconds: int
    last_fired_at: datetime | None
    cooldown_until: datetime | None  # set while the cooldown runs (at the time read)
    cooldown_left_seconds: int  # 0 when no cooldown runs
    expires_at: datetime
    expired: bool  # past its expiry at the time read
    created_at: datetime
    source_session_id: str | None

    @property
    def short_id(self) -> str:
        return self.id[:8]

    @property
    def scope(self) -> str:
        """``1001@telegram``: who must say it, where (``anyone`` / ``any`` when unscoped)."""
        return f"{self.sender or 'anyone'}@{self.channel or 'any'}"


@dataclass(frozen=True)
class OpenClawVerdict:
    """Why one OpenClaw intent would fire or not; ``outcome`` is ``fires`` or the deciding gate."""

    intent: OpenClawIntent
    outcome: str
    reasons: tuple[str, ...]  # every gate that holds it back, the deciding one first
    keywords: tuple[KeywordCheck, ...]
    matched_keyword: str | None

    @property
    def fires(self) -> bool:
        return self.outcome == "fires"

    @property
    def reason(self) -> str:
        return f'keyword "{self.matched_keyword}"' if self.fires else self.reasons[0]


@dataclass(frozen=True)
class OpenClawMatch:
    prompt: str
    channel: str | None
    sender: str | None
    at: datetime
    tokens: tuple[str, ...]
    verdicts: tuple[OpenClawVerdict, ...]  # the ones that would fire first


def _dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def decode_array(raw: str | None) -> tuple[str, ...]:
    """A JSON array of strings (anything else reads as empty)."""
    if not raw:
        return ()
    try:
        parsed = json.loads(raw)
    except ValueError:
        return ()
    return tuple(str(x) for x in parsed if isinstance(x, str | int)) if isinstance(parsed, list) else ()


def channel_of(scope: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(provider, account) of ``["v1","channel",provider,account,…]``."""
    if len(scope) >= 3 and scope[0] == "v1" and scope[1] == "channel":
        return scope[2].strip().lower() or None, scope[3] if len(scope) > 3 else None
    return (scope[-1].strip().lower() or None) if scope else None, None


def sender_of(scope: tuple[str, ...]) -> str | None:
    """The sender id of ``["v1",provider,account,sender]``."""
    return (scope[-1].strip() or None) if scope else None


def decode(row: IntentRow, now_ms: int) -> OpenClawIntent:
    channel_scope, sender_scope = decode_array(row.channel_scope), decode_array(row.sender_scope)
    channel, account = channel_of(channel_scope)
    cooldown_end = None if row.last_fired_at is None else row.last_fired_at + row.cooldown_seconds * 1000
    return OpenClawIntent(
        id=row.id,
        source="openclaw",
        description=row.description,
        keywords=tuple(k for k in decode_array(row.trigger_keywords) if k),
        channel=channel,
        account=account,
        sender=sender_of(sender_scope),
        channel_scope=channel_scope,
        sender_scope=sender_scope,
        creator_sender=row.creator_sender,
        status=row.status,
        fire_count=row.fire_count,
        max_fires=row.max_fires,
        fires_left=max(0, row.max_fires - row.fire_count),
        cooldown_seconds=row.cooldown_seconds,
        last_fired_at=None if row.last_fired_at is None else _dt(row.last_fired_at),
        cooldown_until=_dt(cooldown_end) if cooldown_end is not None and cooldown_end > now_ms else None,
        cooldown_left_seconds=max(0, -(-((cooldown_end or 0) - now_ms) // 1000)),
        expires_at=_dt(row.expires_at),
        expired=row.expires_at <= now_ms,
        created_at=_dt(row.created_at),
        source_session_id=row.source_session_id,
    )


def _sender_matches(scope: str, sender: str | None, provider: str | None) -> bool:
    if sender is None:
        return False
    given = sender.strip()
    if given == scope:
        return True
    head, _, tail = given.partition(":")
    return bool(tail) and tail == scope and (provider is None or head.lower() == provider)


def verdict(
    intent: OpenClawIntent, tokens: Sequence[str], channel: str | None, sender: str | None, tz: tzinfo
) -> OpenClawVerdict:
    """The gates ``intent`` meets for a message with ``tokens`` (see the module doc for the order)."""
    out: list[tuple[str, str]] = []
    checks = tuple(check_keyword(k, tokens) for k in intent.keywords)
    matched = next((c.keyword for c in checks if c.matched), None)
    if matched is None:
        usable = [c for c in checks if c.tokens]
        if not usable:
            out.append(("no_keyword", "no usable keyword"))
        else:
            best = min(usable, key=lambda c: len(c.missing))
            missing = ", ".join(f'"{t}"' for t in best.missing)
            out.append(("no_keyword", f'missing {missing} of keyword "{best.keyword}"'))
    chan = (channel or "").strip().lower() or None
    if intent.channel is not None and intent.channel != chan:
        out.append(("scope", f'channel "{chan or "(none)"}" ≠ scope "{intent.channel}"'))
    if intent.sender is not None and not _sender_matches(intent.sender, sender, intent.channel):
        out.append(("scope", f'sender "{(sender or "").strip() or "(none)"}" ≠ scope "{intent.sender}"'))
    if intent.status not in LIVE:
        out.append(("state", intent.status))
    elif intent.expired:
        out.append(("state", f"expired {local_minute(intent.expires_at, tz)}"))
    if not known_creator(intent.creator_sender):
        out.append(("no_creator", "no known creator, so it never injects"))
    if intent.fires_left == 0:
        out.append(("max_fires", f"max fires reached ({intent.fire_count}/{intent.max_fires})"))
    if intent.cooldown_until is not None:
        out.append(("cooldown", f"cooldown until {local_minute(intent.cooldown_until, tz)}"))
    if not out:
        return OpenClawVerdict(intent, "fires", (), checks, matched)
    return OpenClawVerdict(intent, out[0][0], tuple(r for _, r in out), checks, None)


def simulate(
    intents: Sequence[OpenClawIntent],
    prompt: str,
    *,
    channel: str | None,
    sender: str | None,
    at: datetime,
    tz: tzinfo = UTC,
) -> OpenClawMatch:
    """Every intent's verdict for ``prompt`` (read at ``at``); changes nothing."""
    tokens = prompt_tokens(prompt)
    verdicts = [verdict(i, tokens, channel, sender, tz) for i in intents]
    verdicts.sort(key=lambda v: not v.fires)
    chan = (channel or "").strip().lower() or None
    who = (sender or "").strip() or None
    return OpenClawMatch(prompt, chan, who, at, tokens, tuple(verdicts))
