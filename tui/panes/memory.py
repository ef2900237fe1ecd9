"""Memory pane: every memory file in a tree with entry counts; the selected file rendered (or as
source, with line numbers) beside its entries — status, observed date, triggers, importance,
project, origin and line range, with superseded entries visibly marked."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable
from typing import ClassVar

from clawmem.engine.facade import EntryView
from clawmem.engine.workspace.catalog import FileInfo, FileSnapshot
from clawmem.tui.messages import EditFile
from clawmem.tui.modals.confirm import ConfirmModal
from clawmem.tui.modals.proposals import ProposalsModal
from clawmem.tui.modals.reason import ReasonModal
from clawmem.tui.modals.supersede import SupersedeModal
from clawmem.tui.panes.pane import Pane
from clawmem.tui.widgets.markdown_view import MarkdownView
from clawmem.tui.widgets.measured_table import MeasuredTable
from clawmem.tui.widgets.table_sync import sync_rows
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import ContentSwitcher, DataTable, Static, TextArea, Tree
from textual.widgets.tree import TreeNode

# The rendered view is one widget (tui/widgets/markdown_view.py) but still lays the whole text out
# on the app's thread: files just past these limits (up to 17k characters) held it 45 ms at the
# median and up to 185 ms, the longest (30-59k) up to 444 ms (bench/tui_markdown.py --over-limit,
# bench/RESULTS.md §3) — a stall at every arrow key through the tree. Larger files open as source,
# which is instant. (Textual's own Markdown widget froze the app for seconds on a 1,000-bullet file.)
RENDER_LIMIT = 12_000  # characters (MEMORY.md's Dreaming budget is 10,000)
RENDER_MAX_LINES = 250
SOFT_WRAP_MAX_LINES = 2_000
ENTRY_BATCH = 500  # entries-table rows added per turn of the event loop
ENTRY_COLUMNS = ("lines", "status", "observed", "imp", "triggers", "project", "origin", "entry")
KIND_LABEL = {
    "user": "user model",
    "curated": "curated memory",
    "diary": "daily note",
    "slug": "session note",
    "note": "note",
    "dreams": "dream diary (not indexed)",
    "dream-report": "dreaming report",
    "dream-state": "dreaming state",
    "extra": "extra path",
}


class MemoryTree(Tree[str]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="memory.tree.down"),
        Binding("k", "cursor_up", "Up", show=False, id="memory.tree.up"),
        Binding("g", "scroll_home", "Top", show=False, id="memory.tree.top"),
        Binding("G", "scroll_end", "Bottom", show=False, id="memory.tree.bottom"),
    ]


class EntriesTable(MeasuredTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="memory.entries.down"),
        Binding("k", "cursor_up", "Up", show=False, id="memory.entries.up"),
        Binding("g", "scroll_top", "Top", show=False, id="memory.entries.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="memory.entries.bottom"),
    ]


def _too_long(text: str) -> bool:
    """Past what the pane renders unasked (RENDER_LIMIT, RENDER_MAX_LINES)."""
    return len(text) > RENDER_LIMIT or text.count("\n") > RENDER_MAX_LINES


def _count_label(info: FileInfo) -> str:
    if info.problem:
        return "skipped"
    if info.superseded_entries:
        return f"{info.active_entries}+{info.superseded_entries}s"
    return str(info.entries)


def _entry_key(view: EntryView) -> str:
    digest = hashlib.sha1(view.entry.text.encode("utf-8")).hexdigest()[:10]
    return f"{view.entry.start_line}:{digest}"


def decorate_markdown(text: str, entries: list[EntryView]) -> str:
    """The file as rendered: superseded entries struck through and labelled, and the hidden
    annotations (triggers, importance, project) shown as badges — the file itself is untouched."""
    lines = text.split("\n")
    for view in entries:
        e = view.entry
        index = e.start_line - 1
        if e.kind != "bullet" or not 0 <= index < len(lines):
            continue
        line = lines[index]
        prefix = line[: len(line) - len(line.lstrip())] + line.lstrip()[:2]
        body = e.display.split("\n")[0]
        badges = []
        if e.triggers:
            badges.append(f"`⚡ {', '.join(e.triggers)}`")
        if e.importance:
            badges.append(f"`★ {e.importance}`")
        if e.project_keys or e.flags:
            badges.append(f"`⌂ {', '.join(e.project_keys) or 'invalid project'}`")
        if e.superseded:
            body = f"~~{body}~~ *(superseded{', observed ' + e.observed if e.observed else ''})*"
        lines[index] = prefix + body + ("  " + " ".join(badges) if badges else "")
    return "\n".join(lines)


DATED_KINDS = ("diary", "slug")  # files whose name carries the day their entries were written


def entry_cells(view: EntryView, file_date: str | None = None) -> tuple[Text, ...]:
    """One entries-table row. Observed is the entry's own ``observed`` marker (USER.md), else the
    date of the dated diary it was written in (``file_date``), else "—"."""
    e = view.entry
    observed = e.observed or file_date
    superseded = e.superseded
    style = "dim strike" if superseded else ""
    status = Text("superseded", style="bold yellow") if superseded else Text("active", style="green")
    lines = Text(f"{e.start_line}–{e.end_line}" if e.end_line != e.start_line else f"{e.start_line}", style="dim")
    entry = Text(e.display.replace("\n", " ⏎ "), style=style, no_wrap=True, overflow="ellipsis")
    project = ", ".join(e.project_keys)
    if e.flags:
        project = (project + " " if project else "") + "⚠ invalid"
    origin_style = {"untrusted": "bold red", "system": "magenta", "owner": "cyan"}.get(view.origin_class, "")
    return (
        lines,
        status,
        Text(observed or "—", style="" if observed else "dim"),
        Text(str(e.importance) if e.importance else "—", style="bold" if e.importance else "dim"),
        Text(", ".join(e.triggers) or "—", style="" if e.triggers else "dim", no_wrap=True, overflow="ellipsis"),
        Text(project or "—", style="red" if e.flags else ("" if project else "dim"), no_wrap=True, overflow="ellipsis"),
        Text(view.origin_class, style=origin_style),
        entry,
    )


class MemoryPane(Pane):
    """Files, the selected file, and its entries."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "v",
            "toggle_view",
            "Source/rendered",
            id="memory.toggle-view",
            tooltip="Switch between the rendered file and its source with line numbers.",
        ),
        Binding("e", "edit", "Edit", id="memory.edit", tooltip="Open the selected file in the Editor pane."),
        Binding(
            "s",
            "supersede",
            "Supersede",
            id="memory.supersede",
            tooltip="Mark the selected entry superseded by a newer one (pick it); on a superseded entry, undo.",
        ),
        Binding(
            "p",
            "proposals",
            "Proposals",
            id="memory.proposals",
            tooltip="The supersessions agents proposed: accept (the same write) or reject each.",
        ),
        Binding("r", "reload", "Reload", show=False, id="memory.reload", tooltip="Re-read the files from disk."),
    ]
    HELP = "memory"
    NOTIFY_TITLE = "memory"

    def __init__(self) -> None:
        super().__init__(id="memory-pane")
        self.files: dict[str, FileInfo] = {}
        self.current: str | None = None
        self.snapshot: FileSnapshot | None = None
        self._entries: list[EntryView] = []
        self._cells: dict[tuple[EntryView, str | None], tuple[Text, ...]] = {}
        self._pending_line: int | None = None
        self._table_line: int | None = None  # the line whose entry the table selects once filled
        self._fill_scheduled = False
        self._mode = "rendered"  # the person's choice; a file too long to render still shows as source
        self._anyway: str | None = None  # … unless they asked for this one rendered (``v`` on it)

    def compose(self) -> ComposeResult:
        with Horizontal():
            tree: MemoryTree = MemoryTree("workspace", id="memory-tree")
            tree.show_root = False
            tree.guide_depth = 2
            yield tree
            with Vertical(id="memory-right"):
                yield Static("Select a file", id="memory-file-header")
                with ContentSwitcher(initial="memory-rendered", id="memory-view"):
                    with VerticalScroll(id="memory-rendered"):
                        yield MarkdownView(id="memory-markdown")
                    yield TextArea(
                        "", id="memory-source", read_only=True, show_line_numbers=True, soft_wrap=True, language=None
                    )
                table: EntriesTable = EntriesTable(id="memory-entries", cursor_type="row", zebra_stripes=True)
                labels = ("Lines", "Status", "Observed", "Imp", "Triggers", "Project", "Origin", "Entry")
                for key, label in zip(ENTRY_COLUMNS, labels, strict=True):
                    table.add_column(label, key=key, width=14 if key in ("triggers", "project") else None)
                yield table

    def on_mount(self) -> None:
        self.load_files()

    def on_resize(self) -> None:
        self.set_class(self.size.width < 130, "narrow")

    # ------------------------------------------------------------------ loading

    def load_files(self) -> None:
        self.run_engine(
            lambda: self.engine.memory_files(),
            self._show_files,
            group="memory-files",
            failure="the files could not be listed",
        )

    def _show_files(self, files: list[FileInfo]) -> None:
        before = self.files.get(self.current) if self.current else None
        self.files = {f.rel: f for f in files}
        tree = self.query_one(MemoryTree)
        expanded = {str(n.label) for n in self._walk(tree.root) if n.is_expanded}  # str of a Text: its plain text
        tree.clear()
        groups: dict[str, list[FileInfo]] = defaultdict(list)
        for f in files:
            group = {
                "user": "",
                "curated": "",
                "diary": "Diaries",
                "slug": "Session notes",
                "note": "Notes",
                "extra": "Notes",
                "dreams": "Dreaming",
                "dream-report": "Dreaming",
                "dream-state": "Dreaming",
            }.get(f.kind, "Notes")
            groups[group].append(f)
        for f in sorted(groups.pop("", []), key=lambda f: (f.kind != "user", f.rel)):
            tree.root.add_leaf(self._label(f, f.rel), data=f.rel)
        diaries = groups.pop("Diaries", [])
        if diaries:
            node = tree.root.add(Text.assemble(("Diaries ", "bold"), (f"({len(diaries)})", "dim")), expand=True)
            months: dict[str, list[FileInfo]] = defaultdict(list)
            for f in diaries:
                months[(f.date or f.rel)[:7]].append(f)
            for month in sorted(months, reverse=True):
                label = f"{month} "
                mnode = node.add(
                    Text.assemble((label, ""), (f"({len(months[month])})", "dim")),
                    expand=month in {m for m in list(months)[:0]} or label.strip() in expanded or month == max(months),
                )
                for f in sorted(months[month], key=lambda f: f.rel, reverse=True):
                    mnode.add_leaf(self._label(f, (f.date or f.rel)), data=f.rel)
        for title in ("Session notes", "Notes", "Dreaming"):
            items = groups.pop(title, [])
            if not items:
                continue
            node = tree.root.add(
                Text.assemble((f"{title} ", "bold"), (f"({len(items)})", "dim")),
                expand=title != "Dreaming" or title in expanded,
            )
            for f in sorted(items, key=lambda f: f.rel, reverse=title == "Session notes"):
                name = f.rel.removeprefix("memory/")
                node.add_leaf(self._label(f, name), data=f.rel)
        if self.current is None and files:
            # The top of the tree: USER.md, else MEMORY.md, else the first file.
            first = next((f.rel for kind in ("user", "curated") for f in files if f.kind == kind), files[0].rel)
            self.open(first, None)
        elif self.current is not None:
            self._select_node(self.current)
            now = self.files.get(self.current)
            moved = (before.kind, before.date) != (now.kind, now.date) if before and now else before is not now
            if self.snapshot is not None and self.snapshot.rel == self.current and moved:
                self._fill_entries()  # the file's kind and date arrived after its entries

    @staticmethod
    def _walk(node: TreeNode[str]) -> list[TreeNode[str]]:
        out = []
        for child in node.children:
            out.append(child)
            out.extend(MemoryPane._walk(child))
        return out

    @staticmethod
    def _label(f: FileInfo, name: str) -> Text:
        style = "red" if f.problem else ("dim italic" if not f.indexed else "")
        return Text.assemble((name, style), (" ", ""), (_count_label(f), "dim"))

    def _select_node(self, rel: str) -> None:
        tree = self.query_one(MemoryTree)
        for node in self._walk(tree.root):
            if node.data == rel:
                parent = node.parent
                while parent is not None:
                    parent.expand()
                    parent = parent.parent
                # A rebuilt tree has no line numbers until it is laid out: reading last_line lays it
                # out, so the cursor lands on this node instead of being clamped to the first file
                # (an external edit of MEMORY.md used to switch the pane to USER.md).
                if tree.last_line >= 0:
                    tree.move_cursor(node)
                break

    # ------------------------------------------------------------------ opening a file

    def open(self, rel: str, line: int | None) -> None:
        """Show ``rel`` (and, with a line, the source view scrolled to it and its entry selected)."""
        self.current = rel
        self._pending_line = line
        if line is not None:
            self._set_mode("source")
        self._select_node(rel)
        self.load_file(rel)

    def load_file(self, rel: str) -> None:
        engine = self.engine

        def read() -> tuple[FileSnapshot, list[EntryView]]:
            snap = engine.snapshot(rel)
            return snap, engine.entries(rel) if snap.exists else []

        self.run_engine(
            read, lambda got: self._show_file(*got), group="memory-file", failure=f"{rel} could not be read"
        )

    def _show_file(self, snap: FileSnapshot, entries: list[EntryView]) -> None:
        if snap.rel != self.current:
            return
        previous, self.snapshot = self.snapshot, snap
        source = self.query_one("#memory-source", TextArea)
        if source.text != snap.text:
            # A reload (an external edit, a save) keeps the reader where they were. Very long files
            # are not soft-wrapped: wrapping 10,000 lines held the app for half a second per load.
            same_file = previous is not None and previous.rel == snap.rel
            cursor, scroll = source.cursor_location, source.scroll_offset
            source.soft_wrap = snap.text.count("\n") <= SOFT_WRAP_MAX_LINES
            source.load_text(snap.text)
            if same_file:
                last = source.document.line_count - 1
                source.move_cursor((min(cursor[0], last), 0))
                source.scroll_to(scroll.x, scroll.y, animate=False)
        self._entries = entries
        if not _too_long(snap.text) or self._anyway == snap.rel:
            self._render_file()
        self._apply_view()
        self._table_line = None
        if self._pending_line is not None:
            line = self._pending_line
            self._pending_line = None
            source.move_cursor((line - 1, 0), center=True)
            source.select_line(line - 1)
            self._table_line = line
        self._fill_entries()

    def _fill_entries(self) -> None:
        """Show ``self._entries`` in the entries table, by row key, in file order.

        At most ENTRY_BATCH rows are added per turn of the event loop (the next batch is scheduled
        after a refresh): building and measuring 10,000 rows in one go held the app for over two
        seconds (bench/tui_tables.py), in batches a key is answered between them."""
        if self.snapshot is None:
            return
        table = self.query_one(EntriesTable)
        info = self.files.get(self.snapshot.rel)
        file_date = info.date if info is not None and info.kind in DATED_KINDS else None
        shown = {str(k.value) for k in table.rows}
        views = sorted(self._entries, key=lambda v: v.entry.start_line)
        keys = [_entry_key(v) for v in views]
        # Cells are built once per entry (a refresh rebuilt 80,000 Text cells) and only for the
        # rows shown so far plus the next batch.
        cells: dict[tuple[EntryView, str | None], tuple[Text, ...]] = {}
        rows: dict[str, tuple[Text, ...]] = {}
        added = 0
        for view, key in zip(views, keys, strict=True):
            if key not in shown:
                if added >= ENTRY_BATCH:
                    continue
                added += 1
            memo = (view, file_date)
            row = self._cells.get(memo) or entry_cells(view, file_date)
            cells[memo] = row
            rows[key] = row
        self._cells = cells
        sync_rows(
            table,
            rows,
            ENTRY_COLUMNS,
            sort_column="lines",
            sort_key=lambda cell: int(str(cell.plain).split("–")[0]),
        )
        if len(rows) < len(keys):
            if not self._fill_scheduled:
                self._fill_scheduled = True
                self.call_after_refresh(self._fill_next_batch)
            return
        if self._table_line is not None:
            line, self._table_line = self._table_line, None
            for index, view in enumerate(views):
                if view.entry.marker_line <= line <= view.entry.end_line:
                    table.move_cursor(row=index)
                    break

    def _fill_next_batch(self) -> None:
        self._fill_scheduled = False
        self._fill_entries()

    def refresh_from_engine(self, paths: frozenset[str]) -> None:
        self.load_files()
        if self.current is not None and (not paths or self.current in paths):
            self.load_file(self.current)

    # ------------------------------------------------------------------ interaction

    @on(Tree.NodeHighlighted, "#memory-tree")
    def _node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        rel = event.node.data
        if rel and rel != self.current:
            self.current = rel
            self.load_file(rel)

    @on(DataTable.RowSelected, "#memory-entries")
    def _entry_selected(self, event: DataTable.RowSelected) -> None:
        line = int(str(event.row_key.value).split(":")[0])
        self._set_mode("source")
        source = self.query_one("#memory-source", TextArea)
        source.move_cursor((line - 1, 0), center=True)
        source.select_line(line - 1)

    def _set_mode(self, mode: str) -> None:
        self._mode = mode
        self._apply_view()

    def _held_back(self) -> bool:
        """The person chose rendered, but the file shown is too long to render unasked."""
        snap = self.snapshot
        return self._mode == "rendered" and snap is not None and _too_long(snap.text) and self._anyway != snap.rel

    def _apply_view(self) -> None:
        """Source or rendered, as the person chose — source for a file too long to render — and
        the header that says which."""
        source = self._mode == "source" or self._held_back()
        self.query_one(ContentSwitcher).current = "memory-source" if source else "memory-rendered"
        snap = self.snapshot
        if snap is None:
            return
        info = self.files.get(snap.rel)
        header = Text.assemble(
            (snap.rel, "bold"),
            (" · " + KIND_LABEL.get(info.kind, info.kind) if info else "", "dim"),
            (f" · {len(snap.text):,} chars" if snap.exists else " · missing", "dim"),
            (f" · {info.origin}" if info else "", "dim"),
            (f" · {info.superseded_entries} superseded" if info and info.superseded_entries else "", "yellow"),
            (" · long: shown as source, v renders it" if self._held_back() else "", "dim italic"),
            no_wrap=True,
            overflow="ellipsis",
        )
        self.query_one("#memory-file-header", Static).update(header)

    def action_toggle_view(self) -> None:
        """Source ↔ rendered. On a file too long to render unasked, ``v`` renders it anyway: a
        pause the person asked for (up to about half a second, bench/RESULTS.md §3), not one at
        every arrow key through the tree."""
        if self.query_one(ContentSwitcher).current == "memory-rendered":
            self._set_mode("source")
            return
        if self.snapshot is not None and _too_long(self.snapshot.text):
            self._anyway = self.snapshot.rel
            self._render_file()
        self._set_mode("rendered")

    def _render_file(self) -> None:
        """The file shown, rendered with its entries' marks (unchanged text is not laid out again)."""
        if self.snapshot is not None:
            self.query_one("#memory-markdown", MarkdownView).show(decorate_markdown(self.snapshot.text, self._entries))

    def action_edit(self) -> None:
        if self.current:
            showing_source = self.query_one(ContentSwitcher).current == "memory-source"
            line = self.query_one("#memory-source", TextArea).cursor_location[0] + 1 if showing_source else None
            self.post_message(EditFile(self.current, line))

    def action_reload(self) -> None:
        self.refresh_from_engine(frozenset())

    # ------------------------------------------------------------------ a changed fact

    def _selected_entry(self) -> EntryView | None:
        table = self.query_one(EntriesTable)
        if not self._entries or table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((v for v in self._entries if _entry_key(v) == key), None)

    def action_supersede(self) -> None:
        """Mark the selected entry superseded by the one the person picks (or undo its mark):
        the same write as ``clawmem supersede`` (engine/curation/service.py)."""
        view, rel = self._selected_entry(), self.current
        if view is None or rel is None:
            self.notify("Select an entry in the entries table first.", severity="warning")
            return
        e = view.entry
        ref = f"{rel}:{e.start_line}"
        if e.superseded:
            pointer = f" by {e.superseded_by}" if e.superseded_by else ""
            body = f"{ref} is marked superseded{pointer}. Put back what was there before the mark?"

            def undo(yes: bool | None) -> None:
                if yes:
                    self.run_engine(
                        lambda: self.engine.unsupersede(ref),
                        lambda _: self._changed(f"{ref}: the superseded mark is undone"),
                        group="memory-supersede",
                        failure=f"{ref} could not be changed",
                    )

            self.app.push_screen(ConfirmModal(f"Undo: {ref}", body, yes="Undo", no="Keep"), undo)
            return
        if e.kind != "bullet":
            self.notify("Only a bullet entry can be marked superseded.", severity="warning")
            return
        self.run_engine(
            lambda: self.engine.successors(rel, e.start_line),
            lambda found: self.app.push_screen(SupersedeModal(ref, e.display, found), self._mark(ref)),
            group="memory-supersede",
            failure=f"candidates for {ref} could not be found",
        )

    def _mark(self, ref: str) -> Callable[[str | None], None]:
        def mark(newer: str | None) -> None:
            if newer:
                self.run_engine(
                    lambda: self.engine.supersede(ref, newer),
                    lambda _: self._changed(f"{ref} is marked superseded by {newer}"),
                    group="memory-supersede",
                    failure=f"{ref} could not be marked",
                )

        return mark

    def action_proposals(self) -> None:
        """The supersessions agents proposed (MCP ``supersede_propose``), to accept or reject."""
        self.run_engine(
            lambda: self.engine.curation.proposals(),
            lambda found: self.app.push_screen(ProposalsModal(found), self._decide),
            group="memory-supersede",
            failure="the proposals could not be read",
        )

    def _decide(self, choice: tuple[str, str] | None) -> None:
        if choice is None:
            return
        what, ident = choice
        if what == "accept":
            self.run_engine(
                lambda: self.engine.curation.accept(ident),
                lambda done: self._changed(
                    f"accepted: {done[0].older_path}:{done[0].older_line} is marked superseded by "
                    f"{done[0].newer_path}:{done[0].newer_line}"
                ),
                group="memory-supersede",
                failure=f"proposal {ident[:8]} could not be applied",
            )
            return

        def reject(reason: str | None) -> None:
            if reason is not None:
                self.run_engine(
                    lambda: self.engine.curation.reject(ident, reason),
                    lambda done: self._changed(f"rejected proposal {done.short_id}: it is not proposed again"),
                    group="memory-supersede",
                    failure=f"proposal {ident[:8]} could not be rejected",
                )

        self.app.push_screen(
            ReasonModal(f"Reject proposal {ident[:8]}", "Why is the old entry still true?", yes="Reject"), reject
        )

    def _changed(self, message: str) -> None:
        self.notify(message, title=self.NOTIFY_TITLE)
        self.refresh_from_engine(frozenset())
