"""The supersessions agents proposed (MCP ``supersede_propose``), for the person to decide: each
with the old entry, the newer one and the agent's reason. ``a`` accepts the highlighted one (the
same checked write as ``clawmem supersede --accept``), ``r`` rejects it, Escape closes. Returns
("accept" | "reject", proposal id) or None."""

from __future__ import annotations

from typing import ClassVar

from clawmem.engine.curation.service import SupersedeProposal
from clawmem.engine.text_clip import clip_cells_flat
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, OptionList, Static
from textual.widgets.option_list import Option

TEXT_CELLS = 80


def proposal_label(p: SupersedeProposal) -> Text:
    return Text.assemble(
        (f"{p.short_id}  ", "bold"),
        (f"{p.older_path}:{p.older_line}  ", "dim"),
        (clip_cells_flat(p.older_text, TEXT_CELLS), "strike"),
        "\n",
        ("  → ", "green"),
        (f"{p.newer_path}:{p.newer_line}  ", "dim"),
        clip_cells_flat(p.newer_text, TEXT_CELLS),
        "\n",
        ("  why: ", "dim"),
        (clip_cells_flat(p.reason or "—", TEXT_CELLS), "italic"),
        (f"  · from {p.origin_class}", "dim"),
    )


class ProposalsModal(ModalScreen[tuple[str, str] | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "decide('accept')", "Accept", id="proposals.accept"),
        Binding("r", "decide('reject')", "Reject", id="proposals.reject"),
        Binding("escape", "close", "Close", id="proposals.close"),
    ]

    def __init__(self, proposals: list[SupersedeProposal]) -> None:
        super().__init__()
        self.proposals = proposals

    def compose(self) -> ComposeResult:
        with Vertical(id="proposals-dialog"):
            yield Label(f"Supersessions proposed by agents ({len(self.proposals)} waiting)", id="proposals-title")
            if self.proposals:
                yield OptionList(*(Option(proposal_label(p), id=p.id) for p in self.proposals), id="proposals-list")
            else:
                yield Static("Nothing waits: no agent has proposed a supersession.", id="proposals-none")
            with Horizontal(id="proposals-buttons"):
                yield Button("Accept (a)", id="proposals-accept", variant="warning", disabled=not self.proposals)
                yield Button("Reject (r)", id="proposals-reject", disabled=not self.proposals)
                yield Button("Close (esc)", id="proposals-close")

    def on_mount(self) -> None:
        if self.proposals:
            self.query_one(OptionList).focus()

    def _highlighted(self) -> str | None:
        if not self.proposals:
            return None
        index = self.query_one(OptionList).highlighted
        return self.proposals[index].id if index is not None else None

    def action_decide(self, what: str) -> None:
        ident = self._highlighted()
        if ident is not None:
            self.dismiss((what, ident))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "proposals-close":
            self.dismiss(None)
        else:
            self.action_decide("accept" if event.button.id == "proposals-accept" else "reject")

    def action_close(self) -> None:
        self.dismiss(None)
