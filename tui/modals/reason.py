"""Ask for a one-line reason before a refusal (rejecting a Dreaming proposal): Enter confirms,
Escape cancels. Returns the reason (may be empty) or None when cancelled."""

from __future__ import annotations

from typing import ClassVar

from clawmem.tui.panes.pane import clawmem_app
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


class ReasonModal(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="reason.cancel"),
    ]

    def __init__(
        self,
        title: str,
        body: str,
        *,
        yes: str = "OK",
        placeholder: str = "Why? (optional, kept with it)",
        max_length: int = 500,
    ) -> None:
        super().__init__()
        self.title_text, self.body, self.yes = title, body, yes
        self.placeholder, self.max_length = placeholder, max_length

    def compose(self) -> ComposeResult:
        with Vertical(id="reason-dialog"):
            yield Label(self.title_text, id="reason-title")
            yield Static(self.body, id="reason-body")
            yield Input(placeholder=self.placeholder, id="reason-input", max_length=self.max_length)
            with Horizontal(id="reason-buttons"):
                yield Button(f"{self.yes} (enter)", id="reason-yes", variant="error")
                yield Button("Cancel (esc)", id="reason-no")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = clawmem_app(self).engine.settings.tui.cursor_blink
        field.focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(self.query_one(Input).value.strip() if event.button.id == "reason-yes" else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
