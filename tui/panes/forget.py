"""Forget pane: pick sessions, see exactly what forgetting them deletes, confirm, then see the proof.

The dry-run plan (``engine.forget.plan``, which writes nothing) is grouped by artifact type — memory
entries and lines, index chunks and their FTS, vector and embedding-cache rows, recall entries,
preimages, proposals, origin rows … — with counts, and the selected group's actual items: file:line
and text, chunk ids, recall keys and snippets. What survives, and why, is a group too. ``x`` (or
Enter on a group) asks first, then runs the forget against that very plan (nothing is deleted if
the memory changed since the preview) and shows the residual check: every place a forgotten
snippet is still found, or a big green 0.
"""

from __future__ import annotations

import re
from typing import ClassVar

from clawmem.engine.errors import ClawmemError
from clawmem.engine.forget.service import ForgetPlan, ForgetResult
from clawmem.engine.openclaw.sessions import OpenClawSession
from clawmem.engine.sessions.service import SessionSummary
from clawmem.tui.panes.pane import Pane
from clawmem.tui.render.forget import (
    confirm_body,
    counted,
    group_rows,
    openclaw_session_prompt,
    render_group,
    render_plan_header,
    render_result_header,
    session_prompt,
)
from clawmem.tui.widgets.measured_table import MeasuredTable
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Digits, Input, Label, SelectionList, Static, Switch
from textual.widgets.selection_list import Selection

DEBOUNCE_S = 0.4
NARROW = 130


# --------------------------------------------------------------------------------------------- pane


class GroupsTable(MeasuredTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="forget.groups.down"),
        Binding("k", "cursor_up", "Up", show=False, id="forget.groups.up"),
        Binding("g", "scroll_top", "Top", show=False, id="forget.groups.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="forget.groups.bottom"),
    ]


class SessionPicker(SelectionList[str]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="forget.sessions.down"),
        Binding("k", "cursor_up", "Up", show=False, id="forget.sessions.up"),
        Binding("g", "first", "Top", show=False, id="forget.sessions.top"),
        Binding("G", "last", "Bottom", show=False, id="forget.sessions.bottom"),
    ]


class ForgetPane(Pane):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "p",
            "plan",
            "Preview",
            id="forget.plan",
            tooltip="Compute the dry-run plan for the picked sessions again (it writes nothing).",
        ),
        Binding(
            "x",
            "run",
            "Forget…",
            id="forget.run",
            tooltip="Forget the picked sessions as previewed (asks first; refused if the memory changed).",
        ),
        Binding(
            "t",
            "toggle_purge",
            "Purge transcripts",
            id="forget.purge",
            tooltip="Also delete the imported transcripts (kept by default, as in OpenClaw).",
        ),
        Binding(
            "ctrl+l",
            "focus_selector",
            "Ids/keys",
            id="forget.focus-selector",
            tooltip="Type session ids or keys to forget (comma-separated).",
        ),
        Binding("escape", "leave_input", "Groups", show=False, id="forget.leave-input"),
    ]
    HELP = "forget"
    NOTIFY_TITLE = "forget"
    PALETTE: ClassVar = [
        ("forget: Preview a forget", "The dry-run plan for the picked sessions", "plan"),
        ("forget: Forget the picked sessions", "Delete what the plan lists, then run the residual check", "run"),
        ("forget: Toggle purge transcripts", "Also delete the imported transcripts", "toggle_purge"),
    ]

    def __init__(self) -> None:
        super().__init__(id="forget-pane")
        self.sessions: tuple[SessionSummary, ...] = ()
        self.openclaw_sessions: tuple[OpenClawSession, ...] = ()  # with ``clawmem --openclaw``
        self.chosen: list[str] = []
        self.plan: ForgetPlan | None = None
        self.result: ForgetResult | None = None
        self.group: str | None = None
        self.running = False
        self._generation = 0
        self._timer: Timer | None = None
        self._note: Text | None = None
        self._sticky = False  # the note is an error that stays until the user acts again
        self._binding_state: tuple[bool | None, ...] | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="forget-pick"):
            picker = SessionPicker(id="forget-sessions")
            picker.border_title = "Sessions to forget (space picks)"
            yield picker
            with Vertical(id="forget-controls"):
                yield Input(placeholder="or type ids / keys (ctrl+l)", id="forget-selector")
                with Horizontal(id="forget-purge-row"):
                    yield Switch(False, id="forget-purge")
                    yield Label("purge transcripts too (t)", id="forget-purge-label")
        yield Static("", id="forget-header")
        with Horizontal(id="forget-banner"):
            yield Digits("0", id="forget-residual-digits")
            yield Static("", id="forget-residual-text")
        with Horizontal(id="forget-body"):
            groups = GroupsTable(id="forget-groups", cursor_type="row", zebra_stripes=True)
            groups.add_column("Artifact", key="label", width=18)
            groups.add_column("Count", key="count", width=5)
            yield groups
            with VerticalScroll(id="forget-items-scroll"):
                yield Static("", id="forget-items")
        yield Static("", id="forget-status")

    def on_mount(self) -> None:
        if not self.engine.settings.tui.cursor_blink:
            self.query_one("#forget-selector", Input).cursor_blink = False
        self.query_one("#forget-banner").display = False
        self._show_empty()
        self.refresh_from_engine(frozenset())

    def on_resize(self) -> None:
        self.set_class(self.size.width < NARROW, "narrow")

    # ------------------------------------------------------------------------------------ sessions

    def refresh_from_engine(self, paths: frozenset[str]) -> None:
        self._load_sessions()
        if self.plan is not None and self.result is None and not self.running:
            self.compute_plan()  # the memory may have changed under the preview

    def _load_sessions(self) -> None:
        def read() -> tuple[tuple[SessionSummary, ...], tuple[OpenClawSession, ...]]:
            theirs: tuple[OpenClawSession, ...] = ()
            if self.engine.openclaw is not None:
                try:
                    theirs = self.engine.openclaw.sessions()
                except ClawmemError:  # a refused shape: the Sessions pane says why; clawmem's own still show
                    pass
            return self.engine.sessions.summaries(), theirs

        self.run_engine(
            read,
            lambda got: self._show_sessions(*got),
            group="forget-sessions",
            failure="sessions could not be read",
        )

    def _show_sessions(
        self, sessions: tuple[SessionSummary, ...], openclaw: tuple[OpenClawSession, ...] | None = None
    ) -> None:
        self.sessions = sessions
        if openclaw is not None:
            self.openclaw_sessions = openclaw
        picker: SelectionList[str] = self.query_one("#forget-sessions", SelectionList)
        highlighted = picker.highlighted
        with picker.prevent(SelectionList.SelectedChanged, SelectionList.SelectionToggled):
            picker.clear_options()
            picker.add_options(
                [Selection(session_prompt(s), s.session_id, s.session_id in self.chosen) for s in sessions]
                + [
                    Selection(openclaw_session_prompt(s), s.session_id, s.session_id in self.chosen)
                    for s in self.openclaw_sessions
                ]
            )
        if picker.option_count:
            picker.highlighted = min(highlighted or 0, picker.option_count - 1)
        if self.plan is None and self.result is None:
            self._show_empty()

    def preselect(self, session_ids: tuple[str, ...]) -> None:
        """Pick exactly these sessions (from the Sessions pane) and preview their forget at once."""
        self.chosen = list(session_ids)
        self.result = None
        self._set_note(None)
        field = self.query_one("#forget-selector", Input)
        with field.prevent(Input.Changed):
            field.value = ""
        self._show_sessions(self.sessions)
        self.compute_plan()
        self.call_after_refresh(self.action_leave_input)  # the plan is what to look at now

    def selectors(self) -> tuple[str, ...]:
        typed = [t for t in re.split(r"[,\s]+", self.query_one("#forget-selector", Input).value) if t]
        return tuple(dict.fromkeys([*self.chosen, *typed]))

    # ------------------------------------------------------------------------------------ plan

    def compute_plan(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.running:
            return  # the result of the run comes first; pick again afterwards
        selectors = self.selectors()
        self._generation += 1
        if not selectors:
            self.plan = None
            self._show_empty()
            return
        purge = self.query_one("#forget-purge", Switch).value
        if not self._sticky:
            self._set_note(Text("Computing the dry-run plan…", style="italic"))
        self._compute(self._generation, selectors, purge)

    def _schedule_plan(self) -> None:
        self.result = None
        self._set_note(None)
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_S, self.compute_plan)

    def _compute(self, generation: int, selectors: tuple[str, ...], purge: bool) -> None:
        self.run_engine(
            lambda: self.engine.forget.plan(selectors, purge_transcripts=purge),
            lambda plan: self._show_plan(generation, plan),
            group="forget-plan",
            failure="the forget plan failed",
            on_error=lambda exc: self._plan_failed(generation, str(exc)),
            notify=False,  # the pane shows why there is no plan
        )

    def _plan_failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self.plan = None
            self._show_empty()
            self._set_note(Text(f"✗ {message}", style="bold red"), sticky=True)

    def _show_plan(self, generation: int, plan: ForgetPlan) -> None:
        if generation != self._generation or self.result is not None:
            return  # a newer preview is on its way, or a run finished meanwhile
        self.plan = plan
        if not self._sticky:
            self._note = None
        self.query_one("#forget-banner").display = False
        self.query_one("#forget-header", Static).update(render_plan_header(plan))
        self._fill_groups(group_rows(plan), keep=self.group if self.group != "residual" else None)
        self._update_status()
        self._sync_bindings()

    def _fill_groups(self, rows: list[tuple[str, tuple[Text, Text]]], keep: str | None) -> None:
        table = self.query_one("#forget-groups", GroupsTable)
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key)
        keys = [k for k, _ in rows]
        self.group = keep if keep in keys else (keys[0] if keys else None)
        if self.group is not None:
            table.move_cursor(row=keys.index(self.group), animate=False, scroll=True)
        self._show_group()

    def _show_group(self) -> None:
        widget = self.query_one("#forget-items", Static)
        if self.plan is None or self.group is None:
            return
        plan = self.result.plan if self.result is not None else self.plan
        widget.update(render_group(self.group, plan, self.result))
        self.query_one("#forget-items-scroll", VerticalScroll).scroll_home(animate=False)

    def _show_empty(self) -> None:
        self.query_one("#forget-header", Static).update("")
        self.query_one("#forget-groups", GroupsTable).clear()
        self.query_one("#forget-banner").display = False
        self.group = None
        if not self.sessions:
            text = Text.assemble(
                ("No sessions to forget.\n\n", "bold"),
                ("Import a transcript in the Sessions pane (8, then i) or with ", "dim"),
                ("clawmem session import FILE.jsonl", "bold"),
                (
                    ". You can also type ids or keys above: a session "
                    "known only from its lineage can still be forgotten.",
                    "dim",
                ),
            )
        else:
            text = Text.assemble(
                ("Pick the sessions to forget ", "bold"),
                ("(space in the list, or type ids / keys).\n\n", "dim"),
                (
                    "The dry-run plan appears here: every memory entry, line, index row, recall signal, preimage and "
                    "origin row the forget would delete, grouped by artifact, and what survives. Nothing is deleted "
                    "until you press x and confirm; a residual check then proves nothing is left.",
                    "dim",
                ),
            )
        self.query_one("#forget-items", Static).update(text)
        self._update_status()
        self._sync_bindings()

    # ------------------------------------------------------------------------------------ status

    def _update_status(self) -> None:
        status = self.query_one("#forget-status", Static)
        if self.running:
            status.update(
                Text(
                    "Forgetting… (tombstones, index and plugin state, memory files, origins, re-index, residual check)",
                    style="bold yellow",
                )
            )
            return
        if self._note is not None:
            status.update(self._note)
            return
        if self.result is not None:
            n = self.result.residual_count
            status.update(
                Text.assemble(
                    (f"{'✓' if n == 0 else '✗'} {n} residual", "bold green" if n == 0 else "bold red"),
                    ("  ·  pick other sessions to preview another forget", "dim"),
                    no_wrap=True,
                    overflow="ellipsis",
                )
            )
            return
        if self.plan is None:
            status.update(Text("Nothing picked  ·  space picks a session  ·  ctrl+l types ids or keys", style="dim"))
            return
        a = self.plan.artifacts
        status.update(
            Text.assemble(
                (
                    f"{counted(a.memory_entries, 'entry', 'entries')} · {counted(a.memory_lines, 'line')} in "
                    f"{counted(a.memory_files, 'file')} · {counted(a.index_chunks, 'chunk')} · "
                    f"{counted(a.short_term_entries, 'recall entry', 'recall entries')}",
                    "bold",
                ),
                ("  ·  x forgets (asks first)  ·  p previews again", "dim"),
                no_wrap=True,
                overflow="ellipsis",
            )
        )

    def _set_note(self, note: Text | None, *, sticky: bool = False) -> None:
        self._note = note
        self._sticky = sticky and note is not None
        self._update_status()

    # ------------------------------------------------------------------------------------ events

    @on(SelectionList.SelectedChanged, "#forget-sessions")
    def _picked(self, event: SelectionList.SelectedChanged[str]) -> None:
        event.stop()
        self.chosen = list(event.selection_list.selected)
        self._schedule_plan()

    @on(Input.Changed, "#forget-selector")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        self._schedule_plan()

    @on(Input.Submitted, "#forget-selector")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.result = None
        self.compute_plan()
        self.query_one("#forget-groups", GroupsTable).focus()

    @on(Switch.Changed, "#forget-purge")
    def _purge_changed(self, event: Switch.Changed) -> None:
        event.stop()
        if self.plan is not None or self.selectors():
            self.result = None
            self._set_note(None)
            self.compute_plan()

    @on(DataTable.RowHighlighted, "#forget-groups")
    def _group_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = str(event.row_key.value) if event.row_key is not None else None
        if key is not None and key != self.group:
            self.group = key
            self._show_group()

    @on(DataTable.RowSelected, "#forget-groups")
    def _group_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_run()

    # ------------------------------------------------------------------------------------ actions

    def _sync_bindings(self) -> None:
        """Refresh the footer only when a key's availability changed (the footer is rebuilt each time)."""
        state = tuple(self.check_action(a, ()) for a in ("run", "plan"))
        if state != self._binding_state:
            self._binding_state = state
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run":
            return True if self.plan is not None and self.result is None and not self.running else None
        if action == "plan":
            return None if self.running else True
        return True

    def action_plan(self) -> None:
        self.result = None
        self._set_note(None)
        self.compute_plan()

    def action_toggle_purge(self) -> None:
        switch = self.query_one("#forget-purge", Switch)
        switch.value = not switch.value

    def action_focus_selector(self) -> None:
        self.query_one("#forget-selector", Input).focus()

    def action_leave_input(self) -> None:
        self.query_one("#forget-groups", GroupsTable).focus()

    def action_run(self) -> None:
        from clawmem.tui.modals.confirm import ConfirmModal

        plan = self.plan
        if self.running:
            return
        if self.result is not None:
            self.notify("Done: this forget has run. Pick sessions (or press p) to preview another.", severity="warning")
            return
        if plan is None:
            self.notify("Pick sessions and wait for their preview first.", severity="warning")
            return
        n = len(plan.session_ids)
        title = f"Forget {counted(n, 'session')}? ({', '.join(plan.session_ids)})"
        body = f"This deletes {confirm_body(plan)}"

        def done(yes: bool | None) -> None:
            if yes and self.plan is plan:
                self.running = True
                self._set_note(None)
                self._sync_bindings()
                self._run(plan)

        self.app.push_screen(ConfirmModal(title, body, yes="Forget", no="Keep"), done)

    def _run(self, plan: ForgetPlan) -> None:
        self.run_engine(
            lambda: self.engine.forget.run(plan.selectors, purge_transcripts=plan.purge_transcripts, expected=plan),
            self._finished,
            group="forget-run",
            failure="forget failed",
            on_error=lambda exc: self._run_failed(str(exc)),
            notify=False,  # the pane shows why nothing was forgotten
        )

    def _run_failed(self, message: str) -> None:
        self.running = False
        self.result = None
        self._set_note(Text(f"✗ {message}", style="bold red"), sticky=True)
        self.compute_plan()  # show what is there now
        self._sync_bindings()

    def _finished(self, result: ForgetResult) -> None:
        self.running = False
        self.result = result
        self._set_note(None)
        n = result.residual_count
        banner = self.query_one("#forget-banner")
        banner.display = True
        banner.set_class(n > 0, "bad")
        self.query_one("#forget-residual-digits", Digits).update(str(n))
        if n == 0:
            text = Text.assemble(
                ("residual", "bold green"),
                (
                    "\n✓ nothing of it is left: files, index, recall store, review state and origins were searched",
                    "green",
                ),
            )
        else:
            text = Text.assemble(
                ("residual", "bold red"),
                (f"\n✗ {counted(n, 'place')} still hold forgotten text — see the residual check below", "red"),
            )
        self.query_one("#forget-residual-text", Static).update(text)
        self.query_one("#forget-header", Static).update(render_result_header(result))
        self._fill_groups(group_rows(result.plan, result), keep="residual")
        self._update_status()
        self._sync_bindings()
        confirmed = self.plan.refusals if self.plan is not None else ()
        for refusal in (r for r in result.refusals if r not in confirmed):  # files that changed during the run
            self.notify(f"{refusal.what}: {refusal.reason}", title="forget", severity="warning")
        self.clawmem_app.panes["sessions"].refresh_from_engine(frozenset())
        self._load_sessions()
        # forget.run re-indexed the changed files' text; embed their new chunks in the background.
        changed = frozenset(f.path for f in result.plan.files if f.action == "rewrite" and not f.corpus)
        if changed:
            self.clawmem_app.start_indexing(only=changed)
