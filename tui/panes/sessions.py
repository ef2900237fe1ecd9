"""Sessions pane: imported transcripts and where their words could go.

A table of sessions (kind, channel and whether it is trusted, event counts, the least trusted
turn, tainted turns, the session-memory note, whether it was forgotten) and, for the selected
one, its transcript: one row per turn with its origin class as a coloured label, ``[network]``
on tool results fetched from the web and ``[tainted]`` on the turns they taint — markers, not
only colour — then its flush provenance and the MEMORY.md entries derived from it.

Opened on an OpenClaw home (``clawmem --openclaw``), the agent's own sessions are rows of the same
table, marked ◆ and read in place from its database: their events with the trust class clawmem
derives. No note is written for them (OpenClaw's own hook writes those); ``f`` previews forgetting
what clawmem derived from one, with the OpenClaw command that removes its own copy.
"""

from __future__ import annotations

from typing import ClassVar

from clawmem.engine.errors import ClawmemError
from clawmem.engine.openclaw.sessions import OpenClawSession, OpenClawSessionDetail
from clawmem.engine.sessions.service import (
    ImportResult,
    NoteResult,
    SessionDetail,
    SessionSummary,
)
from clawmem.tui.panes.forget import ForgetPane
from clawmem.tui.panes.pane import Pane
from clawmem.tui.render.sessions import (
    OPENCLAW_MARK,
    empty_state,
    openclaw_session_cells,
    render_header,
    render_openclaw_header,
    render_openclaw_transcript,
    render_transcript,
    session_cells,
)
from clawmem.tui.widgets.fit_table import FitTable
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static, TabbedContent

NARROW = 130  # below this width the key and note columns move to the header above the transcript
NARROW_LABELS = ("Session", "Kind", "Channel", "Trusted", "Events", "Lowest", "Tainted", "Forgotten")
OPENCLAW_KEY = "openclaw:"  # the table key of an OpenClaw session: this prefix and its id
WIDE_LABELS = (*NARROW_LABELS, "Key", "Note")


class SessionsTable(FitTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="sessions.table.down"),
        Binding("k", "cursor_up", "Up", show=False, id="sessions.table.up"),
        Binding("g", "scroll_top", "Top", show=False, id="sessions.table.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="sessions.table.bottom"),
    ]


# --------------------------------------------------------------------------------------------- pane


class SessionsPane(Pane):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "i",
            "import_session",
            "Import",
            id="sessions.import",
            tooltip="Import a JSONL transcript (every line is checked first; all or nothing).",
        ),
        Binding(
            "n",
            "write_note",
            "Write note",
            id="sessions.note",
            tooltip="Write the session-memory note memory/YYYY-MM-DD-<slug>.md (untrusted turns left out).",
        ),
        Binding(
            "f",
            "forget",
            "Forget…",
            id="sessions.forget",
            tooltip="Preview forgetting this session in the Forget pane (nothing is deleted yet).",
        ),
    ]
    HELP = "sessions"
    NOTIFY_TITLE = "sessions"
    PALETTE: ClassVar = [
        ("sessions: Import a transcript", "Import a JSONL transcript (all lines or none)", "import_session"),
        ("sessions: Write session-memory note", "memory/YYYY-MM-DD-<slug>.md for the selected session", "write_note"),
        ("sessions: Forget this session", "Preview what forgetting the selected session deletes", "forget"),
    ]

    def __init__(self) -> None:
        super().__init__(id="sessions-pane")
        self.sessions: tuple[SessionSummary, ...] | None = None
        self.openclaw_sessions: tuple[OpenClawSession, ...] = ()
        self.openclaw_problem: str | None = None  # why OpenClaw's sessions could not be read
        self.session_id: str | None = None
        self.detail: SessionDetail | None = None
        self._wide = False
        self._note: Text | None = None
        self._binding_state: tuple[bool | None, ...] | None = None

    def compose(self) -> ComposeResult:
        yield SessionsTable(NARROW_LABELS, caps={0: 24, 2: 16}, id="sessions-table")
        yield Static("", id="sessions-header")
        with VerticalScroll(id="sessions-transcript-scroll"):
            yield Static("", id="sessions-transcript")
        yield Static("", id="sessions-status")

    def on_mount(self) -> None:
        self.refresh_from_engine(frozenset())

    def on_resize(self) -> None:
        narrow = self.size.width < NARROW
        self.set_class(narrow, "narrow")
        if self._wide == narrow:  # the column set changes
            self._wide = not narrow
            if self.sessions is not None:
                self._fill()

    # ------------------------------------------------------------------------------------ loading

    def refresh_from_engine(self, paths: frozenset[str]) -> None:
        self._load()

    def _load(self) -> None:
        def read() -> tuple[tuple[SessionSummary, ...], tuple[OpenClawSession, ...], str | None]:
            home = self.engine.openclaw
            theirs: tuple[OpenClawSession, ...] = ()
            problem = None
            if home is not None:
                try:
                    theirs = home.sessions()
                except ClawmemError as exc:  # a refused shape: clawmem's own sessions still show
                    problem = str(exc)
            return self.engine.sessions.summaries(), theirs, problem

        self.run_engine(read, lambda got: self._show(*got), group="sessions-load", failure="sessions could not be read")

    def _show(
        self,
        sessions: tuple[SessionSummary, ...],
        openclaw: tuple[OpenClawSession, ...] = (),
        problem: str | None = None,
    ) -> None:
        self.sessions = sessions
        self.openclaw_sessions = openclaw
        self.openclaw_problem = problem
        self._fill()
        if self.session_id is None:
            self.detail = None
            self.query_one("#sessions-header", Static).display = False
            self.query_one("#sessions-transcript", Static).update(empty_state())
        else:
            self._load_detail(self.session_id)
        self._update_status()
        self._sync_bindings()

    def _fill(self) -> None:
        table = self.query_one(SessionsTable)
        table.labels = WIDE_LABELS if self._wide else NARROW_LABELS
        table.caps = {0: 24, 2: 16, 8: 24} if self._wide else {0: 24, 2: 16}
        rows = [(s.session_id, session_cells(s, wide=self._wide)) for s in self.sessions or ()]
        rows += [
            (OPENCLAW_KEY + s.session_id, openclaw_session_cells(s, wide=self._wide)) for s in self.openclaw_sessions
        ]
        self.session_id = table.fill(rows, self.session_id)

    def _load_detail(self, session_id: str) -> None:
        home = self.engine.openclaw
        if session_id.startswith(OPENCLAW_KEY) and home is not None:
            theirs = session_id.removeprefix(OPENCLAW_KEY)
            self.run_engine(
                lambda: home.session(theirs),
                self._show_openclaw_detail,
                group="sessions-detail",
                failure=f"OpenClaw session {theirs} could not be read",
            )
            return
        self.run_engine(
            lambda: self.engine.sessions.show(session_id),
            self._show_detail,
            group="sessions-detail",
            failure=f"session {session_id} could not be read",
        )

    def _show_detail(self, detail: SessionDetail) -> None:
        if detail.summary.session_id != self.session_id:
            return  # the cursor moved on meanwhile
        self.detail = detail
        header = self.query_one("#sessions-header", Static)
        header.display = True
        header.update(render_header(detail))
        self.query_one("#sessions-transcript", Static).update(render_transcript(detail))
        self._sync_bindings()

    def _show_openclaw_detail(self, detail: OpenClawSessionDetail) -> None:
        if OPENCLAW_KEY + detail.summary.session_id != self.session_id:
            return  # the cursor moved on meanwhile
        self.detail = None
        header = self.query_one("#sessions-header", Static)
        header.display = True
        header.update(render_openclaw_header(detail))
        self.query_one("#sessions-transcript", Static).update(render_openclaw_transcript(detail))
        self._sync_bindings()

    def _selected(self) -> SessionSummary | None:
        return next((s for s in self.sessions or () if s.session_id == self.session_id), None)

    def _update_status(self) -> None:
        status = self.query_one("#sessions-status", Static)
        if self._note is not None:
            status.update(self._note)
            return
        sessions = self.sessions or ()
        theirs = self.openclaw_sessions
        if self.openclaw_problem:
            status.update(Text(f"OpenClaw's sessions not shown: {self.openclaw_problem}", style="bold yellow"))
            return
        if not sessions and not theirs:
            status.update(Text("No sessions  ·  i imports a JSONL transcript", style="dim"))
            return
        forgotten = sum(1 for s in sessions if s.forgotten_at)
        tainted = sum(1 for s in sessions if s.tainted_turns) + sum(1 for s in theirs if s.tainted_turns)
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{len(sessions)} session{'s' if len(sessions) != 1 else ''}", style="bold")
        if self.engine.openclaw is not None:
            line.append(f" + {OPENCLAW_MARK}{len(theirs)} OpenClaw's (read in place)", style="bold cyan")
        line.append(f"  ·  {tainted} with tainted turns", style="bold red" if tainted else "dim")
        line.append(f"  ·  {forgotten} forgotten", style="dim")
        line.append("  ·  i import  ·  n write note  ·  f forget", style="dim")
        status.update(line)

    def _set_note(self, note: Text | None) -> None:
        self._note = note
        self._update_status()

    # ------------------------------------------------------------------------------------ events

    @on(DataTable.RowHighlighted, "#sessions-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = str(event.row_key.value) if event.row_key is not None else None
        if key is not None and key != self.session_id:
            self.session_id = key
            self._load_detail(key)
            self._sync_bindings()

    # ------------------------------------------------------------------------------------ actions

    def _sync_bindings(self) -> None:
        """Refresh the footer only when a key's availability changed (the footer is rebuilt each time)."""
        state = tuple(self.check_action(a, ()) for a in ("write_note", "forget"))
        if state != self._binding_state:
            self._binding_state = state
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        s = self._selected()
        if action == "write_note":
            ok = s is not None and s.kind == "interactive" and not s.forgotten_at and not s.note_path
            return True if ok else None
        if action == "forget":
            return True if s is not None or self._selected_openclaw() is not None else None
        return True

    def _selected_openclaw(self) -> str | None:
        """The id of the selected OpenClaw session (None when the selection is clawmem's own)."""
        key = self.session_id or ""
        return key.removeprefix(OPENCLAW_KEY) if key.startswith(OPENCLAW_KEY) else None

    def action_import_session(self) -> None:
        from clawmem.tui.modals.import_session import ImportSessionModal

        def done(result: ImportResult | None) -> None:
            if result is not None:
                self._imported(result)

        self.app.push_screen(ImportSessionModal(), done)

    def _imported(self, result: ImportResult) -> None:
        new = [s for s in result.sessions if s.status == "imported"]
        notes = frozenset(s.note.path for s in result.sessions if s.note is not None)
        tainted = sum(s.tainted_turns for s in new)
        note = Text(
            f"✓ imported {len(new)} session{'s' if len(new) != 1 else ''} ({result.events} events) from "
            f"{result.source_file}",
            style="green",
        )
        if tainted:
            note.append(f"  ·  {tainted} tainted turn{'s' if tainted != 1 else ''}", style="bold red")
        if len(new) < len(result.sessions):
            note.append(f"  ·  {len(result.sessions) - len(new)} already imported, unchanged", style="dim")
        if notes:
            note.append(f"  ·  {len(notes)} note{'s' if len(notes) != 1 else ''} written", style="green")
        for warning in result.warnings:
            self.notify(warning, title="sessions", severity="warning")
        if result.sessions:
            self.session_id = result.sessions[0].session_id
        self._set_note(note)
        self._reindex(notes)
        self.refresh_from_engine(frozenset())

    def _reindex(self, notes: frozenset[str]) -> None:
        """New notes (and, with the ``sessions`` index source, transcripts) become searchable."""
        from clawmem.engine.sessions import index as session_index

        if session_index.enabled(self.engine.settings):
            self.clawmem_app.start_indexing()
        elif notes:
            self.clawmem_app.start_indexing(only=notes)

    def action_write_note(self) -> None:
        s = self._selected()
        if s is None:
            return
        self._set_note(Text(f"Writing the session-memory note for {s.session_id}…", style="italic"))
        self._write_note(s.session_id)

    def _write_note(self, session_id: str) -> None:
        self.run_engine(
            lambda: self.engine.sessions.write_note(session_id),
            self._note_written,
            group="sessions-write",
            failure="the note could not be written",
            on_error=lambda exc: self._set_note(Text(f"✗ {exc}", style="red")),
        )

    def _note_written(self, result: NoteResult) -> None:
        left = (
            f"; {result.turns_left_out} untrusted turn{'s' if result.turns_left_out != 1 else ''} left out"
            if result.turns_left_out
            else ""
        )
        self._set_note(
            Text(
                f"✓ wrote {result.path} ({result.line_count} lines, {result.turns_included} messages{left})",
                style="green",
            )
        )
        self._reindex(frozenset({result.path}))
        self.refresh_from_engine(frozenset())

    def action_forget(self) -> None:
        s = self._selected()
        picked = s.session_id if s is not None else self._selected_openclaw()
        if picked is None:
            return
        # Drop the focus first: a focused table that gets hidden hands the focus to a sibling in this
        # (hidden) tab, which switches the tabs back for a frame. Then the Forget pane focuses its plan.
        self.screen.set_focus(None)
        self.app.screen_stack[0].query_one(TabbedContent).active = "forget"
        self.clawmem_app.pane(ForgetPane).preselect((picked,))
