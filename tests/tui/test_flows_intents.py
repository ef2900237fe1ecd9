"""Pilot flows through the Intents pane: create through the checked form, cancel with a
confirmation, filter by state, a dry-run simulation that changes nothing, and the timed jobs."""

from __future__ import annotations

import io

from clawmem.tui.app import ClawmemApp
from clawmem.tui.modals.confirm import ConfirmModal
from clawmem.tui.modals.intent_form import IntentFormModal, field_for
from clawmem.tui.panes.intents import IntentsPane, IntentsTable
from rich.console import Console
from textual.widgets import Input, Select, Static

from tests.tui.states import HANGZHOU
from tests.tui.waits import settle, wait_for


def pane(app: ClawmemApp) -> IntentsPane:
    return app.query_one(IntentsPane)


def shown(app: ClawmemApp, selector: str) -> str:
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(app.screen.query_one(selector, Static).content)
    return console.export_text()


def table_keys(app: ClawmemApp, selector: str) -> list[str]:
    return [str(k.value) for k in app.query_one(selector, IntentsTable).rows]


async def select_intent(pilot, app: ClawmemApp, intent_id: str) -> None:  # type: ignore[no-untyped-def]
    table = app.query_one("#intents-table", IntentsTable)
    table.focus()
    table.move_cursor(row=table_keys(app, "#intents-table").index(intent_id))
    await settle(pilot)


async def test_create_through_the_form_checks_first(intents_app) -> None:  # type: ignore[no-untyped-def]
    app, _ = intents_app()
    before = len(app.engine.intents.list())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("7", "n")
        await settle(pilot)
        await pilot.press(*"something", "escape")  # escape closes the form, creating nothing
        await settle(pilot)
        assert not isinstance(app.screen, IntentFormModal) and len(app.engine.intents.list()) == before
        await pilot.press("n")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, IntentFormModal)
        form.query_one("#intent-form-description", Input).value = "提醒确认杭州酒店的退房时间"
        await pilot.press("enter")  # keywords, channel and sender are missing
        await settle(pilot)
        assert isinstance(app.screen, IntentFormModal) and len(app.engine.intents.list()) == before
        assert "give at least one keyword" in shown(app, "#intent-form-keywords-error")
        assert "needs a channel and a sender" in shown(app, "#intent-form-sender-error")
        assert "(--" not in shown(app, "#intent-form-sender-error")  # CLI flags are not shown in the form
        assert not form.query_one("#intent-form-description-error").display

        form.query_one("#intent-form-keywords", Input).value = "退房; checkout"
        form.query_one("#intent-form-channel", Input).value = "Telegram "
        form.query_one("#intent-form-sender", Input).value = "alice"
        await settle(pilot)  # after a failed submit the fields are re-checked as they change
        assert not form.query_one("#intent-form-keywords-error").display
        assert not form.query_one("#intent-form-sender-error").display
        form.query_one("#intent-form-max-fires", Input).value = "99999999999999999999999"
        await pilot.press("enter")  # far beyond the range: a message under the field, no crash
        await settle(pilot)
        assert isinstance(app.screen, IntentFormModal) and len(app.engine.intents.list()) == before
        assert "from 1 to 10,000" in shown(app, "#intent-form-max-fires-error")
        form.query_one("#intent-form-max-fires", Input).value = "2"
        form.query_one("#intent-form-cooldown", Input).value = "12"
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, IntentFormModal)
        created = [i for i in app.engine.intents.list() if i.description == "提醒确认杭州酒店的退房时间"]
        assert len(created) == 1
        intent = created[0]
        assert intent.status == "armed" and intent.keywords == ("退房", "checkout")
        assert (intent.channel_scope, intent.sender_scope, intent.max_fires) == ("telegram", "alice", 2)
        assert intent.cooldown_seconds == 12 * 3600
        assert pane(app).intent_id == intent.id  # the new row is selected


async def test_cancel_asks_and_keeps_the_row(intents_app) -> None:  # type: ignore[no-untyped-def]
    app, ids = intents_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)
        await select_intent(pilot, app, ids["armed"])
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")  # keep it
        await settle(pilot)
        assert app.engine.intents.get(ids["armed"]).status == "armed"
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert app.engine.intents.get(ids["armed"]).status == "cancelled"
        assert ids["armed"] in table_keys(app, "#intents-table")  # the row stays, cancelled

        await select_intent(pilot, app, ids["done"])
        assert pane(app).check_action("cancel_intent", ()) is None  # shown dimmed, not offered
        await pilot.press("x")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmModal) and app.is_running


async def test_j_k_and_the_state_filter(intents_app) -> None:  # type: ignore[no-untyped-def]
    app, ids = intents_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)
        keys = table_keys(app, "#intents-table")
        assert len(keys) == 7
        assert isinstance(app.focused, IntentsTable) and pane(app).intent_id == keys[0]
        await pilot.press("j", "j")
        assert await wait_for(pilot, lambda: pane(app).intent_id == keys[2])
        await pilot.press("k")
        assert await wait_for(pilot, lambda: pane(app).intent_id == keys[1])
        await pilot.press("f")  # all → armed
        await settle(pilot)
        assert app.query_one("#intents-filter", Select).value == "armed"
        armed = {ids["armed"], ids["other-sender"], ids["any-channel"]}
        assert set(table_keys(app, "#intents-table")) == armed
        app.query_one("#intents-filter", Select).value = "expired"
        await settle(pilot)
        assert table_keys(app, "#intents-table") == [ids["expired"]]


async def test_the_simulator_is_a_dry_run(intents_app) -> None:  # type: ignore[no-untyped-def]
    app, ids = intents_app()
    before = app.engine.intents.get(ids["armed"])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("7", "ctrl+l")
        app.query_one("#intents-message", Input).value = HANGZHOU
        app.query_one("#intents-channel", Input).value = "telegram"
        app.query_one("#intents-sender", Input).value = "alice"
        await settle(pilot)
        report = pane(app).report
        assert report is not None and not report.applied
        assert [i.id for i in report.fired] == [ids["armed"]]
        assert table_keys(app, "#intents-verdicts")[0] == ids["armed"]  # the fire first
        assert len(table_keys(app, "#intents-verdicts")) == 7  # and every other intent with its reason
        block = shown(app, "#intents-block")
        assert "<standing_intents>" in block and "Standing intent (created 2026-11-01): 周末去杭州" in block
        assert app.engine.intents.get(ids["armed"]) == before  # nothing fired for real
        assert app.engine.intents.fires(ids["armed"]) == ()

        await pilot.press("escape")  # leaves the input for the intents table
        assert isinstance(app.focused, IntentsTable) and app.focused.id == "intents-table"
        app.query_one("#intents-sender", Input).value = "bob"
        await settle(pilot)
        report = pane(app).report
        assert report is not None and [i.id for i in report.fired] == [ids["other-sender"]]


async def test_timed_jobs_with_history_and_t_at_narrow_width(intents_app) -> None:  # type: ignore[no-untyped-def]
    app, _ = intents_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)
        jobs = app.query_one("#intents-jobs")
        assert not jobs.display  # narrow: the simulator has the lower half
        await pilot.press("t")
        await settle(pilot)
        assert jobs.display and not app.query_one("#intents-sim").display
        assert isinstance(app.focused, IntentsTable) and app.focused.id == "intents-jobs-table"
        history = shown(app, "#intents-job-history")
        assert "Runs (2, newest first)" in history and "caught up: 1 missed run skipped" in history
        await pilot.press("j")
        await settle(pilot)
        assert "Never ran" in shown(app, "#intents-job-history")
        await pilot.press("t")
        await settle(pilot)
        assert not jobs.display and app.query_one("#intents-sim").display


def test_every_engine_message_lands_next_to_its_field() -> None:
    assert field_for("the description is empty; say what to remind of") == "description"
    assert field_for('give at least one keyword (e.g. --keywords "杭州; hangzhou")') == "keywords"
    assert field_for("keyword 2 ('--') has no letters or digits to match") == "keywords"
    assert field_for("creating an intent needs a channel (--channel): no global reminders") == "channel"
    assert field_for("creating an intent needs a sender (--sender): no global reminders") == "sender"
    assert field_for("the sender 'unknown' is not a known sender") == "sender"
    assert field_for("the channel is 201 characters; the limit is 200") == "channel"
    assert field_for("expiry 'soon' is not an ISO date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM)") == "expires"
    assert field_for("max fires must be a whole number from 1 to 10,000, got a number that large") == "max_fires"
    assert field_for("expiry '9999-12-31' is out of range; the latest allowed is 9999-12-30") == "expires"
    assert field_for("the cooldown must be between 0 and 87600 hours, got -1") == "cooldown"
