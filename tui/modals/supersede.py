"""Pick the entry that replaced another ("superseded by…"): the candidates a search for the old
entry's words found (engine/curation/successors.py), or a ``PATH:LINE`` typed in. Enter on a
candidate or in the field confirms, Escape cancels. Returns the chosen ``PATH:LINE`` or None."""

from __future__ import annotations

from typing import ClassVar

from clawmem.engine.curation.successors import Successor
from clawmem.engine.text_clip import clip_cells_flat
from clawmem.tui.panes.pane import clawmem_app
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

LABEL_CELLS = 60


def successor_label(s: Successor) -> Text:
    return Text.assemble(
        (f"{s.date or 'undated':<10} ", "cyan"),
        (f"{s.ref:<26} ", "dim"),
        clip_cells_flat(s.text, LABEL_CELLS),
    )


class SupersedeModal(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="supersede.cancel"),
    ]

    def __init__(self, older_ref: str, older_text: str, candidates: list[Successor]) -> None:
        super().__init__()
        self.older_ref, self.older_text, self.candidates = older_ref, older_text, candidates

    def compose(self) -> ComposeResult:
        with Vertical(id="supersede-dialog"):
            yield Label(f"Mark {self.older_ref} superseded by…", id="supersede-title")
            yield Static(Text(clip_cells_flat(self.older_text, 2 * LABEL_CELLS), style="strike"), id="supersede-older")
            if self.candidates:
                yield OptionList(
                    *(Option(successor_label(s), id=s.ref) for s in self.candidates), id="supersede-candidates"
                )
            else:
                yield Static("No other entry reads like this one: type its PATH:LINE.", id="supersede-none")
            yield Input(placeholder="or the newer entry's PATH:LINE (a citation works too)", id="supersede-ref")
            with Horizontal(id="supersede-buttons"):
                yield Button("Mark superseded (enter)", id="supersede-yes", variant="warning")
                yield Button("Cancel (esc)", id="supersede-no")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = clawmem_app(self).engine.settings.tui.cursor_blink
        if self.candidates:
            self.query_one(OptionList).focus()
        else:
            field.focus()

    def _chosen(self) -> str | None:
        typed = self.query_one(Input).value.strip()
        if typed:
            return typed
        if not self.candidates:
            return None
        index = self.query_one(OptionList).highlighted
        return self.candidates[index].ref if index is not None else None

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.dismiss(self._chosen())

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(self._chosen() if event.button.id == "supersede-yes" else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
