"""The Intents pane on a real OpenClaw home (``clawmem --openclaw``): the agent's standing intent
and the gateway's three jobs are rows beside clawmem's own, marked ◆; the simulator explains the
intent's deciding gate without changing it; no cancel key on it — and not one byte of the home
changes. The clock is fixed after the intent fired (07:32 UTC), inside its 24 h cooldown."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from clawmem.tui.app import ClawmemApp
from clawmem.tui.panes.intents import OPENCLAW_KEY, IntentsPane
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Input, Static

from tests.openclaw_fixture import alter, digest, state_db
from tests.tui.waits import settle, wait_for

AFTER_FIRE = "2026-12-05T12:00:00+00:00"
INTENT = "d462cb51-b150-49dd-bff2-951bc8a711cf"


@pytest.fixture
def app_after_fire(openclaw_app: Callable[[], ClawmemApp], monkeypatch: pytest.MonkeyPatch) -> ClawmemApp:
    monkeypatch.setenv("CLAWMEM_NOW", AFTER_FIRE)
    return openclaw_app()


def shown(app: ClawmemApp, selector: str) -> str:
    console = Console(width=220, file=io.StringIO(), record=True)
    console.print(app.query_one(selector, Static).content)
    return console.export_text()


async def simulate(pilot: Pilot[object], message: str, channel: str, sender: str) -> None:
    await pilot.press("7", "ctrl+l")
    pilot.app.query_one("#intents-message", Input).value = message
    await pilot.press("tab", *channel, "tab", *sender, "enter")
    await settle(pilot)


async def test_openclaw_intent_and_jobs_listed_and_simulated_read_only(
    app_after_fire: ClawmemApp, user_home: Path
) -> None:
    app = app_after_fire
    before = digest(user_home / "openclaw")
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)
        pane = app.query_one(IntentsPane)
        assert pane.data is not None
        (theirs,) = pane.data.openclaw_intents
        assert (theirs.status, theirs.fire_count, theirs.max_fires, theirs.keywords) == ("fired", 1, 3, ("office",))
        assert [j.name for j in pane.data.openclaw_jobs] == [
            "Memory Dreaming Promotion",
            "heartbeat-main",
            "skill-collection-review-main",
        ]
        assert pane.intent_id == OPENCLAW_KEY + INTENT
        await wait_for(pilot, lambda: "To change it:" in shown(app, "#intents-block"))
        detail = shown(app, "#intents-block")
        assert "◆ d462cb51  fired" in detail and "1/3 (2 left)" in detail and "19 h 33 min left" in detail
        assert "from session b08e3850-fc5d-4228-946a-cf39c50f235f" in detail and "created by 1001" in detail
        assert pane.check_action("cancel_intent", ()) is None  # cancelling stays with OpenClaw

        await simulate(pilot, "Heading to the office now", "telegram", "1002")
        assert pane.openclaw_report is not None
        (v,) = pane.openclaw_report.verdicts
        assert v.outcome == "scope" and v.reason == 'sender "1002" ≠ scope "1001"'
        await simulate(pilot, "Heading to the office now", "telegram", "1001")
        (v,) = pane.openclaw_report.verdicts
        assert v.outcome == "cooldown"
        await wait_for(pilot, lambda: "cooldown until 2026-12-06 07:32" in shown(app, "#intents-block"))
        assert pane.data.openclaw_intents[0].fire_count == 1
    assert digest(user_home / "openclaw") == before


def test_openclaw_intents_pane_snapshot(snap_compare, app_after_fire: ClawmemApp) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await simulate(pilot, "Heading to the office now", "telegram", "1002")
        await pilot.press("escape")  # back to the table: no cursor in the snapshot
        await settle(pilot)

    assert snap_compare(app_after_fire, terminal_size=(160, 45), run_before=run_before)


async def test_a_refused_jobs_table_leaves_the_intents(app_after_fire: ClawmemApp, user_home: Path) -> None:
    alter(state_db(user_home / "openclaw"), "DROP TABLE cron_jobs")
    async with app_after_fire.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)
        pane = app_after_fire.query_one(IntentsPane)
        assert pane.data is not None and len(pane.data.openclaw_intents) == 1 and pane.data.openclaw_jobs == ()
        assert "no table cron_jobs" in (pane.data.openclaw_problem or "")
        assert "no table cron_jobs" in shown(app_after_fire, "#intents-summary")
