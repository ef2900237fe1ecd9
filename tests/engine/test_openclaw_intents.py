"""OpenClaw's standing intents and scheduled jobs, read in place from the fixture home (made by
OpenClaw 2026.9.6): decoded, explained by the trigger simulator, and never written."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from clawmem.engine.errors import ClawmemError
from clawmem.engine.openclaw.home import OpenClawHome

from tests.openclaw_fixture import agent_db, alter, digest, state_db

AFTER_FIRE = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)  # the intent fired at 07:32 UTC, 24 h cooldown
NEXT_DAY = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def test_the_intent_is_decoded(openclaw_home: Path) -> None:
    (intent,) = OpenClawHome.open(openclaw_home).intents(AFTER_FIRE)
    assert intent.source == "openclaw"
    assert intent.status == "fired"
    assert (intent.fire_count, intent.max_fires, intent.fires_left) == (1, 3, 2)
    assert intent.keywords == ("office",)
    assert (intent.channel, intent.account, intent.sender) == ("telegram", "default", "1001")
    assert intent.channel_scope == ("v1", "channel", "telegram", "default", "telegram")
    assert intent.creator_sender == "1001"
    assert intent.source_session_id == "b08e3850-fc5d-4228-946a-cf39c50f235f"
    assert intent.cooldown_until == datetime(2026, 12, 6, 7, 32, 28, 331000, tzinfo=UTC)
    assert intent.cooldown_left_seconds == 19 * 3600 + 32 * 60 + 29
    assert intent.expires_at.date().isoformat() == "2027-03-05" and not intent.expired
    later = OpenClawHome.open(openclaw_home).intents(NEXT_DAY)[0]
    assert later.cooldown_until is None and later.cooldown_left_seconds == 0


def test_simulator_names_the_deciding_gate_and_writes_nothing(openclaw_home: Path) -> None:
    before = digest(openclaw_home)
    home = OpenClawHome.open(openclaw_home)
    message = "Heading to the office now"

    (sam,) = home.simulate_intents(message, channel="telegram", sender="1002", now=AFTER_FIRE).verdicts
    assert not sam.fires and sam.outcome == "scope"
    assert sam.reason == 'sender "1002" ≠ scope "1001"'
    assert any(r.startswith("cooldown until 2026-12-06 07:32") for r in sam.reasons)

    (lin,) = home.simulate_intents(message, channel="telegram", sender="1001", now=AFTER_FIRE).verdicts
    assert lin.outcome == "cooldown" and lin.reasons == ("cooldown until 2026-12-06 07:32 UTC",)

    (prefixed,) = home.simulate_intents(message, channel="Telegram", sender="telegram:1001", now=NEXT_DAY).verdicts
    assert prefixed.fires and prefixed.matched_keyword == "office"

    (elsewhere,) = home.simulate_intents(message, channel="discord", sender="1001", now=NEXT_DAY).verdicts
    assert elsewhere.outcome == "scope" and "channel" in elsewhere.reason
    (nokw,) = home.simulate_intents("home now", channel="telegram", sender="1001", now=NEXT_DAY).verdicts
    assert nokw.outcome == "no_keyword" and nokw.reason == 'missing "office" of keyword "office"'

    assert home.intents(NEXT_DAY)[0].fire_count == 1
    assert digest(openclaw_home) == before


def test_used_up_and_expired_intents_say_so(openclaw_home: Path) -> None:
    alter(agent_db(openclaw_home), "UPDATE standing_intents SET fire_count = 3, status = 'done'")
    (v,) = (
        OpenClawHome.open(openclaw_home)
        .simulate_intents("office", channel="telegram", sender="1001", now=NEXT_DAY)
        .verdicts
    )
    assert v.outcome == "state" and v.reasons == ("done", "max fires reached (3/3)")
    alter(agent_db(openclaw_home), "UPDATE standing_intents SET fire_count = 1, status = 'armed', expires_at = 1")
    (v,) = (
        OpenClawHome.open(openclaw_home)
        .simulate_intents("office", channel="telegram", sender="1001", now=NEXT_DAY)
        .verdicts
    )
    assert v.outcome == "state" and v.reason.startswith("expired 1970-01-01")


def test_find_intent_by_id_or_prefix(openclaw_home: Path) -> None:
    home = OpenClawHome.open(openclaw_home)
    assert home.find_intent("d462cb51", AFTER_FIRE) is not None
    assert home.find_intent("D462CB51-B150-49DD-BFF2-951BC8A711CF", AFTER_FIRE) is not None
    assert home.find_intent("d462c", AFTER_FIRE) is None  # too short for a prefix
    assert home.find_intent("0000000000", AFTER_FIRE) is None


def test_missing_column_is_one_line(openclaw_home: Path) -> None:
    alter(
        agent_db(openclaw_home),
        "DROP INDEX idx_standing_intents_scope",
        "ALTER TABLE standing_intents DROP COLUMN sender_scope",
    )
    with pytest.raises(ClawmemError, match="table standing_intents has no column sender_scope") as exc:
        OpenClawHome.open(openclaw_home).intents(AFTER_FIRE)
    assert "\n" not in str(exc.value)


def test_the_three_jobs(openclaw_home: Path) -> None:
    before = digest(openclaw_home)
    jobs = OpenClawHome.open(openclaw_home).jobs()
    assert [j.name for j in jobs] == ["Memory Dreaming Promotion", "heartbeat-main", "skill-collection-review-main"]
    assert [j.schedule for j in jobs] == ["cron 0 3 * * *", "every 30 min", "every 7 d"]
    assert all(j.enabled and j.last_run_at is None for j in jobs)
    assert jobs[0].next_run_at == datetime(2026, 12, 6, 3, 0, tzinfo=UTC)
    assert digest(openclaw_home) == before
    alter(state_db(openclaw_home), "DROP TABLE cron_jobs")
    with pytest.raises(ClawmemError, match="no table cron_jobs"):
        OpenClawHome.open(openclaw_home).jobs()
