"""Pilot flows through the Dreams pane: run a cycle, approve, revert, reject with a reason, a
stale proposal, and moving through the candidates — on real recall signals (see
test_snapshots_dreams.py for how they are recorded)."""

from __future__ import annotations

import io
from collections.abc import Callable

from clawmem.tui.app import ClawmemApp
from clawmem.tui.modals.reason import ReasonModal
from clawmem.tui.panes.dreams import DreamsPane
from clawmem.tui.widgets.markdown_view import MarkdownView
from rich.console import Console
from textual.widgets import Input, Static

from tests.tui.states import FACT, FACT_PATH, SHORT_PATH
from tests.tui.waits import settle, wait_for


def pane(app: ClawmemApp) -> DreamsPane:
    return app.query_one(DreamsPane)


def shown(app: ClawmemApp, selector: str) -> str:
    """What a Static shows, as plain text."""
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(app.query_one(selector, Static).content)
    return console.export_text()


async def test_run_approve_and_revert_round_trip(dream_app: Callable[..., ClawmemApp]) -> None:
    app = dream_app()
    memory = app.engine.workspace / "MEMORY.md"
    original = memory.read_bytes()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("6", "c")  # start on Candidates: a finished cycle switches to the review queue
        await settle(pilot)
        await pilot.press("r")
        assert await wait_for(
            pilot,
            lambda: any(p.status == "pending" for p in pane(app).data.proposals) if pane(app).data else False,
            timeout=10,
        )
        await settle(pilot)
        dreams = pane(app)
        assert dreams.view == "review" and not dreams.running
        assert memory.read_bytes() == original  # manual review: nothing written yet
        pending = next(p for p in dreams.data.proposals if p.status == "pending")  # type: ignore[union-attr]
        assert dreams.proposal_id == pending.id and dreams.operation_key == pending.operations[0].candidate_key
        assert "proposal" in shown(app, "#dreams-status")
        diary = app.query_one("#dreams-diary-md", MarkdownView)
        assert "Dream Diary" in diary.source and "openclaw:dreaming" not in diary.source

        await pilot.press("a")
        assert await wait_for(pilot, lambda: FACT in memory.read_text(encoding="utf-8"), timeout=10)
        await settle(pilot)
        assert app.engine.dreaming.proposal(pending.id).status == "applied"
        assert [h.status for h in dreams.data.history] == ["applied"]  # type: ignore[union-attr]

        await pilot.press("h", "R")
        await settle(pilot)
        await pilot.press("y")
        assert await wait_for(pilot, lambda: memory.read_bytes() == original, timeout=10)
        await settle(pilot)
        assert [h.status for h in dreams.data.history] == ["reverted"]  # type: ignore[union-attr]
        assert app.is_running


async def test_reject_asks_for_a_reason_and_escape_rejects_nothing(dream_app: Callable[..., ClawmemApp]) -> None:
    app = dream_app()
    proposal = app.engine.dreaming.run().proposal
    assert proposal is not None
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("6", "x")
        await settle(pilot)
        assert isinstance(app.screen, ReasonModal)
        await pilot.press(*"maybe", "escape")  # changed my mind
        await settle(pilot)
        assert app.engine.dreaming.proposal(proposal.id).status == "pending"

        await pilot.press("x")
        await settle(pilot)
        app.screen.query_one(Input).value = "还不够确定 — not durable yet"
        await pilot.press("enter")
        await settle(pilot)
        rejected = app.engine.dreaming.proposal(proposal.id)
        assert rejected.status == "rejected" and rejected.reason == "还不够确定 — not durable yet"
        assert app.engine.dreaming.explain(proposal.operations[0].candidate_key).status == "rejected"
        assert "rejected proposal" in shown(app, "#dreams-status")
        assert pane(app).check_action("approve", ()) is None  # a rejected proposal cannot be approved


async def test_a_stale_proposal_is_refused_and_nothing_is_lost(dream_app: Callable[..., ClawmemApp]) -> None:
    app = dream_app()
    proposal = app.engine.dreaming.run().proposal
    assert proposal is not None
    memory = app.engine.workspace / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "- 我刚刚手写的一条。\n", encoding="utf-8")
    edited = memory.read_bytes()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        # The queue checks the base hash when it lists: the proposal is already shown stale, with why
        # and how to regenerate it, instead of "pending" with a diff against a MEMORY.md that is gone.
        assert app.engine.dreaming.proposal(proposal.id).status == "stale"
        assert "1 stale (MEMORY.md changed; r regenerates)" in shown(app, "#dreams-status")
        detail = shown(app, "#dreams-diff")
        assert "stale: MEMORY.md changed since the proposal was made" in detail and "clawmem dream" in detail
        assert "a = MEMORY.md when proposed" in detail and "a = now" not in detail
        await pilot.press("a")  # approving a stale proposal is not offered: nothing happens, no crash
        await settle(pilot)
        assert app.is_running and memory.read_bytes() == edited
        assert app.engine.dreaming.history() == ()


async def test_refused_revert_keeps_the_edit_and_shows_three_texts(dream_app: Callable[..., ClawmemApp]) -> None:
    app = dream_app()
    proposal = app.engine.dreaming.run().proposal
    assert proposal is not None and app.engine.dreaming.approve(proposal.id).applied
    memory = app.engine.workspace / "MEMORY.md"
    rewrite = memory.read_text(encoding="utf-8")
    memory.write_text(rewrite + "- edited after the rewrite\n", encoding="utf-8")
    edited = memory.read_bytes()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("6", "h", "R")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert memory.read_bytes() == edited
        refused = pane(app).refused[proposal.id]
        assert refused.rewrite_text == rewrite and refused.current_text == edited.decode()
        current = shown(app, "#dreams-revert-current")
        assert "+ - edited after the rewrite" in current
        assert app.query_one("#dreams-revert-texts").display


async def test_candidates_move_with_j_and_k_and_explain_follows(dream_app: Callable[..., ClawmemApp]) -> None:
    app = dream_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("6", "c")
        await settle(pilot)
        dreams = pane(app)
        assert dreams.candidate_key is not None and FACT_PATH in dreams.candidate_key
        await pilot.press("j")
        await settle(pilot)
        assert dreams.candidate_key is not None and SHORT_PATH in dreams.candidate_key
        assert "2 unique queries of 3 needed" in shown(app, "#dreams-explain")
        await pilot.press("k")
        await settle(pilot)
        assert dreams.candidate_key is not None and FACT_PATH in dreams.candidate_key
        await pilot.press("d")
        await settle(pilot)
        assert dreams.view == "diary"
        assert app.focused is None or app.focused.id != "dreams-candidates-table"
