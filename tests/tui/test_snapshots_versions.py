"""Snapshots of a changed fact in the app (issue 36): a search whose older version sits struck
through right below the newer one with its breakdown saying so, and the Memory pane's
"superseded by…" picker. The fixture workspace plus two diaries of one fact, written before the
app starts.

Update a snapshot only after looking at the new SVG."""

from __future__ import annotations

from collections.abc import Callable

from clawmem.tui.app import ClawmemApp
from textual.pilot import Pilot

from tests.tui.waits import settle

GYM = "memory/2026-03-02.md"
POOL = "memory/2026-10-20.md"


def with_two_versions(app: ClawmemApp) -> ClawmemApp:
    ws = app.engine.workspace
    (ws / GYM).write_text("# 2026-03-02\n\n- Gym schedule: the gym at 7am on weekdays.\n", encoding="utf-8")
    (ws / POOL).write_text(
        "# 2026-10-20\n\n- New schedule: no more gym, I swim at the pool at 7am.\n", encoding="utf-8"
    )
    app.engine.sync()
    return app


def test_search_shows_the_older_version_below_the_newer(snap_compare, make_app: Callable[..., ClawmemApp]) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("3")
        await pilot.press(*"gym schedule")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("down")  # the older version's breakdown
        await settle(pilot)

    assert snap_compare(with_two_versions(make_app()), terminal_size=(160, 45), run_before=run_before)


def test_memory_pane_superseded_by_picker(snap_compare, make_app: Callable[..., ClawmemApp]) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        pilot.app.query_one("#memory-pane").open(GYM, 3)  # type: ignore[attr-defined]
        await settle(pilot)
        pilot.app.query_one("#memory-entries").focus()
        await pilot.press("s")
        await settle(pilot)

    assert snap_compare(with_two_versions(make_app()), terminal_size=(160, 45), run_before=run_before)
