"""Intents pane: standing intents ("remind me of X when someone mentions Y") as the rows a program
executes — state, keywords, scope, fires used and left, cooldown, expiry — with create (a
validated form) and cancel; a trigger simulator that shows, for a message from a sender on a
channel, which intents would fire, the exact block injected, and why every other one would
not (a dry run: nothing changes); and the timed jobs beside them, with their run history.

Opened on an OpenClaw home (``clawmem --openclaw``), the agent's own standing intents and the
gateway's scheduled jobs are rows of the same tables, marked ◆ and read in place: the simulator
explains them too (without changing them), and their panels give the way to change them in
OpenClaw instead of a cancel key.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from typing import ClassVar

from clawmem.engine.errors import ClawmemError
from clawmem.engine.intents.automation import Job
from clawmem.engine.intents.service import CANCELLABLE, STATUSES, IntentFire, IntentVerdict, MatchReport, StandingIntent
from clawmem.engine.openclaw.intents import OpenClawIntent, OpenClawMatch
from clawmem.engine.openclaw.jobs import OpenClawJob
from clawmem.tui.panes.pane import Pane
from clawmem.tui.render import openclaw_intents as oc
from clawmem.tui.widgets.fit_table import FitTable
from rich.console import Group, RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.suggester import SuggestFromList
from textual.timer import Timer
from textual.widgets import DataTable, Input, Label, Select, Static

NARROW = 130
DEBOUNCE_S = 0.3
STATE_MARK = {
    "armed": ("● armed", "bold green"),
    "fired": ("◐ fired", "yellow"),
    "done": ("✓ done", "cyan"),
    "cancelled": ("✗ cancelled", "dim"),
    "expired": ("⊘ expired", "red"),
    "pending": ("○ pending", "dim"),
}
OUTCOME_LABEL = {
    "fires": "▶ FIRES",
    "over_budget": "· budget",
    "not_scanned": "· limit",
    "prefilter": "· prefilter",
    "state": "· state",
    "no_creator": "· creator",
    "max_fires": "· max fires",
    "cooldown": "· cooldown",
    "scope": "· scope",
    "no_keyword": "· keyword",
}
STATE_ORDER = {"armed": 0, "fired": 1, "pending": 2, "done": 3, "cancelled": 4, "expired": 5}
JOB_STYLE = {"active": "green", "done": "cyan", "cancelled": "dim"}
FILTERS = ("all", *(s for s in STATUSES if s != "pending"), "pending")
OPENCLAW_KEY = "openclaw:"  # the table key of an OpenClaw intent, verdict or job: this prefix and its id


@dataclass(frozen=True)
class IntentsData:
    intents: tuple[StandingIntent, ...]  # every intent; the filter applies on screen
    jobs: tuple[Job, ...]
    tz: tzinfo
    now: datetime
    openclaw_intents: tuple[OpenClawIntent, ...] = ()
    openclaw_jobs: tuple[OpenClawJob, ...] = ()
    openclaw_problem: str | None = None  # why OpenClaw's intents or jobs could not be read


@dataclass(frozen=True)
class Simulation:
    report: MatchReport
    openclaw: OpenClawMatch | None  # None: not opened on an OpenClaw home, or it could not be read


class IntentsTable(FitTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="intents.table.down"),
        Binding("k", "cursor_up", "Up", show=False, id="intents.table.up"),
        Binding("g", "scroll_top", "Top", show=False, id="intents.table.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="intents.table.bottom"),
    ]


def when(value: datetime | None, now: datetime, tz: tzinfo | None = None) -> str:
    """Short local time: ``11-06 06:00`` this year, ``2027-02-03`` otherwise, ``—`` for none."""
    if value is None:
        return "—"
    local = value.astimezone(tz) if tz is not None else value
    return local.strftime("%m-%d %H:%M") if local.year == now.year else local.strftime("%Y-%m-%d")


def scope_text(i: StandingIntent) -> str:
    """``sender@channel``: who must say it, where (``anyone`` / ``any`` when unscoped)."""
    return f"{i.sender_scope or 'anyone'}@{i.channel_scope or 'any'}"


def intent_cells(i: StandingIntent, now: datetime, tz: tzinfo) -> tuple[Text, ...]:
    label, style = STATE_MARK.get(i.status, (i.status, ""))
    live = i.status in CANCELLABLE
    return (
        Text(i.short_id, style="bold" if live else "dim"),
        Text(label, style=style),
        Text("; ".join(i.keywords) or "—"),
        Text(scope_text(i), style="" if live else "dim"),
        Text(f"{i.fire_count}/{i.max_fires}"),
        Text(str(i.fires_left), style="bold" if i.fires_left and live else "dim"),
        Text(when(i.cooldown_until, now, tz), style="yellow" if i.cooldown_until else "dim"),
        Text(when(i.expires_at, now, tz), style="red" if i.status == "expired" else ""),
        Text(" ".join(i.description.split()), style="" if live else "dim"),
    )


def verdict_cells(v: IntentVerdict) -> tuple[Text, ...]:
    if v.fires:
        assert v.after is not None
        why = Text.assemble(
            (f'keyword "{v.matched_keyword}"', "bold green"),
            (f" → {v.after.status} {v.after.fire_count}/{v.after.max_fires}", "green"),
        )
        outcome = Text(OUTCOME_LABEL["fires"], style="bold green")
    else:
        more = f"  (+{len(v.reasons) - 1} more)" if len(v.reasons) > 1 else ""
        why = Text.assemble((v.reason, ""), (more, "dim"))
        outcome = Text(OUTCOME_LABEL.get(v.outcome, v.outcome), style="yellow" if v.outcome == "over_budget" else "dim")
    return (
        outcome,
        Text(v.intent.short_id, style="bold" if v.fires else ""),
        why,
        Text(" ".join(v.intent.description.split()), style="" if v.fires else "dim"),
    )


def render_match(r: MatchReport, selected: IntentVerdict | None) -> RenderableType:
    """The injected block, verbatim, then everything about the selected verdict."""
    parts: list[RenderableType] = []
    if r.block is not None:
        parts.append(
            Text.assemble(
                (f"Injected: {len(r.fired)} intent{'s' if len(r.fired) != 1 else ''}, ", "bold"),
                (f"{r.block_chars}/{r.max_injected_chars} chars", "bold"),
                ("  — exactly what the agent's context gets:", "dim"),
            )
        )
        parts.append(Text(r.block, style="green"))
    else:
        parts.append(Text("Nothing would be injected: no intent fires for this message.", style="bold"))
    parts.append(
        Text.assemble(
            ("dry run — nothing fired, nothing was recorded", "dim italic"),
            (f"  ·  tokens: {', '.join(r.tokens) or '—'}", "dim"),
        )
    )
    if selected is not None:
        v = selected
        head = Text.assemble(
            ("\n", ""), (v.intent.short_id, "bold"), (f"  {' '.join(v.intent.description.split())}", "")
        )
        parts.append(head)
        if v.fires:
            parts.append(Text(f'fires on keyword "{v.matched_keyword}"', style="green"))
        for reason in v.reasons:
            parts.append(Text(f"✗ {reason}", style="red"))
        for check in v.keywords:
            mark = ("✓", "green") if check.matched else ("✗", "red")
            missing = f"   missing {', '.join(repr(t) for t in check.missing)}" if check.missing else ""
            parts.append(Text.assemble(mark, (f' keyword "{check.keyword}"', ""), (missing, "dim")))
    return Group(*parts)


def render_intent(i: StandingIntent, fires: tuple[IntentFire, ...], tz: tzinfo) -> RenderableType:
    """Everything about one intent, and when it fired (a simulation replaces this panel)."""
    label, style = STATE_MARK.get(i.status, (i.status, ""))

    def full(value: datetime | None) -> str:
        return "—" if value is None else value.astimezone(tz).strftime("%Y-%m-%d %H:%M %Z")

    lines: list[RenderableType] = [
        Text.assemble((i.short_id, "bold"), ("  ", ""), (label, style), ("  ", ""), (i.description, "")),
        Text.assemble(
            ("keywords ", "dim"),
            ("; ".join(i.keywords) or "—", ""),
            ("   scope ", "dim"),
            (scope_text(i), ""),
            ("   created by ", "dim"),
            (i.creator_sender or "unknown", ""),
        ),
        Text.assemble(
            ("fired ", "dim"),
            (f"{i.fire_count}/{i.max_fires}", "bold"),
            (f" ({i.fires_left} left)", ""),
            ("   cooldown ", "dim"),
            (f"{i.cooldown_seconds / 3600:g} h", ""),
            (f" until {full(i.cooldown_until)}" if i.cooldown_until else "", "yellow"),
            ("   expires ", "dim"),
            (full(i.expires_at), "red" if i.status == "expired" else ""),
        ),
        Text(
            f"created {full(i.created_at)}" + (f" · from session {i.source_session_id}" if i.source_session_id else ""),
            style="dim",
        ),
        Text(""),
    ]
    if not fires:
        lines.append(Text("Never fired. Type a message below (ctrl+l) to see whether it would.", style="dim"))
    else:
        lines.append(Text(f"Fires ({len(fires)}, newest first)", style="bold"))
        for f in fires:
            lines.append(
                Text.assemble(
                    (f"{f.fired_at.astimezone(tz):%Y-%m-%d %H:%M}", ""),
                    (f"  {f.sender or 'anyone'}@{f.channel or 'any'}", "dim"),
                    (f"  “{f.prompt_excerpt}”", "italic"),
                )
            )
    return Group(*lines)


def job_cells(job: Job, now: datetime) -> tuple[Text, ...]:
    schedule = (job.cron or "") if job.schedule_kind == "cron" else f"at {when(job.run_at, now)}"
    return (
        Text(job.status, style=JOB_STYLE.get(job.status, "")),
        Text(when(job.next_run_at, now), style="bold" if job.status == "active" else "dim"),
        Text(when(job.last_run_at, now), style="dim" if job.last_run_at is None else ""),
        Text(schedule),
        Text(job.timezone, style="dim"),
        Text(" ".join(job.description.split())),
    )


def render_job(job: Job, now: datetime) -> RenderableType:
    lines: list[RenderableType] = [
        Text.assemble((job.short_id, "bold"), (f"  {' '.join(job.description.split())}", "")),
        Text(
            f"{job.schedule} · {job.status}"
            + (f" · to {job.channel or 'any channel'} / {job.sender}" if job.sender else ""),
            style="dim",
        ),
        Text(f"next run {job.next_run_at:%Y-%m-%d %H:%M %Z}" if job.next_run_at else "no next run", style="dim"),
        Text(""),
    ]
    if not job.runs:
        lines.append(Text("Never ran: the host runs due jobs (`clawmem job run-due`).", style="dim"))
        return Group(*lines)
    shown = f"{len(job.runs)} of {job.run_count}" if job.run_count > len(job.runs) else str(job.run_count)
    lines.append(Text(f"Runs ({shown}, newest first)", style="bold"))
    for run in job.runs:
        line = Text.assemble(
            ("✓ " if run.outcome == "ran" else "↻ ", "green" if run.outcome == "ran" else "yellow"),
            (f"{run.ran_at:%Y-%m-%d %H:%M}", ""),
            (f"  for {run.scheduled_for:%Y-%m-%d %H:%M}", "dim"),
        )
        if run.skipped:
            line.append(
                f"  caught up: {run.skipped} missed run{'s' if run.skipped != 1 else ''} skipped", style="yellow"
            )
        lines.append(line)
    return Group(*lines)


class IntentsPane(Pane):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "create", "New", id="intents.create", tooltip="Create a standing intent (a checked form)."),
        Binding(
            "x",
            "cancel_intent",
            "Cancel intent",
            id="intents.cancel",
            tooltip="Cancel the selected intent (asks first; the row and its fires are kept).",
        ),
        Binding("f", "cycle_filter", "Filter", id="intents.filter", tooltip="Show only one state (cycles)."),
        Binding(
            "ctrl+l",
            "focus_message",
            "Simulate",
            id="intents.focus-message",
            tooltip="Type a message to see which intents would fire.",
        ),
        Binding("t", "jobs", "Timed jobs", id="intents.jobs", tooltip="The timed jobs and their run history."),
        Binding(
            "escape",
            "leave_input",
            "Intents",
            show=False,
            id="intents.leave-input",
            tooltip="Back to the intents table.",
        ),
        Binding("r", "reload", "Reload", show=False, id="intents.reload", tooltip="Read the intents and jobs again."),
    ]
    HELP = "intents"
    NOTIFY_TITLE = "intents"
    PALETTE: ClassVar = [
        ("intents: New standing intent", "Remind of X when someone mentions Y", "create"),
        ("intents: Cancel standing intent", "Cancel the selected intent", "cancel_intent"),
        ("intents: Simulate a message", "Which intents would fire, and why the others would not", "focus_message"),
        ("intents: Show timed jobs", "Scheduled reminders with their run history", "jobs"),
    ]

    def __init__(self) -> None:
        super().__init__(id="intents-pane")
        self.data: IntentsData | None = None
        self.report: MatchReport | None = None
        self.openclaw_report: OpenClawMatch | None = None
        self.intent_id: str | None = None
        self.verdict_id: str | None = None
        self.job_id: str | None = None
        self._timer: Timer | None = None
        self._generation = 0

    # ------------------------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        # The table comes first so that switching to the pane focuses it; the bar is docked above it.
        yield IntentsTable(
            ("ID", "State", "Keywords", "Scope", "Fired", "Left", "Cooldown", "Expires", "Description"),
            caps={2: 20, 3: 24},
            id="intents-table",
        )
        with Horizontal(id="intents-bar"):
            yield Label("Standing intents", id="intents-title")
            yield Select([(f, f) for f in FILTERS], value="all", allow_blank=False, compact=True, id="intents-filter")
            yield Static("", id="intents-summary")
        with Horizontal(id="intents-lower"):
            with Vertical(id="intents-sim"):
                yield Label(
                    "Trigger simulator — a dry run: message, channel, sender",
                    id="intents-sim-title",
                    classes="intents-label",
                )
                with Horizontal(id="intents-sim-inputs"):
                    yield Input(
                        placeholder="Message, e.g. 下周末去杭州，记得订返程车票", id="intents-message", compact=True
                    )
                    yield Input(placeholder="channel", id="intents-channel", compact=True)
                    yield Input(placeholder="sender", id="intents-sender", compact=True)
                yield IntentsTable(("Outcome", "ID", "Why", "Intent"), caps={2: 48}, id="intents-verdicts")
                with VerticalScroll(id="intents-block-scroll"):
                    yield Static("", id="intents-block")
            with Vertical(id="intents-jobs"):
                yield Label("Timed jobs (t)", id="intents-jobs-title", classes="intents-label")
                yield IntentsTable(
                    ("Status", "Next run", "Last run", "Schedule", "TZ", "Description"),
                    caps={3: 14, 4: 14},
                    min_last=8,
                    id="intents-jobs-table",
                )
                with VerticalScroll(id="intents-job-scroll"):
                    yield Static("", id="intents-job-history")

    def on_mount(self) -> None:
        if not self.engine.settings.tui.cursor_blink:
            for field in self.query(Input):
                field.cursor_blink = False
        self.refresh_from_engine(frozenset())

    def on_resize(self) -> None:
        self.set_class(self.size.width < NARROW, "narrow")

    # ------------------------------------------------------------------------------------ loading

    def refresh_from_engine(self, paths: frozenset[str]) -> None:
        self._load()
        if self.query_one("#intents-message", Input).value.strip():
            self._simulate_now()

    def _load(self) -> None:
        engine = self.engine

        def read() -> IntentsData:
            now = engine.clock.now()
            data = IntentsData(engine.intents.list(), engine.jobs.list(), engine.clock.tz, now)
            home = engine.openclaw
            if home is None:
                return data
            problems = []
            try:  # each fails alone (a refused shape, a missing database): clawmem's own rows still show
                data = replace(data, openclaw_intents=home.intents(now))
            except ClawmemError as exc:
                problems.append(str(exc))
            try:
                data = replace(data, openclaw_jobs=home.jobs())
            except ClawmemError as exc:
                problems.append(str(exc))
            return replace(data, openclaw_problem="; ".join(problems) or None)

        self.run_engine(
            read,
            self._show,
            group="intents-load",
            failure="intents could not be read",
        )

    @property
    def state_filter(self) -> str:
        return str(self.query_one("#intents-filter", Select).value)

    def _show(self, data: IntentsData) -> None:
        self.data = data
        self._show_intents()
        jobs = self.query_one("#intents-jobs-table", IntentsTable)
        ordered = sorted(data.jobs, key=lambda j: (j.status != "active", j.next_run_at or data.now, j.created_at, j.id))
        theirs = [(OPENCLAW_KEY + j.id, oc.job_cells(j, data.now, data.tz)) for j in data.openclaw_jobs]
        self.job_id = jobs.fill([(j.id, job_cells(j, data.now)) for j in ordered] + theirs, self.job_id)
        self._show_job()
        channels = sorted(
            {i.channel_scope for i in data.intents if i.channel_scope}
            | {i.channel for i in data.openclaw_intents if i.channel}
        )
        senders = sorted(
            {i.sender_scope for i in data.intents if i.sender_scope}
            | {i.sender for i in data.openclaw_intents if i.sender}
        )
        self.query_one("#intents-channel", Input).suggester = SuggestFromList(channels, case_sensitive=False)
        self.query_one("#intents-sender", Input).suggester = SuggestFromList(senders)
        self.refresh_bindings()

    def _show_intents(self) -> None:
        if self.data is None:
            return
        data = self.data
        wanted = self.state_filter
        shown = sorted(
            (i for i in data.intents if wanted == "all" or i.status == wanted),
            key=lambda i: (STATE_ORDER.get(i.status, 9), i.created_at, i.id),
        )
        theirs = [
            (OPENCLAW_KEY + i.id, oc.intent_cells(i, data.now, data.tz))
            for i in data.openclaw_intents
            if wanted == "all" or i.status == wanted
        ]
        table = self.query_one("#intents-table", IntentsTable)
        rows = [(i.id, intent_cells(i, data.now, data.tz)) for i in shown] + theirs
        self.intent_id = table.fill(rows, self.intent_id)
        if self.report is None:
            self._show_intent_detail()
        counts = {s: sum(1 for i in data.intents if i.status == s) for s in STATUSES}
        summary = Text(no_wrap=True, overflow="ellipsis")
        for status in ("armed", "fired", "done", "cancelled", "expired", "pending"):
            if counts[status]:
                summary.append(f"{counts[status]} {status}", style=STATE_MARK[status][1])
                summary.append("  ")
        zone = getattr(data.tz, "key", None) or data.now.astimezone(data.tz).tzname() or "local"
        if data.openclaw_intents:
            summary.append(f"{oc.OPENCLAW_MARK}{len(data.openclaw_intents)} OpenClaw's (read-only)  ", style="cyan")
        if data.openclaw_problem:
            summary.append(f"{oc.OPENCLAW_MARK}{data.openclaw_problem}  ", style="red")
        any_rows = data.intents or data.openclaw_intents
        summary.append(f"· times in {zone}" if any_rows else "none yet — n creates one", style="dim")
        self.query_one("#intents-summary", Static).update(summary)

    def _selected_intent(self) -> StandingIntent | None:
        if self.data is None or self.intent_id is None:
            return None
        return next((i for i in self.data.intents if i.id == self.intent_id), None)

    def _selected_openclaw_intent(self) -> OpenClawIntent | None:
        if self.data is None or self.intent_id is None or not self.intent_id.startswith(OPENCLAW_KEY):
            return None
        wanted = self.intent_id.removeprefix(OPENCLAW_KEY)
        return next((i for i in self.data.openclaw_intents if i.id == wanted), None)

    def _show_job(self) -> None:
        widget = self.query_one("#intents-job-history", Static)
        if self.data is not None and self.job_id is not None and self.job_id.startswith(OPENCLAW_KEY):
            wanted = self.job_id.removeprefix(OPENCLAW_KEY)
            theirs = next((j for j in self.data.openclaw_jobs if j.id == wanted), None)
            if theirs is not None:
                widget.update(oc.render_job(theirs, self.data.tz))
                return
        job = next((j for j in self.data.jobs if j.id == self.job_id), None) if self.data else None
        if job is None:
            widget.update(
                Text(
                    'No timed jobs. Add one with `clawmem job add "…" --at 2026-11-06T09:00` or `--cron "0 9 * * 1"`.',
                    style="dim",
                )
            )
            return
        assert self.data is not None
        widget.update(render_job(job, self.data.now))

    def _show_intent_detail(self) -> None:
        theirs = self._selected_openclaw_intent()
        if theirs is not None and self.data is not None:
            self.query_one("#intents-block", Static).update(oc.render_intent(theirs, self.data.tz))
            return
        intent = self._selected_intent()
        if intent is None:
            if self.report is None:
                self.query_one("#intents-block", Static).update(
                    Text("No standing intents yet: n creates one.", style="dim")
                )
            return
        self._load_fires(intent)

    def _load_fires(self, intent: StandingIntent) -> None:
        self.run_engine(
            lambda: self.engine.intents.fires(intent.id, limit=50),
            lambda fires: self._show_intent_fires(intent, fires),
            group="intents-fires",
            failure="the fires could not be read",
        )

    def _show_intent_fires(self, intent: StandingIntent, fires: tuple[IntentFire, ...]) -> None:
        if intent.id != self.intent_id or self.data is None:
            return
        self.query_one("#intents-block", Static).update(render_intent(intent, fires, self.data.tz))

    # ------------------------------------------------------------------------------------ simulator

    def _sim_inputs(self) -> tuple[str, str, str]:
        return (
            self.query_one("#intents-message", Input).value,
            self.query_one("#intents-channel", Input).value,
            self.query_one("#intents-sender", Input).value,
        )

    @on(Input.Changed, "#intents-sim-inputs Input")
    def _sim_changed(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        if self._sim_inputs()[0].strip():
            self._timer = self.set_timer(DEBOUNCE_S, self._simulate_now)

    @on(Input.Submitted, "#intents-sim-inputs Input")
    def _sim_submitted(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._simulate_now()

    def _simulate_now(self) -> None:
        message, channel, sender = self._sim_inputs()
        if not message.strip():
            return
        self._generation += 1
        self._simulate(self._generation, message, channel, sender)

    def _simulate(self, generation: int, message: str, channel: str, sender: str) -> None:
        engine = self.engine

        def run() -> Simulation:
            report = engine.intents.match(message, channel=channel or None, sender=sender or None, apply=False)
            theirs = None
            if engine.openclaw is not None:
                try:
                    theirs = engine.openclaw.simulate_intents(
                        message, channel=channel or None, sender=sender or None, now=report.at, tz=engine.clock.tz
                    )
                except ClawmemError:
                    theirs = None  # the summary line already says why OpenClaw's intents cannot be read
            return Simulation(report, theirs)

        self.run_engine(
            run,
            lambda sim: self._show_report(generation, sim),
            group="intents-simulate",
            failure="simulation failed",
        )

    def _show_report(self, generation: int, sim: Simulation) -> None:
        if generation != self._generation:
            return  # a newer message is on its way
        report = sim.report
        self.openclaw_report = sim.openclaw
        inputs = (report.prompt, report.channel, report.sender)
        same_message = (
            self.report is not None and (self.report.prompt, self.report.channel, self.report.sender) == inputs
        )
        self.report = report
        table = self.query_one("#intents-verdicts", IntentsTable)
        keep = self.verdict_id if same_message else None  # new inputs start at the first verdict
        theirs = (
            [(OPENCLAW_KEY + v.intent.id, oc.verdict_cells(v)) for v in sim.openclaw.verdicts] if sim.openclaw else []
        )
        self.verdict_id = table.fill([(v.intent.id, verdict_cells(v)) for v in report.verdicts] + theirs, keep)
        self._show_block()

    def _show_block(self) -> None:
        if self.report is None:
            return
        selected = next((v for v in self.report.verdicts if v.intent.id == self.verdict_id), None)
        panel = render_match(self.report, selected)
        theirs = self.openclaw_report
        if theirs is not None and self.verdict_id is not None and self.verdict_id.startswith(OPENCLAW_KEY):
            wanted = self.verdict_id.removeprefix(OPENCLAW_KEY)
            verdict = next((v for v in theirs.verdicts if v.intent.id == wanted), None)
            if verdict is not None:
                panel = Group(panel, oc.render_verdict(verdict))
        self.query_one("#intents-block", Static).update(panel)

    # ------------------------------------------------------------------------------------ events

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = str(event.row_key.value) if event.row_key is not None else None
        table_id = event.data_table.id
        if table_id == "intents-table":
            moved = key != self.intent_id
            self.intent_id = key
            self.refresh_bindings()
            if (moved and event.data_table.has_focus) or self.report is None:
                self._show_intent_detail()  # the panel follows the user, not a reload
        elif table_id == "intents-verdicts" and key != self.verdict_id:
            self.verdict_id = key
            self._show_block()
        elif table_id == "intents-jobs-table" and key != self.job_id:
            self.job_id = key
            self._show_job()

    @on(Select.Changed, "#intents-filter")
    def _filter_changed(self) -> None:
        self._show_intents()
        self.refresh_bindings()

    # ------------------------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_intent":
            i = self._selected_intent()
            return True if i is not None and i.status in CANCELLABLE else None
        if action == "leave_input":
            return isinstance(self.app.focused, Input)
        return True

    def action_create(self) -> None:
        from clawmem.tui.modals.intent_form import IntentFormModal

        cfg = self.engine.settings.intents
        _, channel, sender = self._sim_inputs()
        form = IntentFormModal(
            channel=channel.strip(),
            sender=sender.strip(),
            expiry_days=cfg.expiry_days,
            max_fires=cfg.max_fires,
            cooldown_hours=cfg.cooldown_hours,
        )

        def done(intent: StandingIntent | None) -> None:
            if intent is None:
                return
            self.intent_id = intent.id
            if self.state_filter not in ("all", intent.status):
                self.query_one("#intents-filter", Select).value = "all"
            self.notify(f"created intent {intent.short_id} ({intent.status}): {intent.description}", title="intents")
            self.refresh_from_engine(frozenset())
            self.query_one("#intents-table", IntentsTable).focus()

        self.app.push_screen(form, done)

    def action_cancel_intent(self) -> None:
        from clawmem.tui.modals.confirm import ConfirmModal

        i = self._selected_intent()
        if i is None or i.status not in CANCELLABLE:
            self.notify("Select an armed or fired intent first.", severity="warning")
            return
        body = (
            f"{i.description}\n\nkeywords {'; '.join(i.keywords)} · {scope_text(i)} · fired "
            f"{i.fire_count}/{i.max_fires}\n\nIt will never fire again. The row and its fire history are kept."
        )

        def done(yes: bool | None) -> None:
            if yes:
                self._cancel(i.id)

        self.app.push_screen(ConfirmModal(f"Cancel intent {i.short_id}?", body, yes="Cancel it", no="Keep"), done)

    def _cancel(self, intent_id: str) -> None:
        self.run_engine(
            lambda: self.engine.intents.cancel(intent_id),
            self._cancelled,
            group="intents-write",
            failure="cancel failed",
        )

    def _cancelled(self, intent: StandingIntent) -> None:
        self.notify(f"cancelled intent {intent.short_id}", title="intents")
        self.refresh_from_engine(frozenset())

    def action_cycle_filter(self) -> None:
        select = self.query_one("#intents-filter", Select)
        select.value = FILTERS[(FILTERS.index(self.state_filter) + 1) % len(FILTERS)]

    def action_focus_message(self) -> None:
        self.remove_class("show-jobs")
        self.query_one("#intents-message", Input).focus()

    def action_leave_input(self) -> None:
        self.query_one("#intents-table", IntentsTable).focus()

    def action_jobs(self) -> None:
        jobs = self.query_one("#intents-jobs-table", IntentsTable)
        if self.has_class("narrow"):
            self.toggle_class("show-jobs")
            if not self.has_class("show-jobs"):
                self.query_one("#intents-table", IntentsTable).focus()
                return
        self.call_after_refresh(jobs.focus)

    def action_reload(self) -> None:
        self.refresh_from_engine(frozenset())
