"""Pilot flows through the real app: a person's path from a search to an edit, and back."""

from __future__ import annotations

import dataclasses
import gc
import threading
import time
from collections.abc import Callable

import apsw
import pytest
from clawmem.engine.workspace.catalog import FileInfo
from clawmem.tui.app import ClawmemApp
from clawmem.tui.collector import TAKES_OVER
from clawmem.tui.messages import FilesChanged, IndexProgress
from clawmem.tui.panes.memory import MemoryPane
from clawmem.tui.panes.search import SearchPane
from clawmem.tui.widgets.breakdown import BreakdownPanel
from clawmem.tui.widgets.markdown_view import MarkdownView
from textual.message import Message
from textual.widgets import (
    Checkbox,
    ContentSwitcher,
    DataTable,
    Input,
    Label,
    SelectionList,
    Static,
    TabbedContent,
    TextArea,
)

from tests.conftest import FIXTURES
from tests.tui.garbage import old_garbage
from tests.tui.states import add_untrusted_memory
from tests.tui.waits import settle, wait_for


async def test_search_open_edit_save_and_find_the_new_text(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await pilot.press(*"返程车票")
        await pilot.press("enter")
        await settle(pilot)
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
        on_disk = (app.engine.workspace / top.path).read_text(encoding="utf-8")

        def editor_text() -> str | None:
            found = app.screen.query("#editor-area")
            return found.first(TextArea).text if found else None

        # The editor fills once its screen is up: on a busy machine that can take past settle().
        assert await wait_for(pilot, lambda: editor_text() == on_disk)
        editor = app.query_one("#editor-area", TextArea)
        editor.insert("- 新增：返程改成周日下午四点的 G7516。\n", location=editor.document.end)
        await pilot.press("f2")
        await settle(pilot)
        assert "G7516" in (app.engine.workspace / top.path).read_text(encoding="utf-8")

        # The save re-indexes the file in the background; the new text is then found.
        def found() -> bool:
            r = app.engine.search("G7516", legs="keyword", record=False, sync=False)
            return any(h.path == top.path for h in r.results)

        assert await wait_for(pilot, found, timeout=20)


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
        await settle(pilot)
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
        await settle(pilot)
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
        await settle(pilot)
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
            await settle(pilot)
            assert app.query_one("#panes").active == pane  # type: ignore[attr-defined]


async def test_start_up_objects_are_frozen_for_the_apps_life_and_released_after(
    make_app: Callable[..., ClawmemApp],
) -> None:
    # The collector's full passes over start-up's objects stalled the app while it indexed
    # (bench/app_while_indexing.py); frozen, they are skipped, and thawed at exit they can be freed.
    gc.unfreeze()
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # the modules, the engine and every pane's widgets
        assert any(o is app.query_one(MemoryPane) for o in gc.get_objects()) is False  # not scanned any more
    assert gc.get_freeze_count() == 0


async def test_what_the_panes_first_fill_made_is_frozen_too(
    make_app: Callable[..., ClawmemApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The panes fill in workers after the first refresh; on a real workspace what they made (~90k
    # objects) stalled the app 139 ms in one collection while it indexed (bench/RESULTS.md §3).
    # The fixture's files list in milliseconds, before that refresh; held here until the app's
    # first freeze has run, as a large workspace's would be (the real call, only later).
    gc.unfreeze()
    app = make_app()
    release = threading.Event()
    listed = app.engine.memory_files
    fills: list[dict[str, FileInfo]] = []  # each fill's files, kept: the start-up sync's reload may replace the first

    def slow_listing() -> list[FileInfo]:
        release.wait(10)
        return listed()

    show_files = MemoryPane._show_files

    def shown(pane: MemoryPane, files: list[FileInfo]) -> None:
        show_files(pane, files)
        fills.append(pane.files)

    monkeypatch.setattr(app.engine, "memory_files", slow_listing)
    monkeypatch.setattr(MemoryPane, "_show_files", shown)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: gc.get_freeze_count() > 0)  # the start-up freeze has run
        memory = app.query_one(MemoryPane)
        assert not memory.files  # still listing
        release.set()
        await settle(pilot)
        await wait_for(pilot, lambda: app._fill_poll is None)  # the app saw no pane at work: its second freeze
        assert fills  # the first fill is shown
        tracked = {id(o) for o in gc.get_objects()}
        assert id(fills[0]) not in tracked  # made by the fill after the first freeze: frozen too
        assert id(app.query_one(SearchPane)) not in tracked  # start-up's objects still frozen
        # later fills are not frozen: what is garbage then must stay collectable
        memory.load_files()
        await settle(pilot)
        assert id(memory.files) in {id(o) for o in gc.get_objects()}
    assert gc.get_freeze_count() == 0


@pytest.mark.skipif(not TAKES_OVER, reason="CPython 3.14+ collects the old objects incrementally")
async def test_full_collections_run_when_nobody_is_using_the_app(make_app: Callable[..., ClawmemApp]) -> None:
    # A full collection in the middle of a keystroke or beside a search stalled the app 130–160 ms
    # while it indexed (bench/RESULTS.md §3); the app runs them itself at idle moments
    # (tui/collector.py) and gives the collector back as it was when it ends.
    thresholds = gc.get_threshold()
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.collector.active and app._fill_poll is None)  # the first fill frozen
        assert gc.get_threshold()[2] > 1_000_000  # CPython's own full collections are out of reach
        before = time.monotonic()
        await pilot.press("down")
        assert app.engine.quiet_for() <= time.monotonic() - before  # a key: someone was here since
        await wait_for(pilot, app.nobody_using)  # half a second later, nobody
        probe = old_garbage(50_000)  # cycles only a full collection frees
        await wait_for(pilot, lambda: probe() is None)  # the app ran one, at an idle moment
    assert gc.get_threshold() == thresholds and not app.collector.active


# ---------------------------------------------------------------------------- background embedding

TOPICS = ("budget", "hotel", "return ticket", "lake view", "deploy", "certbot", "meeting", "train", "museum", "tea")


def busy_workspace(notes: int = 400) -> dict[str, str]:
    """Enough distinct chunks that the real model takes several seconds to embed them all."""
    files = {"MEMORY.md": "# Memory\n\n- The user prefers green tea in the morning.\n"}
    for i in range(notes):
        a, b = TOPICS[i % len(TOPICS)], TOPICS[(i * 7 + 3) % len(TOPICS)]
        files[f"memory/notes/note-{i:03d}.md"] = (
            f"# Note {i}\n\n- Meeting number {i} talked about the {a} and the {b}; "
            f"the follow-up is due on day {i % 28 + 1} and ticket {i * 37 % 1000} tracks it.\n"
        )
    return files


def progress_recorder() -> tuple[list[IndexProgress], Callable[[Message], None]]:
    """A message hook that keeps every IndexProgress the app posts, and the list it fills."""
    seen: list[IndexProgress] = []

    def hook(message: Message) -> None:
        if isinstance(message, IndexProgress):
            seen.append(message)

    return seen, hook


def sync_diagnosis(
    app: ClawmemApp, text: str, path: str, seen: list[IndexProgress], changed: list[frozenset[str]]
) -> str:
    """Where an external edit got stuck on its way into the index, for a wait's failure message:
    the watcher's report, the worker's phases, the rows a fresh connection and the app's see."""
    sql = "SELECT start_line FROM memory_index_chunks WHERE path = ? AND instr(text, ?) > 0"
    fresh = apsw.Connection(str(app.engine.settings.db_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        in_db = [r[0] for r in fresh.execute(sql, (path, text))]
    finally:
        fresh.close()
    conn = app.engine.store.conn()  # the main thread's: a read left open would pin an old snapshot
    txn = {apsw.SQLITE_TXN_NONE: "none", apsw.SQLITE_TXN_READ: "read", apsw.SQLITE_TXN_WRITE: "write"}
    app_txn = txn.get(conn.txn_state("main"), "?")
    in_app = [r[0] for r in conn.execute(sql, (path, text))]
    hits = app.engine.search(text, legs="keyword", record=False, sync=False).results
    run = app._run
    state = (run.finished, list(run.queue), run.stop_embedding.is_set(), run.cancel.is_set()) if run else None
    return (
        f"watcher reported {[sorted(c) for c in changed]}; phases {[(m.phase, m.done, m.detail) for m in seen[-5:]]}; "
        f"run (finished, queue, stop_embedding, cancel) {state}; chunks holding the text: {in_db} read fresh, "
        f"{in_app} through the app's connection (its transaction: {app_txn}); "
        f"keyword hits {[(h.path, h.start_line) for h in hits]}; "
        f"notifications {[n.message for n in getattr(app, '_notifications', [])]}"
    )


def keyword_found(app: ClawmemApp, text: str, path: str) -> bool:
    return any(h.path == path for h in app.engine.search(text, legs="keyword", record=False, sync=False).results)


async def test_a_file_change_during_embedding_is_synced_and_embedding_goes_on(
    make_unindexed_app: Callable[..., ClawmemApp],
) -> None:
    app = make_unindexed_app(busy_workspace())
    seen, record_progress = progress_recorder()
    changed: list[frozenset[str]] = []

    def hook(message: Message) -> None:
        record_progress(message)
        if isinstance(message, FilesChanged):
            changed.append(message.paths)

    async with app.run_test(size=(160, 45), message_hook=hook) as pilot:
        await pilot.press("4")
        # The pass is under way: some chunks have a vector, most do not yet.
        assert await wait_for(pilot, lambda: any(m.phase == "embed" and m.done > 0 for m in seen), timeout=120)
        embedded, total = app.engine.vector_coverage()
        assert 0 < embedded < total

        memory = app.engine.workspace / "MEMORY.md"  # an external edit, seen by the watcher
        memory.write_text(memory.read_text(encoding="utf-8") + "- The hotel upgraded us to a suite.\n", "utf-8")
        assert await wait_for(
            pilot,
            lambda: keyword_found(app, "upgraded us to a suite", "MEMORY.md"),
            timeout=20,
            diagnosis=lambda: sync_diagnosis(app, "upgraded us to a suite", "MEMORY.md", seen, changed),
        )
        assert app.indexing, "the change must have landed while the embedding pass was running"

        # Nobody presses anything: embedding resumes after the sync and completes.
        assert await wait_for(pilot, lambda: not app.indexing, timeout=300)
        await settle(pilot)
        embedded, total = app.engine.vector_coverage()
        assert embedded == total
        phases = [m.phase for m in seen]
        assert "cancelled" not in phases and "failed" not in phases
        assert phases.count("done") == 1  # one run: the change was synced inside it
        assert app.status_bar.activity == ""
        phase_label = str(app.query_one("#status-phase", Label).content)
        assert phase_label == "Index up to date", phase_label
        r = app.engine.search("upgraded us to a suite", legs="vector", record=False, sync=False)
        assert any(h.path == "MEMORY.md" for h in r.results + r.near_misses)  # the new chunk has a vector


async def test_a_cancel_pauses_embedding_until_the_user_reindexes(
    make_unindexed_app: Callable[..., ClawmemApp],
) -> None:
    app = make_unindexed_app(busy_workspace())
    seen, hook = progress_recorder()
    async with app.run_test(size=(160, 45), message_hook=hook) as pilot:
        await pilot.press("4")
        assert await wait_for(pilot, lambda: any(m.phase == "embed" and m.done > 0 for m in seen), timeout=120)
        await pilot.press("escape")  # the user cancels
        assert await wait_for(pilot, lambda: not app.indexing, timeout=30)
        await settle(pilot)
        label = app.query_one("#status-phase", Label)
        assert str(label.content).startswith("Embedding cancelled"), label.content
        assert app.status_bar.activity == "embedding cancelled"
        stopped_at, total = app.engine.vector_coverage()
        assert stopped_at < total

        # A file change now syncs the file but does not restart what the user stopped.
        memory = app.engine.workspace / "MEMORY.md"
        memory.write_text(memory.read_text(encoding="utf-8") + "- Written after the cancel.\n", "utf-8")
        assert await wait_for(pilot, lambda: keyword_found(app, "Written after the cancel", "MEMORY.md"), timeout=20)
        assert await wait_for(pilot, lambda: seen[-1].phase == "paused", timeout=20)
        await settle(pilot)
        assert str(label.content).startswith("Embedding paused:"), label.content
        assert app.status_bar.activity == "embedding paused"
        assert app.engine.vector_coverage()[0] <= stopped_at  # nothing was embedded meanwhile

        # r resumes where it stopped: the progress counts on from the vectors already made.
        seen.clear()
        before, total = app.engine.vector_coverage()
        await pilot.press("r")
        assert await wait_for(pilot, lambda: any(m.phase == "embed" for m in seen), timeout=30)
        first = next(m for m in seen if m.phase == "embed")
        assert first.done == before > 0 and first.total == total


async def test_escape_when_nothing_runs_says_so(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await pilot.press("r")  # a reindex that finishes at once (the fixture is indexed)
        assert await wait_for(pilot, lambda: not app.indexing, timeout=30)
        await settle(pilot)
        label = app.query_one("#status-phase", Label)
        assert str(label.content) == "Index up to date"
        await pilot.press("escape")
        await settle(pilot)
        assert str(label.content) == "Index up to date"  # not "Cancelling…" forever
        assert any("Nothing is running" in n.message for n in app._notifications)


async def test_embedding_progress_stays_visible_beside_a_cap_warning(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app("workspace-overcap")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("5")  # the Context pane raises the over-cap warning
        await settle(pilot)
        assert app.status_bar.warning.startswith("MEMORY.md is")
        app.post_message(IndexProgress("embed", 412, 1526))
        await settle(pilot)
        line = app.status_bar.render().plain
        assert line.startswith(" embedding 412/1,526  ·  ⚠ MEMORY.md is")
        assert line.endswith("…") and len(line) <= 100  # the warning is shortened, not the progress


async def test_the_embedding_pass_shows_its_time_left_in_the_status_bar_and_pane(
    make_app: Callable[..., ClawmemApp],
) -> None:
    """The engine's estimate for the whole pass (chunks, then lines) beside the count."""
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        app.post_message(IndexProgress("embed", 412, 1526, seconds_left=250.0))
        await settle(pilot)
        assert app.status_bar.render().plain.startswith(" embedding 412/1,526 · about 4 min left  ·  ")
        await pilot.press("4")  # the Status pane shows the same
        await settle(pilot)
        assert "about 4 min left" in str(app.query_one("#status-phase", Label).content)
        app.post_message(IndexProgress("lines", 30, 200, seconds_left=None))  # no honest pace yet
        await settle(pilot)
        assert app.status_bar.render().plain.startswith(" embedding lines 30/200  ·  ")


# ---------------------------------------------------------------------------- search: trust, tables


def breakdown_head(app: ClawmemApp) -> str:
    return app.query_one(BreakdownPanel).content.renderables[0].plain  # type: ignore[union-attr]


async def test_search_includes_untrusted_hits_only_when_asked_and_labels_them(
    make_app: Callable[..., ClawmemApp],
) -> None:
    app = make_app()
    add_untrusted_memory(app)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("3", *"ignore the budget luxury dragon boat", "enter")
        await settle(pilot)
        pane = app.query_one(SearchPane)
        assert pane.response is not None
        assert not any(h.provenance.origin_class == "untrusted" for h in pane.response.results)
        left_out = next(h for h in pane.response.near_misses if h.provenance.origin_class == "untrusted")
        assert left_out.note and left_out.note.startswith("untrusted origin")
        near = app.query_one("#search-near", DataTable)
        assert near.get_row(left_out.chunk_id)[-1].plain.startswith("[untrusted]")
        summary = str(app.query_one("#search-summary").content)
        assert "1 untrusted left out (^t includes them)" in summary

        await pilot.press("ctrl+t")  # from the results table
        await settle(pilot)
        assert app.query_one("#search-untrusted", Checkbox).value
        hit = next(h for h in pane.response.results if h.provenance.origin_class == "untrusted")
        assert hit.chunk_id == left_out.chunk_id
        results = app.query_one("#search-results", DataTable)
        assert results.get_row(hit.chunk_id)[-1].plain.startswith("[untrusted]")
        assert "untrusted included" in str(app.query_one("#search-summary").content)
        results.focus()
        results.move_cursor(row=results.get_row_index(hit.chunk_id))
        await settle(pilot)
        assert "[untrusted]" in breakdown_head(app)

        app.query_one("#search-query", Input).focus()
        await pilot.press("ctrl+t")  # works from the query box too, and turns it off again
        await settle(pilot)
        assert not app.query_one("#search-untrusted", Checkbox).value
        assert not any(h.provenance.origin_class == "untrusted" for h in pane.response.results)


async def test_search_tables_are_keyed_by_chunk_and_keep_the_cursor(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        app.query_one("#search-min", Input).value = "0"  # every hit passes: a full results table
        app.query_one("#search-query", Input).focus()
        await pilot.press(*"杭州 酒店 预算", "enter")
        await settle(pilot)
        pane = app.query_one(SearchPane)
        results = app.query_one("#search-results", DataTable)
        assert pane.response is not None and len(pane.response.results) >= 3
        assert [str(r.key.value) for r in results.ordered_rows] == [h.chunk_id for h in pane.response.results]
        await pilot.press("j", "j")
        chosen = pane.response.results[2]
        assert breakdown_head(app).startswith(f"{chosen.path}:{chosen.start_line}-")

        pane.index_changed()  # what an edit or the embedding pass triggers: the same search again
        await settle(pilot)
        assert results.cursor_row == 2 and results.get_row_index(chosen.chunk_id) == 2
        assert breakdown_head(app).startswith(f"{chosen.path}:{chosen.start_line}-")

        # A refresh that reorders the hits moves the rows, and the cursor stays on its hit.
        reordered = dataclasses.replace(pane.response, results=tuple(reversed(pane.response.results)))
        pane._show(pane._generation, reordered, 0.0)
        await settle(pilot)
        assert [str(r.key.value) for r in results.ordered_rows] == [h.chunk_id for h in reordered.results]
        assert results.cursor_row == results.get_row_index(chosen.chunk_id)
        assert [c.plain for c in results.get_column("rank")] == [str(i + 1) for i in range(results.row_count)]
        await pilot.press("enter")  # opens the hit under the cursor, not the one at its old row
        await settle(pilot)
        assert app.query_one(MemoryPane).current == chosen.path


# ---------------------------------------------------------------------------- keymap, lists, entries


async def test_keymap_typos_are_reported_and_tabs_show_rebound_keys(make_app: Callable[..., ClawmemApp]) -> None:
    keymap = '[tui.keymap]\n"status.reindexx" = "R"\n"pane.search" = "s"\n'
    app = make_app(config=keymap)
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await settle(pilot)
        warnings = [n.message for n in app._notifications if n.severity == "warning"]
        assert len(warnings) == 1
        assert "'status.reindexx' (did you mean 'status.reindex'?)" in warnings[0]
        assert "pane.search" not in warnings[0]  # a known id is not reported
        tabs = app.query_one(TabbedContent)
        assert str(tabs.get_tab("search").label) == "s Search"
        assert str(tabs.get_tab("status").label) == "4 Status"
        app.set_focus(None)
        await pilot.press("s")
        await settle(pilot)
        assert tabs.active == "search"


async def test_a_keymap_without_typos_says_nothing(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app(config='[tui.keymap]\n"status.reindex" = "R"\n"forget.sessions.down" = "n"\n')
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await settle(pilot)
        assert not [n for n in app._notifications if n.severity == "warning"]


async def test_context_tables_move_with_j_k_g_g(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        files = app.query_one("#context-files", DataTable)
        files.focus()
        assert files.row_count >= 3
        await pilot.press("g")
        assert files.cursor_row == 0
        await pilot.press("j")
        assert files.cursor_row == 1
        await pilot.press("G")
        assert files.cursor_row == files.row_count - 1
        await pilot.press("k")
        assert files.cursor_row == files.row_count - 2
        app.query_one("#context-message", Input).value = "周末去杭州的返程车票订好了吗"
        await settle(pilot)
        triggers = app.query_one("#context-triggers", DataTable)
        assert triggers.row_count >= 2
        triggers.focus()
        await pilot.press("G")
        assert triggers.cursor_row == triggers.row_count - 1
        await pilot.press("g")
        assert triggers.cursor_row == 0


async def test_forget_session_picker_moves_with_j_k_g_g(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    for name in ("hangzhou-trip", "lingyin-tickets", "cron-digest"):
        app.engine.sessions.import_file(FIXTURES / "sessions" / f"{name}.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("9")
        await settle(pilot)
        picker = app.query_one("#forget-sessions", SelectionList)
        picker.focus()
        assert picker.option_count == 3
        await pilot.press("g")
        assert picker.highlighted == 0
        await pilot.press("j")
        assert picker.highlighted == 1
        await pilot.press("G")
        assert picker.highlighted == 2
        await pilot.press("k")
        assert picker.highlighted == 1
        assert not picker.selected  # moving picks nothing


async def test_diary_entries_show_the_diary_date_as_observed(make_app: Callable[..., ClawmemApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        memory = app.query_one(MemoryPane)
        memory.open("memory/2026-11-01.md", None)
        await settle(pilot)
        table = app.query_one("#memory-entries", DataTable)
        assert table.row_count > 0
        assert {c.plain for c in table.get_column("observed")} == {"2026-11-01"}
        memory.open("MEMORY.md", None)  # undated and without markers: nothing to show
        await settle(pilot)
        assert {c.plain for c in table.get_column("observed")} == {"—"}


async def test_a_reload_that_changes_nothing_leaves_the_rendered_file_as_it_is(
    make_app: Callable[..., ClawmemApp],
) -> None:
    # Laying the Markdown view out again on the app's thread at every sync, for the same text,
    # was a stall beside an embedding pass on a real workspace (bench/RESULTS.md §3).
    app = make_app()
    memory_md = app.engine.workspace / "MEMORY.md"
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        memory = app.query_one(MemoryPane)
        memory.open("MEMORY.md", None)
        await settle(pilot)
        rendered = app.query_one("#memory-markdown", MarkdownView)
        shown = rendered.visual
        assert "Long-Term Memory" in rendered.source and shown is not None
        memory.refresh_from_engine(frozenset())  # the index's sync: the same text
        await settle(pilot)
        assert rendered.visual is shown
        memory_md.write_text(memory_md.read_text(encoding="utf-8") + "\n- Sam prefers oat milk now.\n", "utf-8")
        memory.refresh_from_engine(frozenset({"MEMORY.md"}))
        await wait_for(pilot, lambda: "oat milk" in rendered.source)
        await settle(pilot)
        assert rendered.visual is not shown  # an edit is shown anew
        assert "Sam prefers oat milk now." in "\n".join(
            strip.text for strip in rendered.render_lines(rendered.region.reset_offset)
        )


async def test_a_file_too_long_to_render_opens_as_source_and_v_renders_it_anyway(
    make_app: Callable[..., ClawmemApp],
) -> None:
    # Rendering a file past the pane's limit held the app up to 444 ms (bench/RESULTS.md §3): not
    # at every arrow key through the tree, but when the person asks for it.
    from clawmem.tui.panes.memory import RENDER_MAX_LINES

    app = make_app()
    long_rel = "memory/notes/long.md"
    long_md = app.engine.workspace / long_rel
    long_md.parent.mkdir(parents=True, exist_ok=True)
    long_md.write_text(
        "# Long\n\n" + "".join(f"- Item {i} of the long list.\n" for i in range(RENDER_MAX_LINES)), "utf-8"
    )
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        memory = app.query_one(MemoryPane)
        switcher = app.query_one("#memory-view", ContentSwitcher)
        view = app.query_one("#memory-markdown", MarkdownView)
        memory.open(long_rel, None)
        await settle(pilot)
        assert switcher.current == "memory-source"  # too long: source, unasked
        assert "v renders it" in str(app.query_one("#memory-file-header", Static).render())
        assert "Item 3 of" not in view.source
        memory.open("MEMORY.md", None)
        await settle(pilot)
        assert switcher.current == "memory-rendered"  # the person's choice was kept for the next file
        memory.open(long_rel, None)
        await settle(pilot)
        app.query_one("#memory-tree").focus()
        await pilot.press("v")
        await settle(pilot)
        assert switcher.current == "memory-rendered" and "Item 3 of the long list." in view.source
        assert "v renders it" not in str(app.query_one("#memory-file-header", Static).render())
        await pilot.press("v")
        await settle(pilot)
        assert switcher.current == "memory-source"


async def test_a_search_while_the_first_pass_indexes_the_text_answers_at_once_then_again(
    make_app: Callable[..., ClawmemApp],
) -> None:
    # The first search typed into a never-indexed workspace waited for the whole text pass
    # (8-13 s on a real workspace, bench/RESULTS.md §3); it now says so and the results follow.
    from clawmem.engine.index.lock import ReindexLock
    from clawmem.engine.search.service import TEXT_PENDING
    from clawmem.tui.messages import IndexChanged

    app = make_app()
    app.engine.reset()  # a workspace never indexed (the fixture's home comes indexed)
    assert app.engine.stored_identity() is None
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(SearchPane)
        with ReindexLock(app.engine.settings.agent_dir / "reindex.lock"):  # the first pass, running
            pane.search_for("staging deploy")
            await wait_for(pilot, lambda: pane.response is not None, timeout=5)
            assert pane.response is not None and TEXT_PENDING in pane.response.warnings
            assert "being built" in str(app.query_one("#search-summary", Static).render())
        app.engine.sync(embed=False)  # the pass's text is in, and it says so
        first = pane.response
        app.post_message(IndexChanged(frozenset()))
        await wait_for(pilot, lambda: pane.response is not first and bool(pane.response.results))
        assert TEXT_PENDING not in pane.response.warnings


async def test_a_key_marks_the_app_in_use_and_a_mouse_move_does_not(make_app: Callable[..., ClawmemApp]) -> None:
    # While someone uses the app an indexing pass leaves its thread a core (thread_budget.py).
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        person = app.engine.runtime.foreground
        assert not person.active()  # starting the app and filling its panes is not use
        await pilot.hover("#status-bar")
        assert not person.active()
        await pilot.press("3")
        assert person.active()


async def test_progress_repaints_the_status_line_without_laying_out_the_screen(
    make_app: Callable[..., ClawmemApp],
) -> None:
    # A layout is of the whole screen; ten progress messages a second made one each, 80-140 ms
    # apiece beside an embedding pass on a real workspace (bench/RESULTS.md §3).
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        layouts = [0]
        real = screen._refresh_layout

        def counted(*args: object, **kwargs: object) -> None:
            layouts[0] += 1
            real(*args, **kwargs)  # type: ignore[arg-type]

        screen._refresh_layout = counted  # type: ignore[method-assign]
        label = app.query_one("#status-phase", Label)
        for done in (100, 200, 12_300):
            app.post_message(IndexProgress("lines", done, 16_136, seconds_left=90))
            await settle(pilot)
            assert f"lines of multi-line chunks {done:,}/16,136" in str(label.content)
        assert layouts[0] == 0
        assert "embedding lines 12,300/16,136" in app.status_bar.activity


async def test_a_long_file_fills_in_batches_in_order_and_a_reload_keeps_the_place(
    make_app: Callable[..., ClawmemApp],
) -> None:
    """More entries than one batch: the table ends with every entry in file order, the entry at
    the opened line selected; an external edit to one entry replaces that row only and leaves the
    source cursor where the reader was."""
    from clawmem.tui.panes.memory import ENTRY_BATCH

    count = ENTRY_BATCH * 3 + 17
    app = make_app()
    memory_md = app.engine.workspace / "MEMORY.md"

    def text(edited: int | None = None) -> str:
        rows = [f"- Decision {i}: keep note {i}." if i != edited else f"- Decision {i}: CHANGED." for i in range(count)]
        return "# Long-Term Memory\n\n" + "\n".join(rows) + "\n"

    memory_md.write_text(text(), encoding="utf-8")
    target = count - 5  # Decision i is on line i + 3
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        memory = app.query_one(MemoryPane)
        memory.open("MEMORY.md", target + 3)
        table = app.query_one("#memory-entries", DataTable)
        assert await wait_for(pilot, lambda: table.row_count == count, timeout=30)
        await settle(pilot)
        lines = [int(c.plain.split("–")[0]) for c in table.get_column("lines")]
        assert lines == list(range(3, count + 3))
        assert table.cursor_row == target
        assert f"Decision {target}:" in table.get_row_at(table.cursor_row)[-1].plain
        source = app.query_one("#memory-source", TextArea)
        assert source.cursor_location[0] == target + 2

        keys_before = {str(r.value) for r in table.rows}
        memory_md.write_text(text(edited=10), encoding="utf-8")
        memory.refresh_from_engine(frozenset({"MEMORY.md"}))
        assert await wait_for(pilot, lambda: {str(r.value) for r in table.rows} != keys_before, timeout=30)
        await settle(pilot)
        assert memory.current == "MEMORY.md"  # the rebuilt file tree keeps the open file selected
        changed = keys_before ^ {str(r.value) for r in table.rows}
        assert len(changed) == 2 and all(k.startswith("13:") for k in changed)  # one row out, one in
        assert table.row_count == count
        assert source.cursor_location[0] == target + 2
        assert "CHANGED" in source.text


async def test_results_waiting_for_their_lines_get_them_first_and_the_search_refreshes(
    make_app: Callable[..., ClawmemApp],
) -> None:
    """The line pass has not reached the results shown: the summary says their scores will move,
    the breakdown says the best line is not computed yet; the pass embeds their lines first and
    the shown search is run again when they land (engine/index/line_requests.py)."""
    app = make_app()
    conn = app.engine.store.conn()
    with conn:  # the chunk vectors stay; every line vector is still to be made
        conn.execute("DELETE FROM memory_index_line_vectors")
        conn.execute("DELETE FROM memory_index_meta WHERE key = 'line_vectors_done'")
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await pilot.press(*"why did the staging deploy fail")
        await pilot.press("enter")
        await settle(pilot)
        pane = app.query_one(SearchPane)
        assert pane.response is not None
        waiting = [h.chunk_id for h in pane.response.results if h.breakdown.line_pending]
        assert waiting, [(h.path, h.start_line) for h in pane.response.results]
        assert "no best line yet" in str(app.query_one("#search-summary").content)
        assert len(app.engine.index.line_requests) == len(waiting)  # asked for
        shown = app.query_one("#search-results", DataTable)
        shown.move_cursor(row=next(i for i, h in enumerate(pane.response.results) if h.breakdown.line_pending))
        await settle(pilot)
        parts = app.query_one(BreakdownPanel).content.renderables  # type: ignore[union-attr]
        words = " ".join(getattr(part, "plain", "") for part in parts)
        assert "best line not computed yet" in words
        app.start_indexing()
        await wait_for(
            pilot,
            lambda: (
                pane.response is not None
                and not any(h.breakdown.line_pending for h in pane.response.results)
                and any(h.breakdown.line is not None for h in pane.response.results)
            ),
            timeout=60.0,
        )
        assert "no best line yet" not in str(app.query_one("#search-summary").content)
