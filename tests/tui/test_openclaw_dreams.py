"""The Dreams pane on a real OpenClaw home (``clawmem --openclaw``): its view "◆ OpenClaw tonight"
lists what the agent's Deep would promote tonight — the three recall entries (3, 1, 1 recalls),
each gate passed or failed with the numbers, the recall history of the selected one and the
OpenClaw command that promotes — and not one byte of the home changes while the app reads it."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from clawmem.tui.app import ClawmemApp
from clawmem.tui.panes.dreams import DreamsPane
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from tests.openclaw_fixture import digest
from tests.tui.waits import settle, wait_for


def shown(app: ClawmemApp, selector: str) -> str:
    console = Console(width=220, file=io.StringIO(), record=True)
    console.print(app.query_one(selector, Static).content)
    return console.export_text()


async def open_tonight(pilot: Pilot[object]) -> None:
    await settle(pilot)
    await pilot.press("6", "o")
    await settle(pilot)


async def test_tonight_view_shows_each_gate_and_the_history(
    openclaw_app: Callable[[], ClawmemApp], user_home: Path
) -> None:
    app = openclaw_app()
    before = digest(user_home / "openclaw")
    async with app.run_test(size=(160, 45)) as pilot:
        await open_tonight(pilot)
        pane = app.query_one(DreamsPane)
        assert pane.view == "openclaw"
        await wait_for(pilot, lambda: pane.data is not None and pane.data.openclaw is not None)
        assert pane.data is not None and pane.data.openclaw is not None
        theirs = pane.data.openclaw
        assert [c.explanation.recall_count for c in theirs.candidates] == [3, 1, 1]
        heading = shown(app, "#dreams-openclaw-heading")
        assert "◆ What your agent would promote tonight" in heading
        assert "nothing would be promoted" in heading
        assert pane.openclaw_key == "memory:memory/2026-11-27.md:1:6"
        detail = shown(app, "#dreams-openclaw-explain")
        assert "◆ OpenClaw's recall entry" in detail and "Why: score" in detail and "✗ score" in detail
        assert "payments API degraded TLS certificate" in detail and "2 recorded searches of 3 recalls" in detail
        assert "OpenClaw promotes: openclaw memory promote --apply" in detail
        pane.query_one("#dreams-openclaw-table").focus()
        await pilot.press("j")
        await settle(pilot)
        assert pane.openclaw_key == "memory:memory/2026-11-21.md:1:5"
        await wait_for(pilot, lambda: "Longjing tea team" in shown(app, "#dreams-openclaw-explain"))
        assert "1 signals of 3 needed" in shown(app, "#dreams-openclaw-explain")
    assert digest(user_home / "openclaw") == before


async def test_without_an_openclaw_home_there_is_no_tonight_view(dream_app: Callable[..., ClawmemApp]) -> None:
    app = dream_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("6", "o")
        await settle(pilot)
        pane = app.query_one(DreamsPane)
        assert pane.view != "openclaw" and not pane.query("#dreams-openclaw-table")


def test_openclaw_tonight_snapshot(snap_compare, openclaw_app: Callable[[], ClawmemApp]) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await open_tonight(pilot)

    assert snap_compare(openclaw_app(), terminal_size=(160, 45), run_before=run_before)
