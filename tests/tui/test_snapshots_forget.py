"""Snapshots of the Forget pane at 100×30 and 160×45: the dry-run plan for a session whose fact was
promoted into MEMORY.md (groups with counts, and the memory lines it removes), the confirmation, and
the result with its residual check (0 residual).

The state is built through the engine before the app starts (see test_snapshots_sessions.py).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from clawmem.tui.app import ClawmemApp
from clawmem.tui.modals.confirm import ConfirmModal
from clawmem.tui.panes.forget import ForgetPane
from textual.pilot import Pilot

from tests.session_fixture import B
from tests.tui.states import SIZES
from tests.tui.waits import settle


async def plan_for_b(pilot: Pilot[object]) -> ForgetPane:
    """Open the Forget pane from the Sessions pane (f on sess-lingyin-02): the plan is computed at once."""
    await settle(pilot)
    await pilot.press("8")
    await settle(pilot)
    await pilot.press("j", "j")
    await settle(pilot)
    await pilot.press("f")
    await settle(pilot)
    pane = pilot.app.query_one(ForgetPane)
    assert pane.plan is not None and pane.plan.session_ids == (B,)
    return pane


@pytest.mark.parametrize("size", SIZES)
def test_forget_plan_of_a_promoted_session(snap_compare, session_app: Callable[..., ClawmemApp], size) -> None:
    app = session_app()

    async def run_before(pilot: Pilot[object]) -> None:
        pane = await plan_for_b(pilot)
        plan = pane.plan
        assert plan is not None and plan.artifacts.memory_entries == 2 and plan.artifacts.memory_lines > 0
        assert {f.path for f in plan.files} >= {"MEMORY.md", "memory/2026-10-31.md"}
        await pilot.press("j")  # memory entries → memory lines
        await settle(pilot)
        assert pane.group == "lines"

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_forget_asks_before_deleting(snap_compare, session_app: Callable[..., ClawmemApp]) -> None:
    app = session_app()

    async def run_before(pilot: Pilot[object]) -> None:
        await plan_for_b(pilot)
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmModal)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_forget_result_with_zero_residual(snap_compare, session_app: Callable[..., ClawmemApp], size) -> None:
    app = session_app()

    async def run_before(pilot: Pilot[object]) -> None:
        pane = await plan_for_b(pilot)
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert pane.result is not None and pane.result.residual_count == 0
        assert pane.group == "residual"

    assert snap_compare(app, terminal_size=size, run_before=run_before)
