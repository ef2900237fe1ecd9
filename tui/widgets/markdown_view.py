"""A rendered Markdown file as one widget: Rich lays it out, in the app's theme.

Textual's Markdown widget mounts a widget per block — a list item is six — and styles and lays
out every one of them on the app's thread, each time a file is shown: at start-up, beside the
first index pass, and at every arrow key moving through the Memory pane's tree. Over a real
workspace's 204 files that stalled the app 42.6 ms at the median and 431 ms at worst, 27 files
past 100 ms; Rich's Markdown laying the same text out as one renderable, 15.6 and 118 ms, 2 files
(bench/tui_markdown.py, bench/RESULTS.md §3). So this view is a ``Static`` holding it, drawn with
the theme's own Markdown colours (its
``markdown-h1-color`` …, ``text-primary`` bullets, ``text-warning`` inline code) so that it reads
as Textual's did, and a link clicked opens as it did there. Text that is what is shown already is
not laid out again (a pane's reload at every index sync).
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.theme import Theme
from textual import events
from textual.app import App
from textual.color import Color, ColorParseError
from textual.widgets import Static


def _color(variables: Mapping[str, str], name: str, over: str = "background", alpha: float = 1.0) -> str | None:
    """The theme variable ``name`` as an opaque hex colour (laid over ``over`` if translucent)."""
    value = variables.get(name)
    if not value or value in ("transparent", "initial") or value.startswith("auto"):
        return None
    try:
        color = Color.parse(value)
        base = Color.parse(variables.get(over, "#000000"))
    except ColorParseError:
        return None
    color = color.with_alpha(color.a * alpha)
    return (base + color).hex6 if color.a < 1 else color.hex6


def _style(color: str | None, text_style: str = "", background: str | None = None) -> Style:
    words = " ".join(w for w in text_style.split() if w != "none")
    return Style.parse(" ".join(filter(None, (words, color, f"on {background}" if background else None))) or "none")


def markdown_theme(variables: Mapping[str, str]) -> Theme:
    """Rich's ``markdown.*`` styles from a Textual theme's variables (``App.theme_variables``),
    as Textual's Markdown widget styles the same elements (textual/widgets/_markdown.py)."""
    styles: dict[str, Style] = {}
    for level in range(1, 7):
        h = f"markdown-h{level}"
        styles[f"markdown.h{level}"] = _style(
            _color(variables, f"{h}-color"),
            variables.get(f"{h}-text-style", ""),
            _color(variables, f"{h}-background"),
        )
    primary = _color(variables, "text-primary") or _color(variables, "primary")
    styles["markdown.item.bullet"] = _style(primary)
    styles["markdown.item.number"] = _style(primary)
    styles["markdown.code"] = _style(
        _color(variables, "text-warning", alpha=0.95), background=_color(variables, "warning", alpha=0.1)
    )
    styles["markdown.code_block"] = _style(_color(variables, "foreground"), background=_color(variables, "surface"))
    styles["markdown.block_quote"] = _style(_color(variables, "foreground-muted") or primary, "italic")
    styles["markdown.hr"] = _style(_color(variables, "secondary"))
    styles["markdown.link"] = _style(_color(variables, "text-accent") or primary, "underline")
    styles["markdown.link_url"] = _style(_color(variables, "text-accent") or primary, "underline")
    styles["markdown.table.border"] = _style(_color(variables, "panel-lighten-2") or _color(variables, "secondary"))
    styles["markdown.table.header"] = _style(_color(variables, "primary"), "bold")
    return Theme(styles, inherit=True)


class _Markdown(Markdown):
    """Rich's Markdown without HTML blocks — a memory file's ``<!-- observed: … -->``
    annotations — which Rich would draw as a blank line each (Textual's Markdown skips them)."""

    def __init__(self, markup: str) -> None:
        super().__init__(markup, hyperlinks=True)
        self.parsed = [token for token in self.parsed if token.type != "html_block"]


class _Themed:
    """Rich's Markdown rendered with ``theme`` pushed on the console for the render's length, its
    lines kept per width: Textual renders a ``Static``'s content once to learn its height and
    again to draw it (three renders when a scroll bar appears), and the text is the same."""

    def __init__(self, markdown: _Markdown, theme: Theme) -> None:
        self.markdown = markdown
        self.theme = theme
        self._lines: dict[int, list[list[Segment]]] = {}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = self._lines.get(options.max_width)
        if lines is None:
            with console.use_theme(self.theme):
                lines = console.render_lines(self.markdown, options.update(height=None), pad=False)
            if len(self._lines) >= 2:  # with and without a scroll bar: older widths are a resize's
                del self._lines[next(iter(self._lines))]
            self._lines[options.max_width] = lines
        newline = Segment.line()
        for line in lines:
            yield from line
            yield newline


class MarkdownView(Static):
    """``show(text)`` renders ``text`` as Markdown, unless it is what is shown already."""

    DEFAULT_CSS = """
    MarkdownView {
        height: auto;
        padding: 1 1 0 1;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("", id=id, classes=classes)
        self._shown: str | None = None
        self._theme: tuple[str, Theme] | None = None  # (the app theme's name, its Markdown styles)

    @property
    def source(self) -> str:
        """The Markdown shown (empty before the first ``show``)."""
        return self._shown or ""

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._rethemed, init=False)

    def on_click(self, event: events.Click) -> None:
        """A link clicked opens, as in Textual's Markdown (its ``open_links``)."""
        link = event.style.link
        if link:
            self.app.open_url(link)

    def show(self, markdown: str) -> None:
        if markdown == self._shown:
            return
        self._shown = markdown
        self._render_shown()

    def _rethemed(self, _theme: str) -> None:
        if self._shown is not None:  # after the app has refreshed its variables for the new theme
            self.call_after_refresh(self._render_shown)

    def _render_shown(self) -> None:
        app: App[object] = self.app
        if self._theme is None or self._theme[0] != app.theme:
            self._theme = (app.theme, markdown_theme(app.theme_variables))
        self.update(_Themed(_Markdown(self._shown or ""), self._theme[1]))
