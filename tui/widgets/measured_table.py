"""A DataTable that repaints once it has measured its auto-width columns.

Textual's DataTable (8.2.8) measures new rows and changed cells when it is next idle
(``_on_idle`` → ``_update_column_widths`` / ``_update_dimensions``), but its render caches (lines,
rows, cells) are keyed by ``_update_count``, which measuring does not change. When the screen
paints the table between ``add_row`` and that idle — the screen and the table are separate
message pumps, so on a busy machine it does — the lines are cached at the old widths (every
column at its label's width, "supers…", or a new file's entries cut at the previous file's width)
and stay so until something else bumps the count: a resize, another row. Moving the cursor does not
help (the cell cache has no width in its key). Textual issue #3533 is the same bug for
``update_cell``.

All the app's tables derive from this one: when measuring changes a column's width, the caches are
invalidated and the table repaints.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.widgets import DataTable


class MeasuredTable(DataTable[Any]):
    def _drawn_widths(self) -> tuple[int, ...]:
        return (self._row_label_column_width, *(c.get_render_width(self) for c in self.ordered_columns))

    async def _on_idle(self, event: events.Idle) -> None:
        # Compared with the widths just before this measuring, not the last measured ones: a table
        # whose columns were cleared and added again is drawn at label widths, and measuring it
        # back to its earlier widths must repaint it too.
        before = self._drawn_widths()
        await super()._on_idle(event)
        if self._drawn_widths() != before:
            self._update_count += 1  # every render cache is keyed by it: lines drawn before are stale
            self.refresh()
