"""Pilot flows through the Sessions and Forget panes of the real app: pick a session, preview, confirm,
and find nothing of it afterwards; a preview that went stale is refused; the import dialog.

State is built through the engine before the app starts (see test_snapshots_sessions.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clawmem.engine.store import sessions_rows as srows
from clawmem.tui.app import ClawmemApp
from clawmem.tui.modals.confirm import ConfirmModal
from clawmem.tui.modals.import_session import ImportSessionModal
from clawmem.tui.panes.forget import ForgetPane
from clawmem.tui.panes.sessions import SessionsPane
from rich.console import Console
from textual.widgets import Digits, Input, SelectionList, Static

from tests.session_fixture import B_FACT, HZ, A, B
from tests.tui.waits import settle, wait_for


def shown(widget: Static, width: int = 200) -> str:
    """The text a Static shows, as plain text."""
    console = Console(width=width, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


async def test_pick_preview_confirm_and_nothing_of_the_session_is_left(
    session_app: Callable[..., ClawmemApp],
) -> None:
    app = session_app()
    e = app.engine
    assert e.search("Lingyin Temple tickets", legs="keyword", record=False, sync=False).results
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("9")
        await settle(pilot)
        pane = app.query_one(ForgetPane)
        picker = app.query_one("#forget-sessions", SelectionList)
        assert app.focused is picker and pane.plan is None
        assert "Pick the sessions to forget" in shown(app.query_one("#forget-items", Static))
        await pilot.press("down", "down")  # the list is newest first: cron, Hangzhou, Lingyin
        await pilot.press("space")
        assert await wait_for(pilot, lambda: pane.plan is not None)
        await settle(pilot)
        plan = pane.plan
        assert plan is not None and plan.session_ids == (B,) and not plan.purge_transcripts
        assert [k for k in pane.query_one("#forget-groups").rows][:2] == ["entries", "lines"]  # type: ignore[attr-defined]
        entries = shown(app.query_one("#forget-items", Static))
        assert "Memory entries — 2 entries removed whole" in entries and "MEMORY.md:16-17" in entries

        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmModal)
        body = shown(app.screen.query_one("#confirm-body", Static))
        assert "2 memory entries" in body and "cannot be undone" in body
        await pilot.press("y")
        assert await wait_for(pilot, lambda: pane.result is not None, timeout=15.0)
        await settle(pilot)
        result = pane.result
        assert result is not None and result.tombstoned == (B,) and result.residual_count == 0
        assert app.query_one("#forget-residual-digits", Digits).value == "0"
        assert "✓ 0 residual" in shown(app.query_one("#forget-items", Static))
        assert pane.check_action("run", ()) is None  # the result is not a plan to run again

        # Gone from the index and every file; the Sessions pane marks it forgotten.
        assert e.search("Lingyin Temple tickets", legs="keyword", record=False, sync=False).results == ()
        assert e.store.scalar("SELECT COUNT(*) FROM memory_index_chunks WHERE text LIKE '%Lingyin%'") == 0
        assert not any("Lingyin" in p.read_text(encoding="utf-8") for p in e.workspace.rglob("*.md"))
        sessions = app.query_one(SessionsPane)
        assert await wait_for(pilot, lambda: any(s.session_id == B and s.forgotten_at for s in sessions.sessions or ()))
        assert e.search("Hangzhou weekend budget", legs="keyword", record=False, sync=False).results  # A's stay


async def test_a_stale_preview_is_refused_then_a_purge_lists_what_user_md_keeps(
    session_app: Callable[..., ClawmemApp],
) -> None:
    app = session_app()
    e = app.engine
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("8")
        await settle(pilot)
        await pilot.press("j", "j", "f")  # f on sess-lingyin-02: the Forget pane previews it at once
        pane = app.query_one(ForgetPane)
        assert await wait_for(pilot, lambda: pane.plan is not None and pane.plan.session_ids == (B,))
        await settle(pilot)
        memory = e.workspace / "MEMORY.md"
        memory.write_text(memory.read_text(encoding="utf-8") + "- Edited after the preview.\n", encoding="utf-8")
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("y")
        assert await wait_for(
            pilot, lambda: "changed since the preview" in shown(app.query_one("#forget-status", Static))
        )
        assert pane.result is None and srows.tombstone(e.store.conn(), B) is None
        assert "- Edited after the preview." in memory.read_text(encoding="utf-8")
        user = e.workspace / "USER.md"  # forget never edits USER.md: a copy there is a known residual
        user.write_text(user.read_text(encoding="utf-8") + B_FACT + "\n", encoding="utf-8")

        await pilot.press("t")  # purge the transcript too: a fresh plan
        assert await wait_for(pilot, lambda: pane.plan is not None and pane.plan.purge_transcripts)
        await settle(pilot)
        assert pane.plan is not None and pane.plan.artifacts.transcript_events == 4
        await pilot.press("x")
        await settle(pilot)
        assert "The transcripts are kept" not in shown(app.screen.query_one("#confirm-body", Static))
        await pilot.press("y")
        assert await wait_for(pilot, lambda: pane.result is not None, timeout=15.0)
        await settle(pilot)
        result = pane.result
        assert result is not None and result.residual_count == 1 and srows.tombstone(e.store.conn(), B) is not None
        hit = result.residual[0]
        assert (hit.where, hit.location.split(":")[0], hit.note) == (
            "file",
            "USER.md",
            "USER.md is never edited by forget",
        )
        assert app.query_one("#forget-banner").has_class("bad")
        assert app.query_one("#forget-residual-digits", Digits).value == "1"
        items = shown(app.query_one("#forget-items", Static))
        assert "✗ 1 residual" in items and "(USER.md is never edited by forget)" in items
        assert e.sessions.search("Lingyin") == ()  # the transcript is purged
        assert "- Edited after the preview." in memory.read_text(encoding="utf-8")


async def test_import_dialog_shows_the_error_then_imports_and_writes_the_note(
    session_app: Callable[..., ClawmemApp],
    tmp_path: Path,
) -> None:
    app = session_app(state="empty")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(HZ.read_text(encoding="utf-8").split("\n")[0] + "\n{not json\n", encoding="utf-8")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("8")
        await settle(pilot)
        pane = app.query_one(SessionsPane)
        assert pane.sessions == () and "clawmem session import FILE.jsonl" in shown(
            app.query_one("#sessions-transcript", Static)
        )
        assert pane.check_action("write_note", ()) is None and pane.check_action("forget", ()) is None

        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, ImportSessionModal)
        field = app.screen.query_one(Input)
        for path, error in ((tmp_path / "missing.jsonl", "no such file"), (bad, "bad.jsonl: line 2: not valid JSON")):
            field.value = str(path)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, ImportSessionModal)  # still open, with the one-line error
            message = shown(app.screen.query_one("#sessions-import-error", Static))
            assert error in message and "\n" not in message.strip(), message
        assert e_sessions(app) == ()
        field.value = str(HZ)
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, ImportSessionModal))
        assert await wait_for(pilot, lambda: pane.detail is not None and pane.detail.summary.session_id == A)
        await settle(pilot)
        assert "✓ imported 1 session (7 events) from hangzhou-trip.jsonl" in shown(
            app.query_one("#sessions-status", Static)
        )
        transcript = shown(app.query_one("#sessions-transcript", Static))
        assert "[network] West Lake boat tour" in transcript and "[tainted] The West Lake boat tour" in transcript

        await pilot.press("n")  # the session-memory note, without the tainted turn
        assert await wait_for(pilot, lambda: "✓ wrote" in shown(app.query_one("#sessions-status", Static)))
        note = app.engine.workspace / "memory" / "2026-11-03-plan-our-hangzhou-weekend-trip.md"
        text = note.read_text(encoding="utf-8")
        assert "Session ID**: sess-hz-01" in text and "ignore the budget" not in text
        assert await wait_for(pilot, lambda: pane.check_action("write_note", ()) is None)  # it has a note now


def e_sessions(app: ClawmemApp) -> tuple[object, ...]:
    return app.engine.sessions.summaries()
