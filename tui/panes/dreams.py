"""Dreams pane: the Dreaming review queue and what it rests on.

Four views: **Review** (proposals with their MEMORY.md diff and the operations behind them —
candidate, action, score, source), **History** (applied rewrites, with revert; a refused revert
shows the preimage, the rewrite and the current file), **Candidates** (every recall entry, and
for the selected one *why it is or is not promoted*: components, boosts, gates) and
**DREAMS.md** rendered. `r` runs a cycle now; in manual review it ends in a proposal here.

Opened on an OpenClaw home (``clawmem --openclaw``), a fifth view, **◆ OpenClaw tonight**, shows
what the agent's own Deep phase would promote tonight: its recall entries read in place, each
gate passed or failed with the numbers, and the recall history of the selected one. Promoting
them stays with OpenClaw; the view names the command.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import ClassVar

from clawmem.engine.dreaming import report
from clawmem.engine.dreaming.models import (
    CandidateExplanation,
    DreamRun,
    HistoryItem,
    Proposal,
    RevertResult,
)
from clawmem.engine.errors import ClawmemError
from clawmem.engine.openclaw.dreaming import OpenClawCandidate, OpenClawDreaming
from clawmem.tui.messages import EngineFailed
from clawmem.tui.panes.pane import Pane
from clawmem.tui.render.dreams import (
    candidate_cells,
    diary_markdown,
    history_cells,
    openclaw_candidate_cells,
    openclaw_heading,
    operation_cells,
    proposal_cells,
    render_explain,
    render_history,
    render_openclaw_candidate,
    render_proposal,
    render_refusal,
    render_refusal_diffs,
    revert_texts,
    when,
)
from clawmem.tui.widgets.fit_table import FitTable
from clawmem.tui.widgets.markdown_view import MarkdownView
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Static, TabbedContent, TabPane

NARROW = 130
VIEWS = ("review", "history", "candidates", "diary", "openclaw")
PHASE_STEPS = ("ingest", "light", "rem", "deep", "report")


@dataclass(frozen=True)
class DreamsData:
    """One consistent read of everything the pane shows."""

    proposals: tuple[Proposal, ...]
    history: tuple[HistoryItem, ...]
    candidates: tuple[CandidateExplanation, ...]
    dreams_name: str
    dreams_text: str | None  # None: the file does not exist yet
    review: str  # dreaming.review: manual | auto
    openclaw: OpenClawDreaming | None = None  # the OpenClaw home's recall entries (--openclaw)
    openclaw_problem: str | None = None  # why they could not be read, one line


def _shown(widget: Widget) -> bool:
    """Displayed, with every ancestor: a widget in a hidden view must not take the focus (the view
    tabs follow the focus, so a hidden table taking it would switch the view)."""
    node: object = widget
    while isinstance(node, Widget):
        if not node.display:
            return False
        node = node.parent
    return True


class DreamsTable(FitTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="dreams.table.down"),
        Binding("k", "cursor_up", "Up", show=False, id="dreams.table.up"),
        Binding("g", "scroll_top", "Top", show=False, id="dreams.table.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="dreams.table.bottom"),
    ]

    def allow_focus(self) -> bool:
        return super().allow_focus() and _shown(self)


class DreamsScroll(VerticalScroll):
    """A scrollable detail panel (focusable, so arrows and PgUp/PgDn scroll it) of one view."""

    def allow_focus(self) -> bool:
        return super().allow_focus() and _shown(self)


# --------------------------------------------------------------------------------------------- pane


class DreamsPane(Pane):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "a",
            "approve",
            "Approve",
            id="dreams.approve",
            tooltip="Apply the selected pending proposal to MEMORY.md (hash-checked; undo with R).",
        ),
        Binding(
            "x",
            "reject",
            "Reject",
            id="dreams.reject",
            tooltip="Reject the selected proposal with a reason; its candidates wait for new signals.",
        ),
        Binding("r", "run", "Dream now", id="dreams.run", tooltip="Run one Dreaming cycle (Light → REM → Deep) now."),
        Binding(
            "R",
            "revert",
            "Revert",
            id="dreams.revert",
            tooltip="Restore MEMORY.md to the selected rewrite's preimage (refused if it changed since).",
        ),
        Binding("escape", "stop", "Stop", id="dreams.stop", tooltip="Stop the running Dreaming cycle."),
        Binding(
            "v",
            "toggle_fold",
            "Full texts",
            id="dreams.toggle-fold",
            tooltip="After a refused revert: show the three texts in full, or fold their unchanged lines.",
        ),
        Binding("p", "view('review')", "Review queue", show=False, id="dreams.view-review"),
        Binding("h", "view('history')", "History", show=False, id="dreams.view-history"),
        Binding("c", "view('candidates')", "Candidates", show=False, id="dreams.view-candidates"),
        Binding("d", "view('diary')", "DREAMS.md", show=False, id="dreams.view-diary"),
        Binding("o", "view('openclaw')", "OpenClaw tonight", show=False, id="dreams.view-openclaw"),
    ]
    HELP = "dreams"
    NOTIFY_TITLE = "dreams"
    PALETTE: ClassVar = [
        ("dreams: Run a Dreaming cycle", "Light → REM → Deep now; manual review ends in a proposal", "run"),
        ("dreams: Review proposals", "Pending MEMORY.md rewrites with their diffs", "view('review')"),
        ("dreams: Approve proposal", "Apply the selected pending proposal", "approve"),
        ("dreams: Reject proposal", "Reject the selected proposal with a reason", "reject"),
        ("dreams: Show rewrite history", "Applied rewrites; revert from here", "view('history')"),
        ("dreams: Revert rewrite", "Restore the selected rewrite's preimage", "revert"),
        ("dreams: Explain candidates", "Why each recall entry is (not) promoted", "view('candidates')"),
        ("dreams: Read DREAMS.md", "The dream diary, rendered", "view('diary')"),
    ]

    def __init__(self) -> None:
        super().__init__(id="dreams-pane")
        self.data: DreamsData | None = None
        self.proposal_id: str | None = None
        self.operation_key: str | None = None
        self.history_id: str | None = None
        self.candidate_key: str | None = None
        self.openclaw_key: str | None = None
        self.refused: dict[str, RevertResult] = {}
        self.fold_texts = True
        self.running = False
        self._cancel: threading.Event | None = None
        self._done_steps: list[str] = []
        self._note: Text | None = None

    # ------------------------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with TabbedContent(id="dreams-views", initial="dreams-review"):
            with TabPane("Review queue (p)", id="dreams-review"), Vertical():
                yield DreamsTable(
                    ("Proposal", "Status", "Mode", "Created", "+add =mrg >sup", "Note"), id="dreams-proposals"
                )
                yield DreamsTable(
                    ("Action", "Score", "Sig", "UQ", "Source", "Candidate"), caps={4: 34}, id="dreams-operations"
                )
                with DreamsScroll(id="dreams-diff-scroll", classes="dreams-detail"):
                    yield Static("", id="dreams-diff")
            with TabPane("History (h)", id="dreams-history"), Vertical():
                yield DreamsTable(
                    ("Rewrite", "Status", "Mode", "Applied", "Reverted", "+add =mrg >sup", "Preimage", "MEMORY.md"),
                    id="dreams-history-table",
                )
                with DreamsScroll(id="dreams-history-scroll", classes="dreams-detail"):
                    yield Static("", id="dreams-history-detail")
                    with Horizontal(id="dreams-revert-texts"):
                        for name in ("preimage", "rewrite", "current"):
                            yield Static("", id=f"dreams-revert-{name}", classes="dreams-revert-text")
                    yield Static("", id="dreams-history-diffs")
            with TabPane("Candidates (c)", id="dreams-candidates"), Horizontal(id="dreams-candidates-body"):
                yield DreamsTable(
                    ("Score", "Status", "Sig", "UQ", "Source", "Snippet"), caps={4: 34}, id="dreams-candidates-table"
                )
                with DreamsScroll(id="dreams-explain-scroll", classes="dreams-detail"):
                    yield Static("", id="dreams-explain")
            with TabPane("DREAMS.md (d)", id="dreams-diary"), DreamsScroll(id="dreams-diary-scroll"):
                yield MarkdownView(id="dreams-diary-md")
            if self.engine.openclaw is not None:
                with TabPane("◆ OpenClaw tonight (o)", id="dreams-openclaw"), Vertical():
                    yield Static("", id="dreams-openclaw-heading")
                    with Horizontal(id="dreams-openclaw-body"):
                        yield DreamsTable(
                            ("", "Score", "Rec", "UQ", "Source", "Held back by", "Snippet"),
                            caps={4: 26},
                            id="dreams-openclaw-table",
                        )
                        with DreamsScroll(id="dreams-openclaw-scroll", classes="dreams-detail"):
                            yield Static("", id="dreams-openclaw-explain")
        yield Static("", id="dreams-status")

    def on_mount(self) -> None:
        for tabs in self.query("#dreams-views ContentTabs"):
            tabs.can_focus = False  # number keys focus the active view's table, not the tab strip
        self.refresh_from_engine(frozenset())

    def on_resize(self) -> None:
        self.set_class(self.size.width < NARROW, "narrow")

    # ------------------------------------------------------------------------------------ loading

    def refresh_from_engine(self, paths: frozenset[str]) -> None:
        self._load()

    def _load(self) -> None:
        engine = self.engine

        def read() -> DreamsData:
            dreams = report.dreams_path(engine.workspace)
            text: str | None = None
            if dreams.is_file():
                snap = engine.snapshot(dreams.name)
                text = snap.text if snap.exists else None
            theirs: OpenClawDreaming | None = None
            problem: str | None = None
            if engine.openclaw is not None:
                try:
                    theirs = engine.openclaw.dreaming(engine.clock)
                except ClawmemError as exc:
                    problem = str(exc)
            return DreamsData(
                proposals=engine.dreaming.proposals(),
                history=engine.dreaming.history(),
                candidates=engine.dreaming.candidates(),
                dreams_name=dreams.name,
                dreams_text=text,
                review=engine.settings.dreaming.review,
                openclaw=theirs,
                openclaw_problem=problem,
            )

        self.run_engine(read, self._show, group="dreams-load", failure="dreaming data could not be read")

    def _show(self, data: DreamsData) -> None:
        self.data = data
        newest_first = sorted(data.proposals, key=lambda p: p.created_at, reverse=True)
        ordered = [p for p in newest_first if p.status == "pending"] + [
            p for p in newest_first if p.status != "pending"
        ]
        self.proposal_id = self.query_one("#dreams-proposals", DreamsTable).fill(
            [(p.id, proposal_cells(p)) for p in ordered], self.proposal_id
        )
        self._show_operations()
        self.history_id = self.query_one("#dreams-history-table", DreamsTable).fill(
            [(h.proposal_id, history_cells(h)) for h in data.history], self.history_id
        )
        self._show_history_detail()
        self.candidate_key = self.query_one("#dreams-candidates-table", DreamsTable).fill(
            [(e.key, candidate_cells(e)) for e in data.candidates], self.candidate_key
        )
        self._show_explain()
        self._show_openclaw(data)
        if data.dreams_text is None:
            diary = f"# {data.dreams_name}\n\n*No dream diary yet: press `r` to run a Dreaming cycle.*"
        else:
            diary = diary_markdown(data.dreams_text)
        self.query_one("#dreams-diary-md", MarkdownView).show(diary)
        self._update_status()
        self.refresh_bindings()

    # ------------------------------------------------------------------------------------ details

    def _proposal(self, proposal_id: str | None) -> Proposal | None:
        if self.data is None or proposal_id is None:
            return None
        return next((p for p in self.data.proposals if p.id == proposal_id), None)

    def _show_operations(self) -> None:
        p = self._proposal(self.proposal_id)
        table = self.query_one("#dreams-operations", DreamsTable)
        ops = p.operations if p else ()
        keep = self.operation_key if p and any(o.candidate_key == self.operation_key for o in ops) else None
        self.operation_key = table.fill([(o.candidate_key, operation_cells(o)) for o in ops], keep)
        self._show_diff()

    def _show_diff(self) -> None:
        widget = self.query_one("#dreams-diff", Static)
        p = self._proposal(self.proposal_id)
        if p is None:
            widget.update(
                Text.assemble(
                    ("No proposals yet.\n\n", "bold"),
                    (
                        "Dreaming proposes a MEMORY.md rewrite once a note has been recalled often enough (3 signals "
                        "from 3 different queries, score ≥ 0.75). Press r to run a cycle now; see Candidates (c) for "
                        "how close each entry is.",
                        "dim",
                    ),
                )
            )
            return
        op = next((o for o in p.operations if o.candidate_key == self.operation_key), None)
        widget.update(render_proposal(p, op))

    def _history_item(self) -> HistoryItem | None:
        if self.data is None or self.history_id is None:
            return None
        return next((h for h in self.data.history if h.proposal_id == self.history_id), None)

    def _show_history_detail(self) -> None:
        widget = self.query_one("#dreams-history-detail", Static)
        texts = self.query_one("#dreams-revert-texts")
        diffs = self.query_one("#dreams-history-diffs", Static)
        h = self._history_item()
        refused = self.refused.get(self.history_id or "")
        texts.display = diffs.display = refused is not None
        if h is None:
            widget.update(Text("No MEMORY.md rewrites yet: approved proposals appear here, with revert.", style="dim"))
            return
        if refused is not None:
            widget.update(render_refusal(refused, self.fold_texts))
            diffs.update(render_refusal_diffs(refused))
            for name, text in revert_texts(refused, fold=self.fold_texts):
                self.query_one(f"#dreams-revert-{name}", Static).update(text)
            return
        widget.update(render_history(h, self._proposal(h.proposal_id)))

    def _candidate(self) -> CandidateExplanation | None:
        if self.data is None or self.candidate_key is None:
            return None
        return next((e for e in self.data.candidates if e.key == self.candidate_key), None)

    def _show_explain(self) -> None:
        widget = self.query_one("#dreams-explain", Static)
        e = self._candidate()
        if e is None:
            widget.update(
                Text.assemble(
                    ("No recall entries yet.\n\n", "bold"),
                    (
                        "Searches that find a daily note (Enter in the Search pane) and Dreaming's daily ingestion "
                        "record them; each then waits here until it passes every gate.",
                        "dim",
                    ),
                )
            )
            return
        min_score = self.engine.settings.dreaming.deep_min_score
        widget.update(render_explain(e, min_score))

    def _show_openclaw(self, data: DreamsData) -> None:
        if self.engine.openclaw is None:
            return
        self.query_one("#dreams-openclaw-heading", Static).update(
            openclaw_heading(data.openclaw, data.openclaw_problem)
        )
        candidates = data.openclaw.candidates if data.openclaw else ()
        self.openclaw_key = self.query_one("#dreams-openclaw-table", DreamsTable).fill(
            [(c.key, openclaw_candidate_cells(c)) for c in candidates], self.openclaw_key
        )
        self._show_openclaw_explain()

    def _openclaw_candidate(self) -> OpenClawCandidate | None:
        if self.data is None or self.data.openclaw is None:
            return None
        return next((c for c in self.data.openclaw.candidates if c.key == self.openclaw_key), None)

    def _show_openclaw_explain(self) -> None:
        widget = self.query_one("#dreams-openclaw-explain", Static)
        c = self._openclaw_candidate()
        if c is None or self.data is None or self.data.openclaw is None:
            widget.update(Text("No recall entries for this workspace in OpenClaw's store.", style="dim"))
            return
        widget.update(render_openclaw_candidate(c, self.data.openclaw.min_score))

    def _update_status(self) -> None:
        status = self.query_one("#dreams-status", Static)
        if self.running:
            steps = Text("⟳ Dreaming  ", style="bold")
            for step in PHASE_STEPS:
                if step in self._done_steps[:-1]:
                    steps.append(f"✓ {step}  ", style="green")
                elif self._done_steps and step == self._done_steps[-1]:
                    steps.append(f"▸ {step}…  ", style="bold yellow")
                else:
                    steps.append(f"· {step}  ", style="dim")
            steps.append("(esc stops)", style="dim")
            status.update(steps)
            return
        if self._note is not None:
            status.update(self._note)
            return
        if self.data is None:
            status.update(Text("Loading…", style="dim"))
            return
        d = self.data
        pending = sum(1 for p in d.proposals if p.status == "pending")
        stale = sum(1 for p in d.proposals if p.status == "stale")
        promotable = sum(1 for e in d.candidates if e.status == "promotable")
        status.update(
            Text.assemble(
                (f"{pending} pending", "bold yellow" if pending else "dim"),
                (f"  ·  {stale} stale (MEMORY.md changed; r regenerates)" if stale else "", "magenta"),
                (f"  ·  {sum(1 for h in d.history if h.status == 'applied')} applied", "dim"),
                (f"  ·  {len(d.candidates)} recall entries, {promotable} promotable", "dim"),
                (f"  ·  review = {d.review}", "dim"),
                no_wrap=True,
                overflow="ellipsis",
            )
        )

    # ------------------------------------------------------------------------------------ events

    @on(TabbedContent.TabActivated, "#dreams-views")
    def _view_changed(self, event: TabbedContent.TabActivated) -> None:
        event.stop()  # the app's pane switcher must not see the inner tabs
        self.refresh_bindings()
        self.call_after_refresh(self._focus_view)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = str(event.row_key.value) if event.row_key is not None else None
        table_id = event.data_table.id
        if table_id == "dreams-proposals":
            if key != self.proposal_id:
                self.proposal_id = key
                self.operation_key = None
                self._show_operations()
        elif table_id == "dreams-operations":
            if key != self.operation_key:
                self.operation_key = key
                self._show_diff()
        elif table_id == "dreams-history-table":
            if key != self.history_id:
                self.history_id = key
                self._show_history_detail()
        elif table_id == "dreams-candidates-table" and key != self.candidate_key:
            self.candidate_key = key
            self._show_explain()
        elif table_id == "dreams-openclaw-table" and key != self.openclaw_key:
            self.openclaw_key = key
            self._show_openclaw_explain()
        self.refresh_bindings()

    def _view_widget(self) -> Widget | None:
        active = self.query_one("#dreams-views", TabbedContent).active
        return self.query_one(f"#{active}") if active else None

    def _focus_view(self) -> None:
        view = self._view_widget()
        if view is None:
            return
        focused = self.app.focused
        if focused is not None and view in focused.ancestors_with_self:
            return
        target = next((w for w in view.query("*") if w.focusable), None)
        if target is not None:
            target.focus()

    @property
    def view(self) -> str:
        return self.query_one("#dreams-views", TabbedContent).active.removeprefix("dreams-")

    # ------------------------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "view" and parameters == ("openclaw",):
            return True if self.engine.openclaw is not None else None
        if action == "stop":
            return self.running
        if action == "run":
            return None if self.running else True
        if action in ("approve", "reject"):
            p = self._proposal(self.proposal_id)
            ok = (
                self.view == "review"
                and p is not None
                and (p.status == "pending" or (action == "reject" and p.status == "stale"))
            )
            return True if ok and not self.running else None
        if action == "toggle_fold":
            return self.view == "history" and (self.history_id or "") in self.refused
        if action == "revert":
            h = self._history_item()
            ok = self.view == "history" and h is not None and h.status == "applied"
            return True if ok and not self.running else None
        return True

    def action_toggle_fold(self) -> None:
        self.fold_texts = not self.fold_texts
        self._show_history_detail()

    def action_view(self, view: str) -> None:
        self.query_one("#dreams-views", TabbedContent).active = f"dreams-{view}"
        self.call_after_refresh(self._focus_view)

    def _show_view_first(self, view: str) -> bool:
        """From elsewhere (the command palette), a decision first shows what it is about."""
        if self.view == view:
            return False
        self.action_view(view)
        return True

    def action_approve(self) -> None:
        if self._show_view_first("review"):
            return
        p = self._proposal(self.proposal_id)
        if p is None or p.status != "pending":
            self.notify("Select a pending proposal in the Review queue (p) first.", severity="warning")
            return
        self._set_note(Text(f"Applying proposal {p.short_id}…", style="italic"))
        self._approve(p.id)

    def _approve(self, proposal_id: str) -> None:
        self.run_engine(
            lambda: self.engine.dreaming.approve(proposal_id),
            lambda result: self._approved(result.applied, result.message, result.warnings),
            group="dreams-write",
            failure="approve failed",
            on_error=lambda exc: self._set_note(Text(f"✗ {exc}", style="red")),
        )

    def _approved(self, applied: bool, message: str, warnings: tuple[str, ...]) -> None:
        if applied:
            self._set_note(Text(f"✓ {message}; R in History undoes it", style="green"))
            self.notify(message, title="dreams")
            self.clawmem_app.start_indexing(only=frozenset({"MEMORY.md"}))
        else:
            self._set_note(Text(f"✗ {message}", style="red"))
            self.notify(message, title="dreams", severity="warning")
        for warning in warnings:
            self.notify(warning, title="dreams", severity="warning")
        self.refresh_from_engine(frozenset())

    def action_reject(self) -> None:
        from clawmem.tui.modals.reason import ReasonModal

        if self._show_view_first("review"):
            return
        p = self._proposal(self.proposal_id)
        if p is None or p.status not in ("pending", "stale"):
            self.notify("Select a pending proposal in the Review queue (p) first.", severity="warning")
            return
        body = (
            f"Proposal {p.short_id} ({len(p.operations)} operation{'s' if len(p.operations) != 1 else ''}) "
            "will not be applied. Its candidates are not proposed again until they gain new signals."
        )

        def done(reason: str | None) -> None:
            if reason is not None:
                self._reject(p.id, reason)

        self.app.push_screen(ReasonModal(f"Reject proposal {p.short_id}", body, yes="Reject"), done)

    def _reject(self, proposal_id: str, reason: str) -> None:
        def rejected(p: Proposal) -> None:
            note = f"rejected proposal {p.short_id}" + (f" ({reason})" if reason else "")
            self._set_note(Text(f"✓ {note}; its candidates wait for new signals", style="green"))
            self.refresh_from_engine(frozenset())

        self.run_engine(
            lambda: self.engine.dreaming.reject(proposal_id, reason or None),
            rejected,
            group="dreams-write",
            failure="reject failed",
        )

    def action_revert(self) -> None:
        from clawmem.tui.modals.confirm import ConfirmModal

        if self._show_view_first("history"):
            return
        h = self._history_item()
        if h is None or h.status != "applied":
            self.notify("Select an applied rewrite in History (h) first.", severity="warning")
            return
        body = (
            f"Restore MEMORY.md to what it was before rewrite {h.proposal_id[:8]} "
            f"({when(h.applied_at)})? This is refused, and nothing is written, if MEMORY.md changed since."
        )

        def done(yes: bool | None) -> None:
            if yes:
                self._revert(h.proposal_id)

        self.app.push_screen(ConfirmModal(f"Revert rewrite {h.proposal_id[:8]}", body, yes="Revert", no="Keep"), done)

    def _revert(self, proposal_id: str) -> None:
        self.run_engine(
            lambda: self.engine.dreaming.revert(proposal_id),
            self._reverted,
            group="dreams-write",
            failure="revert failed",
        )

    def _reverted(self, result: RevertResult) -> None:
        if result.reverted:
            self.refused.pop(result.proposal_id, None)
            self._set_note(Text(f"✓ {result.message}", style="green"))
            self.notify(result.message, title="dreams")
            for warning in result.warnings:
                self.notify(warning, title="dreams", severity="warning")
            self.clawmem_app.start_indexing(only=frozenset({"MEMORY.md"}))
        else:
            # No toast: the refusal and the three texts are shown in the History view itself.
            self.refused[result.proposal_id] = result
            self._set_note(
                Text(
                    f"✗ revert of {result.proposal_id[:8]} refused: MEMORY.md was edited since; nothing was written",
                    style="bold red",
                )
            )
            self.history_id = result.proposal_id
        self.refresh_from_engine(frozenset())

    def action_run(self) -> None:
        if self.running:
            return
        self.running = True
        self._note = None
        self._done_steps = []
        self._cancel = threading.Event()
        self._update_status()
        self.refresh_bindings()
        self._run(self._cancel)

    def action_stop(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def _run(self, cancel: threading.Event) -> None:
        self.run_engine(
            lambda: self.engine.dreaming.run(
                trigger="tui", cancel=cancel, progress=lambda phase: self.app.call_from_thread(self._step, phase)
            ),
            lambda run: self._ran(run, cancel),
            group="dreams-run",
            failure="Dreaming failed",
            on_error=lambda exc: self._finished(Text(f"✗ Dreaming failed: {exc}", style="red"), None, False),
        )

    def _ran(self, run: DreamRun, cancel: threading.Event) -> None:
        for warning in run.warnings:
            self.post_message(EngineFailed(warning, "dreams"))
        written = run.applied is not None and run.applied.applied
        if cancel.is_set():
            note = Text(f"Dreaming stopped after {', '.join(self._done_steps) or 'nothing'}", style="yellow")
        elif written and run.applied is not None:
            note = Text(f"✓ {run.applied.message} (review = auto)", style="green")
        elif run.applied is not None:
            note = Text(f"✗ {run.applied.message}", style="red")
        elif run.proposal is not None:
            note = Text(
                f"✓ proposal {run.proposal.short_id} waits for review: a approves, x rejects", style="bold green"
            )
        else:
            reason = run.deep.skipped_reason if run.deep and run.deep.skipped_reason else "nothing passed every gate"
            note = Text(f"✓ cycle finished; MEMORY.md unchanged: {reason} (see Candidates)", style="green")
        self._finished(note, run.proposal.id if run.proposal else None, written)

    def _step(self, phase: str) -> None:
        self._done_steps.append(phase)
        self._update_status()

    def _finished(self, note: Text, proposal_id: str | None, written: bool) -> None:
        self.running = False
        self._cancel = None
        self._note = note
        if proposal_id is not None:
            self.proposal_id = proposal_id
            self.operation_key = None
            if not written:
                self.action_view("review")
        if written:
            self.clawmem_app.start_indexing(only=frozenset({"MEMORY.md"}))
        self._update_status()
        self.refresh_bindings()
        self.refresh_from_engine(frozenset())

    def _set_note(self, note: Text) -> None:
        self._note = note
        self._update_status()
