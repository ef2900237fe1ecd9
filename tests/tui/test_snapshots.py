"""Snapshot tests of every pane and the key states, at 100×30 and 160×45.

Update a snapshot only after looking at the new SVG (pytest --snapshot-update, then review
snapshot_report.html or the SVG) and deciding it is what a user should see.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from clawmem.tui.app import ClawmemApp
from clawmem.tui.messages import IndexProgress
from textual.pilot import Pilot

from tests.tui.states import SIZES, add_untrusted_memory
from tests.tui.waits import settle


@pytest.mark.parametrize("size", SIZES)
def test_memory_pane_user_md_with_superseded_entry(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_memory_pane_memory_md_entries(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_memory_pane_opened_at_a_line_from_search(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        pilot.app.query_one("#memory-pane").open("memory/2026-11-01.md", 5)  # type: ignore[attr-defined]
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_search_with_breakdown(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("3")
        await pilot.press(*"湖景房 酒店")
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_search_old_diary_qualifies_before_decay(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    """A 77-day-old diary answers: it qualifies on its content, and its age only lowers its rank
    (the breakdown's decay row and "qualifies at … · ranked at … by age")."""

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("3")
        await pilot.press(*"certbot renewal alert")
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


def test_search_shows_the_best_line_of_a_diary_hit(snap_compare, make_app: Callable[..., ClawmemApp]) -> None:
    """A multi-line diary chunk: the breakdown's "best line" row and that line in bold in the snippet."""

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("3", *"who upgraded the hotel room", "enter")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=(160, 45), run_before=run_before)


def test_search_before_the_line_pass_reached_the_hit(snap_compare, make_app: Callable[..., ClawmemApp]) -> None:
    """The same search with no line vectors made yet (no pass runs): the summary warns that the
    scores will still move, the breakdown's "best line" row says it is not computed yet."""
    app = make_app()
    conn = app.engine.store.conn()
    with conn:
        conn.execute("DELETE FROM memory_index_line_vectors")
        conn.execute("DELETE FROM memory_index_meta WHERE key = 'line_vectors_done'")

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("3", *"who upgraded the hotel room", "enter")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(160, 45), run_before=run_before)


def test_search_for_a_date_shows_the_date_row(snap_compare, make_app: Callable[..., ClawmemApp]) -> None:
    """A question naming a day: the diary of that day, its "date" row, and its age from that day."""

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("3", *"staging incident on August 20", "enter")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=(160, 45), run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_editor_with_file_open(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("down", "e")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_editor_conflict_modal(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    app = make_app()

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("down", "e")
        await settle(pilot)
        area = pilot.app.query_one("#editor-area")
        area.insert("- 我的新条目：周日晚上改坐飞机。\n", location=area.document.end)  # type: ignore[attr-defined]
        memory = app.engine.workspace / "MEMORY.md"
        memory.write_text(memory.read_text(encoding="utf-8") + "- Added by the agent meanwhile.\n", encoding="utf-8")
        await pilot.press("f2")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_status_pane(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_status_pane_reindex_progress(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        # The progress a long embedding pass reports (a real pass on the fixture is too quick to catch).
        pilot.app.post_message(IndexProgress("embed", 412, 1526))
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_context_preview_with_truncation_warning(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)

    assert snap_compare(make_app("workspace-overcap"), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_context_trigger_simulation(snap_compare, make_app: Callable[..., ClawmemApp], size) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        pilot.app.query_one("#context-message").focus()
        await pilot.press(*"周末去杭州的返程车票订好了吗", "enter")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


def test_help_screen(snap_compare, make_app: Callable[..., ClawmemApp]) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("escape", "f1")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=run_before)


def test_status_bar_keeps_progress_beside_a_cap_warning(snap_compare, make_app: Callable[..., ClawmemApp]) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        pilot.app.post_message(IndexProgress("embed", 412, 1526))
        await settle(pilot)

    assert snap_compare(make_app("workspace-overcap"), terminal_size=(100, 30), run_before=run_before)


def test_search_with_untrusted_hits_included(snap_compare, make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    add_untrusted_memory(app)

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("3", *"ignore the budget luxury dragon boat", "enter")
        await settle(pilot)
        await pilot.press("ctrl+t")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(160, 45), run_before=run_before)
