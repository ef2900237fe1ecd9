"""Update a DataTable in place by row key (memray's pattern): add new rows, update changed
cells, remove stale rows, keep the cursor — no full redraw, so 10,000 rows stay fast."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from textual.widgets import DataTable


def sync_rows(
    table: DataTable[Any],
    rows: Mapping[str, Sequence[Any]],
    column_keys: Sequence[str],
    *,
    sort_column: str | None = None,
    sort_key: Callable[[Any], Any] | None = None,
) -> None:
    """Make ``table`` show ``rows`` (key → cells) in the given order.

    When rows were added, the table is re-sorted by ``sort_column`` (through ``sort_key``) so
    new rows land where they belong; existing rows are updated cell by cell.
    """
    existing = {str(k.value) for k in table.rows}
    for key in existing - set(rows):
        table.remove_row(key)
    added = False
    for key, cells in rows.items():
        if key in existing:
            for column, value in zip(column_keys, cells, strict=True):
                if table.get_cell(key, column) != value:
                    table.update_cell(key, column, value)
        else:
            table.add_row(*cells, key=key)
            added = True
    if added and sort_column is not None:
        table.sort(sort_column, key=sort_key)
