"""OpenClaw's standing intents and scheduled jobs as the Intents pane draws them: rows of the same
tables as clawmem's own, marked ◆, and their detail panels — read-only, so each panel says how
OpenClaw users change them instead of offering a key."""

from __future__ import annotations

from datetime import datetime, tzinfo

from clawmem.engine.openclaw.intents import COMMAND, OpenClawIntent, OpenClawVerdict
from clawmem.engine.openclaw.jobs import OpenClawJob
from clawmem.tui.render.sessions import OPENCLAW_MARK
from rich.console import Group, RenderableType
from rich.text import Text

STATE_STYLE = {"armed": "bold green", "fired": "yellow", "done": "cyan", "cancelled": "dim", "expired": "red"}


def _when(value: datetime | None, now: datetime, tz: tzinfo) -> str:
    if value is None:
        return "—"
    local = value.astimezone(tz)
    return local.strftime("%m-%d %H:%M") if local.year == now.year else local.strftime("%Y-%m-%d")


def _full(value: datetime | None, tz: tzinfo) -> str:
    return "—" if value is None else value.astimezone(tz).strftime("%Y-%m-%d %H:%M %Z")


def duration(seconds: int) -> str:
    """``19 h 33 min``, ``5 min``, ``40 s``."""
    hours, rest = divmod(seconds, 3600)
    minutes = -(-rest // 60) if hours else rest // 60
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min" if minutes else f"{seconds} s"


def intent_cells(i: OpenClawIntent, now: datetime, tz: tzinfo) -> tuple[Text, ...]:
    live = i.status in ("armed", "fired") and not i.expired
    return (
        Text.assemble((OPENCLAW_MARK, "bold cyan"), (i.short_id, "bold" if live else "dim")),
        Text(i.status, style=STATE_STYLE.get(i.status, "")),
        Text("; ".join(i.keywords) or "—"),
        Text(i.scope, style="" if live else "dim"),
        Text(f"{i.fire_count}/{i.max_fires}"),
        Text(str(i.fires_left), style="bold" if i.fires_left and live else "dim"),
        Text(duration(i.cooldown_left_seconds), style="yellow") if i.cooldown_until else Text("—", style="dim"),
        Text(_when(i.expires_at, now, tz), style="red" if i.expired else ""),
        Text(" ".join(i.description.split()), style="" if live else "dim"),
    )


def render_intent(i: OpenClawIntent, tz: tzinfo) -> RenderableType:
    """Everything about one of OpenClaw's intents, and how to change it (in OpenClaw)."""
    cooldown = f"{i.cooldown_seconds / 3600:g} h"
    return Group(
        Text.assemble(
            (OPENCLAW_MARK, "bold cyan"),
            (i.short_id, "bold"),
            ("  ", ""),
            (i.status, STATE_STYLE.get(i.status, "")),
            ("  ", ""),
            (i.description, ""),
        ),
        Text.assemble(
            ("keywords ", "dim"),
            ("; ".join(i.keywords) or "—", ""),
            ("   scope ", "dim"),
            (i.scope, ""),
            ("   created by ", "dim"),
            (i.creator_sender or "unknown", ""),
        ),
        Text.assemble(
            ("fired ", "dim"),
            (f"{i.fire_count}/{i.max_fires}", "bold"),
            (f" ({i.fires_left} left)", ""),
            ("   last ", "dim"),
            (_full(i.last_fired_at, tz), ""),
            ("   cooldown ", "dim"),
            (cooldown, ""),
            (f", {duration(i.cooldown_left_seconds)} left" if i.cooldown_until else "", "yellow"),
            ("   expires ", "dim"),
            (_full(i.expires_at, tz), "red" if i.expired else ""),
        ),
        Text(
            f"created {_full(i.created_at, tz)} · from session {i.source_session_id or 'unknown'}",
            style="dim",
        ),
        Text(f"channel scope {list(i.channel_scope)} · sender scope {list(i.sender_scope)}", style="dim"),
        Text(""),
        Text("OpenClaw's, read in place: clawmem never fires, creates or cancels it.", style="cyan"),
        Text(f"To change it: {COMMAND}.", style="dim"),
    )


def verdict_cells(v: OpenClawVerdict) -> tuple[Text, ...]:
    if v.fires:
        outcome, why = Text("▶ would fire", style="bold green"), Text(v.reason, style="bold green")
    else:
        more = f"  (+{len(v.reasons) - 1} more)" if len(v.reasons) > 1 else ""
        outcome, why = Text(f"· {v.outcome.replace('_', ' ')}", style="dim"), Text.assemble(v.reason, (more, "dim"))
    return (
        outcome,
        Text.assemble((OPENCLAW_MARK, "bold cyan"), (v.intent.short_id, "bold" if v.fires else "")),
        why,
        Text(" ".join(v.intent.description.split()), style="" if v.fires else "dim"),
    )


def render_verdict(v: OpenClawVerdict) -> RenderableType:
    """Every gate of one OpenClaw intent for the simulated message."""
    parts: list[RenderableType] = [
        Text.assemble(
            ("\n", ""), (OPENCLAW_MARK, "bold cyan"), (v.intent.short_id, "bold"), (f"  {v.intent.description}", "")
        ),
        Text(
            "OpenClaw's intent, simulated on what clawmem read: its fire count and cooldown are not changed.",
            style="dim italic",
        ),
    ]
    if v.fires:
        parts.append(Text(f"would fire on {v.reason}", style="green"))
    parts += [Text(f"✗ {reason}", style="red") for reason in v.reasons]
    for check in v.keywords:
        mark = ("✓", "green") if check.matched else ("✗", "red")
        missing = f"   missing {', '.join(repr(t) for t in check.missing)}" if check.missing else ""
        parts.append(Text.assemble(mark, (f' keyword "{check.keyword}"', ""), (missing, "dim")))
    return Group(*parts)


def job_cells(job: OpenClawJob, now: datetime, tz: tzinfo) -> tuple[Text, ...]:
    return (
        Text.assemble(
            (OPENCLAW_MARK, "bold cyan"), ("enabled" if job.enabled else "disabled", "green" if job.enabled else "dim")
        ),
        Text(_when(job.next_run_at, now, tz), style="bold" if job.enabled else "dim"),
        Text(_when(job.last_run_at, now, tz) if job.last_run_at else "never", style="" if job.last_run_at else "dim"),
        Text(job.schedule),
        Text("—", style="dim"),
        Text(job.name),
    )


def render_job(job: OpenClawJob, tz: tzinfo) -> RenderableType:
    last = (
        _full(job.last_run_at, tz) + (f" ({job.last_status})" if job.last_status else "")
        if job.last_run_at
        else "never"
    )
    return Group(
        Text.assemble((OPENCLAW_MARK, "bold cyan"), (job.short_id, "bold"), (f"  {job.name}", "")),
        Text(
            f"{job.schedule} · {'enabled' if job.enabled else 'disabled'}"
            + (f" · {job.kind}" if job.kind else "")
            + (f" · agent {job.agent_id}" if job.agent_id else ""),
            style="dim",
        ),
        Text(f"next run {_full(job.next_run_at, tz)} · last run {last}", style="dim"),
        Text(" ".join((job.description or "").split()), style="dim"),
        Text("OpenClaw's gateway job, read in place (state DB cron_jobs); the gateway runs it.", style="cyan"),
    )
