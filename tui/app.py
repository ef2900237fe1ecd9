"""The clawmem Textual app: panes over one in-process MemoryEngine.

Every engine call runs in a thread worker and answers with a message; widgets are only touched
on the app's thread. At start the app brings the index up to date (text first, so keyword
search is complete in seconds), then embeds in the background with progress in the status bar,
and watches the workspace so edits made elsewhere show up within two seconds.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Footer, TabbedContent, TabPane

from engine.errors import ClawmemError
from engine.facade import MemoryEngine
from tui.commands import ClawmemCommands
from tui.messages import EditFile, EngineFailed, FilesChanged, IndexChanged, IndexProgress, OpenLocation
from tui.screens.context import ContextPane
from tui.screens.dreams import DreamsPane
from tui.screens.editor import EditorPane
from tui.screens.forget import ForgetPane
from tui.screens.intents import IntentsPane
from tui.screens.memory import MemoryPane
from tui.screens.search import SearchPane
from tui.screens.sessions import SessionsPane
from tui.screens.status import StatusPane
from tui.widgets.status_bar import StatusBar

# (tab id, title, key, pane class) — adding a pane is one line here plus its module.
PANES: list[tuple[str, str, str, type[Widget]]] = [
    ("memory", "Memory", "1", MemoryPane),
    ("editor", "Editor", "2", EditorPane),
    ("search", "Search", "3", SearchPane),
    ("status", "Status", "4", StatusPane),
    ("context", "Context", "5", ContextPane),
    ("dreams", "Dreams", "6", DreamsPane),
    ("intents", "Intents", "7", IntentsPane),
    ("sessions", "Sessions", "8", SessionsPane),
    ("forget", "Forget", "9", ForgetPane),
]


class ClawmemApp(App[int]):
    """Inspect and curate an agent's long-term memory."""

    TITLE = "clawmem"
    # One stylesheet for the shell, one per pane (each pane owns its styles).
    CSS_PATH: ClassVar = sorted(
        (Path(__file__).parent / "styles").glob("*.tcss"), key=lambda p: (p.name != "app.tcss", p.name)
    )
    COMMANDS: ClassVar = App.COMMANDS | {ClawmemCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        *[
            Binding(
                key,
                f"show_pane('{pane}')",
                title,
                show=False,
                id=f"pane.{pane}",
                tooltip=f"Switch to the {title} pane.",
            )
            for pane, title, key, _ in PANES
        ],
        Binding("f1,question_mark", "help", "Help", id="app.help", tooltip="Help for the focused pane."),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", tooltip="Quit clawmem."),
        Binding("ctrl+p", "command_palette", "Commands", id="app.commands", show=False),
    ]

    def __init__(self, engine: MemoryEngine, *, watch: bool | None = None, background_index: bool = True) -> None:
        """``watch=None`` follows the ``tui.watch`` setting; True/False overrides it."""
        super().__init__()
        self.engine = engine
        self._watch = watch
        self._background_index = background_index
        self._watcher = None
        self._cancel_index: threading.Event | None = None
        self.theme = engine.settings.tui.theme if engine.settings.tui.theme else "textual-dark"

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with TabbedContent(id="panes", initial="memory"):
            for pane_id, title, key, cls in PANES:
                with TabPane(f"{key} {title}", id=pane_id):
                    yield cls()
        yield StatusBar(id="status-bar")
        yield Footer()

    def on_mount(self) -> None:
        keymap = dict(self.engine.settings.tui.keymap)
        if keymap:
            self.set_keymap(keymap)
        if not self.engine.settings.tui.cursor_blink:
            for widget in self.query("Input, TextArea"):
                widget.cursor_blink = False  # type: ignore[attr-defined]
        main = self.screen
        self.status_bar = main.query_one(StatusBar)
        self.panes: dict[str, Widget] = {pane_id: main.query_one(cls) for pane_id, _, _, cls in PANES}
        self.status_bar.workspace = str(self.engine.workspace)
        main.query_one("#memory-tree").focus()
        if self._background_index:
            self.start_indexing()
        if self._watch if self._watch is not None else self.engine.settings.tui.watch:
            self._watcher = self.engine.watch(self._on_disk_change)

    def on_unmount(self) -> None:
        if self._cancel_index is not None:
            self._cancel_index.set()
        if self._watcher is not None:
            self._watcher.stop()

    # ------------------------------------------------------------------ actions

    def action_show_pane(self, pane: str) -> None:
        self.screen_stack[0].query_one(TabbedContent).active = pane
        self.call_after_refresh(self._focus_pane, pane)

    def _focus_pane(self, pane: str) -> None:
        tab = self.screen_stack[0].query_one(f"TabPane#{pane}", TabPane)
        target = next((w for w in tab.query("*") if w.focusable), None)
        if target is not None:
            target.focus()

    def run_pane_action(self, pane: str, action: str) -> None:
        """Switch to a pane and run one of its actions (used by the command palette)."""
        self.action_show_pane(pane)
        self.call_after_refresh(self.run_action, action, self.panes[pane])

    def action_help(self) -> None:
        from tui.modals.help import HelpScreen

        pane = self.screen_stack[0].query_one(TabbedContent).active or "memory"
        self.push_screen(HelpScreen(pane, self))

    # ------------------------------------------------------------------ background indexing

    def start_indexing(self, *, force: bool = False, only: frozenset[str] | None = None) -> None:
        if self._cancel_index is not None:
            self._cancel_index.set()
        self._cancel_index = threading.Event()
        self._index_worker(force, only, self._cancel_index)

    def cancel_indexing(self) -> bool:
        if self._cancel_index is not None and not self._cancel_index.is_set():
            self._cancel_index.set()
            return True
        return False

    @work(thread=True, group="index", exit_on_error=False)
    def _index_worker(self, force: bool, only: frozenset[str] | None, cancel: threading.Event) -> None:
        engine = self.engine
        try:
            if not engine.provider_loaded:
                self.post_message(IndexProgress("model", 0, 0, "loading the embedding model…"))
            engine.provider_choice()
            report = engine.sync(
                force=force,
                only=set(only) if only else None,
                embed=False,
                cancel=cancel,
                progress=lambda phase, done, total: self.post_message(IndexProgress(phase, done, total)),
            )
            self.post_message(IndexChanged(frozenset(only or ())))
            for warning in report.warnings:
                self.post_message(EngineFailed(warning, "index"))
            if cancel.is_set():
                self.post_message(IndexProgress("cancelled", 0, 0))
                return
            stats = engine.embed_pending(
                cancel=cancel,
                progress=lambda done, total: self.post_message(IndexProgress("embed", done, total)),
            )
            self.post_message(IndexChanged(frozenset()))
            if cancel.is_set() or (stats is not None and stats.cancelled):
                self.post_message(IndexProgress("cancelled", 0, 0))
            else:
                self.post_message(IndexProgress("done", stats.embedded if stats else 0, stats.pending if stats else 0))
        except ClawmemError as exc:
            self.post_message(IndexProgress("failed", 0, 0, str(exc)))
            self.post_message(EngineFailed(str(exc), "index"))
        except Exception as exc:  # never let a worker take the app down
            self.post_message(IndexProgress("failed", 0, 0, str(exc)))
            self.post_message(EngineFailed(f"indexing failed: {exc}", "index"))

    def _on_disk_change(self, paths: set[str]) -> None:
        """Called on the watcher's thread: hand over to the app thread."""
        self.post_message(FilesChanged(frozenset(paths)))

    # ------------------------------------------------------------------ message routing

    @on(IndexProgress)
    def _index_progress(self, message: IndexProgress) -> None:
        try:
            self.status_bar.progress(message.phase, message.done, message.total, message.detail)
            self.panes["status"].show_progress(message)  # type: ignore[attr-defined]
        except NoMatches:
            pass  # the app is shutting down: its widgets are already gone

    @on(IndexChanged)
    def _index_changed(self, message: IndexChanged) -> None:
        if not self.is_running:
            return
        try:
            for pane in self.panes.values():
                if hasattr(pane, "refresh_from_engine"):
                    pane.refresh_from_engine(message.paths)
            self.panes["search"].index_changed()  # type: ignore[attr-defined]
        except NoMatches:
            pass  # shutting down

    @on(FilesChanged)
    def _files_changed(self, message: FilesChanged) -> None:
        self.panes["editor"].files_changed(message.paths)  # type: ignore[attr-defined]
        self.start_indexing(only=message.paths)

    @on(OpenLocation)
    def _open_location(self, message: OpenLocation) -> None:
        self.action_show_pane("memory")
        self.panes["memory"].open(message.path, message.line)  # type: ignore[attr-defined]

    @on(EditFile)
    def _edit_file(self, message: EditFile) -> None:
        self.screen_stack[0].query_one(TabbedContent).active = "editor"
        self.panes["editor"].open(message.path, message.line)  # type: ignore[attr-defined]

    @on(EngineFailed)
    def _engine_failed(self, message: EngineFailed) -> None:
        self.notify(message.message, title=message.title, severity="error" if message.title != "index" else "warning")

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane_id = event.pane.id or ""
        pane = self.panes.get(pane_id)
        if pane is not None and pane_id != "memory" and hasattr(pane, "refresh_from_engine"):
            pane.refresh_from_engine(frozenset())
