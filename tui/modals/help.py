"""F1 / ?: what the active pane shows and every key that works there (incl. user rebinding)."""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

if TYPE_CHECKING:
    from textual.app import App


def pane_help(pane: str) -> str:
    try:
        return resources.files("clawmem.tui.help").joinpath(f"{pane}.md").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        return f"# {pane.title()}\n"


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1,question_mark,q", "dismiss", "Close", id="help.close")]

    def __init__(self, pane: str, app: App[Any]) -> None:
        super().__init__()
        self.pane = pane
        self.keys = self._keys(app)

    @staticmethod
    def _keys(app: App[Any]) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        table.add_column(style="dim")
        seen: set[str] = set()
        for active in app.screen.active_bindings.values():
            binding = active.binding
            if not binding.description or binding.id in seen:
                continue
            seen.add(binding.id or binding.description)
            table.add_row(app.get_key_display(binding), binding.description, binding.id or "")
        return table

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"), VerticalScroll():
            yield Markdown(pane_help(self.pane))
            yield Static(Text("Keys here (id in grey — rebind it under [tui.keymap] in config.toml)", style="bold"))
            yield Static(self.keys)
            yield Static(Text("\nEsc closes · 1–9 switch panes · ctrl+p commands · ctrl+q quits", style="dim"))
