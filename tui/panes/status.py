"""Status pane: everything ``clawmem status --deep`` knows, plus reindex and force-rebuild
actions with a progress bar that Escape cancels (the old index stays in place). Opened on an
OpenClaw home (``clawmem --openclaw``), it also shows that home as ``status --openclaw`` does:
what was found, each database's schema, the agent's own index against the files with the
command that fixes each finding, and what could not be read."""

from __future__ import annotations

from typing import ClassVar

from clawmem.engine.index.time_left import time_left_text
from clawmem.engine.openclaw import report_lines
from clawmem.engine.openclaw.home import OpenClawStatus
from clawmem.engine.status import StatusReport, build_status
from clawmem.engine.status_lines import status_lines
from clawmem.tui.messages import IndexProgress
from clawmem.tui.panes.pane import Pane
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Label, ProgressBar, Static

PHASE_LABEL = {
    "model": "Loading the embedding model",
    "text": "Indexing text",
    "publish": "Publishing the rebuilt index",
    "embed": "Embedding",
    "lines": "Embedding lines of multi-line chunks",
}
WAITING = "Waiting for another embedding pass (another clawmem?) to finish"


class StatusPane(Pane):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "reindex", "Reindex", id="status.reindex", tooltip="Index changed files, then embed."),
        Binding(
            "f",
            "rebuild",
            "Force rebuild",
            id="status.rebuild",
            tooltip="Rebuild into a shadow index; the current one serves searches meanwhile.",
        ),
        Binding("d", "deep", "Deep probe", id="status.deep", tooltip="Probe the model and the vector store."),
        Binding("escape", "cancel", "Cancel", id="status.cancel", tooltip="Cancel indexing or embedding."),
    ]
    HELP = "status"
    NOTIFY_TITLE = "status"

    def __init__(self) -> None:
        super().__init__(id="status-pane")
        self._deep = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="status-progress-row"):
            yield Label("Idle", id="status-phase")
            yield ProgressBar(id="status-progress", show_eta=False)
        with VerticalScroll(id="status-scroll", can_focus=True):
            yield Static("Loading status…", id="status-lines")

    def on_mount(self) -> None:
        self.query_one(ProgressBar).update(total=1, progress=0)
        self.query_one("#status-scroll").can_focus = True

    def refresh_from_engine(self, paths: frozenset[str]) -> None:
        self._load(self._deep)

    def _load(self, deep: bool) -> None:
        def read() -> tuple[StatusReport, OpenClawStatus | None]:
            home = self.engine.openclaw
            return build_status(self.engine.index, deep=deep), (home.status() if home is not None else None)

        self.run_engine(read, lambda both: self._show(*both), group="status", failure="status failed")

    def _show(self, report: StatusReport, openclaw: OpenClawStatus | None = None) -> None:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        for label, value in status_lines(report):
            style = ""
            if label == "Issues" and value != "none":
                style = "yellow"
            if label == "Fix":
                style = "bold yellow"
            grid.add_row(label, Text(value, style=style))
        if openclaw is not None:
            grid.add_row("", "")
            note = Text("read in place; clawmem writes none of it", style="dim")
            grid.add_row(Text("OpenClaw", style="bold underline"), note)
            finding = False
            for label, value in report_lines.status_lines(openclaw, deep=self._deep):
                finding = label == "Findings" or (finding and label == "")
                fixable = finding and "fix:" in value
                grid.add_row(label, Text(value, style="yellow" if fixable else ""))
            for n, problem in enumerate(openclaw.problems):
                grid.add_row("Not read" if n == 0 else "", Text(problem, style="bold yellow"))
        self.query_one("#status-lines", Static).update(grid)
        self.clawmem_app.status_bar.mode = f"{report.search_mode} · {report.chunks:,} chunks"

    def _say(self, content: str | Text) -> None:
        """Show ``content`` on the progress line. Its row is one line of fixed height and the label
        takes the row's free width (app.tcss), so new text never changes a size: it is repainted,
        not laid out. A layout is of the whole screen: ~12 ms on a real workspace's panes, and with
        both cores embedding 80–140 ms, ten times a second while the index was built
        (bench/RESULTS.md §3)."""
        self.query_one("#status-phase", Label).update(content, layout=False)

    def show_progress(self, message: IndexProgress) -> None:
        bar = self.query_one(ProgressBar)
        if message.phase in PHASE_LABEL:
            total = max(message.total, 1)
            left = time_left_text(message.seconds_left)
            self._say(
                f"{PHASE_LABEL[message.phase]} {message.done:,}/{message.total:,}"
                + (f" · {left}" if left else "")
                + "  (Esc cancels)"
                if message.total
                else PHASE_LABEL[message.phase]
            )
            bar.update(total=total, progress=message.done)
        elif message.phase == "wait":
            self._say(f"{WAITING}  (Esc cancels)")
        elif message.phase == "done":
            self._say("Index up to date")
            bar.update(total=1, progress=1)
            self._load(self._deep)
        elif message.phase == "paused":
            missing = message.total - message.done
            self._say(
                f"Embedding paused: {missing:,} of {message.total:,} chunks have no vector yet"
                f" — {self._reindex_key()} resumes"
                if missing
                else "Index up to date"
            )
            bar.update(total=max(message.total, 1), progress=message.done)
            self._load(self._deep)
        elif message.phase == "cancelled":
            self._say(
                f"Embedding cancelled — the vectors made so far are kept; {self._reindex_key()} resumes"
                if message.detail == "embed"
                else "Cancelled — the previous index is unchanged"
            )
            self._load(self._deep)
        elif message.phase == "failed":
            self._say(Text(f"Failed: {message.detail}", style="red"))

    def _reindex_key(self) -> str:
        """The key that reindexes now (the user may have rebound it)."""
        return self.clawmem_app.key_for("status.reindex", "r")

    def action_reindex(self) -> None:
        self.clawmem_app.start_indexing()

    def action_rebuild(self) -> None:
        self.clawmem_app.start_indexing(force=True)

    def action_deep(self) -> None:
        self._deep = True
        self.query_one("#status-lines", Static).update("Probing the model and the vector store…")
        self._load(True)

    def action_cancel(self) -> None:
        if self.clawmem_app.cancel_indexing():
            self._say("Cancelling…")
        else:
            self.notify("Nothing is running.", title="status", timeout=3)
