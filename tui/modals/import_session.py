"""Import a JSONL transcript: a path, an optional session-memory note, and the one-line error in
place when the file is refused (nothing is half-imported). Returns the ImportResult, or None."""

from __future__ import annotations

from typing import ClassVar

from clawmem.engine.sessions.service import ImportResult
from clawmem.tui.panes.pane import clawmem_app, engine_worker
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static


class ImportSessionModal(ModalScreen[ImportResult | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="import.cancel"),
    ]

    def __init__(self, path: str = "") -> None:
        super().__init__()
        self.initial_path = path
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-import-dialog"):
            yield Label("Import a session transcript", id="sessions-import-title")
            yield Static(
                Text.assemble(
                    "A JSONL file: one JSON object per line with session_id, session_key, kind, channel, sender, "
                    "role, text, network and ts. Every line is checked first; a bad line imports nothing. Same as ",
                    ("clawmem session import FILE.jsonl", "bold"),
                    ".",
                ),
                id="sessions-import-help",
            )
            yield Input(self.initial_path, placeholder="path to FILE.jsonl (~ works)", id="sessions-import-path")
            yield Checkbox("Also write the session-memory note (interactive sessions)", id="sessions-import-note")
            yield Static("", id="sessions-import-error")
            with Horizontal(id="sessions-import-buttons"):
                yield Button("Import (enter)", id="sessions-import-yes", variant="primary")
                yield Button("Cancel (esc)", id="sessions-import-no")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = clawmem_app(self).engine.settings.tui.cursor_blink
        field.focus()

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self._start()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "sessions-import-yes":
            self._start()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def _start(self) -> None:
        path = self.query_one(Input).value.strip()
        error = self.query_one("#sessions-import-error", Static)
        if not path:
            error.update(Text("✗ give the path of a JSONL file", style="bold red"))
            return
        if self.busy:
            return
        self.busy = True
        error.update(Text(f"Importing {path}…", style="italic"))
        self._import(path, self.query_one(Checkbox).value)

    def _import(self, path: str, note: bool) -> None:
        sessions = clawmem_app(self).engine.sessions
        engine_worker(
            self,
            lambda: sessions.import_file(path, note=note),
            self.dismiss,
            group="sessions-import",
            failure="the import failed",
            title="sessions",
            on_error=lambda exc: self._failed(str(exc)),
            notify=False,  # the dialog shows the error under the path
        )

    def _failed(self, message: str) -> None:
        self.busy = False
        self.query_one("#sessions-import-error", Static).update(Text(f"✗ {message}", style="bold red"))
        self.query_one(Input).focus()
