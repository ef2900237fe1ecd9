"""A Markdown view that is rebuilt only when what it shows changes.

Textual's Markdown mounts a widget per block on the app's thread, and every reload of a pane (the
index's sync, a pass that ends, a file saved elsewhere) used to rebuild it even when the text was
the same: on a real workspace 140–350 ms with the embedding pass on both cores
(bench/app_while_indexing.py, bench/RESULTS.md §3). Text that is the same is left as it is.
"""

from __future__ import annotations

from textual.widgets import Markdown


class SteadyMarkdown(Markdown):
    """``show(text)`` is ``update(text)`` unless ``text`` is what is shown already."""

    _shown: str | None = None

    def show(self, markdown: str) -> None:
        if markdown == self._shown:
            return
        self._shown = markdown
        self.update(markdown)
