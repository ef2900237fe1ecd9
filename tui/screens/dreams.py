"""Dreams pane: the Dreaming review queue and what it rests on.

Four views: **Review** (proposals with their MEMORY.md diff and the operations behind them —
candidate, action, score, source), **History** (applied rewrites, with revert; a refused revert
shows the preimage, the rewrite and the current file), **Candidates** (every recall entry, and
for the selected one *why it is or is not promoted*: components, boosts, gates) and
**DREAMS.md** rendered. `r` runs a cycle now; in manual review it ends in a proposal here.
"""

from __future__ import annotations

import difflib
import re
import threading
from dataclasses import dataclass, fields
from typing import ClassVar

from clawmem.engine.dreaming import report
from clawmem.engine.dreaming.models import (
    CandidateExplanation,
    DreamRun,
    HistoryItem,
    Operation,
    Proposal,
    RevertResult,
)
from clawmem.tui.messages import EngineFailed
from clawmem.tui.screens.pane import Pane
from clawmem.tui.widgets.breakdown import bar
from clawmem.tui.widgets.diff_view import unified_diff
from clawmem.tui.widgets.fit_table import FitTable
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Markdown, Static, TabbedContent, TabPane

NARROW = 130
VIEWS = ("review", "history", "candidates", "diary")
PROPOSAL_STYLE = {
    "pending": "bold yellow",
    "applied": "green",
    "rejected": "red",
    "stale": "magenta",
    "reverted": "cyan",
    "superseded-by-newer": "dim",
}
ACTION_MARK = {"added": ("+ added", "green"), "merged": ("= merged", "cyan"), "superseded": ("> superseded", "yellow")}
CANDIDATE_MARK = {
    "promotable": ("✓", "bold green"),
    "beyond-limit": ("…", "yellow"),
    "below-gates": ("✗", "yellow"),
    "excluded": ("⊘", "red"),
    "promoted": ("★", "cyan"),
    "rejected": ("✗", "magenta"),
}
PHASE_STEPS = ("ingest", "light", "rem", "deep", "report")
_COMMENT = re.compile(r"^\s*<!--.*?-->\s*$", re.MULTILINE)


@dataclass(frozen=True)
class DreamsData:
    """One consistent read of everything the pane shows."""

    proposals: tuple[Proposal, ...]
    history: tuple[HistoryItem, ...]
    candidates: tuple[CandidateExplanation, ...]
    dreams_name: str
    dreams_text: str | None  # None: the file does not exist yet
    review: str  # dreaming.review: manual | auto


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


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _when(iso: str | None) -> str:
    """``2026-11-05T09:00:00.000Z`` → ``2026-11-05 09:00``."""
    return "—" if not iso else iso[:16].replace("T", " ")


def _changes(added: int, merged: int, superseded: int) -> Text:
    return Text.assemble(
        (f"+{added}", "green"), (" ", ""), (f"={merged}", "cyan"), (" ", ""), (f">{superseded}", "yellow")
    )


# ---------------------------------------------------------------------------------------- rendering


def proposal_cells(p: Proposal) -> tuple[Text, ...]:
    note = p.reason or (f"append-only: {p.fallback_reason}" if p.mode == "append" and p.fallback_reason else "")
    return (
        Text(p.short_id, style="bold" if p.status == "pending" else ""),
        Text(p.status, style=PROPOSAL_STYLE.get(p.status, "")),
        Text(p.mode),
        Text(_when(p.created_at), style="dim"),
        _changes(p.added, p.merged, p.superseded),
        Text(_short(note, 200) or "—", style="dim" if not note else "", no_wrap=True, overflow="ellipsis"),
    )


def operation_cells(op: Operation) -> tuple[Text, ...]:
    label, style = ACTION_MARK.get(op.action, (op.action, ""))
    return (
        Text(label, style=style),
        Text(f"{op.score:.3f}", style="bold"),
        Text(str(op.signal_count)),
        Text(str(op.unique_queries)),
        Text(op.source, no_wrap=True, overflow="ellipsis"),
        Text(_short(op.snippet, 300), no_wrap=True, overflow="ellipsis"),
    )


def render_proposal(p: Proposal, op: Operation | None) -> RenderableType:
    """The selected proposal: its state, the unified diff, then the selected operation in full."""
    head = Text.assemble(
        (f"proposal {p.short_id}", "bold"),
        ("  ·  ", "dim"),
        (p.status, PROPOSAL_STYLE.get(p.status, "")),
        ("  ·  ", "dim"),
        (p.mode, ""),
        ("  ·  created ", "dim"),
        (_when(p.created_at), ""),
        ("  ·  ", "dim"),
        _changes(p.added, p.merged, p.superseded),
    )
    parts: list[RenderableType] = [head]
    if p.status == "stale":
        parts.append(Text(f"stale: {p.reason or 'MEMORY.md changed since the proposal was made'}", style="magenta"))
        parts.append(Text("r runs a new cycle on the current MEMORY.md · x discards this one", style="dim"))
    elif p.reason:
        parts.append(Text(f"{'rejected' if p.status == 'rejected' else 'note'}: {p.reason}", style="yellow"))
    if p.mode == "append" and p.fallback_reason:
        parts.append(Text(f"append-only fallback: {p.fallback_reason}", style="yellow"))
    if p.status == "pending":
        parts.append(Text("a approves (MEMORY.md is re-checked first) · x rejects with a reason", style="dim"))
    legend = (
        "(a = now, b = after approval)"
        if p.status == "pending"
        else "(a = MEMORY.md when proposed, b = what the proposal wrote or would have written)"
    )
    parts += [
        Text(""),
        Text(f"MEMORY.md — lines marked - go, lines marked + come {legend}", style="bold"),
        unified_diff(p.before_text, p.after_text, before_name="a/MEMORY.md", after_name="b/MEMORY.md"),
    ]
    if op is not None:
        label, style = ACTION_MARK.get(op.action, (op.action, ""))
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(ratio=1, overflow="fold")
        grid.add_row("candidate", Text(op.candidate_key))
        grid.add_row("action", Text(label, style=style))
        c = op.components
        grid.add_row(
            "score",
            Text.assemble(
                (f"{op.score:.3f}", "bold"),
                (
                    f" = freq {c.frequency:.2f} · rel {c.relevance:.2f} · div {c.diversity:.2f} · rec {c.recency:.2f}"
                    f" · cons {c.consolidation:.2f} · concept {c.conceptual:.2f} (+ boosts)",
                    "dim",
                ),
            ),
        )
        grid.add_row(
            "signals",
            Text(
                f"{op.signal_count} ({op.recall_count} recalls) · {op.unique_queries} unique "
                f"queries · avg {op.avg_score:.2f}"
            ),
        )
        grid.add_row("source", Text(op.source, style="bold"))
        grid.add_row("writes", Text(op.result_entry, style="green"))
        for prior in op.prior_entries:
            grid.add_row("replaces", Text(prior, style="red"))
        parts += [Text("Selected operation", style="bold"), grid]
    return Group(*parts)


def history_cells(h: HistoryItem) -> tuple[Text, ...]:
    current = Text("✓ current", style="green") if h.is_current else Text("✗ edited", style="yellow")
    if h.status == "reverted":
        current = Text("— reverted", style="dim")
    return (
        Text(h.proposal_id[:8], style="bold"),
        Text(h.status, style=PROPOSAL_STYLE.get(h.status, "")),
        Text(h.mode),
        Text(_when(h.applied_at)),
        Text(_when(h.reverted_at), style="dim"),
        _changes(h.added, h.merged, h.superseded),
        Text("✓ kept", style="green") if h.preimage_available else Text("✗ pruned", style="red"),
        current,
    )


def render_history(h: HistoryItem, p: Proposal | None) -> RenderableType:
    head = Text.assemble(
        (f"rewrite {h.proposal_id[:8]}", "bold"),
        ("  ·  ", "dim"),
        ("applied ", PROPOSAL_STYLE["applied"]),
        (_when(h.applied_at), ""),
        ("  ·  ", "dim"),
        _changes(h.added, h.merged, h.superseded),
        ("  ·  preimage ", "dim"),
        ("kept", "green") if h.preimage_available else ("pruned", "red"),
    )
    if h.reverted_at:
        head.append(f"  ·  reverted {_when(h.reverted_at)}", style="cyan")
    lines: list[RenderableType] = [head]
    if h.status == "applied":
        if not h.preimage_available:
            lines.append(
                Text("The preimage was pruned (only the last 8 are kept): it can no longer be reverted.", style="red")
            )
        elif h.is_current:
            lines.append(
                Text("MEMORY.md still holds this rewrite: R restores the preimage byte for byte.", style="dim")
            )
        else:
            lines.append(
                Text(
                    "MEMORY.md changed since this rewrite: a revert would be refused and show the three "
                    "texts to merge by hand.",
                    style="yellow",
                )
            )
    if p is not None:
        lines += [
            Text(""),
            Text("What the rewrite changed (a = preimage, b = rewrite)", style="bold"),
            unified_diff(p.before_text, p.after_text, before_name="a/MEMORY.md", after_name="b/MEMORY.md"),
        ]
    return Group(*lines)


def render_refusal(r: RevertResult, folded: bool) -> RenderableType:
    """A refused revert: why, and how to read the three texts that follow."""
    how = "unchanged lines folded; v shows the full texts" if folded else "full texts; v folds the unchanged lines"
    return Group(
        Text.assemble(("✗ Revert refused: ", "bold red"), (r.message, "red")),
        Text(f"Preimage, rewrite and current MEMORY.md ({how}); the diffs follow.", style="dim"),
    )


def render_refusal_diffs(r: RevertResult) -> RenderableType:
    current = r.current_text if r.current_text is not None else ""
    return Group(
        Text("Edited since the rewrite (a = rewrite, b = MEMORY.md now)", style="bold"),
        unified_diff(r.rewrite_text, current, before_name="a/rewrite", after_name="b/current"),
        Text("What the rewrite changed (a = preimage, b = rewrite)", style="bold"),
        unified_diff(r.preimage_text, r.rewrite_text, before_name="a/preimage", after_name="b/rewrite"),
    )


FOLD_CONTEXT = 1


def marked_text(title: str, legend: str, text: str, other: str, mark: str, style: str, *, fold: bool) -> Text:
    """``text`` under a header, each line that ``other`` lacks marked with ``mark`` (not only colour);
    with ``fold``, runs of unmarked lines away from a marked one shrink to a count."""
    lines, theirs = text.splitlines(), other.splitlines()
    changed: set[int] = set()
    matcher = difflib.SequenceMatcher(a=theirs, b=lines, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            changed.update(range(j1, j2))
    keep = set(range(len(lines)))
    if fold:
        keep = {j for i in changed for j in range(i - FOLD_CONTEXT, i + FOLD_CONTEXT + 1)}
    out = Text()
    out.append(f" {title} ", style="bold reverse")
    out.append(f" {legend}\n", style="dim")
    folded = 0
    for i, line in enumerate(lines):
        if i not in keep:
            folded += 1
            continue
        if folded:
            out.append(f"  ⋯ {folded} unchanged line{'s' if folded != 1 else ''}\n", style="dim italic")
            folded = 0
        out.append(f"{mark if i in changed else ' '} {line}\n", style=style if i in changed else "")
    if folded:
        out.append(f"  ⋯ {folded} unchanged line{'s' if folded != 1 else ''}\n", style="dim italic")
    if not lines:
        out.append("(empty)\n", style="dim")
    return out


def candidate_cells(e: CandidateExplanation) -> tuple[Text, ...]:
    mark, style = CANDIDATE_MARK.get(e.status, ("·", ""))
    status = f"{mark} {e.status}" + (f" #{e.rank}" if e.rank and e.status in ("promotable", "beyond-limit") else "")
    return (
        Text(f"{e.score:.3f}", style="bold" if e.status == "promotable" else ""),
        Text(status, style=style),
        Text(str(e.signal_count)),
        Text(str(e.unique_queries)),
        Text(e.source, no_wrap=True, overflow="ellipsis"),
        Text(
            _short(e.snippet, 300),
            style="dim" if e.status in ("excluded", "promoted") else "",
            no_wrap=True,
            overflow="ellipsis",
        ),
    )


def render_explain(e: CandidateExplanation, min_score: float) -> RenderableType:
    """Why a candidate is (not) promoted: the verdict, every gate, then every component and boost."""
    mark, style = CANDIDATE_MARK.get(e.status, ("·", ""))
    head = Text.assemble(
        (f"{mark} {e.status}", style),
        ("  ·  score ", "dim"),
        (f"{e.score:.3f}", "bold"),
        ("  ·  ", "dim"),
        (e.source, "bold"),
    )
    verdict = Text.assemble(("Why: " if e.status != "promotable" else "Verdict: ", "bold"), (e.reason, style))
    gates = Table.grid(padding=(0, 1), expand=True)
    gates.add_column(width=1, no_wrap=True)
    gates.add_column(no_wrap=True)
    gates.add_column(max_width=16, no_wrap=True, overflow="ellipsis")
    gates.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    for g in sorted(e.gates, key=lambda g: g.passed):  # failing gates first, then the engine's order
        gates.add_row(
            Text("✓", style="green") if g.passed else Text("✗", style="bold red"),
            Text(g.name, style="" if g.passed else "bold"),
            Text(g.actual, style="" if g.passed else "bold red"),
            Text(f"needs {g.needed}", style="dim" if g.passed else ""),
        )
    facts = Text.assemble(
        ("signals ", "dim"),
        (f"{e.signal_count}", "bold"),
        (f" = recalls {e.recall_count} + daily {e.daily_count} + grounded {e.grounded_count}", "dim"),
        ("  ·  unique queries ", "dim"),
        (f"{e.unique_queries}", "bold"),
        ("\nrecalled ", "dim"),
        (", ".join(e.recall_days) or "never", ""),
        ("  ·  age ", "dim"),
        (f"{e.age_days:.1f} d", ""),
        ("  ·  origin ", "dim"),
        (e.origin_class, "bold red" if e.origin_class == "untrusted" else ""),
        ("  ·  session ", "dim"),
        (e.session_kind, ""),
    )
    comps = Table.grid(padding=(0, 1))
    comps.add_column(no_wrap=True)
    comps.add_column(width=10, no_wrap=True)
    comps.add_column(justify="right", width=5)
    comps.add_column(justify="right", width=6, style="dim")
    comps.add_column(justify="right", width=5)
    comps.add_column(justify="right", width=6)
    comps.add_row(
        Text("component", style="dim"),
        Text(""),
        Text("value", style="dim"),
        Text("weight"),
        Text("adds", style="dim"),
        Text("share", style="dim"),
    )
    total = e.score or 1.0
    for name in (f.name for f in fields(e.weights)):  # the engine's weights, in its order
        value, weight, weighted = (getattr(c, name) for c in (e.components, e.weights, e.weighted))
        comps.add_row(
            name,
            bar(value, 10),
            f"{value:.2f}",
            f"× {weight:.2f}",
            f"{weighted:.3f}",
            f"{weighted / total * 100:.0f} %",
        )
    for label, hits, boost in (("light boost", e.light_hits, e.light_boost), ("REM boost", e.rem_hits, e.rem_boost)):
        comps.add_row(label, Text(f"{hits} hits", style="dim"), "", "", f"{boost:.3f}", f"{boost / total * 100:.0f} %")
    passed = e.score >= min_score
    comps.add_row(
        Text("= score", style="bold"),
        bar(e.score, 10, style="green" if passed else "yellow"),
        "",
        "",
        Text(f"{e.score:.3f}", style="bold"),
        Text(f"{'≥' if passed else '<'} {min_score:g}", style="green" if passed else "red"),
    )
    writes: list[RenderableType] = []
    if e.promoted_text is not None:
        matched = ", ".join(f"L{line} ×{n}" for line, n in e.line_matches)
        writes = [
            Text(""),
            Text.assemble(("would write ", "dim"), (e.promoted_text, "green"), no_wrap=True, overflow="ellipsis"),
            Text.assemble(
                ("from ", "dim"),
                (e.promoted_source or "", "bold"),
                (f" · {e.focus_detail}" if e.focus_detail else "", "dim"),
                (f" · matched {matched} (line × queries)" if matched else "", "dim"),
            ),
        ]
    elif e.focus_detail:
        writes = [Text(""), Text(f"would write nothing now: {e.focus_detail}", style="yellow")]
    return Group(
        head,
        Text(_short(e.snippet, 400), style="italic", no_wrap=True, overflow="ellipsis"),
        verdict,
        Text(""),
        Text("Gates", style="bold"),
        gates,
        Text(""),
        facts,
        *writes,
        Text(""),
        Text("Score", style="bold"),
        comps,
        Text(""),
        Text(f"key {e.key}", style="dim"),
    )


def diary_markdown(text: str) -> str:
    """DREAMS.md for reading: OpenClaw's marker comments are machinery, not prose."""
    return _COMMENT.sub("", text)


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
                yield Markdown("", id="dreams-diary-md")
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
            return DreamsData(
                proposals=engine.dreaming.proposals(),
                history=engine.dreaming.history(),
                candidates=engine.dreaming.candidates(),
                dreams_name=dreams.name,
                dreams_text=text,
                review=engine.settings.dreaming.review,
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
        if data.dreams_text is None:
            diary = f"# {data.dreams_name}\n\n*No dream diary yet: press `r` to run a Dreaming cycle.*"
        else:
            diary = diary_markdown(data.dreams_text)
        self.query_one("#dreams-diary-md", Markdown).update(diary)
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
            current = refused.current_text if refused.current_text is not None else "(MEMORY.md is missing)"
            for name, title, legend, text, other, mark, style in (
                (
                    "preimage",
                    "PREIMAGE",
                    "- = the rewrite removed it",
                    refused.preimage_text,
                    refused.rewrite_text,
                    "-",
                    "red",
                ),
                (
                    "rewrite",
                    "REWRITE",
                    "+ = the rewrite added it",
                    refused.rewrite_text,
                    refused.preimage_text,
                    "+",
                    "green",
                ),
                ("current", "CURRENT", "+ = edited since", current, refused.rewrite_text, "+", "yellow"),
            ):
                self.query_one(f"#dreams-revert-{name}", Static).update(
                    marked_text(title, legend, text, other, mark, style, fold=self.fold_texts)
                )
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
            f"({_when(h.applied_at)})? This is refused, and nothing is written, if MEMORY.md changed since."
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
