"""The app on a real OpenClaw home (``clawmem --openclaw``): the Status pane reports the home and
its agent's index, the Sessions pane lists the agent's own sessions beside clawmem's, marked ◆,
with their events and trust — and not one byte of the home changes while the app reads it."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from clawmem.tui.app import ClawmemApp
from clawmem.tui.panes.forget import ForgetPane
from clawmem.tui.panes.sessions import OPENCLAW_KEY, SessionsPane
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from tests.openclaw_fixture import EVENTS, SAM, digest
from tests.tui.waits import settle, wait_for


def shown(app: ClawmemApp, selector: str) -> str:
    console = Console(width=220, file=io.StringIO(), record=True)
    console.print(app.query_one(selector, Static).content)
    return console.export_text()


def session_id_of(app: ClawmemApp, key: str) -> str:
    home = app.engine.openclaw
    assert home is not None
    return next(s.session_id for s in home.sessions() if s.session_key == key)


async def test_sessions_pane_lists_openclaws_sessions_and_reads_them_in_place(
    openclaw_app: Callable[[], ClawmemApp], user_home: Path
) -> None:
    app = openclaw_app()
    before = digest(user_home / "openclaw")
    sam = session_id_of(app, SAM)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("8")
        await settle(pilot)
        pane = app.query_one(SessionsPane)
        assert sorted(s.event_count for s in pane.openclaw_sessions) == sorted(EVENTS.values())
        assert "+ ◆ 3 OpenClaw's (read in place)" in shown(app, "#sessions-status")
        pane.query_one("#sessions-table").focus()
        for _ in range(3):
            if pane.session_id == OPENCLAW_KEY + sam:
                break
            await pilot.press("j")
            await settle(pilot)
        assert pane.session_id == OPENCLAW_KEY + sam
        await wait_for(pilot, lambda: sam in shown(app, "#sessions-header"))
        header = shown(app, "#sessions-header")
        assert "Sam (telegram:1002) ✗ not the owner" in header and "1 external result" in header
        transcript = shown(app, "#sessions-transcript")
        assert "[external] " in transcript and "web_fetch" in transcript
        # No note (OpenClaw's own hook writes those); a forget of what clawmem derived is offered.
        assert pane.check_action("write_note", ()) is None and pane.check_action("forget", ()) is True
    assert digest(user_home / "openclaw") == before


async def test_forget_an_openclaw_session_from_the_sessions_pane(
    openclaw_app: Callable[..., ClawmemApp], user_home: Path
) -> None:
    app = openclaw_app(sessions_source=True)
    before = digest(user_home / "openclaw")
    sam = session_id_of(app, SAM)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("8")
        await settle(pilot)
        pane = app.query_one(SessionsPane)
        pane.query_one("#sessions-table").focus()
        for _ in range(3):
            if pane.session_id == OPENCLAW_KEY + sam:
                break
            await pilot.press("j")
            await settle(pilot)
        await pilot.press("f")
        forget = app.query_one(ForgetPane)
        await wait_for(pilot, lambda: forget.plan is not None and forget.plan.session_ids == (sam,))
        await settle(pilot)
        plan = forget.plan
        assert plan is not None
        assert [r.source for r in plan.resolutions] == ["openclaw"]
        assert {c.path for c in plan.chunks} == {f"sessions/openclaw/{sam}.jsonl"} and plan.artifacts.memory_lines == 0
        header = shown(app, "#forget-header")
        assert f"◆ {sam}" in header and "OpenClaw's, read in place" in header
        assert f"openclaw memory forget --agent main --session {SAM} --dry-run" in header
        assert "◆ OpenClaw home ~/openclaw/.openclaw · its databases read-only" in app.status_bar.render().plain
    assert digest(user_home / "openclaw") == before


async def test_status_pane_reports_the_home_and_its_agents_index(
    openclaw_app: Callable[[], ClawmemApp], user_home: Path
) -> None:
    app = openclaw_app()
    memory = user_home / "openclaw" / ".openclaw" / "workspace" / "memory" / "2026-11-20.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "- An edit OpenClaw has not indexed yet.\n", "utf-8")
    before = digest(user_home / "openclaw")
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        lines = shown(app, "#status-lines")
        assert "OpenClaw home" in lines and "~/openclaw/.openclaw" in lines
        assert "schema 23" in lines and "schema 18" in lines
        assert "1 file changed since its last index" in lines
        assert "openclaw memory index --agent main" in lines
    assert digest(user_home / "openclaw") == before


@pytest.mark.parametrize("pane", ["status", "sessions", "forget"])
def test_openclaw_home_snapshot(snap_compare, openclaw_app: Callable[..., ClawmemApp], pane: str) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("4" if pane == "status" else "8")
        await settle(pilot)
        if pane in ("sessions", "forget"):
            await pilot.press("j")  # the second OpenClaw session
            await settle(pilot)
        if pane == "forget":
            await pilot.press("f")  # what forgetting it removes here, and OpenClaw's own command
            await settle(pilot)

    app = openclaw_app(sessions_source=pane == "forget")
    assert snap_compare(app, terminal_size=(160, 45), run_before=run_before)
