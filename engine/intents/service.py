"""Standing intents (docs/memory-core.md §6): "remind me of X when someone mentions Y", as stored state.

An intent is a row a program executes, never a sentence the model might remember. States:
``armed`` (created) → ``fired`` (after a fire, during its cooldown) → ``armed`` again → … →
``done`` (max fires used); ``expired`` (expiry passed while pending/armed/fired);
``cancelled`` (explicitly, by id; only from pending/armed/fired). ``pending`` exists but is
never assigned (as in OpenClaw). Rows are never deleted: cancelling keeps the row and its fires.

**Sweep** (before every list, get, cancel and match): live rows past their expiry become
``expired``; ``fired`` rows whose cooldown elapsed, with fires left, become ``armed``.

**Match** (one IMMEDIATE transaction; a dry run rolls it back, so it changes nothing):

1. Prompt tokens = lowercase runs of letters, digits, ``_`` and ``-`` (Unicode categories L*
   and N*, exactly OpenClaw's ``[\\p{L}\\p{N}_-]+``).
2. Prefilter = FTS5 ``standing_intents_fts MATCH "t1" OR "t2" …`` restricted to rows that are
   armed, unexpired, under max_fires and in scope, walked by (created_at, id) in pages of 32,
   at most 256 candidates.
3. A candidate fires if, for some keyword, **every** token of that keyword is in the prompt,
   its creator is known, it is armed, unexpired, under max_fires, out of cooldown and in scope.
4. It is applied only if the rendered block still fits: at most 3 intents and 1,200 chars,
   counted as JavaScript counts ``string.length`` (UTF-16 code units) like OpenClaw. An intent
   that does not fit keeps its state and fire budget. Then fire_count + 1, last_fired_at = now,
   status ``done`` if the budget is used up, else ``fired``; a fire-history row is written.

**Chinese, Japanese, Korean (clawmem's rule; OpenClaw misses these).** ``unicode61`` and the
token regex keep a run of Han characters together, so "我们下周去杭州玩" is ONE token and a
keyword "杭州" would never be an exact token. So:

- a keyword token that contains a CJK character (Han, kana, Hangul) is present when it is a
  **substring of a prompt token**, e.g. "杭州" in "我们下周去杭州玩，记得提醒我" (a substring
  never spans punctuation: "杭，州" does not contain "杭州");
- a prompt token mixing CJK and other letters also contributes its pieces split at the script
  boundary ("在hangzhou" → "在", "hangzhou"), so "hangzhou" matches a Chinese sentence with an
  English name in it;
- when the prompt contains CJK, the prefilter also admits rows whose keywords contain CJK
  (a ``GLOB`` on the stored JSON), within the same 256/32 scan limits.

**Scopes.** Creation needs a channel and a sender (no global reminders from anonymous
requests); the default scope is exactly that channel and sender. Channels are compared trimmed
and lowercased, senders trimmed (case kept), as OpenClaw's flat scopes are. ``None`` scope
means any channel / any sender.

**Storage.** Times are integer epoch milliseconds (UTC) in SQLite, aware UTC ``datetime`` in
the dataclasses. Keywords are stored as a JSON array with non-ASCII kept as is (escaped CJK
would not be tokenized by FTS5). The injected block's "created" date is the UTC date, as
OpenClaw renders it. ``standing_intent_fires`` (clawmem's addition) keeps every fire.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from functools import lru_cache
from typing import TYPE_CHECKING

from clawmem.engine.errors import ClawmemError
from clawmem.engine.kinds import INTENT_STATUSES, IntentStatus, narrow
from clawmem.engine.store import intents_rows as rows
from clawmem.engine.store.intents_rows import IntentRow
from clawmem.engine.text_clip import clip
from clawmem.engine.times import local_minute

if TYPE_CHECKING:
    import apsw
    from clawmem.engine.runtime import Runtime

STATUSES = INTENT_STATUSES
CANCELLABLE = ("pending", "armed", "fired")
MAX_DESCRIPTION_CHARS = 500
MAX_KEYWORDS = 24
MAX_KEYWORD_CHARS = 120
MAX_SCOPE_CHARS = 200
MAX_COOLDOWN_HOURS = 24 * 365 * 10
MAX_FIRES = 10_000  # a reminder that fires more often than this is a notification feed, not an intent
LATEST_EXPIRY = "9999-12-30"  # expiries are stored as epoch ms of the day after; 9999-12-31 has none
CANDIDATE_BATCH = 32
CANDIDATE_LIMIT = 256
EXCERPT_CHARS = 200
MIN_ID_PREFIX = 6

# Scripts written without spaces between words: Han (with extensions and compatibility
# ideographs), Hiragana, Katakana, Hangul syllables and jamo, CJK symbols.
_CJK_RANGES = (
    ("\u1100", "\u11ff"),
    ("\u3040", "\u30ff"),
    ("\u3130", "\u318f"),
    ("\u31f0", "\u31ff"),
    ("\u3400", "\u4dbf"),
    ("\u4e00", "\u9fff"),
    ("\uac00", "\ud7af"),
    ("\uf900", "\ufaff"),
    ("\U00020000", "\U0003134f"),
)
_CJK_CLASS = "".join(f"{a}-{b}" for a, b in _CJK_RANGES)
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
CJK_GLOB = f"*[{_CJK_CLASS}]*"
_KEYWORD_SPLIT = re.compile(r"[;,\n；，、]")


# --------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class StandingIntent:
    id: str
    description: str
    keywords: tuple[str, ...]
    channel_scope: str | None  # None: any channel
    sender_scope: str | None  # None: any sender
    creator_sender: str | None
    status: IntentStatus
    expires_at: datetime
    max_fires: int
    fire_count: int
    cooldown_seconds: int
    last_fired_at: datetime | None
    created_at: datetime
    source_session_id: str | None
    fires_left: int
    cooldown_until: datetime | None  # set while a cooldown is running

    @property
    def scope_label(self) -> str:
        """Where and for whom it fires, in words: "telegram / alice", "any channel / anyone"."""
        return f"{self.channel_scope or 'any channel'} / {self.sender_scope or 'anyone'}"

    @property
    def short_id(self) -> str:
        return self.id[:8]


@dataclass(frozen=True)
class IntentFire:
    intent_id: str
    fired_at: datetime
    channel: str | None
    sender: str | None
    prompt_excerpt: str


@dataclass(frozen=True)
class IntentDraft:
    """A validated request to create an intent."""

    description: str
    keywords: tuple[str, ...]
    channel_scope: str | None
    sender_scope: str | None
    creator_sender: str
    expires_at: datetime
    max_fires: int
    cooldown_seconds: int
    source_session_id: str | None


@dataclass(frozen=True)
class DraftCheck:
    """What :meth:`IntentService.check` says about a create request (for live validation)."""

    draft: IntentDraft | None
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class KeywordCheck:
    keyword: str
    tokens: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def matched(self) -> bool:
        return bool(self.tokens) and not self.missing


@dataclass(frozen=True)
class IntentVerdict:
    """Why one intent fires or does not fire for a message.

    ``outcome`` is one of: ``fires``; ``over_budget`` (would fire, but 3 already fire or the
    block would pass 1,200 chars); ``not_scanned`` (beyond the 256-candidate limit);
    ``prefilter`` (the FTS prefilter did not return it); ``state`` (not armed: fired in
    cooldown, done, cancelled, expired, pending); ``no_creator``; ``max_fires``; ``cooldown``;
    ``scope`` (channel or sender); ``no_keyword`` (tokens missing).
    """

    intent: StandingIntent  # before this match (after the sweep)
    outcome: str
    reasons: tuple[str, ...]  # every reason it does not fire, the deciding one first
    keywords: tuple[KeywordCheck, ...]
    matched_keyword: str | None
    after: StandingIntent | None  # its state after firing, when it fires

    @property
    def fires(self) -> bool:
        return self.outcome == "fires"

    @property
    def reason(self) -> str:
        if self.fires:
            return f'keyword "{self.matched_keyword}"'
        return self.reasons[0]


@dataclass(frozen=True)
class SweepResult:
    expired: int
    rearmed: int


@dataclass(frozen=True)
class MatchReport:
    prompt: str
    channel: str | None
    sender: str | None
    at: datetime
    applied: bool  # False: a dry run, nothing was changed
    tokens: tuple[str, ...]
    fired: tuple[StandingIntent, ...]  # their state after firing, in injection order
    verdicts: tuple[IntentVerdict, ...]  # every intent: the fired ones first, then by creation
    block: str | None  # the exact injected context, None when nothing fires
    block_chars: int  # UTF-16 code units, as the 1,200 budget counts them
    scanned: int  # prefilter candidates examined
    swept: SweepResult
    max_injected: int
    max_injected_chars: int


class IntentValidationError(ClawmemError):
    """One or more create inputs are invalid; ``errors`` has one line each."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = tuple(errors)
        super().__init__("; ".join(self.errors))


# --------------------------------------------------------------------------- pure logic


def _is_token_char(ch: str) -> bool:
    return ch in "_-" or unicodedata.category(ch)[0] in "LN"


def tokenize(text: str) -> list[str]:
    """Lowercase ``[\\p{L}\\p{N}_-]+`` runs, in order (duplicates kept)."""
    out: list[str] = []
    current: list[str] = []
    for ch in text.lower():
        if _is_token_char(ch):
            current.append(ch)
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


def has_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None


def _script_pieces(token: str) -> list[str]:
    """A mixed CJK/other token split at script boundaries (pieces with a letter or digit)."""
    pieces: list[str] = []
    start = 0
    for i in range(1, len(token) + 1):
        if i == len(token) or has_cjk(token[i]) != has_cjk(token[start]):
            piece = token[start:i]
            if any(unicodedata.category(c)[0] in "LN" for c in piece):
                pieces.append(piece)
            start = i
    return pieces


def prompt_tokens(prompt: str) -> tuple[str, ...]:
    """The prompt's tokens (unique, in order), plus the script pieces of mixed CJK tokens."""
    seen: dict[str, None] = {}
    for token in tokenize(prompt):
        seen.setdefault(token, None)
        if has_cjk(token):
            for piece in _script_pieces(token):
                seen.setdefault(piece, None)
    return tuple(seen)


def fts_query(tokens: Sequence[str]) -> str | None:
    """The spec's prefilter: an OR of quoted tokens (None when there are none)."""
    if not tokens:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)


@lru_cache(maxsize=4096)
def keyword_tokens(keyword: str) -> tuple[str, ...]:
    """A keyword's distinct tokens (all of them must be in the prompt)."""
    return tuple(dict.fromkeys(tokenize(keyword)))


@lru_cache(maxsize=64)
def _prompt_index(tokens: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    return frozenset(tokens), tuple(t for t in tokens if has_cjk(t))


def check_keyword(keyword: str, tokens: Sequence[str]) -> KeywordCheck:
    """Which of the keyword's tokens the prompt lacks (CJK tokens match as substrings)."""
    present, cjk_tokens = _prompt_index(tuple(tokens))
    kw_tokens = keyword_tokens(keyword)
    missing = tuple(t for t in kw_tokens if t not in present and not (has_cjk(t) and any(t in p for p in cjk_tokens)))
    return KeywordCheck(keyword=keyword, tokens=kw_tokens, missing=missing)


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (how OpenClaw measures the budget)."""
    return len(text.encode("utf-16-le")) // 2


def render_block(intents: Sequence[StandingIntent]) -> str:
    """The injected context, byte for byte as OpenClaw renders it."""
    lines = [
        f"Standing intent (created {i.created_at.astimezone(UTC).date().isoformat()}): {i.description}" for i in intents
    ]
    return "<standing_intents>\n" + "\n".join(lines) + "\n</standing_intents>"


def fits(intents: Sequence[StandingIntent], max_count: int = 3, max_chars: int = 1_200) -> bool:
    return len(intents) <= max_count and js_length(render_block(intents)) <= max_chars


def parse_keywords(text: str) -> list[str]:
    """Split a keyword list typed by a person: ``;``, ``,``, newline, or their CJK forms."""
    return [part for part in _KEYWORD_SPLIT.split(text) if part.strip()]


def normalize_channel(value: str | None) -> str | None:
    text = (value or "").strip().lower()
    return text or None


def normalize_sender(value: str | None) -> str | None:
    text = (value or "").strip()
    return text or None


def known_creator(value: str | None) -> bool:
    text = (value or "").strip()
    return bool(text) and text.lower() != "unknown"


def excerpt(prompt: str, limit: int = EXCERPT_CHARS) -> str:
    return clip(prompt, limit, flat=True)


def _ms(value: datetime) -> int:
    return round(value.timestamp() * 1000)


def _dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def _dt_opt(ms: int | None) -> datetime | None:
    return None if ms is None else _dt(ms)


def stored_keywords(row: IntentRow) -> tuple[str, ...]:
    """The row's keyword list (an unreadable value reads as no keywords, which never fires)."""
    try:
        parsed = json.loads(row.trigger_keywords)
    except ValueError:
        return ()
    return tuple(k for k in parsed if isinstance(k, str) and k) if isinstance(parsed, list) else ()


def parse_expiry(text: str, tz: tzinfo) -> datetime:
    """``YYYY-MM-DD`` (valid through that day, in ``tz``) or an ISO date-time (naive = ``tz``)."""
    raw = text.strip()
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            return datetime.combine(day + timedelta(days=1), time(0, 0), tz).astimezone(UTC)
        value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        if value.tzinfo is None:
            value = value.replace(tzinfo=tz)
        return value.astimezone(UTC)
    except ValueError:
        raise ClawmemError(f"expiry {raw!r} is not an ISO date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM)") from None
    except OverflowError:
        raise ClawmemError(f"expiry {raw!r} is out of range; the latest allowed is {LATEST_EXPIRY}") from None


def to_intent(row: IntentRow, now_ms: int) -> StandingIntent:
    cooldown_until = None
    if row.last_fired_at is not None:
        until = row.last_fired_at + row.cooldown_seconds * 1000
        if until > now_ms and row.status in ("armed", "fired"):
            cooldown_until = _dt(until)
    return StandingIntent(
        id=row.id,
        description=row.description,
        keywords=stored_keywords(row),
        channel_scope=row.channel_scope,
        sender_scope=row.sender_scope,
        creator_sender=row.creator_sender,
        status=narrow(row.status, INTENT_STATUSES, "intent status"),
        expires_at=_dt(row.expires_at),
        max_fires=row.max_fires,
        fire_count=row.fire_count,
        cooldown_seconds=row.cooldown_seconds,
        last_fired_at=_dt_opt(row.last_fired_at),
        created_at=_dt(row.created_at),
        source_session_id=row.source_session_id,
        fires_left=max(0, row.max_fires - row.fire_count),
        cooldown_until=cooldown_until,
    )


def blockers(
    row: IntentRow,
    tokens: Sequence[str],
    channel: str | None,
    sender: str | None,
    now_ms: int,
    tz: tzinfo = UTC,
) -> tuple[list[tuple[str, str]], tuple[KeywordCheck, ...]]:
    """Every (outcome, reason) that keeps ``row`` from firing, in deciding order, and the
    keyword checks. An empty list means it is eligible (budget and scan limits aside)."""
    out: list[tuple[str, str]] = []
    cooldown_end = None if row.last_fired_at is None else row.last_fired_at + row.cooldown_seconds * 1000
    cooling = cooldown_end is not None and cooldown_end > now_ms
    if row.status != "armed":
        if row.status == "fired":
            text = f"fired {row.fire_count}/{row.max_fires}"
            if cooling and cooldown_end is not None:
                text += f", cooldown until {local_minute(_dt(cooldown_end), tz)}"
        elif row.status == "done":
            text = f"done: all {row.max_fires} fires used"
        elif row.status == "expired":
            text = f"expired {local_minute(_dt(row.expires_at), tz)}"
        elif row.status == "pending":
            text = "pending (never armed)"
        else:
            text = row.status
        out.append(("state", text))
    elif row.expires_at <= now_ms:
        out.append(("state", "expired"))
    if not known_creator(row.creator_sender):
        out.append(("no_creator", "no known creator, so it never injects"))
    if row.status == "armed" and row.fire_count >= row.max_fires:
        out.append(("max_fires", f"max fires reached ({row.fire_count}/{row.max_fires})"))
    if row.status == "armed" and cooling and cooldown_end is not None:
        out.append(("cooldown", f"cooldown until {local_minute(_dt(cooldown_end), tz)}"))
    if row.channel_scope is not None and row.channel_scope != channel:
        out.append(("scope", f'channel "{channel or "(none)"}" ≠ scope "{row.channel_scope}"'))
    if row.sender_scope is not None and row.sender_scope != sender:
        out.append(("scope", f'sender "{sender or "(none)"}" ≠ scope "{row.sender_scope}"'))
    checks = tuple(check_keyword(k, tokens) for k in stored_keywords(row))
    if not any(c.matched for c in checks):
        usable = [c for c in checks if c.tokens]
        if not usable:
            out.append(("no_keyword", "no usable keyword"))
        else:
            best = min(usable, key=lambda c: len(c.missing))
            missing = ", ".join(f'"{t}"' for t in best.missing)
            text = f'missing {missing} of keyword "{best.keyword}"'
            if len(usable) > 1:
                text += f" (and {len(usable) - 1} other keyword{'s' if len(usable) > 2 else ''})"
            out.append(("no_keyword", text))
    return out, checks


@dataclass(frozen=True)
class _Message:
    """One incoming message as a match sees it: its tokens and prefilter, where it came from, and when."""

    prompt: str
    tokens: tuple[str, ...]
    query: str | None  # the FTS prefilter (spec step 2)
    glob: str | None  # the CJK keyword GLOB, when the prompt has CJK
    channel: str | None
    sender: str | None
    now_ms: int
    tz: tzinfo


@dataclass
class _Scan:
    """What walking the prefilter decided: the intents that fire, in injection order, and what it
    passed over and how far it got — which the verdicts of the others need."""

    max_n: int
    max_chars: int
    fired: list[StandingIntent] = field(default_factory=list)
    matched_by: dict[str, str] = field(default_factory=dict)  # intent id -> the keyword that fired it
    fired_rows: dict[str, IntentRow] = field(default_factory=dict)  # their rows before firing
    evaluated: set[str] = field(default_factory=set)
    budget: dict[str, str] = field(default_factory=dict)  # intent id -> why it did not fit the block
    scanned: int = 0


def _walk_prefilter(conn: apsw.Connection, msg: _Message, scan: _Scan) -> None:
    """Spec step 2: walk the prefilter's candidates by (created_at, id), in pages of CANDIDATE_BATCH, at most
    CANDIDATE_LIMIT of them, until max_injected intents fire."""
    cursor: tuple[int, str] | None = None
    while len(scan.fired) < scan.max_n and scan.scanned < CANDIDATE_LIMIT:
        want = min(CANDIDATE_BATCH, CANDIDATE_LIMIT - scan.scanned)
        page = rows.candidate_page(
            conn,
            fts_query=msg.query,
            cjk_glob=msg.glob,
            now_ms=msg.now_ms,
            channel=msg.channel,
            sender=msg.sender,
            after=cursor,
            limit=want,
        )
        if not page:
            break
        scan.scanned += len(page)
        cursor = (page[-1].created_at, page[-1].id)
        for candidate in page:
            if len(scan.fired) >= scan.max_n:
                break
            _try_fire(conn, msg, scan, candidate)
        if len(page) < want:
            break


def _try_fire(conn: apsw.Connection, msg: _Message, scan: _Scan, candidate: IntentRow) -> None:
    """Spec steps 3 and 4 for one candidate: re-read and re-check it, and fire it only if the block still fits.

    An intent that does not fit keeps its state and fire budget; the reason is kept for its verdict.
    """
    current = rows.get(conn, candidate.id)  # re-read and re-check (spec step 3)
    if current is None:
        return
    scan.evaluated.add(current.id)
    problems, checks = blockers(current, msg.tokens, msg.channel, msg.sender, msg.now_ms, msg.tz)
    if problems:
        return
    count = current.fire_count + 1
    status = "done" if count >= current.max_fires else "fired"
    after = to_intent(replace(current, fire_count=count, last_fired_at=msg.now_ms, status=status), msg.now_ms)
    block = render_block([*scan.fired, after])
    if not fits([*scan.fired, after], scan.max_n, scan.max_chars):
        scan.budget[current.id] = f"over budget: the block would be {js_length(block)} chars (limit {scan.max_chars})"
        return
    if rows.mark_fired(conn, current.id, fire_count=count, fired_at=msg.now_ms, status=status):
        rows.insert_fire(
            conn, current.id, fired_at=msg.now_ms, channel=msg.channel, sender=msg.sender, excerpt=excerpt(msg.prompt)
        )
        scan.fired.append(after)
        scan.fired_rows[current.id] = current
        scan.matched_by[current.id] = next(c.keyword for c in checks if c.matched)


def _passed_over(row_id: str, scan: _Scan) -> list[tuple[str, str]]:
    """Why an intent nothing blocks still did not fire: over budget, beyond the scan limit, or the
    prefilter did not return it."""
    if row_id in scan.budget:
        return [("over_budget", scan.budget[row_id])]
    if len(scan.fired) >= scan.max_n:
        return [("over_budget", f"over budget: {scan.max_n} intents already fire for this message")]
    if row_id not in scan.evaluated and scan.scanned >= CANDIDATE_LIMIT:
        return [("not_scanned", f"not scanned: beyond the {CANDIDATE_LIMIT}-candidate limit")]
    return [("prefilter", "not returned by the keyword prefilter")]


def _verdicts(before: Sequence[IntentRow], msg: _Message, scan: _Scan) -> list[IntentVerdict]:
    """Every intent's verdict, from its state before the match: the fired ones first, then the others."""
    fired_ids = {i.id: i for i in scan.fired}
    verdicts_fired: list[IntentVerdict] = []
    verdicts_other: list[IntentVerdict] = []
    for row in before:
        intent = to_intent(row, msg.now_ms)
        problems, checks = blockers(row, msg.tokens, msg.channel, msg.sender, msg.now_ms, msg.tz)
        if row.id in fired_ids:
            verdicts_fired.append(
                IntentVerdict(intent, "fires", (), checks, scan.matched_by[row.id], fired_ids[row.id])
            )
            continue
        if not problems:
            problems = _passed_over(row.id, scan)
        verdicts_other.append(IntentVerdict(intent, problems[0][0], tuple(p[1] for p in problems), checks, None, None))
    return verdicts_fired + verdicts_other


# --------------------------------------------------------------------------- service


class IntentService:
    """Create, list, cancel, sweep and match standing intents of one agent."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    # ------------------------------------------------------------------ helpers

    def _now_ms(self) -> int:
        return _ms(self.runtime.clock.now())

    @property
    def _tz(self) -> tzinfo:
        return self.runtime.clock.tz

    def _resolve(self, ident: str) -> IntentRow:
        conn = self.runtime.store.conn()
        key = ident.strip().lower()
        if not key:
            raise ClawmemError("give the intent's id (see `clawmem intent list`)")
        row = rows.get(conn, key)
        if row is not None:
            return row
        if len(key) < MIN_ID_PREFIX:
            raise ClawmemError(f"give the intent's full id or at least its first {MIN_ID_PREFIX} characters")
        found = rows.find_by_prefix(conn, key)
        if not found:
            raise ClawmemError(f"no standing intent with id {ident.strip()!r} (see `clawmem intent list`)")
        if len(found) > 1:
            raise ClawmemError(f"id prefix {ident.strip()!r} matches several intents; give more characters")
        return found[0]

    # ------------------------------------------------------------------ create

    def check(
        self,
        description: str,
        keywords: str | Sequence[str],
        *,
        channel: str | None,
        sender: str | None,
        expires: str | datetime | None = None,
        max_fires: int | None = None,
        cooldown_hours: float | None = None,
        any_channel: bool = False,
        any_sender: bool = False,
        source_session_id: str | None = None,
    ) -> DraftCheck:
        """Validate a create request without writing anything: every problem, one line each."""
        cfg = self.runtime.settings.intents
        errors: list[str] = []
        now = self.runtime.clock.now()

        desc = (description or "").strip()
        if not desc:
            errors.append("the description is empty; say what to remind of")
        elif len(desc) > MAX_DESCRIPTION_CHARS:
            errors.append(f"the description is {len(desc)} characters; the limit is {MAX_DESCRIPTION_CHARS}")

        raw = parse_keywords(keywords) if isinstance(keywords, str) else [k for k in keywords if k.strip()]
        normalized: list[str] = []
        for n, item in enumerate(raw, 1):
            kw = " ".join(item.split()).lower()
            if len(kw) > MAX_KEYWORD_CHARS:
                errors.append(f"keyword {n} is longer than {MAX_KEYWORD_CHARS} characters")
            elif not tokenize(kw) or not any(unicodedata.category(c)[0] in "LN" for c in kw):
                errors.append(f"keyword {n} ({kw!r}) has no letters or digits to match")
            else:
                normalized.append(kw)
        unique = tuple(dict.fromkeys(normalized))
        if not raw:
            errors.append('give at least one keyword (e.g. --keywords "杭州; hangzhou")')
        elif len(unique) > MAX_KEYWORDS:
            errors.append(f"{len(unique)} different keywords; the limit is {MAX_KEYWORDS}")

        chan = normalize_channel(channel)
        who = normalize_sender(sender)
        if chan is None or who is None:
            missing = " and ".join(
                n for n, v in (("a channel (--channel)", chan), ("a sender (--sender)", who)) if v is None
            )
            errors.append(f"creating an intent needs {missing}: no global reminders from anonymous requests")
        if who is not None and not known_creator(who):
            errors.append("the sender 'unknown' is not a known sender")
        for label, value in (("channel", chan), ("sender", who)):
            if value is not None and len(value) > MAX_SCOPE_CHARS:
                errors.append(f"the {label} is {len(value)} characters; the limit is {MAX_SCOPE_CHARS}")

        expires_at = now + timedelta(days=cfg.expiry_days)
        if expires is not None and expires != "":
            try:
                if isinstance(expires, datetime):
                    expires_at = (expires if expires.tzinfo else expires.replace(tzinfo=self._tz)).astimezone(UTC)
                else:
                    expires_at = parse_expiry(expires, self._tz)
            except ClawmemError as exc:
                errors.append(str(exc))
            else:
                if expires_at <= now:
                    shown = expires.strip() if isinstance(expires, str) else local_minute(expires_at, self._tz)
                    errors.append(f"the expiry {shown} is not in the future; give a later date")

        fires = cfg.max_fires if max_fires is None else max_fires
        if isinstance(fires, bool) or not isinstance(fires, int) or not 1 <= fires <= MAX_FIRES:
            shown = f"{fires!r}" if not isinstance(fires, int) or abs(fires) < 10**12 else "a number that large"
            errors.append(f"max fires must be a whole number from 1 to {MAX_FIRES:,}, got {shown}")

        hours = cfg.cooldown_hours if cooldown_hours is None else cooldown_hours
        if not isinstance(hours, (int, float)) or not math.isfinite(hours) or not 0 <= hours <= MAX_COOLDOWN_HOURS:
            errors.append(f"the cooldown must be between 0 and {MAX_COOLDOWN_HOURS} hours, got {hours!r}")
            hours = 0

        if errors or chan is None or who is None:
            return DraftCheck(None, tuple(errors))
        draft = IntentDraft(
            description=desc,
            keywords=unique,
            channel_scope=None if any_channel else chan,
            sender_scope=None if any_sender else who,
            creator_sender=who,
            expires_at=expires_at,
            max_fires=fires,
            cooldown_seconds=round(float(hours) * 3600),
            source_session_id=(source_session_id or "").strip() or None,
        )
        return DraftCheck(draft, ())

    def create(
        self,
        description: str,
        keywords: str | Sequence[str],
        *,
        channel: str | None,
        sender: str | None,
        expires: str | datetime | None = None,
        max_fires: int | None = None,
        cooldown_hours: float | None = None,
        any_channel: bool = False,
        any_sender: bool = False,
        source_session_id: str | None = None,
    ) -> StandingIntent:
        """Create an ``armed`` intent; raise IntentValidationError listing every problem."""
        result = self.check(
            description,
            keywords,
            channel=channel,
            sender=sender,
            expires=expires,
            max_fires=max_fires,
            cooldown_hours=cooldown_hours,
            any_channel=any_channel,
            any_sender=any_sender,
            source_session_id=source_session_id,
        )
        if result.draft is None:
            raise IntentValidationError(result.errors)
        d = result.draft
        now_ms = self._now_ms()
        with self.runtime.store.write() as conn:
            row = rows.insert(
                conn,
                id=str(uuid.uuid4()),
                description=d.description,
                trigger_keywords=json.dumps(list(d.keywords), ensure_ascii=False),
                channel_scope=d.channel_scope,
                sender_scope=d.sender_scope,
                creator_sender=d.creator_sender,
                expires_at=_ms(d.expires_at),
                max_fires=d.max_fires,
                cooldown_seconds=d.cooldown_seconds,
                created_at=now_ms,
                source_session_id=d.source_session_id,
            )
        return to_intent(row, now_ms)

    # ------------------------------------------------------------------ read / sweep / cancel

    def sweep(self) -> SweepResult:
        """Expire and re-arm by the clock (what heartbeat and cron hooks call)."""
        with self.runtime.store.write() as conn:
            expired, rearmed = rows.sweep(conn, self._now_ms())
        return SweepResult(expired, rearmed)

    def list(self, status: str | None = None) -> tuple[StandingIntent, ...]:
        """Every intent (or those in ``status``), oldest first, after a sweep."""
        if status is not None and status not in STATUSES:
            raise ClawmemError(f"unknown status {status!r}; use one of {', '.join(STATUSES)}")
        now_ms = self._now_ms()
        with self.runtime.store.write() as conn:
            rows.sweep(conn, now_ms)
            found = rows.all_rows(conn, status)
        return tuple(to_intent(r, now_ms) for r in found)

    def get(self, ident: str) -> StandingIntent:
        """One intent by id or unique id prefix (≥ 6 characters), after a sweep."""
        now_ms = self._now_ms()
        with self.runtime.store.write() as conn:
            rows.sweep(conn, now_ms)
            row = self._resolve(ident)
        return to_intent(row, now_ms)

    def fires(self, ident: str | None = None, limit: int = 200) -> tuple[IntentFire, ...]:
        """Fire history, newest first: of one intent (id or prefix), or of all."""
        conn = self.runtime.store.conn()
        intent_id = self._resolve(ident).id if ident is not None else None
        return tuple(
            IntentFire(f.intent_id, _dt(f.fired_at), f.channel, f.sender, f.prompt_excerpt)
            for f in rows.fires(conn, intent_id, limit)
        )

    def cancel(self, ident: str) -> StandingIntent:
        """Cancel a pending, armed or fired intent by id (or unique prefix); the row and its fires stay."""
        now_ms = self._now_ms()
        with self.runtime.store.write() as conn:
            rows.sweep(conn, now_ms)
            row = self._resolve(ident)
            if row.status not in CANCELLABLE:
                raise ClawmemError(
                    f"intent {row.id[:8]} is {row.status}; only pending, armed or fired intents can be cancelled"
                )
            rows.cancel(conn, row.id)
            updated = rows.get(conn, row.id)
        assert updated is not None
        return to_intent(updated, now_ms)

    # ------------------------------------------------------------------ match

    def match(
        self, prompt: str, *, channel: str | None, sender: str | None, apply: bool = False, explain: bool = True
    ) -> MatchReport:
        """What fires for ``prompt`` from ``sender`` on ``channel``, and why every other intent does not.

        ``apply=False`` (the trigger simulator) runs the very same transaction and rolls it back.
        ``explain=False`` (a host matching every message) gives verdicts for the fired intents only.
        """
        cfg = self.runtime.settings.intents
        max_n, max_chars = cfg.max_injected, cfg.max_injected_chars
        now = self.runtime.clock.now()
        now_ms = _ms(now)
        chan, who = normalize_channel(channel), normalize_sender(sender)
        tokens = prompt_tokens(prompt)
        query = fts_query(tokens)
        glob = CJK_GLOB if has_cjk(prompt) else None
        msg = _Message(prompt, tokens, query, glob, chan, who, now_ms, self._tz)

        scan = _Scan(max_n, max_chars)
        conn = self.runtime.store.conn()
        with rows.transaction(conn, commit=apply):
            swept = SweepResult(*rows.sweep(conn, now_ms))
            before = rows.all_rows(conn) if explain else []
            _walk_prefilter(conn, msg, scan)

        if not explain:
            before = list(scan.fired_rows.values())
        verdicts = _verdicts(before, msg, scan)
        fired = scan.fired
        injected = render_block(fired) if fired else None
        return MatchReport(
            prompt=prompt,
            channel=chan,
            sender=who,
            at=now,
            applied=apply,
            tokens=tokens,
            fired=tuple(fired),
            verdicts=tuple(verdicts),
            block=injected,
            block_chars=js_length(injected) if injected else 0,
            scanned=scan.scanned,
            swept=swept,
            max_injected=max_n,
            max_injected_chars=max_chars,
        )
