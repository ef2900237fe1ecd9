"""Standing intents (docs/memory-core.md §6): the state machine, matching, budgets, scopes and CJK, on real SQLite."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import apsw
import pytest
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.intents.service import (
    IntentValidationError,
    StandingIntent,
    check_keyword,
    js_length,
    prompt_tokens,
    render_block,
    tokenize,
)

from tests.conftest import NOW, make_settings

T0 = datetime.fromisoformat(NOW)


class Clockwork:
    """Engines on one home and workspace, each with its own fixed clock (CLAWMEM_NOW per engine)."""

    def __init__(self, home: Path, workspace: Path) -> None:
        self.settings = make_settings(home, workspace, embedding={"provider": "none"})
        self.engines: list[MemoryEngine] = []

    def at(self, when: datetime | timedelta) -> MemoryEngine:
        instant = T0 + when if isinstance(when, timedelta) else when
        engine = MemoryEngine(dataclasses.replace(self.settings, now=instant.isoformat()))
        self.engines.append(engine)
        return engine

    def close(self) -> None:
        for engine in self.engines:
            engine.close()


@pytest.fixture
def clock(home: Path, workspace: Path) -> Iterator[Clockwork]:
    c = Clockwork(home, workspace)
    yield c
    c.close()


def hangzhou(engine: MemoryEngine, **kw: object) -> StandingIntent:
    args: dict[str, object] = {"channel": "telegram", "sender": "u1"}
    args.update(kw)
    return engine.intents.create("提醒确认返程车票", "杭州; hangzhou", **args)  # type: ignore[arg-type]


def verdict(report, intent_id: str):  # type: ignore[no-untyped-def]
    return next(v for v in report.verdicts if v.intent.id == intent_id)


# --------------------------------------------------------------------------- schema and create


def test_schema_has_the_spec_table_fts_and_indexes(clock: Clockwork) -> None:
    e = clock.at(timedelta(0))
    cols = [r[1] for r in e.store.query("PRAGMA table_info(standing_intents)")]
    assert cols == [
        "intent_key",
        "id",
        "description",
        "trigger_keywords",
        "trigger_embedding",
        "channel_scope",
        "sender_scope",
        "creator_sender",
        "status",
        "expires_at",
        "max_fires",
        "fire_count",
        "cooldown_seconds",
        "last_fired_at",
        "created_at",
        "source_session_id",
    ]
    names = {r[0] for r in e.store.query("SELECT name FROM sqlite_master")}
    assert {
        "idx_standing_intents_lifecycle",
        "idx_standing_intents_scope",
        "standing_intents_fts",
        "standing_intent_fires",
    } <= names
    fts_sql = e.store.scalar("SELECT sql FROM sqlite_master WHERE name = 'standing_intents_fts'")
    assert "unicode61 remove_diacritics 2" in fts_sql and "content_rowid = 'intent_key'" in fts_sql
    with pytest.raises(apsw.ConstraintError):
        e.store.conn().execute(
            "INSERT INTO standing_intents (id, description, trigger_keywords, status, expires_at, max_fires, "
            "created_at) VALUES ('x', 'd', '[]', 'sleeping', 1, 1, 1)"
        )


def test_create_arms_with_spec_defaults_and_current_scope(clock: Clockwork) -> None:
    e = clock.at(timedelta(0))
    intent = e.intents.create(
        "  提醒确认返程车票 ",
        "杭州; Hangzhou; hangzhou ;  ",
        channel=" Telegram ",
        sender=" u1 ",
        source_session_id="s-1",
    )
    assert intent.status == "armed"
    assert intent.keywords == ("杭州", "hangzhou")  # lowercased, de-duplicated, empty parts dropped
    assert intent.description == "提醒确认返程车票"
    assert (intent.channel_scope, intent.sender_scope, intent.creator_sender) == ("telegram", "u1", "u1")
    assert (intent.max_fires, intent.cooldown_seconds, intent.fire_count, intent.fires_left) == (3, 86_400, 0, 3)
    assert intent.expires_at == T0 + timedelta(days=90)
    assert intent.created_at == T0 and intent.last_fired_at is None and intent.source_session_id == "s-1"
    stored = e.store.query(
        "SELECT trigger_keywords, trigger_embedding, created_at, expires_at FROM standing_intents WHERE id = ?",
        (intent.id,),
    )[0]
    # Epoch milliseconds; CJK stored unescaped so FTS5 can tokenize it.
    assert stored == (
        '["杭州", "hangzhou"]',
        None,
        int(T0.timestamp() * 1000),
        int((T0 + timedelta(days=90)).timestamp() * 1000),
    )
    hits = e.store.query("SELECT rowid FROM standing_intents_fts WHERE standing_intents_fts MATCH '杭州'")
    assert len(hits) == 1


def test_create_options_expiry_fires_cooldown_and_open_scopes(clock: Clockwork) -> None:
    e = clock.at(timedelta(0))
    intent = hangzhou(e, expires="2026-12-01", max_fires=5, cooldown_hours=1.5, any_channel=True, any_sender=True)
    assert intent.expires_at == datetime(2026, 12, 2, tzinfo=UTC)  # valid through Dec 1 (TZ is UTC in tests)
    assert (intent.max_fires, intent.cooldown_seconds) == (5, 5400)
    assert (intent.channel_scope, intent.sender_scope, intent.creator_sender) == (None, None, "u1")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"description": "x" * 501}, "the description is 501 characters; the limit is 500"),
        ({"description": "   "}, "the description is empty"),
        ({"keywords": "a; b; " + "k" * 121}, "keyword 3 is longer than 120 characters"),
        ({"keywords": "; ".join(f"k{i}" for i in range(25))}, "25 different keywords; the limit is 24"),
        ({"keywords": " ; "}, "give at least one keyword"),
        ({"keywords": "ok; !!!"}, "keyword 2 ('!!!') has no letters or digits"),
        ({"channel": None}, "creating an intent needs a channel (--channel)"),
        ({"sender": ""}, "creating an intent needs a sender (--sender)"),
        ({"sender": "Unknown"}, "the sender 'unknown' is not a known sender"),
        ({"channel": "c" * 201}, "the channel is 201 characters; the limit is 200"),
        ({"sender": "s" * 201}, "the sender is 201 characters; the limit is 200"),
        ({"expires": "2026-11-04"}, "the expiry 2026-11-04 is not in the future"),
        ({"expires": "2026-11-05T09:00"}, "the expiry 2026-11-05T09:00 is not in the future"),
        ({"expires": "next week"}, "expiry 'next week' is not an ISO date"),
        ({"max_fires": 0}, "max fires must be a whole number from 1 to 10,000, got 0"),
        ({"max_fires": 10**23}, "max fires must be a whole number from 1 to 10,000, got a number that large"),
        ({"max_fires": 10_001}, "max fires must be a whole number from 1 to 10,000, got 10001"),
        ({"cooldown_hours": 1e300}, "the cooldown must be between 0 and 87600 hours"),
        ({"cooldown_hours": float("nan")}, "the cooldown must be between 0 and 87600 hours"),
        ({"expires": "9999-12-31"}, "expiry '9999-12-31' is out of range; the latest allowed is 9999-12-30"),
        ({"cooldown_hours": -1}, "the cooldown must be between 0 and"),
    ],
)
def test_every_input_limit_is_validated_with_a_clear_line(
    clock: Clockwork, kwargs: dict[str, object], message: str
) -> None:
    e = clock.at(timedelta(0))
    args: dict[str, object] = {"description": "d", "keywords": "k", "channel": "telegram", "sender": "u1"}
    args.update(kwargs)
    with pytest.raises(IntentValidationError) as info:
        e.intents.create(args.pop("description"), args.pop("keywords"), **args)  # type: ignore[arg-type]
    assert any(err.startswith(message) for err in info.value.errors), info.value.errors
    assert "\n" not in str(info.value)
    assert e.intents.list() == ()


def test_limits_are_inclusive(clock: Clockwork) -> None:
    e = clock.at(timedelta(0))
    intent = e.intents.create(
        "x" * 500, [f"k{i}" for i in range(24)] + ["k0", "K1"], channel="c" * 200, sender="s" * 200
    )
    assert len(intent.keywords) == 24 and len(intent.description) == 500
    assert e.intents.create("d", ["k" * 120], channel="t", sender="u").keywords == ("k" * 120,)


def test_check_reports_all_errors_without_writing(clock: Clockwork) -> None:
    e = clock.at(timedelta(0))
    result = e.intents.check("", "", channel=None, sender=None)
    assert not result.ok and result.draft is None and len(result.errors) == 3
    assert e.intents.check("d", "k", channel="t", sender="u").ok
    assert e.intents.list() == ()


# --------------------------------------------------------------------------- tokens and rendering


def test_prompt_tokens_follow_the_spec_regex() -> None:
    assert tokenize("Hello, WORLD_x-y 42! café\tnaïve") == ["hello", "world_x-y", "42", "café", "naïve"]
    assert tokenize("e-mail: a.b@c") == ["e-mail", "a", "b", "c"]
    assert tokenize("emoji 🙂 splits") == ["emoji", "splits"]
    assert tokenize("Ⅻ ½ ٣") == ["ⅻ", "½", "٣"]  # \p{N}: letter-like, fraction and Arabic-Indic numbers
    # A run of Han is one token, as unicode61 sees it; full-width punctuation separates.
    assert tokenize("我们下周去杭州玩，记得提醒我") == ["我们下周去杭州玩", "记得提醒我"]
    # Mixed-script tokens also yield their pieces (clawmem's CJK rule).
    assert prompt_tokens("下周去Hangzhou出差") == ("下周去hangzhou出差", "下周去", "hangzhou", "出差")


def test_keyword_tokens_all_needed_and_cjk_by_substring() -> None:
    toks = prompt_tokens("the candidate release is ready")
    assert check_keyword("release candidate", toks).matched
    miss = check_keyword("release candidate", prompt_tokens("please summarize the release notes"))
    assert miss.missing == ("candidate",) and not miss.matched
    assert check_keyword("杭州", prompt_tokens("我们下周去杭州玩，记得提醒我")).matched
    assert not check_keyword("杭州", prompt_tokens("杭，州")).matched  # a substring never spans punctuation
    assert not check_keyword("hang", prompt_tokens("hangzhou")).matched  # non-CJK tokens match whole
    assert check_keyword("返程 车票", prompt_tokens("记得买返程的车票")).matched


def test_injected_block_is_exactly_the_spec_format(clock: Clockwork) -> None:
    e = clock.at(timedelta(0))
    a = e.intents.create("提醒确认返程车票", "杭州", channel="t", sender="u")
    b = e.intents.create("Confirm the rollback owner.", "rollback", channel="t", sender="u")
    assert render_block([a, b]) == (
        "<standing_intents>\n"
        "Standing intent (created 2026-11-05): 提醒确认返程车票\n"
        "Standing intent (created 2026-11-05): Confirm the rollback owner.\n"
        "</standing_intents>"
    )
    assert js_length("🙂") == 2 and js_length("杭州") == 2  # counted like JavaScript's string.length


# --------------------------------------------------------------------------- lifecycle with a fixed clock


def test_full_lifecycle_fire_cooldown_rearm_done(clock: Clockwork) -> None:
    intent = hangzhou(clock.at(timedelta(0)))
    msg = "我们下周去杭州玩，记得提醒我"

    first = clock.at(timedelta(minutes=1)).intents.match(msg, channel="telegram", sender="u1", apply=True)
    assert [i.id for i in first.fired] == [intent.id]
    assert first.fired[0].status == "fired" and first.fired[0].fire_count == 1
    assert (
        first.block == "<standing_intents>\nStanding intent (created 2026-11-05): 提醒确认返程车票\n</standing_intents>"
    )

    e = clock.at(timedelta(hours=5))
    blocked = e.intents.match("hangzhou again", channel="telegram", sender="u1", apply=True)
    v = verdict(blocked, intent.id)
    assert blocked.fired == () and blocked.block is None
    assert v.outcome == "state" and v.reason == "fired 1/3, cooldown until 2026-11-06 09:01 UTC"
    assert e.intents.get(intent.id[:8]).cooldown_until == T0 + timedelta(days=1, minutes=1)

    rearmed = clock.at(timedelta(days=1, minutes=1))
    assert rearmed.intents.list()[0].status == "armed"  # the sweep re-arms after 24 h
    second = rearmed.intents.match("hangzhou", channel="telegram", sender="u1", apply=True)
    assert second.fired[0].fire_count == 2 and second.fired[0].status == "fired"

    third = clock.at(timedelta(days=2, minutes=2)).intents.match("杭州", channel="telegram", sender="u1", apply=True)
    assert third.fired[0].fire_count == 3 and third.fired[0].status == "done"

    later = clock.at(timedelta(days=5))
    after = later.intents.match("杭州", channel="telegram", sender="u1", apply=True)
    assert after.fired == ()
    assert verdict(after, intent.id).reason == "done: all 3 fires used"
    final = later.intents.get(intent.id)
    assert (final.status, final.fire_count, final.fires_left) == ("done", 3, 0)
    history = later.intents.fires(intent.id)
    assert [f.fired_at for f in history] == [
        T0 + timedelta(days=2, minutes=2),
        T0 + timedelta(days=1, minutes=1),
        T0 + timedelta(minutes=1),
    ]
    assert history[-1].prompt_excerpt == msg and history[-1].channel == "telegram" and history[-1].sender == "u1"


def test_expires_after_90_days(clock: Clockwork) -> None:
    intent = hangzhou(clock.at(timedelta(0)))
    almost = clock.at(timedelta(days=89, hours=23))
    assert almost.intents.list()[0].status == "armed"
    e = clock.at(timedelta(days=90))
    assert e.intents.sweep().expired == 1
    assert [i.id for i in e.intents.list("expired")] == [intent.id]
    report = e.intents.match("hangzhou", channel="telegram", sender="u1", apply=True)
    assert report.fired == () and verdict(report, intent.id).reason == "expired 2027-02-03 09:00 UTC"
    with pytest.raises(ClawmemError, match="is expired; only pending, armed or fired intents can be cancelled"):
        e.intents.cancel(intent.id)


def test_cancel_stops_matching_and_keeps_history(clock: Clockwork) -> None:
    intent = hangzhou(clock.at(timedelta(0)))
    e = clock.at(timedelta(hours=1))
    assert e.intents.match("hangzhou", channel="telegram", sender="u1", apply=True).fired
    cancelled = e.intents.cancel(intent.id[:6])  # a unique prefix of 6 characters is enough
    assert (cancelled.status, cancelled.fire_count) == ("cancelled", 1)

    later = clock.at(timedelta(days=3))
    report = later.intents.match("hangzhou", channel="telegram", sender="u1", apply=True)
    assert report.fired == () and verdict(report, intent.id).reason == "cancelled"
    assert [i.status for i in later.intents.list()] == ["cancelled"]
    assert len(later.intents.fires(intent.id)) == 1
    with pytest.raises(ClawmemError, match="is cancelled"):
        later.intents.cancel(intent.id)
    with pytest.raises(ClawmemError, match="at least its first 6 characters"):
        later.intents.cancel(intent.id[:5])
    with pytest.raises(ClawmemError, match="no standing intent with id 'ffffffff'"):
        later.intents.cancel("ffffffff")


def test_other_sender_or_channel_never_fires(clock: Clockwork) -> None:
    intent = hangzhou(clock.at(timedelta(0)))
    e = clock.at(timedelta(minutes=1))
    wrong_sender = e.intents.match("hangzhou", channel="telegram", sender="u2", apply=True)
    assert wrong_sender.fired == ()
    assert verdict(wrong_sender, intent.id).reasons == ('sender "u2" ≠ scope "u1"',)
    wrong_channel = e.intents.match("hangzhou", channel="slack", sender="u1", apply=True)
    assert verdict(wrong_channel, intent.id).reasons == ('channel "slack" ≠ scope "telegram"',)
    anonymous = e.intents.match("hangzhou", channel=None, sender=None, apply=True)
    assert verdict(anonymous, intent.id).outcome == "scope" and anonymous.fired == ()
    assert e.intents.get(intent.id).fire_count == 0
    # Channel names compare case-insensitively, senders exactly.
    assert e.intents.match("hangzhou", channel="TELEGRAM", sender="u1").fired
    assert not e.intents.match("hangzhou", channel="telegram", sender="U1").fired


def test_open_scopes_fire_anywhere_for_anyone(clock: Clockwork) -> None:
    hangzhou(clock.at(timedelta(0)), any_channel=True, any_sender=True)
    e = clock.at(timedelta(minutes=1))
    assert e.intents.match("hangzhou", channel="slack", sender="someone").fired
    assert e.intents.match("hangzhou", channel=None, sender=None).fired


def test_a_keyword_with_two_tokens_needs_both(clock: Clockwork) -> None:
    intent = clock.at(timedelta(0)).intents.create("Check the RC owner", "release candidate", channel="t", sender="u")
    e = clock.at(timedelta(minutes=1))
    miss = e.intents.match("Please summarize the release notes.", channel="t", sender="u")
    v = verdict(miss, intent.id)
    assert miss.fired == () and v.outcome == "no_keyword"
    assert v.reason == 'missing "candidate" of keyword "release candidate"'
    assert v.keywords[0].missing == ("candidate",)
    assert e.intents.match("The candidate release is ready.", channel="t", sender="u").fired


def test_chinese_keywords_match_chinese_messages(clock: Clockwork) -> None:
    intent = hangzhou(clock.at(timedelta(0)), cooldown_hours=0, max_fires=10)
    e = clock.at(timedelta(minutes=1))
    assert [i.id for i in e.intents.match("我们下周去杭州玩，记得提醒我", channel="telegram", sender="u1").fired] == [
        intent.id
    ]
    assert e.intents.match("hangzhou trip", channel="telegram", sender="u1").fired
    assert e.intents.match("下周去Hangzhou出差", channel="telegram", sender="u1").fired
    none = e.intents.match("杭，州", channel="telegram", sender="u1")
    assert none.fired == () and verdict(none, intent.id).outcome == "no_keyword"


def test_dry_run_changes_nothing_not_even_the_sweep(clock: Clockwork) -> None:
    fresh = hangzhou(clock.at(timedelta(0)))
    stale = clock.at(timedelta(0)).intents.create(
        "old", "hangzhou", channel="telegram", sender="u1", expires="2026-11-06"
    )
    e = clock.at(timedelta(days=2))
    report = e.intents.match("hangzhou", channel="telegram", sender="u1")
    assert not report.applied and [i.id for i in report.fired] == [fresh.id]
    assert report.swept.expired == 1 and verdict(report, stale.id).outcome == "state"
    rows = dict(e.store.query("SELECT id, status FROM standing_intents"))
    assert rows == {fresh.id: "armed", stale.id: "armed"}  # rolled back, sweep included
    assert e.store.scalar("SELECT count(*) FROM standing_intent_fires") == 0
    applied = e.intents.match("hangzhou", channel="telegram", sender="u1", apply=True)
    assert applied.applied and applied.block == report.block
    assert dict(e.store.query("SELECT id, status FROM standing_intents")) == {fresh.id: "fired", stale.id: "expired"}


def test_at_most_three_intents_fire_per_message(clock: Clockwork) -> None:
    made = [
        clock.at(timedelta(0)).intents.create(f"reminder {n}", "hangzhou", channel="t", sender="u") for n in range(4)
    ]
    e = clock.at(timedelta(minutes=1))
    report = e.intents.match("hangzhou", channel="t", sender="u", apply=True)
    assert len(report.fired) == 3
    left = [v for v in report.verdicts if not v.fires]
    assert len(left) == 1 and left[0].outcome == "over_budget"
    assert left[0].reason == "over budget: 3 intents already fire for this message"
    assert {i.fire_count for i in e.intents.list()} == {0, 1}
    assert len(made) == 4


def test_char_budget_skips_without_spending_fires(clock: Clockwork) -> None:
    made = [
        clock.at(timedelta(seconds=n)).intents.create(
            f"{n}" + "x" * 499, "bounded trigger", channel="t", sender="u", max_fires=1
        )
        for n in range(3)
    ]
    e = clock.at(timedelta(minutes=1))
    report = e.intents.match("bounded trigger", channel="t", sender="u", apply=True)
    assert [i.id for i in report.fired] == [made[0].id, made[1].id]
    assert report.block is not None and report.block_chars == len(report.block) <= 1200
    v = verdict(report, made[2].id)
    assert v.outcome == "over_budget" and v.reason.startswith("over budget: the block would be 1")
    third = e.intents.get(made[2].id)
    assert (third.status, third.fire_count) == ("armed", 0)


def test_scan_stops_after_256_candidates(clock: Clockwork) -> None:
    e0 = clock.at(timedelta(0))
    for n in range(256):
        e0.intents.create(f"decoy {n}", "alpha beta", channel="t", sender="u")
    needle = clock.at(timedelta(seconds=1)).intents.create("needle", "alpha", channel="t", sender="u")
    e = clock.at(timedelta(minutes=1))
    report = e.intents.match("alpha", channel="t", sender="u")
    assert report.scanned == 256 and report.fired == ()
    assert verdict(report, needle.id).outcome == "not_scanned"
    assert verdict(report, report.verdicts[0].intent.id).outcome == "no_keyword"


def test_unknown_creator_never_injects(clock: Clockwork) -> None:
    e = clock.at(timedelta(0))
    e.store.conn().execute(
        "INSERT INTO standing_intents (id, description, trigger_keywords, status, expires_at, max_fires, created_at, "
        "creator_sender) VALUES ('legacy-row', 'Legacy', ?, 'armed', ?, 3, ?, NULL)",
        (json.dumps(["hangzhou"]), int((T0 + timedelta(days=9)).timestamp() * 1000), int(T0.timestamp() * 1000)),
    )
    report = clock.at(timedelta(minutes=1)).intents.match("hangzhou", channel="t", sender="u", apply=True)
    assert report.fired == () and verdict(report, "legacy-row").outcome == "no_creator"


def test_list_filters_by_state_and_rejects_unknown_states(clock: Clockwork) -> None:
    e = clock.at(timedelta(0))
    a = hangzhou(e)
    b = e.intents.create("other", "release", channel="telegram", sender="u1")
    e.intents.cancel(b.id)
    assert [i.id for i in e.intents.list("armed")] == [a.id]
    assert [i.id for i in e.intents.list("cancelled")] == [b.id]
    with pytest.raises(ClawmemError, match="unknown status 'sleeping'"):
        e.intents.list("sleeping")


def test_explain_false_reports_only_what_fires(clock: Clockwork) -> None:
    intent = hangzhou(clock.at(timedelta(0)))
    clock.at(timedelta(0)).intents.create("other", "release", channel="telegram", sender="u1")
    e = clock.at(timedelta(minutes=1))
    report = e.intents.match("hangzhou", channel="telegram", sender="u1", apply=True, explain=False)
    assert [v.intent.id for v in report.verdicts] == [intent.id]
    assert report.verdicts[0].intent.fire_count == 0 and report.verdicts[0].after is not None
    assert report.verdicts[0].after.fire_count == 1
