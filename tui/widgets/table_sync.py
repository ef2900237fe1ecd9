"""Update a DataTable in place by row key (memray's pattern): add new rows, update changed
cells, remove stale rows, keep the cursor on its row — no full redraw, so 10,000 rows stay fast."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from weakref import WeakKeyDictionary

from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, RowDoesNotExist

# The cells each table's rows were last given: an unchanged row is skipped without reading its
# cells back (10,000 rows × 8 cells of get_cell took seconds on every refresh).
_SYNCED: WeakKeyDictionary[DataTable[Any], dict[str, tuple[Any, ...]]] = WeakKeyDictionary()


def cursor_key(table: DataTable[Any]) -> str | None:
    """The key of the row under the cursor (None when the table is empty)."""
    if not table.row_count:
        return None
    try:
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
    except CellDoesNotExist:
        return None


def sync_rows(
    table: DataTable[Any],
    rows: Mapping[str, Sequence[Any]],
    column_keys: Sequence[str],
    *,
    sort_column: str | None = None,
    sort_key: Callable[[Any], Any] | None = None,
) -> None:
    """Make ``table`` show ``rows`` (key → cells) in the given order.

    When rows were added or a ``sort_column`` cell changed, the table is re-sorted by
    ``sort_column`` (through ``sort_key``) so rows land where they belong; existing rows are
    updated cell by cell. The cursor stays on the row it was on when that row is still there.
    """
    before = cursor_key(table)
    existing = {str(k.value) for k in table.rows}
    for key in existing - set(rows):
        table.remove_row(key)
    resort = False
    synced = _SYNCED.get(table, {})
    for key, cells in rows.items():
        if key in existing:
            if synced.get(key) == tuple(cells):
                continue
            for column, value in zip(column_keys, cells, strict=True):
                if table.get_cell(key, column) != value:
                    table.update_cell(key, column, value, update_width=True)
                    resort = resort or column == sort_column
        else:
            table.add_row(*cells, key=key)
            resort = True
    _SYNCED[table] = {key: tuple(cells) for key, cells in rows.items()}
    if resort and sort_column is not None:
        table.sort(sort_column, key=sort_key)
    if before is not None and before in rows:
        try:
            row = table.get_row_index(before)
        except RowDoesNotExist:
            return
        if row != table.cursor_row:
            table.move_cursor(row=row, animate=False)
