"""The rendered view of a memory file (tui/widgets/markdown_view.py): one widget that Rich lays
out in the app's theme, driven in a real Textual app by Pilot."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from clawmem.tui.widgets.markdown_view import MarkdownView, markdown_theme
from rich.style import Style
from textual.app import App, ComposeResult
from textual.pilot import Pilot

TEXT = """# Memory

<!-- observed: 2026-10-20 | status: active -->
- Prefer the `night train` to flights. See [the timetable](https://example.com/trains).
<!-- observed: 2026-09-01 | status: active -->
- ~~Always fly~~ *(superseded)*
"""


class One(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    def compose(self) -> ComposeResult:
        yield MarkdownView(id="md")

    def open_url(self, url: str, *, new_tab: bool = True) -> None:  # a test must not start a browser
        self.opened.append(url)


@asynccontextmanager
async def shown(text: str = TEXT) -> AsyncIterator[tuple[One, Pilot[None], MarkdownView]]:
    """A running app with ``text`` shown in its view."""
    app = One()
    async with app.run_test(size=(80, 16)) as pilot:
        view = app.query_one(MarkdownView)
        view.show(text)
        await pilot.pause()
        yield app, pilot, view


def lines(view: MarkdownView) -> list[str]:
    return [strip.text.rstrip() for strip in view.render_lines(view.region.reset_offset)]


async def test_a_file_is_drawn_as_text_without_its_annotations_and_with_the_themes_colours() -> None:
    async with shown() as (app, _pilot, view):
        drawn = [line for line in lines(view) if line.strip()]
        assert drawn[0].strip() == "Memory"
        assert any("Prefer the night train to flights." in line for line in drawn)
        assert not any("observed" in line or "<!--" in line for line in drawn)  # annotations unseen
        every = lines(view)
        first = next(i for i, line in enumerate(every) if "Prefer" in line)
        second = next(i for i, line in enumerate(every) if "Always fly" in line)
        assert second - first == 2  # one blank line between the entries, not one more per annotation
        assert len(view.children) == 0  # one widget, not a widget per block
        theme = markdown_theme(app.theme_variables)
        h1 = theme.styles["markdown.h1"]
        assert h1.bold and h1.color is not None
        want = app.theme_variables["markdown-h1-color"].upper()
        assert h1.color.triplet is not None and h1.color.triplet.hex.upper() == want
        assert theme.styles["markdown.code"].bgcolor is not None  # inline code on its own ground


async def test_a_clicked_link_opens_and_plain_text_opens_nothing() -> None:
    async with shown() as (app, pilot, view):
        row, col = next((y, line.index("timetable")) for y, line in enumerate(lines(view)) if "timetable" in line)
        await pilot.click(MarkdownView, offset=(col + 2, row))
        assert app.opened == ["https://example.com/trains"]
        col = lines(view)[row].index("Prefer")
        await pilot.click(MarkdownView, offset=(col + 1, row))
        assert app.opened == ["https://example.com/trains"]


async def test_a_theme_change_draws_the_file_again_in_the_new_colours() -> None:
    async with shown() as (app, pilot, view):
        before = view.visual
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        assert view.visual is not before
        heading = next(s for s in view.render_lines(view.region.reset_offset)[1] if s.text.strip() == "Memory")
        assert isinstance(heading.style, Style) and heading.style.color is not None
        want = app.theme_variables["markdown-h1-color"].upper()
        assert heading.style.color.triplet is not None and heading.style.color.triplet.hex.upper() == want
