"""Pilot flows through the real app: a person's path from a search to an edit, and back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import DataTable, Input, TextArea
from textual.worker import WorkerState

from tui.app import ClawmemApp
from tui.screens.memory import MemoryPane


async def settle(pilot: Pilot[object], seconds: float = 0.3) -> None:
    await pilot.pause(seconds)
    for _ in range(400):
        if not any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in pilot.app.workers):
            break
        await pilot.pause(0.05)
    await pilot.pause(0.1)


async def wait_for(pilot: Pilot[object], condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    for _ in range(int(timeout / 0.05)):
        if condition():
            return True
        await pilot.pause(0.05)
    return condition()


async def test_search_open_edit_save_and_find_the_new_text(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await pilot.press(*"返程车票")
        await pilot.press("enter")
        await settle(pilot, 0.6)
        results = app.query_one("#search-results", DataTable)
        assert results.row_count > 0
        top = app.query_one("#search-pane").response.results[0]  # type: ignore[attr-defined]
        await pilot.press("enter")  # open the selected hit
        await settle(pilot)
        memory = app.query_one(MemoryPane)
        assert memory.current == top.path
        source = app.query_one("#memory-source", TextArea)
        assert source.cursor_location[0] == top.start_line - 1  # opened at its line

        await pilot.press("e")  # edit it
        await settle(pilot)
        editor = app.query_one("#editor-area", TextArea)
        assert editor.text == (app.engine.workspace / top.path).read_text(encoding="utf-8")
        editor.insert("- 新增：返程改成周日下午四点的 G7516。\n", location=editor.document.end)
        await pilot.press("f2")
        await settle(pilot, 0.6)
        assert "G7516" in (app.engine.workspace / top.path).read_text(encoding="utf-8")

        # The save re-indexes the file in the background; the new text is then found.
        found = False
        for _ in range(60):
            await settle(pilot, 0.2)
            r = app.engine.search("G7516", legs="keyword", record=False, sync=False)
            if any(h.path == top.path for h in r.results):
                found = True
                break
        assert found


async def test_external_edit_shows_up_through_the_watcher(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app(watch=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        new_file = app.engine.workspace / "memory" / "2026-11-05.md"
        new_file.write_text("# 2026-11-05\n\n- 代理刚刚写下：酒店确认了延迟退房。\n", encoding="utf-8")
        memory = app.query_one(MemoryPane)
        assert await wait_for(pilot, lambda: "memory/2026-11-05.md" in memory.files, timeout=6.0)
        r = app.engine.search("延迟退房", legs="keyword", record=False, sync=False)
        assert await wait_for(
            pilot,
            lambda: any(
                h.path == "memory/2026-11-05.md"
                for h in app.engine.search("延迟退房", legs="keyword", record=False, sync=False).results
            ),
            timeout=6.0,
        ), r


async def test_an_unmodified_editor_reloads_an_external_edit(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app(watch=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("down", "e")  # MEMORY.md in the editor, unmodified
        await settle(pilot)
        path = app.engine.workspace / "MEMORY.md"
        path.write_text(path.read_text(encoding="utf-8") + "- Written by the agent.\n", encoding="utf-8")
        editor = app.query_one("#editor-area", TextArea)
        assert await wait_for(pilot, lambda: "Written by the agent." in editor.text, timeout=6.0)


async def test_conflict_keep_mine_loses_neither_version(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("down", "e")
        await settle(pilot)
        editor = app.query_one("#editor-area", TextArea)
        editor.insert("- 我的版本：周日改坐飞机。\n", location=editor.document.end)
        path = app.engine.workspace / "MEMORY.md"
        disk_version = path.read_text(encoding="utf-8") + "- The agent's version.\n"
        path.write_text(disk_version, encoding="utf-8")
        await pilot.press("f2")
        await settle(pilot)
        assert path.read_text(encoding="utf-8") == disk_version  # nothing written before the choice
        await pilot.press("m")  # keep mine
        await settle(pilot, 0.5)
        assert "我的版本" in path.read_text(encoding="utf-8")
        copies = list((app.engine.settings.home / "conflicts").glob("MEMORY.md.*.disk.md"))
        assert len(copies) == 1 and copies[0].read_text(encoding="utf-8") == disk_version


async def test_conflict_take_disk_keeps_my_text_as_a_copy(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("down", "e")
        await settle(pilot)
        editor = app.query_one("#editor-area", TextArea)
        editor.insert("- 我的版本：周日改坐飞机。\n", location=editor.document.end)
        mine = editor.text
        path = app.engine.workspace / "MEMORY.md"
        disk_version = path.read_text(encoding="utf-8") + "- The agent's version.\n"
        path.write_text(disk_version, encoding="utf-8")
        await pilot.press("f2")
        await settle(pilot)
        await pilot.press("d")  # take the disk's
        await settle(pilot, 0.5)
        assert path.read_text(encoding="utf-8") == disk_version
        assert editor.text == disk_version
        copies = list((app.engine.settings.home / "conflicts").glob("MEMORY.md.*.yours.md"))
        assert len(copies) == 1 and copies[0].read_text(encoding="utf-8") == mine


async def test_cancel_keeps_the_buffer_and_the_file(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("down", "e")
        await settle(pilot)
        editor = app.query_one("#editor-area", TextArea)
        editor.insert("- unsaved line\n", location=editor.document.end)
        mine = editor.text
        path = app.engine.workspace / "MEMORY.md"
        disk_version = path.read_text(encoding="utf-8") + "- agent line\n"
        path.write_text(disk_version, encoding="utf-8")
        await pilot.press("f2")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert path.read_text(encoding="utf-8") == disk_version and editor.text == mine


async def test_bad_search_controls_do_not_crash(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        app.query_one("#search-min", Input).value = "7"
        app.query_one("#search-query", Input).value = "杭州"
        await settle(pilot, 0.6)
        assert app.is_running
        assert app.query_one("#search-pane").response is None  # type: ignore[attr-defined]


async def test_number_keys_switch_panes(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for key, pane in (("2", "editor"), ("3", "search"), ("4", "status"), ("5", "context"), ("1", "memory")):
            await pilot.press("escape") if pane != "editor" else None
            app.set_focus(None)
            await pilot.press(key)
            await asyncio.sleep(0.05)
            assert app.query_one("#panes").active == pane  # type: ignore[attr-defined]
