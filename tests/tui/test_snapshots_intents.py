"""Snapshots of the Intents pane at 100×30 and 160×45: the table with every state present, the
trigger simulator with one fire and several reasons, and the create form with validation errors.

The states are real: intents are created, fired and cancelled, and jobs run, through engines
whose clock is set to earlier days on the same home, before the app starts. Expiry, cooldown
and "done" then follow from the app's fixed clock (2026-11-05T09:00Z).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from clawmem.tui.app import ClawmemApp
from textual.pilot import Pilot
from textual.widgets import Input

from tests.tui.states import HANGZHOU, SIZES
from tests.tui.waits import settle


@pytest.mark.parametrize("size", SIZES)
def test_intents_table_with_every_state(snap_compare, intents_app: Callable[..., ClawmemApp], size) -> None:
    app, _ = intents_app()
    states = {i.status for i in app.engine.intents.list()}
    assert states == {"armed", "fired", "done", "cancelled", "expired"}

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_intents_simulator_one_fire_and_reasons(snap_compare, intents_app: Callable[..., ClawmemApp], size) -> None:
    app, _ = intents_app()

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("7", "ctrl+l")
        pilot.app.query_one("#intents-message", Input).value = HANGZHOU  # "，" cannot be pressed as a key
        await pilot.press("tab", *"telegram", "tab", *"alice", "enter")
        await settle(pilot)
        await pilot.press("escape")  # back to the table: no cursor in the snapshot
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_intents_create_form_with_validation_errors(snap_compare, intents_app: Callable[..., ClawmemApp], size) -> None:
    app, _ = intents_app()

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("7", "n")
        await settle(pilot)
        await pilot.press(*"提醒确认返程车票", "tab", "tab", *"telegram", "tab", "tab", "tab", "tab")
        await pilot.press(*"2026-10-01", "enter")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
