"""Command palette: "area: verb" commands for every pane (ctrl+p)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from clawmem.tui.panes.memory import MemoryPane
from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from clawmem.tui.app import ClawmemApp


class ClawmemCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = cast("ClawmemApp", self.app)
        return [
            (
                "memory: Show files and entries",
                "Browse USER.md, MEMORY.md, diaries and notes",
                partial(app.action_show_pane, "memory"),
            ),
            (
                "editor: Edit the selected file",
                "Open the file selected in the Memory pane",
                lambda: app.pane(MemoryPane).action_edit(),
            ),
            ("search: Search the memory", "Search with every score explained", partial(app.action_show_pane, "search")),
            (
                "status: Show index status",
                "Everything `clawmem status --deep` knows",
                partial(app.action_show_pane, "status"),
            ),
            ("status: Reindex now", "Index changed files, then embed", lambda: app.start_indexing()),
            (
                "status: Force rebuild",
                "Rebuild into a shadow index, then publish",
                lambda: app.start_indexing(force=True),
            ),
            (
                "status: Cancel indexing",
                "Stop indexing or embedding; the index stays valid",
                app.action_cancel_indexing,
            ),
            (
                "context: Preview a new session",
                "Files, caps and the lines that would be cut",
                partial(app.action_show_pane, "context"),
            ),
            ("app: Help", "Keys and what the focused pane shows", app.action_help),
            *self._pane_commands(app),
        ]

    @staticmethod
    def _pane_commands(app: ClawmemApp) -> list[tuple[str, str, Callable[[], object]]]:
        """Commands a pane offers through ``PALETTE = [(name, help, action), …]``."""
        out: list[tuple[str, str, Callable[[], object]]] = []
        for pane_id, pane in app.panes.items():
            for name, help_text, action in pane.PALETTE:
                out.append((name, help_text, partial(app.run_pane_action, pane_id, action)))
        return out

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
