"""A row-cursor DataTable whose last (free-text) column takes exactly the width that is left, so
the metadata columns stay visible and nothing scrolls sideways at 100 columns.

Rows are given as ``(key, cells)`` with rich ``Text`` cells; the table keeps them and lays the
columns out again when it is resized. j/k/g/G bindings come from subclasses (their ids differ
per pane, so users can rebind them per pane).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clawmem.tui.widgets.measured_table import MeasuredTable
from rich.text import Text

Rows = Sequence[tuple[str, Sequence[Text]]]
SCROLLBAR = 2  # room kept for the vertical scrollbar
MIN_CAPPED = 8  # a capped column never gets narrower than this


def _one_line(cell: Text) -> Text:
    """Cells are one line: anything longer ends in an ellipsis instead of being cut mid-character."""
    if cell.no_wrap and cell.overflow == "ellipsis":
        return cell
    out = cell.copy()
    out.no_wrap, out.overflow = True, "ellipsis"
    return out


class FitTable(MeasuredTable):
    def __init__(
        self, labels: Sequence[str], *, caps: Mapping[int, int] | None = None, min_last: int = 12, **kwargs: Any
    ) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)
        self.labels = tuple(labels)
        self.caps = dict(caps or {})
        self.min_last = min_last
        self._rows: list[tuple[str, Sequence[Text]]] = []
        self._laid_out_width = -1
        self._add_columns(None)

    def _widths(self, total: int | None) -> list[int | None]:
        widths: list[int | None] = []
        for i, label in enumerate(self.labels[:-1]):
            content = max([Text(label).cell_len, *(cells[i].cell_len for _, cells in self._rows)])
            widths.append(min(content, self.caps.get(i, content)))
        if not total:
            return [*widths, None]
        used = sum((w or 0) + 2 * self.cell_padding for w in widths) + 2 * self.cell_padding + SCROLLBAR
        deficit = self.min_last - (total - used)
        for i in sorted(self.caps, key=lambda i: -(widths[i] or 0)):  # narrow: capped columns give way first
            if deficit <= 0 or i >= len(widths):
                break
            give = max(0, min(deficit, (widths[i] or 0) - MIN_CAPPED))
            widths[i] = (widths[i] or 0) - give
            used -= give
            deficit -= give
        return [*widths, max(self.min_last, total - used)]

    def _add_columns(self, total: int | None) -> None:
        for i, (label, width) in enumerate(zip(self.labels, self._widths(total), strict=True)):
            self.add_column(label, key=f"c{i}", width=width)

    def selected_key(self) -> str | None:
        if not self.row_count:
            return None
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)

    def fill(self, rows: Rows, keep: str | None = None) -> str | None:
        """Show ``rows``; keep the cursor on ``keep`` when it is still there. Returns the selected key."""
        self._rows = list(rows)
        return self._relayout(keep)

    def _relayout(self, keep: str | None) -> str | None:
        self._laid_out_width = self.size.width
        self.clear(columns=True)
        self._add_columns(self.size.width or None)
        for key, cells in self._rows:
            self.add_row(*(_one_line(c) for c in cells), key=key)
        keys = [k for k, _ in self._rows]
        if keep in keys:
            self.move_cursor(row=keys.index(keep), animate=False, scroll=True)
            return keep
        return keys[0] if keys else None

    def on_resize(self) -> None:
        if self.size.width != self._laid_out_width:
            self._relayout(self.selected_key())
