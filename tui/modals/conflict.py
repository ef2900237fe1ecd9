"""The editor's conflict dialog: the file changed on disk since it was opened.

Shows what changed between the disk version and the user's version (a unified diff with +/-
markers) and lets the user keep theirs, take the disk's, or cancel. Whichever version is not
kept is saved as a conflict copy, so neither is ever lost.
"""

from __future__ import annotations

from typing import ClassVar

from clawmem.tui.widgets.diff_view import unified_diff
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class ConflictModal(ModalScreen[str]):
    """Returns "mine", "disk" or "cancel"."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "choose('mine')", "Keep mine", id="conflict.mine"),
        Binding("d", "choose('disk')", "Take disk's", id="conflict.disk"),
        Binding("escape,c", "choose('cancel')", "Cancel", id="conflict.cancel"),
    ]

    def __init__(self, rel: str, mine: str, disk: str) -> None:
        super().__init__()
        self.rel = rel
        self.mine = mine
        self.disk = disk

    def compose(self) -> ComposeResult:
        with Vertical(id="conflict-dialog"):
            yield Label(f"{self.rel} changed on disk since you opened it", id="conflict-title")
            yield Static(
                "Nothing has been written. Below: what your version changes compared with the file on disk. "
                "The version you do not keep is saved under conflicts/ in the clawmem home.",
                id="conflict-help",
            )
            with VerticalScroll(id="conflict-diff"):
                yield Static(unified_diff(self.disk, self.mine, before_name="on disk", after_name="yours"))
            with Horizontal(id="conflict-buttons"):
                yield Button("Keep mine (m)", id="mine", variant="warning")
                yield Button("Take disk's (d)", id="disk", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "cancel")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
