"""A table painted before it measured its new rows repaints at the measured widths.

Textual's DataTable sizes auto-width columns when it is next idle, without invalidating the lines
it cached; on a busy machine the screen paints in between and the columns stayed at their labels'
widths ("supers…") — the Memory-pane snapshots failed about one full run in five. Here the paint
in between is made to happen: a line is rendered right after ``add_row``, before the table's idle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clawmem.tui.panes.memory import EntriesTable
from clawmem.tui.widgets.measured_table import MeasuredTable
from rich.text import Text
from textual.app import App, ComposeResult


class TableApp(App[None]):
    # A fixed height, as in the panes: a table that grew a line would get a Resize, and DataTable's
    # resize handler invalidates the caches, which hid the bug.
    CSS = "DataTable { height: 6; }"

    def __init__(self, make: Callable[[], MeasuredTable]) -> None:
        super().__init__()
        self.make = make

    def compose(self) -> ComposeResult:
        yield self.make()


def entries_table(*labels: str) -> Callable[[], MeasuredTable]:
    def make() -> MeasuredTable:
        table = EntriesTable()
        for label in labels:
            table.add_column(label, key=label)
        return table

    return make


async def _drawn_before_and_after_measuring(make: Callable[[], MeasuredTable], *cells: Any) -> tuple[str, str]:
    async with TableApp(make).run_test(size=(100, 8)) as pilot:
        await pilot.pause()
        table = pilot.app.query_one(MeasuredTable)
        table.add_row(*cells)
        before = table.render_line(1).text  # the screen paints before the table is idle
        await pilot.pause()
        assert not table._require_update_dimensions and not table._new_rows  # measured
        return before, table.render_line(1).text


async def test_an_entries_table_drawn_before_measuring_repaints_at_the_measured_widths() -> None:
    make = entries_table("Status", "Entry")
    before, after = await _drawn_before_and_after_measuring(make, Text("superseded"), Text("an entry"))
    assert "superseded" not in before  # drawn at the label's width
    assert "superseded" in after and "an entry" in after


async def test_a_table_whose_column_grows_repaints_when_it_is_measured() -> None:
    """The second variant seen: a new file's rows kept the previous file's width for a column."""
    async with TableApp(entries_table("Entry")).run_test(size=(100, 8)) as pilot:
        table = pilot.app.query_one(MeasuredTable)
        table.add_row(Text("a short one"), key="a")
        await pilot.pause()
        table.remove_row("a")
        table.add_row(Text("a much longer entry than the one before"), key="b")
        table.render_line(1)  # painted before the table is idle
        await pilot.pause()
        assert "a much longer entry than the one before" in table.render_line(1).text


async def test_a_table_whose_columns_were_added_again_repaints_when_measured_back_to_its_old_widths() -> None:
    """Columns cleared and added again are drawn at their labels' widths; measuring them back to
    the widths they had before must repaint too (compared with the widths just before measuring)."""

    def fill(table: MeasuredTable) -> None:
        table.clear(columns=True)
        table.add_column("Status", key="s")
        table.add_column("Entry", key="e")
        table.add_row(Text("superseded"), Text("an entry"), key="a")

    async with TableApp(MeasuredTable).run_test(size=(100, 8)) as pilot:
        table = pilot.app.query_one(MeasuredTable)
        fill(table)
        await pilot.pause()
        assert "superseded" in table.render_line(1).text
        fill(table)
        assert "superseded" not in table.render_line(1).text  # painted at the labels' widths
        await pilot.pause()
        assert "superseded" in table.render_line(1).text and "an entry" in table.render_line(1).text
