"""Snapshots of the Dreams pane at 100×30 and 160×45: a pending proposal with its diff, an applied
rewrite in history, a refused revert with the three texts, and the explain view of a candidate
one unique query short of promotion.

The recall signals are real: keyword searches by engines whose clock is set to earlier days, on
the same home and workspace, before the app starts (as tests/engine/test_dreaming.py does).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from clawmem.tui.app import ClawmemApp
from textual.pilot import Pilot

from tests.tui.states import SHORT_PATH, SIZES
from tests.tui.waits import settle


async def open_view(pilot: Pilot[object], key: str) -> None:
    await settle(pilot)
    await pilot.press("6")
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_dreams_pending_proposal_with_its_diff(snap_compare, dream_app: Callable[..., ClawmemApp], size) -> None:
    app = dream_app()
    run = app.engine.dreaming.run()
    assert run.proposal is not None and run.proposal.status == "pending"

    async def run_before(pilot: Pilot[object]) -> None:
        await open_view(pilot, "p")

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_dreams_applied_rewrite_in_history(snap_compare, dream_app: Callable[..., ClawmemApp], size) -> None:
    app = dream_app()
    proposal = app.engine.dreaming.run().proposal
    assert proposal is not None and app.engine.dreaming.approve(proposal.id).applied

    async def run_before(pilot: Pilot[object]) -> None:
        await open_view(pilot, "h")

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_dreams_refused_revert_shows_the_three_texts(snap_compare, dream_app: Callable[..., ClawmemApp], size) -> None:
    app = dream_app()
    proposal = app.engine.dreaming.run().proposal
    assert proposal is not None and app.engine.dreaming.approve(proposal.id).applied
    memory = app.engine.workspace / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "- 周五前订好返程车票（我自己加的）。\n", encoding="utf-8")

    async def run_before(pilot: Pilot[object]) -> None:
        await open_view(pilot, "h")
        await pilot.press("R")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_dreams_explain_one_unique_query_short(snap_compare, dream_app: Callable[..., ClawmemApp], size) -> None:
    app = dream_app()
    short = app.engine.dreaming.explain(f"{SHORT_PATH}:1")
    assert short.status == "below-gates" and short.unique_queries == 2 and short.signal_count == 3
    rows = [e.key for e in app.engine.dreaming.candidates()]

    async def run_before(pilot: Pilot[object]) -> None:
        await open_view(pilot, "c")
        await pilot.press(*["j"] * rows.index(short.key))
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
