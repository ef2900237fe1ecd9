"""Context pane: what a new session would load (files, their sizes against the bootstrap caps,
and exactly which lines are cut off), and which trigger entries an incoming message would
inject (score ≥ 0.65, top 3, ≤ 1,800 chars) — so truncation is never silent."""

from __future__ import annotations

from typing import Any, ClassVar

from clawmem.engine.context.service import LineState, StartupContext, StartupFile, TriggerPreview
from clawmem.tui.panes.pane import Pane
from clawmem.tui.widgets.measured_table import MeasuredTable
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Input, Label, Select, Static

FILE_COLUMNS = ("order", "path", "size", "cap", "injected", "cut", "state")
TRIGGER_COLUMNS = ("rank", "score", "where", "triggers", "outcome")
LINE_STYLE = {"kept": "", "trimmed": "dim", "partial": "bold yellow", "cut": "red strike", "omitted": "dim strike"}
LINE_MARK = {"kept": " ", "trimmed": " ", "partial": "◐", "cut": "✂", "omitted": "⊘"}


CONTEXT_LINES = 2


def visible_lines(lines: tuple[LineState, ...]) -> list[LineState | int]:
    """Lines worth showing: everything that is cut, partly cut or omitted, with two lines of
    context, and the runs of kept lines in between folded to a count (like a diff)."""
    changed = [i for i, ls in enumerate(lines) if ls.status in ("cut", "partial", "omitted")]
    if not changed:
        return list(lines[:400]) + ([len(lines) - 400] if len(lines) > 400 else [])
    keep: set[int] = set()
    for i in changed:
        keep.update(range(max(0, i - CONTEXT_LINES), min(len(lines), i + CONTEXT_LINES + 1)))
    out: list[LineState | int] = []
    folded = 0
    for i, ls in enumerate(lines):
        if i in keep:
            if folded:
                out.append(folded)
                folded = 0
            out.append(ls)
        else:
            folded += 1
    if folded:
        out.append(folded)
    return out


class ContextTable(MeasuredTable):
    """The files and trigger tables, with the keys every list in the app has."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="context.table.down"),
        Binding("k", "cursor_up", "Up", show=False, id="context.table.up"),
        Binding("g", "scroll_top", "Top", show=False, id="context.table.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="context.table.bottom"),
    ]


class ContextPane(Pane):
    DEFAULT_CSS = "ContextPane { layout: horizontal; }"  # the files on the left, triggers on the right
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+l",
            "focus_message",
            "Message",
            id="context.focus-message",
            tooltip="Type a message to see which triggers would fire.",
        ),
    ]
    HELP = "context"
    NOTIFY_TITLE = "context"

    def __init__(self) -> None:
        super().__init__(id="context-pane")
        self.startup: StartupContext | None = None
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="context-left"):
            with Horizontal(id="context-controls"):
                yield Label("Session", classes="control-label")
                yield Select(
                    [(k, k) for k in ("private", "group", "cron", "subagent")],
                    value="private",
                    allow_blank=False,
                    id="context-kind",
                )
                yield Static("", id="context-budget")
            files = ContextTable(id="context-files", cursor_type="row", zebra_stripes=True)
            for key, label in zip(FILE_COLUMNS, ("#", "File", "Chars", "Cap", "Loaded", "Cut", "State"), strict=True):
                files.add_column(label, key=key, width=22 if key == "path" else None)
            yield files
            with VerticalScroll(id="context-lines-scroll"):
                yield Static("", id="context-lines")
        with Vertical(id="context-right"):
            yield Label("Incoming message → trigger recall", id="context-trigger-title")
            yield Input(placeholder="e.g. 周末去杭州的车票订好了吗？", id="context-message")
            triggers = ContextTable(id="context-triggers", cursor_type="row", zebra_stripes=True)
            for key, label in zip(TRIGGER_COLUMNS, ("#", "Score", "Entry", "Triggers", "Outcome"), strict=True):
                triggers.add_column(label, key=key)
            yield triggers
            with VerticalScroll(id="context-block-scroll"):
                yield Static(Text("Type a message to simulate it.", style="dim"), id="context-block")

    def on_mount(self) -> None:
        self.refresh_from_engine(frozenset())

    # ------------------------------------------------------------------ startup context

    def refresh_from_engine(self, paths: frozenset[str]) -> None:
        self._load(str(self.query_one("#context-kind", Select).value))

    def _load(self, kind: str) -> None:
        self.run_engine(
            lambda: self.engine.context.startup(kind),
            self._show,
            group="context",
            failure="the start-up context failed",
        )

    def _show(self, ctx: StartupContext) -> None:
        self.startup = ctx
        b = ctx.bootstrap_budget
        self.query_one("#context-budget", Static).update(
            Text.assemble(
                (f"{ctx.local_date}", "bold"),
                (f"  ·  bootstrap {b.used:,}/{b.cap:,} chars", "red" if b.used > b.cap else ""),
                (f"  ·  {len(ctx.loaded)} files load", "dim"),
            )
        )
        table = self.query_one("#context-files", DataTable)
        table.clear()
        for f in ctx.files:
            state = Text("loaded", style="green") if f.loaded else Text(f.reason or "not loaded", style="dim")
            if f.truncated:
                state = Text("truncated", style="bold red")
            table.add_row(
                Text(str(f.order) if f.order else "—", style="dim"),
                Text(f.path, style="" if f.loaded else "dim", no_wrap=True, overflow="ellipsis"),
                Text(f"{f.chars_on_disk:,}"),
                Text(f"{f.cap:,}", style="dim"),
                Text(f"{f.chars_injected:,}"),
                Text(f"{f.chars_cut:,}" if f.chars_cut else "—", style="bold red" if f.chars_cut else "dim"),
                state,
                key=f.path,
            )
        self.clawmem_app.status_bar.warning = ctx.warnings[0] if ctx.warnings else ""
        first = next((f for f in ctx.files if f.truncated), next(iter(ctx.files), None))
        if first is not None:
            table.move_cursor(row=[f.path for f in ctx.files].index(first.path))
        self._show_lines(first)

    def _show_lines(self, f: StartupFile | None) -> None:
        widget = self.query_one("#context-lines", Static)
        if f is None:
            widget.update(Text("No memory files would load.", style="dim"))
            return
        head = Text.assemble(
            (f.path, "bold"),
            (f"  ·  {f.chars_considered:,} of {f.cap:,} chars ({f.cap_setting})", "dim"),
        )
        if f.truncation:
            head.append(f"\n{f.truncation}", style="yellow")
        if not f.loaded:
            head.append(f"\nnot loaded: {f.reason}", style="dim")
        body = Table.grid(padding=(0, 1))
        body.add_column(width=7, no_wrap=True)
        body.add_column(ratio=1, overflow="fold")
        for item in visible_lines(f.lines):
            if isinstance(item, int):
                body.add_row(Text("   ⋯", style="dim"), Text(f"{item} kept lines", style="dim italic"))
                continue
            mark = LINE_MARK.get(item.status, " ")
            body.add_row(
                Text(f"{mark} {item.line:>4}", style="dim" if item.status in ("kept", "trimmed") else "red"),
                Text(item.text, style=LINE_STYLE.get(item.status, "")),
            )
        legend = Text("  ✂ cut off   ◐ partly cut   ⊘ omitted (superseded)", style="dim")
        widget.update(Group(head, legend, Text(""), body))

    @on(Select.Changed, "#context-kind")
    def _kind_changed(self) -> None:
        self.refresh_from_engine(frozenset())

    @on(DataTable.RowHighlighted, "#context-files")
    def _file_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.startup is None or event.row_key is None:
            return
        path = str(event.row_key.value)
        self._show_lines(next((f for f in self.startup.files if f.path == path), None))

    # ------------------------------------------------------------------ trigger simulator

    @on(Input.Changed, "#context-message")
    def _message_changed(self, event: Input.Changed) -> None:
        if self._timer is not None:
            self._timer.stop()
        if event.value.strip():
            self._timer = self.set_timer(0.3, lambda: self._simulate(event.value))

    @on(Input.Submitted, "#context-message")
    def _message_submitted(self, event: Input.Submitted) -> None:
        if self._timer is not None:
            self._timer.stop()
        if event.value.strip():
            self._simulate(event.value)

    def _simulate(self, message: str) -> None:
        self.run_engine(
            lambda: self.engine.context.triggers(message),
            self._show_triggers,
            group="context-triggers",
            failure="the trigger preview failed",
        )

    def _show_triggers(self, preview: TriggerPreview) -> None:
        table: DataTable[Any] = self.query_one("#context-triggers", DataTable)
        table.clear()
        for i, c in enumerate(preview.candidates):
            outcome_style = {"injected": "bold green", "partial": "yellow", "budget": "yellow"}.get(c.outcome, "dim")
            table.add_row(
                Text(str(c.rank) if c.rank else "—", style="dim"),
                Text(f"{c.match_score:.2f}", style="bold" if c.strong else "dim"),
                Text(f"{c.path}:{c.start_line}", no_wrap=True, overflow="ellipsis"),
                Text(", ".join(c.triggers) or "—", style="" if c.triggers else "dim"),
                Text(f"{c.outcome}: {c.outcome_reason}" if c.outcome_reason else c.outcome, style=outcome_style),
                key=f"{i}:{c.chunk_id}",
            )
        if preview.block:
            block = Text.assemble(("Would be injected:\n", "bold"), (preview.block, "green"))
        else:
            block = Text(f"Nothing would be injected (strong hit needs ≥ {preview.threshold}).", style="dim")
        for warning in preview.warnings:
            block.append(f"\n⚠ {warning}", style="yellow")
        self.query_one("#context-block", Static).update(block)

    def action_focus_message(self) -> None:
        self.query_one("#context-message", Input).focus()
