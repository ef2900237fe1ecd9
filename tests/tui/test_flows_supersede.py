"""A changed fact in the Memory pane (issue 36): `s` on an old entry offers the entries that may
have replaced it, picking one writes the superseded marker (struck through in the entries), and
`s` on the superseded entry undoes it byte for byte; `p` lists what agents proposed, to accept or
reject. The real app under Pilot, real files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clawmem.tui.app import ClawmemApp
from clawmem.tui.modals.confirm import ConfirmModal
from clawmem.tui.modals.proposals import ProposalsModal
from clawmem.tui.modals.reason import ReasonModal
from clawmem.tui.modals.supersede import SupersedeModal
from clawmem.tui.panes.memory import MemoryPane
from textual.widgets import DataTable, Input, OptionList

from tests.tui.waits import settle, wait_for

GYM = "memory/2026-03-02.md"
POOL = "memory/2026-10-20.md"
GYM_TEXT = "# 2026-03-02\n\n- I work out at the gym at 7am before work.\n- Lunch with Priya.\n"


def write_two_versions(ws: Path) -> None:
    """The old fact (the gym) and the note that replaced it (the pool), on two days."""
    (ws / GYM).write_text(GYM_TEXT, encoding="utf-8")
    (ws / POOL).write_text(
        "# 2026-10-20\n\n- Switched from the gym to the pool: I swim at 7am now.\n", encoding="utf-8"
    )


async def open_entry(pilot: object, app: ClawmemApp, rel: str, line: int) -> DataTable:
    memory = app.query_one(MemoryPane)
    memory.open(rel, line)
    table = app.query_one("#memory-entries", DataTable)
    assert await wait_for(pilot, lambda: memory.snapshot is not None and memory.snapshot.rel == rel)  # type: ignore[arg-type]
    await settle(pilot)  # type: ignore[arg-type]
    table.focus()
    return table


async def test_mark_an_entry_superseded_from_the_memory_pane_and_undo_it(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    ws = app.engine.workspace
    write_two_versions(ws)
    before = (ws / GYM).read_bytes()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("2")  # the Memory pane
        table = await open_entry(pilot, app, GYM, 3)
        await pilot.press("s")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SupersedeModal))
        modal = app.screen
        assert isinstance(modal, SupersedeModal)
        refs = [c.ref for c in modal.candidates]
        assert f"{POOL}:3" in refs and f"{GYM}:3" not in refs  # the entry itself is not offered
        options = modal.query_one(OptionList)
        options.highlighted = refs.index(f"{POOL}:3")
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: "status: superseded" in (ws / GYM).read_text(encoding="utf-8"))
        assert (ws / GYM).read_text(encoding="utf-8").splitlines()[2] == (
            f"<!-- observed: 2026-03-02 | status: superseded | by: {POOL}#3 -->"
        )
        status = {c.plain for c in table.get_column("status")}
        assert await wait_for(pilot, lambda: "superseded" in {c.plain for c in table.get_column("status")}), status
        struck = [row[-1] for row in (table.get_row_at(i) for i in range(table.row_count)) if "gym" in row[-1].plain]
        assert struck and "strike" in str(struck[0].style)

        # the same key on the superseded entry (its bullet is now line 4) undoes the mark exactly
        table = await open_entry(pilot, app, GYM, 4)
        await pilot.press("s")
        assert await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        assert await wait_for(pilot, lambda: (ws / GYM).read_bytes() == before)


async def test_a_typed_ref_that_is_not_an_entry_is_refused_and_nothing_is_written(
    make_app: Callable[..., ClawmemApp],
) -> None:
    app = make_app()
    ws = app.engine.workspace
    (ws / GYM).write_text(GYM_TEXT, encoding="utf-8")
    before = (ws / GYM).read_bytes()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await open_entry(pilot, app, GYM, 3)
        await pilot.press("s")
        assert await wait_for(pilot, lambda: isinstance(app.screen, SupersedeModal))
        app.screen.query_one(Input).value = f"{GYM}:1"  # the heading, not a bullet
        app.screen.query_one(Input).focus()
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, SupersedeModal))
        await settle(pilot)
        shown = " ".join(str(n.message) for n in app._notifications)
        assert "heading" in shown or "not" in shown, shown
        assert (ws / GYM).read_bytes() == before


async def test_an_agents_proposal_is_accepted_or_rejected_from_the_memory_pane(
    make_app: Callable[..., ClawmemApp],
) -> None:
    app = make_app()
    ws = app.engine.workspace
    write_two_versions(ws)
    first = app.engine.curation.propose(f"{GYM}:3", f"{POOL}:3", "the user said they swim now")
    second = app.engine.curation.propose(f"{GYM}:4", f"{POOL}:3", "lunch moved to the pool?")
    before = (ws / GYM).read_bytes()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await open_entry(pilot, app, GYM, 3)
        await pilot.press("p")
        assert await wait_for(pilot, lambda: isinstance(app.screen, ProposalsModal))
        modal = app.screen
        assert isinstance(modal, ProposalsModal)
        ids = [p.id for p in modal.proposals]
        assert set(ids) == {first.id, second.id}
        modal.query_one(OptionList).highlighted = ids.index(second.id)
        await pilot.press("r")  # reject the odd one, with a reason
        assert await wait_for(pilot, lambda: isinstance(app.screen, ReasonModal))
        app.screen.query_one(Input).value = "lunch is not a fact about the pool"
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: app.engine.curation.proposal(second.id).status == "rejected")
        assert (ws / GYM).read_bytes() == before  # a rejection writes nothing

        await pilot.press("p")
        assert await wait_for(pilot, lambda: isinstance(app.screen, ProposalsModal))
        assert [p.id for p in app.screen.proposals] == [first.id]  # type: ignore[attr-defined]
        await pilot.press("a")
        assert await wait_for(pilot, lambda: "status: superseded" in (ws / GYM).read_text(encoding="utf-8"))
        assert app.engine.curation.proposal(first.id).status == "accepted"
        assert f"by: {POOL}#3" in (ws / GYM).read_text(encoding="utf-8")
