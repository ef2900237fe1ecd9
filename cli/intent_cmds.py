"""``intent create|list|show|cancel|match`` (standing intents) and ``job add|list|cancel|run-due`` (timed jobs)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, tzinfo
from typing import Any, TypeVar

from clawmem.cli import output
from clawmem.engine.errors import ClawmemError
from clawmem.engine.intents.automation import JOB_STATUSES, Job, JobRun
from clawmem.engine.intents.records import match_record
from clawmem.engine.intents.service import (
    MAX_FIRES,
    STATUSES,
    MatchReport,
    StandingIntent,
)
from clawmem.engine.json_form import json_form
from clawmem.engine.openclaw.home import OpenClawHome
from clawmem.engine.openclaw.intents import COMMAND, OpenClawIntent, OpenClawMatch
from clawmem.engine.openclaw.jobs import OpenClawJob
from clawmem.engine.text_clip import cell_width, clip_cells_flat
from clawmem.engine.times import local_minute
from clawmem.shell import flags, messages, values

# --------------------------------------------------------------------------- argparse types


# --------------------------------------------------------------------------- registration


def _group(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help_text: str
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    group = sub.add_parser(name, parents=[flags.global_parent()], help=help_text, description=help_text)

    def show_help(_args: argparse.Namespace) -> int:
        group.print_help()
        return 2

    group.set_defaults(handler=show_help)
    return group.add_subparsers(dest=f"{name}_action", metavar="ACTION")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parent = flags.global_parent()
    isub = _group(sub, "intent", "standing intents: reminders that fire when a message mentions something")

    p = isub.add_parser("create", parents=[parent], help="arm a new standing intent")
    p.add_argument("--description", required=True, metavar="TEXT", help="what to remind of (≤ 500 chars)")
    p.add_argument("--keywords", required=True, metavar="LIST", help='trigger keywords, e.g. "杭州; hangzhou" (1-24)')
    p.add_argument("--channel", metavar="C", help="the channel the request came from (required)")
    p.add_argument("--sender", metavar="S", help="the sender who asked (required)")
    p.add_argument("--expires", type=values.expiry_date, metavar="DATE", help="expiry date (default 90 days from now)")
    p.add_argument(
        "--max-fires", type=values.max_fires, metavar="N", help=f"how often it may fire, 1 to {MAX_FIRES:,} (default 3)"
    )
    p.add_argument(
        "--cooldown", type=values.cooldown_hours, metavar="HOURS", help="quiet time after a fire (default 24)"
    )
    p.add_argument("--anywhere", action="store_true", help="fire on any channel, not only --channel")
    p.add_argument("--anyone", action="store_true", help="fire for any sender, not only --sender")
    p.add_argument("--session", metavar="ID", help="the session the request came from")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_intent_create)

    p = isub.add_parser("list", parents=[parent], help="list standing intents (after expiring and re-arming)")
    p.add_argument(
        "--status",
        type=values.one_of("--status", STATUSES),
        metavar=values.choices_metavar(STATUSES),
        help="only intents in this state",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_intent_list)

    p = isub.add_parser("show", parents=[parent], help="one intent and its fire history")
    p.add_argument("id", help="the intent's id or a unique prefix (≥ 6 characters)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_intent_show)

    p = isub.add_parser("cancel", parents=[parent], help="cancel an armed or fired intent (its history is kept)")
    p.add_argument("id", help="the intent's id or a unique prefix (≥ 6 characters)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_intent_cancel)

    p = isub.add_parser("match", parents=[parent], help="what would fire for a message, and why the others would not")
    p.add_argument("message", nargs="+", help="the message text")
    p.add_argument("--channel", metavar="C", help="the channel the message arrives on")
    p.add_argument("--sender", metavar="S", help="who sends it")
    p.add_argument("--apply", action="store_true", help="fire for real (count the fires); default is a dry run")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_intent_match)

    jsub = _group(sub, "job", "timed jobs: reminders at a fixed time or on a cron schedule")

    p = jsub.add_parser("add", parents=[parent], help="add a one-shot (--at) or repeating (--cron) job")
    p.add_argument("--description", required=True, metavar="TEXT", help="what to remind of")
    when = p.add_mutually_exclusive_group(required=True)
    when.add_argument("--at", type=values.iso_datetime, metavar="TIME", help="run once, e.g. 2026-11-06T09:00")
    when.add_argument("--cron", type=values.cron_expression, metavar="EXPR", help='repeat, e.g. "0 9 * * 1-5"')
    p.add_argument(
        "--tz", type=values.time_zone, metavar="ZONE", help="IANA time zone (default: the configured or local one)"
    )
    p.add_argument("--channel", metavar="C", help="where to deliver the reminder (required)")
    p.add_argument("--sender", metavar="S", help="whom to remind (required)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_job_add)

    p = jsub.add_parser("list", parents=[parent], help="list jobs with their next run and history")
    p.add_argument(
        "--status",
        type=values.one_of("--status", JOB_STATUSES),
        metavar=values.choices_metavar(JOB_STATUSES),
        help="only jobs in this state",
    )
    p.add_argument("--history", action="store_true", help="also print each job's recent runs")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_job_list)

    p = jsub.add_parser("cancel", parents=[parent], help="cancel an active job (its history is kept)")
    p.add_argument("id", help="the job's id or a unique prefix (≥ 6 characters)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_job_cancel)

    p = jsub.add_parser("run-due", parents=[parent], help="run every due job once and record it")
    p.add_argument("--dry-run", action="store_true", help="only show what is due")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_job_run_due)


# --------------------------------------------------------------------------- output helpers


def table(headers: Sequence[str], body: Sequence[Sequence[str]], limits: Sequence[int | None] = ()) -> list[str]:
    """Aligned columns (CJK counts two cells); the last column is never padded."""
    limits = list(limits) + [None] * (len(headers) - len(limits))
    cells = [[clip_cells_flat(c, lim) if lim else c for c, lim in zip(row, limits, strict=False)] for row in body]
    widths = [max([cell_width(h)] + [cell_width(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = []
    for row in [list(headers), *cells]:
        parts = [c + " " * (widths[i] - cell_width(c)) if i < len(row) - 1 else c for i, c in enumerate(row)]
        lines.append("  ".join(parts).rstrip())
    return lines


def _when(value: datetime | None, tz: tzinfo) -> str:
    return local_minute(value, tz, zone=False)


def _hours_text(seconds: int) -> str:
    hours = seconds / 3600
    return f"{hours:g} h"


def intent_row(intent: StandingIntent, tz: tzinfo) -> list[str]:
    return [
        intent.short_id,
        intent.status,
        f"{intent.fire_count}/{intent.max_fires}",
        "; ".join(intent.keywords),
        intent.scope_label,
        _when(intent.cooldown_until, tz),
        _when(intent.expires_at, tz),
        intent.description,
    ]


INTENT_HEADERS = ("ID", "STATE", "FIRES", "KEYWORDS", "SCOPE", "COOLDOWN UNTIL", "EXPIRES", "DESCRIPTION")


def _zone_label(tz: tzinfo) -> str:
    return str(getattr(tz, "key", None) or datetime.now(tz).tzname() or "local")


# --------------------------------------------------------------------------- intent commands


def cmd_intent_create(args: argparse.Namespace) -> int:
    if flags.openclaw_home(args) is not None:
        raise ClawmemError(
            f"clawmem does not create OpenClaw's standing intents ({COMMAND}); "
            "without --openclaw this creates one of clawmem's own"
        )
    engine = flags.engine_from(args)
    intent = engine.intents.create(
        args.description,
        args.keywords,
        channel=args.channel,
        sender=args.sender,
        expires=args.expires,
        max_fires=args.max_fires,
        cooldown_hours=args.cooldown,
        any_channel=args.anywhere,
        any_sender=args.anyone,
        source_session_id=args.session,
    )
    if args.json:
        output.print_json(json_form(intent))
        return 0
    tz = engine.clock.tz
    print(f"created intent {intent.short_id} ({intent.status})")
    for label, value in (
        ("keywords", "; ".join(intent.keywords)),
        ("scope", intent.scope_label),
        ("fires", f"{intent.fire_count}/{intent.max_fires} · cooldown {_hours_text(intent.cooldown_seconds)}"),
        ("expires", f"{_when(intent.expires_at, tz)} ({_zone_label(tz)})"),
        ("id", intent.id),
    ):
        print(f"  {label:<10}{value}")
    return 0


def cmd_intent_list(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    intents = engine.intents.list(args.status)
    openclaw, theirs, problem = read_openclaw(engine.openclaw, lambda home: home.intents(engine.clock.now()), ())
    if problem is not None:
        return _failed_alone(problem, _list_intents(args, engine.clock.tz, intents, None, ()))
    return _list_intents(args, engine.clock.tz, intents, openclaw, theirs)


def _list_intents(
    args: argparse.Namespace,
    tz: tzinfo,
    intents: Sequence[StandingIntent],
    openclaw: OpenClawHome | None,
    theirs: Sequence[OpenClawIntent],
) -> int:
    theirs = tuple(i for i in theirs if args.status is None or i.status == args.status)
    if args.json:
        extra = {"openclawIntents": json_form(theirs)} if openclaw is not None else {}
        output.print_json({"intents": json_form(intents), **extra})
        return 0
    if not intents and openclaw is None:
        print("No standing intents." if args.status is None else f"No {args.status} standing intents.")
        return 0
    if intents:
        for line in table(INTENT_HEADERS, [intent_row(i, tz) for i in intents], (None, None, None, 40, 30)):
            print(line)
    if openclaw is not None:
        if intents:
            print()
        print_openclaw_intents(theirs, openclaw, tz)
    print(f"(times in {_zone_label(tz)})")
    return 0


def cmd_intent_show(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    theirs = None if engine.openclaw is None else engine.openclaw.find_intent(args.id, engine.clock.now())
    if theirs is not None:
        if args.json:
            output.print_json({"openclawIntent": json_form(theirs)})
        else:
            print_openclaw_intent(theirs, engine.clock.tz)
        return 0
    intent = engine.intents.get(args.id)
    history = engine.intents.fires(intent.id)
    if args.json:
        output.print_json({"intent": json_form(intent), "fires": json_form(history)})
        return 0
    tz = engine.clock.tz
    for label, value in (
        ("id", intent.id),
        ("state", intent.status),
        ("description", intent.description),
        ("keywords", "; ".join(intent.keywords)),
        ("scope", intent.scope_label),
        ("creator", intent.creator_sender or "unknown"),
        ("fires", f"{intent.fire_count}/{intent.max_fires} ({intent.fires_left} left)"),
        (
            "cooldown",
            _hours_text(intent.cooldown_seconds)
            + (f", until {_when(intent.cooldown_until, tz)}" if intent.cooldown_until else ""),
        ),
        ("expires", _when(intent.expires_at, tz)),
        ("created", _when(intent.created_at, tz)),
    ):
        print(f"{label + ':':<13}{value}")
    if history:
        print()
        for line in table(
            ("FIRED", "CHANNEL", "SENDER", "MESSAGE"),
            [[_when(f.fired_at, tz), f.channel or "—", f.sender or "—", f.prompt_excerpt] for f in history],
        ):
            print(line)
    else:
        print("never fired")
    return 0


def cmd_intent_cancel(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    theirs = None if engine.openclaw is None else engine.openclaw.find_intent(args.id, engine.clock.now())
    if theirs is not None:
        raise ClawmemError(f"intent {theirs.short_id} is OpenClaw's, read-only here; to cancel it: {COMMAND}")
    intent = engine.intents.cancel(args.id)
    if args.json:
        output.print_json(json_form(intent))
        return 0
    print(
        f"cancelled intent {intent.short_id} ({intent.fire_count}/{intent.max_fires} fires used); "
        "the row and its fire history are kept"
    )
    return 0


def cmd_intent_match(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    message = " ".join(args.message)
    report = engine.intents.match(message, channel=args.channel, sender=args.sender, apply=args.apply)
    _, theirs, problem = read_openclaw(
        engine.openclaw,
        lambda home: home.simulate_intents(
            message, channel=args.channel, sender=args.sender, now=engine.clock.now(), tz=engine.clock.tz
        ),
        None,
    )
    if problem is not None:
        return _failed_alone(problem, _print_match(args, report, None))
    return _print_match(args, report, theirs)


def _print_match(args: argparse.Namespace, report: MatchReport, theirs: OpenClawMatch | None) -> int:
    if args.json:
        extra = {"openclaw": openclaw_match_json(theirs)} if theirs is not None else {}
        output.print_json({**match_record(report), **extra})
        return 0
    if theirs is not None:
        print_openclaw_match(theirs)
        if not report.verdicts:
            return 0
        print()
    if not report.verdicts:
        print("No standing intents.")
        return 0
    body = []
    for v in report.verdicts:
        if v.fires:
            assert v.after is not None
            why = f'keyword "{v.matched_keyword}" → {v.after.status} {v.after.fire_count}/{v.after.max_fires}'
            body.append(["FIRE", v.intent.short_id, v.intent.description, why])
        else:
            more = f" (+{len(v.reasons) - 1} more)" if len(v.reasons) > 1 else ""
            body.append(["-", v.intent.short_id, v.intent.description, v.reason + more])
    for line in table(("", "ID", "DESCRIPTION", "WHY"), body, (None, None, 32)):
        print(line)
    print()
    if report.block:
        print(f"Injected ({report.block_chars}/{report.max_injected_chars} chars):")
        print(report.block)
    else:
        print("Nothing to inject.")
    if not report.applied:
        print("(dry run: nothing was changed; add --apply to fire)")
    return 0


# --------------------------------------------------------------------------- job commands


def _job_when(value: datetime | None) -> str:
    """A job's time in the job's own zone."""
    return local_minute(value, value.tzinfo or UTC) if value is not None else "—"


def job_json(job: Job) -> dict[str, Any]:
    out = json_form(job)
    out["schedule"] = job.schedule
    return dict(out)


def _run_line(run: JobRun) -> str:
    extra = f", caught up: {run.skipped} missed run{'s' if run.skipped != 1 else ''} skipped" if run.skipped else ""
    return f"ran {_job_when(run.ran_at)} for {_job_when(run.scheduled_for)}{extra}"


def cmd_job_add(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    job = engine.jobs.add(
        args.description, at=args.at, cron=args.cron, tz=args.tz, channel=args.channel, sender=args.sender
    )
    if args.json:
        output.print_json(job_json(job))
        return 0
    print(f"added job {job.short_id}: {job.schedule}")
    print(f"  next run  {_job_when(job.next_run_at)}")
    print(f"  id        {job.id}")
    return 0


def cmd_job_list(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    jobs = engine.jobs.list(args.status)
    openclaw, theirs, problem = read_openclaw(engine.openclaw, lambda home: home.jobs(), ())
    if problem is not None:
        return _failed_alone(problem, _list_jobs(args, jobs, None, ()))
    return _list_jobs(args, jobs, openclaw, theirs)


def _list_jobs(
    args: argparse.Namespace, jobs: Sequence[Job], openclaw: OpenClawHome | None, theirs: Sequence[OpenClawJob]
) -> int:
    if args.status is not None:  # OpenClaw's jobs are enabled or not: "active" keeps the enabled ones
        theirs = tuple(j for j in theirs if args.status == "active" and j.enabled)
    if args.json:
        extra = {"openclawJobs": json_form(theirs)} if openclaw is not None else {}
        output.print_json({"jobs": [job_json(j) for j in jobs], **extra})
        return 0
    if not jobs:
        if openclaw is not None:
            print_openclaw_jobs(theirs, openclaw)
        else:
            print("No jobs." if args.status is None else f"No {args.status} jobs.")
        return 0
    body = [
        [
            j.short_id,
            j.status,
            j.schedule,
            _job_when(j.next_run_at),
            _job_when(j.last_run_at),
            str(j.run_count),
            j.description,
        ]
        for j in jobs
    ]
    for line in table(("ID", "STATUS", "SCHEDULE", "NEXT RUN", "LAST RUN", "RUNS", "DESCRIPTION"), body):
        print(line)
    if args.history:
        for j in jobs:
            if j.runs:
                print(f"\n{j.short_id} {j.description}")
                for run in j.runs:
                    print(f"  {_run_line(run)}")
    if openclaw is not None:
        print()
        print_openclaw_jobs(theirs, openclaw)
    return 0


def cmd_job_cancel(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    job = engine.jobs.cancel(args.id)
    if args.json:
        output.print_json(job_json(job))
        return 0
    print(f"cancelled job {job.short_id} ({job.run_count} runs recorded; the history is kept)")
    return 0


def cmd_job_run_due(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    if args.dry_run:
        due = engine.jobs.due()
        if args.json:
            output.print_json(
                {
                    "due": [
                        {"job": job_json(d.job), "scheduledFor": d.scheduled_for.isoformat(), "skipped": d.skipped}
                        for d in due
                    ]
                }
            )
            return 0
        if not due:
            print("Nothing is due.")
        for d in due:
            skipped = f" (+{d.skipped} missed)" if d.skipped else ""
            print(f"DUE  {d.job.short_id}  {_job_when(d.scheduled_for)}{skipped}  {d.job.description}")
        return 0
    report = engine.jobs.run_due()
    if args.json:
        output.print_json(
            {
                "at": report.at.isoformat(),
                "runs": [{"job": job_json(r.job), "run": json_form(r.run)} for r in report.results],
            }
        )
        return 0
    if not report.results:
        print("Nothing is due.")
    for r in report.results:
        to = " / ".join(x for x in (r.job.channel, r.job.sender) if x)
        target = f" → {to}" if to else ""
        print(f"RUN  {r.job.short_id}  {r.job.description}{target}")
        print(f"     {_run_line(r.run)}; next: {_job_when(r.job.next_run_at) if r.job.next_run_at else r.job.status}")
    return 0


# --------------------------------------------------------------------------- OpenClaw's intents and jobs
# Read in place with ``--openclaw`` (never written): listed beside clawmem's own, marked ◆.

MARK = "◆"
T = TypeVar("T")
D = TypeVar("D")


def read_openclaw(
    home: OpenClawHome | None, read: Callable[[OpenClawHome], T], default: D
) -> tuple[OpenClawHome | None, T | D, str | None]:
    """What ``read`` gets from the home, or the one line saying why it cannot (clawmem's own
    rows are still printed, then that line, and the command exits 1)."""
    if home is None:
        return None, default, None
    try:
        return home, read(home), None
    except ClawmemError as exc:
        return None, default, str(exc)


def _failed_alone(problem: str, printed: int) -> int:
    messages.fail(problem)
    return printed or 1


def _left(i: OpenClawIntent) -> str:
    return f"{i.fire_count}/{i.max_fires} ({i.fires_left} left)"


def print_openclaw_intents(intents: Sequence[OpenClawIntent], home: OpenClawHome, tz: tzinfo) -> None:
    print(f"{MARK} OpenClaw's standing intents, read-only ({home.found.agent_db}):")
    if not intents:
        print("  none")
        return
    body = [
        [
            f"{MARK} {i.short_id}",
            i.status,
            _left(i),
            "; ".join(i.keywords),
            i.scope,
            _when(i.cooldown_until, tz),
            _when(i.expires_at, tz),
            i.creator_sender or "unknown",
            i.description,
        ]
        for i in intents
    ]
    headers = ("ID", "STATE", "FIRES", "KEYWORDS", "SCOPE", "COOLDOWN UNTIL", "EXPIRES", "CREATOR", "DESCRIPTION")
    for line in table(headers, body, (None, None, None, 30, 30, None, None, 16)):
        print(line)
    print(f"To change them: {COMMAND}.")


def print_openclaw_intent(i: OpenClawIntent, tz: tzinfo) -> None:
    cooldown = _hours_text(i.cooldown_seconds) + (f", until {_when(i.cooldown_until, tz)}" if i.cooldown_until else "")
    for label, value in (
        ("id", f"{i.id} ({MARK} OpenClaw's, read-only)"),
        ("state", i.status + (" (past its expiry)" if i.expired else "")),
        ("description", i.description),
        ("keywords", "; ".join(i.keywords)),
        ("scope", f"{i.scope}  (channel {list(i.channel_scope)}, sender {list(i.sender_scope)})"),
        ("creator", i.creator_sender or "unknown"),
        ("session", i.source_session_id or "unknown"),
        ("fires", _left(i)),
        ("last fired", _when(i.last_fired_at, tz)),
        ("cooldown", cooldown),
        ("expires", _when(i.expires_at, tz)),
        ("created", _when(i.created_at, tz)),
    ):
        print(f"{label + ':':<13}{value}")
    print(f"To change it: {COMMAND}.")


def openclaw_match_json(m: OpenClawMatch) -> dict[str, Any]:
    return {
        "channel": m.channel,
        "sender": m.sender,
        "at": m.at.isoformat(),
        "applied": False,
        "tokens": list(m.tokens),
        "wouldFire": [v.intent.id for v in m.verdicts if v.fires],
        "verdicts": [
            {
                "id": v.intent.id,
                "description": v.intent.description,
                "status": v.intent.status,
                "outcome": v.outcome,
                "fires": v.fires,
                "reason": v.reason,
                "reasons": list(v.reasons),
                "matchedKeyword": v.matched_keyword,
            }
            for v in m.verdicts
        ],
    }


def print_openclaw_match(m: OpenClawMatch) -> None:
    print(f"{MARK} OpenClaw's standing intents (simulated: OpenClaw's state is never changed):")
    if not m.verdicts:
        print("  none")
        return
    body = [
        ["WOULD FIRE" if v.fires else "-", f"{MARK} {v.intent.short_id}", v.intent.description, v.reason]
        for v in m.verdicts
    ]
    for v, row in zip(m.verdicts, body, strict=True):
        if not v.fires and len(v.reasons) > 1:
            row[3] += f" (+{len(v.reasons) - 1} more)"
    for line in table(("", "ID", "DESCRIPTION", "WHY"), body, (None, None, 32)):
        print(line)


def print_openclaw_jobs(jobs: Sequence[OpenClawJob], home: OpenClawHome) -> None:
    print(f"{MARK} OpenClaw's scheduled jobs, read-only ({home.found.state_db}):")
    if not jobs:
        print("  none")
        return
    body = [
        [
            f"{MARK} {j.short_id}",
            "enabled" if j.enabled else "disabled",
            j.schedule,
            _job_when(j.next_run_at),
            _job_when(j.last_run_at) if j.last_run_at else "never",
            j.name,
        ]
        for j in jobs
    ]
    for line in table(("ID", "STATUS", "SCHEDULE", "NEXT RUN", "LAST RUN", "NAME"), body):
        print(line)
