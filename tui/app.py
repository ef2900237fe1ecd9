"""The clawmem Textual app: panes over one in-process MemoryEngine.

Every engine call runs in a thread worker (``Pane.run_engine``) and hands its result to the app's
thread; widgets are only touched there, and every failure reaches ``_engine_failed``, the one
place that turns it into a notification. At start the app brings the index up to date (text first, so keyword
search is complete in seconds), then embeds in the background with progress in the status bar,
and watches the workspace so edits made elsewhere show up within two seconds.
"""

from __future__ import annotations

import difflib
import gc
import importlib
import time
from pathlib import Path
from typing import ClassVar, TypeVar

from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.index.schedule import IndexRun, PassEvents, run_pass
from clawmem.engine.index.watcher import WorkspaceWatcher
from clawmem.tui.collector import IDLE_S, IdleCollector
from clawmem.tui.commands import ClawmemCommands
from clawmem.tui.messages import EditFile, EngineFailed, FilesChanged, IndexChanged, IndexProgress, OpenLocation
from clawmem.tui.panes.context import ContextPane
from clawmem.tui.panes.dreams import DreamsPane
from clawmem.tui.panes.editor import EditorPane
from clawmem.tui.panes.forget import ForgetPane
from clawmem.tui.panes.intents import IntentsPane
from clawmem.tui.panes.memory import MemoryPane
from clawmem.tui.panes.pane import Pane
from clawmem.tui.panes.search import SearchPane
from clawmem.tui.panes.sessions import SessionsPane
from clawmem.tui.panes.status import StatusPane
from clawmem.tui.widgets.status_bar import StatusBar
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.timer import Timer
from textual.widgets import Footer, Input, TabbedContent, TabPane, TextArea
from textual.worker import WorkerState

# (tab id, title, key, pane class) — adding a pane is one line here plus its module.
PANES: list[tuple[str, str, str, type[Pane]]] = [
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
P = TypeVar("P", bound=Pane)
PROGRESS_INTERVAL_S = 0.1  # the index worker posts progress at most this often within a phase
USE_EVENTS = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)  # see on_event
COLLECT_POLL_S = 0.1  # how often the app looks whether a full collection is due and may run now
FILL_POLL_S = 0.05  # how often the app looks whether the panes' first fill is done (see _freeze_after_first_fill)


def known_binding_ids() -> set[str]:
    """Every binding id a user can rebind: those of the app, its panes, widgets and modals."""
    import pkgutil

    from clawmem.tui import modals

    for module in pkgutil.iter_modules(modals.__path__):  # modals are imported when opened
        importlib.import_module(f"{modals.__name__}.{module.name}")
    ids: set[str] = set()
    stack: list[type] = [DOMNode]
    seen: set[type] = set()
    while stack:
        cls = stack.pop()
        for binding in cls.__dict__.get("BINDINGS", ()):
            if isinstance(binding, Binding) and binding.id:
                ids.add(binding.id)
        subclasses: list[type] = cls.__subclasses__()
        for child in subclasses:
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return ids


def _unknown_binding(binding_id: str) -> str:
    close = difflib.get_close_matches(binding_id, sorted(known_binding_ids()), n=1)
    return f"unknown binding id {binding_id!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


class ClawmemApp(App[int]):
    """Inspect and curate an agent's long-term memory."""

    TITLE = "clawmem"
    # One stylesheet for the shell, one per pane (each pane owns its styles).
    CSS_PATH: ClassVar = sorted(
        (Path(__file__).parent / "styles").glob("*.tcss"), key=lambda p: (Path(p).name != "app.tcss", Path(p).name)
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
        self._watcher: WorkspaceWatcher | None = None
        self.panes: dict[str, Pane] = {}  # by tab id, once mounted
        self._run: IndexRun | None = None
        self._fill_poll: Timer | None = None  # until the panes' first fill is frozen (_freeze_after_first_fill)
        self.collector = IdleCollector(self.quiet_for)  # full collections at idle moments (tui/collector.py)
        self._embed_paused = False  # the user cancelled embedding: file changes only sync text
        self.theme = engine.settings.tui.theme if engine.settings.tui.theme else "textual-dark"

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with TabbedContent(id="panes", initial="memory"):
            for pane_id, title, key, cls in PANES:
                with TabPane(f"{self.key_for(f'pane.{pane_id}', key)} {title}", id=pane_id):
                    yield cls()
        yield StatusBar(id="status-bar")
        yield Footer()

    def on_mount(self) -> None:
        keymap = dict(self.engine.settings.tui.keymap)
        if keymap:
            self.set_keymap(keymap)
            unknown = sorted(set(keymap) - known_binding_ids())
            if unknown:
                self.notify(
                    "; ".join(_unknown_binding(u) for u in unknown)
                    + " — not a binding id, so it changes nothing (F1 lists the ids).",
                    title="[tui.keymap] in config.toml",
                    severity="warning",
                    timeout=15,
                )
        if not self.engine.settings.tui.cursor_blink:
            for widget in (*self.query(Input), *self.query(TextArea)):
                widget.cursor_blink = False
        main = self.screen
        self.status_bar = main.query_one(StatusBar)
        self.panes = {pane_id: main.query_one(cls) for pane_id, _, _, cls in PANES}
        self.status_bar.workspace = str(self.engine.workspace)
        self.status_bar.shared = self.engine.shared_index or ""
        if self.engine.openclaw is not None:
            state_dir = str(self.engine.openclaw.found.state_dir)
            self.status_bar.openclaw = state_dir
            self.sub_title = f"OpenClaw home {state_dir} (its databases are read-only)"
        main.query_one("#memory-tree").focus()
        if self._background_index:
            self.start_indexing()
        if self._watch if self._watch is not None else self.engine.settings.tui.watch:
            self._watcher = self.engine.watch(self._on_disk_change)
        self.collector.start()
        self.set_interval(COLLECT_POLL_S, self.collector.tick, name="idle-collection")
        self.call_after_refresh(self._freeze_startup_objects)

    def _freeze_startup_objects(self) -> None:
        """Put what start-up made (modules, the engine, the panes' ~80k widget objects: ~160k
        tracked in all) out of the cyclic collector's reach for the app's life. A full collection
        walked every one of them and stopped the event loop for 90–190 ms while an index pass
        allocated; with them frozen the longest is ~35 ms (bench/app_while_indexing.py,
        bench/RESULTS.md §3). Undone at unmount, so nothing frozen outlives the app.

        The panes fill after this first refresh, in their workers: on a real workspace that is
        another ~90k objects (the tree's nodes, the tables' rows, their rendered strips), which a
        full collection walked too (a 139 ms pause). So the app freezes once more, the first time
        no pane's worker is pending or running (``_freeze_after_first_fill``)."""
        self.collector.freeze()
        self._fill_poll = self.set_interval(FILL_POLL_S, self._freeze_after_first_fill, name="first-fill")

    def _freeze_after_first_fill(self) -> None:
        """The second freeze: once every pane has shown what its first fill found. From then on
        the collector freezes what each of its full collections leaves, and sweeps the frozen
        objects for dead cycles once they grew by a quarter (tui/collector.py)."""
        if self._panes_at_work():
            return
        if self._fill_poll is not None:
            self._fill_poll.stop()
            self._fill_poll = None
        self.collector.freeze()

    def quiet_for(self) -> float:
        """Seconds without a key, click or scroll (or a search), and 0 while a pane's worker is at
        work: how long a full collection's pause would have stopped nobody (tui/collector.py)."""
        return 0.0 if self._panes_at_work() else self.engine.quiet_for()

    def nobody_using(self) -> bool:
        """No key, click or scroll (nor a search) for ``IDLE_S`` and no pane worker at work."""
        return self.quiet_for() >= IDLE_S

    def _panes_at_work(self) -> bool:
        """A pane's worker (not the index pass's) is pending or running."""
        return any(w.group != "index" and w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in self.workers)

    def on_unmount(self) -> None:
        self.collector.stop()
        gc.unfreeze()
        if self._run is not None:
            self._run.cancel.set()
            self._run.stop_embedding.set()
        if self._watcher is not None:
            self._watcher.stop()

    async def on_event(self, event: events.Event) -> None:
        """A key, a click or a scroll: someone is using the app, so an indexing pass leaves a core
        to its thread (engine/index/thread_budget.py) and a full garbage collection waits for a
        pause (tui/collector.py). Mouse moves are not use."""
        if isinstance(event, USE_EVENTS) and not event.is_forwarded:
            self.engine.in_use()
        await super().on_event(event)

    def pane(self, cls: type[P]) -> P:
        """The mounted pane of class ``cls``, typed (``panes`` is keyed by tab id)."""
        return next(p for p in self.panes.values() if isinstance(p, cls))

    def key_for(self, binding_id: str, default: str) -> str:
        """The key of a binding as the footer shows it (a rebinding in ``[tui.keymap]`` wins)."""
        keys = dict(self.engine.settings.tui.keymap).get(binding_id, default)
        first = next((k.strip() for k in keys.split(",") if k.strip()), default)
        return self.get_key_display(Binding(first, ""))

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
        from clawmem.tui.modals.help import HelpScreen

        pane = self.screen_stack[0].query_one(TabbedContent).active or "memory"
        self.push_screen(HelpScreen(pane, self))

    # ------------------------------------------------------------------ background indexing

    def start_indexing(self, *, force: bool = False, only: frozenset[str] | None = None) -> None:
        """Index (``only`` these files, or all; ``force`` rebuilds), then embed in the background.

        One worker does all of it. A request that arrives while it runs is queued for it: an
        embedding pass stops after its current text, the new files are synced, and embedding
        resumes where it stopped — a file change never cancels anything. A full request
        (``only`` is None: the user's reindex or rebuild) also resumes embedding that the user
        cancelled; a file change after such a cancel only syncs the text.
        """
        only = only or None  # an empty set means every file, as before
        if only is None:
            self._embed_paused = False
        embed = not self._embed_paused
        if self._run is not None and self._run.request(force, only, embed=embed):
            return
        run = IndexRun(queue=[(force, only)], embed=embed)
        self._run = run
        self._index_worker(run)

    def cancel_indexing(self) -> bool:
        """Cancel the running index or embedding pass; False when nothing is running."""
        if self._run is None or not self._run.cancel_all():
            return False
        self._embed_paused = True
        return True

    def action_cancel_indexing(self) -> None:
        """Cancel indexing, or say that nothing is running."""
        if not self.cancel_indexing():
            self.notify("Nothing is running.", title="status", timeout=3)

    @property
    def indexing(self) -> bool:
        """True while the background index or embedding worker runs."""
        run = self._run
        return run is not None and not run.finished

    @work(thread=True, group="index", exit_on_error=False)
    def _index_worker(self, run: IndexRun) -> None:
        """One pass of engine/index/schedule.py on a worker thread; its events become messages."""
        engine = self.engine
        post = self.post_message
        last_phase, last_at = [""], [0.0]  # the last progress posted (mutable from the closure)

        def progress(phase: str, done: int, total: int, seconds_left: float | None = None) -> None:
            if run.cancel.is_set():  # after a cancel, "Cancelling…" stays until the worker stops
                return
            # At most ten updates a second within a phase (its first and last always): one per
            # embedded text would fill the app's queue faster than a slow terminal drains it, and
            # a watcher's FilesChanged waits behind every message queued before it.
            now = time.monotonic()
            if phase == last_phase[0] and done < total and now - last_at[0] < PROGRESS_INTERVAL_S:
                return
            last_phase[0], last_at[0] = phase, now
            post(IndexProgress(phase, done, total, seconds_left=seconds_left))

        def synced(paths: frozenset[str]) -> None:
            post(IndexChanged(paths))

        def warning(text: str) -> None:
            post(EngineFailed(text, "index"))

        events = PassEvents(progress=progress, synced=synced, warning=warning)
        try:
            if not engine.provider_loaded:
                post(IndexProgress("model", 0, 0, "loading the embedding model…"))
            engine.load_model()  # now, in this worker: the first search should not wait for it
            outcome = run_pass(engine.index, run, events)
            post(IndexProgress(outcome.phase, outcome.done, outcome.total, outcome.detail))
        except ClawmemError as exc:
            if run.cancel.is_set():  # a cancelled rebuild says so with an error; it is not a failure
                step = "embed" if last_phase[0] in ("embed", "lines", "wait") else "text"
                post(IndexProgress("cancelled", 0, 0, step))
                return
            post(IndexProgress("failed", 0, 0, str(exc)))
            post(EngineFailed(str(exc), "index"))
        except Exception as exc:  # never let a worker take the app down
            post(IndexProgress("failed", 0, 0, str(exc)))
            post(EngineFailed(f"indexing failed: {exc}", "index"))
        finally:
            with run.lock:
                run.finished = True

    def _on_disk_change(self, paths: set[str]) -> None:
        """Called on the watcher's thread: hand over to the app thread."""
        self.post_message(FilesChanged(frozenset(paths)))

    # ------------------------------------------------------------------ message routing

    @on(IndexProgress)
    def _index_progress(self, message: IndexProgress) -> None:
        try:
            self.status_bar.progress(message.phase, message.done, message.total, message.detail, message.seconds_left)
            self.pane(StatusPane).show_progress(message)
            if message.phase == "lines" and message.done:
                self.pane(SearchPane).lines_embedded()
        except NoMatches:
            pass  # the app is shutting down: its widgets are already gone

    @on(IndexChanged)
    def _index_changed(self, message: IndexChanged) -> None:
        if not self.is_running:
            return
        try:
            for pane in self.panes.values():
                pane.refresh_from_engine(message.paths)
            self.pane(SearchPane).index_changed()
        except NoMatches:
            pass  # shutting down

    @on(FilesChanged)
    def _files_changed(self, message: FilesChanged) -> None:
        self.pane(EditorPane).files_changed(message.paths)
        self.start_indexing(only=message.paths)

    @on(OpenLocation)
    def _open_location(self, message: OpenLocation) -> None:
        self.action_show_pane("memory")
        self.pane(MemoryPane).open(message.path, message.line)

    @on(EditFile)
    def _edit_file(self, message: EditFile) -> None:
        self.screen_stack[0].query_one(TabbedContent).active = "editor"
        self.pane(EditorPane).open(message.path, message.line)

    @on(EngineFailed)
    def _engine_failed(self, message: EngineFailed) -> None:
        """Every failed engine call of every pane and modal, and the index worker's warnings, end here."""
        self.notify(message.message, title=message.title, severity="error" if message.title != "index" else "warning")

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane_id = event.pane.id or ""
        pane = self.panes.get(pane_id)
        if pane is not None and pane_id != "memory":
            pane.refresh_from_engine(frozenset())
