"""Timed jobs: "remind me at 9 tomorrow" as a stored schedule a program runs, with a run history.

A job is a one-shot time (``at``) or a 5-field cron expression (``cron``, see
:mod:`engine.intents.cron`), read in the job's IANA time zone (DST-safe). clawmem records runs; the
host that calls ``run_due`` delivers the reminders it returns (to the job's channel/sender).

- ``due(now)`` is a pure query: the active jobs whose next run is at or before ``now``.
- ``run_due(now)`` runs each due job **once**, in one transaction: a run row is written
  (``scheduled_for`` = the most recent due time ≤ now; ``skipped`` = the earlier due times that
  were missed and folded into this run, counted up to 10,000; outcome ``ran`` or
  ``caught_up`` when something was skipped), ``last_run_at`` = now, the next run is computed
  strictly after now, and a one-shot job becomes ``done``. Missed periods are never replayed.
- Adding a job needs a channel and a sender, as creating an intent does: the host delivers the
  reminder there, and a job nobody receives is refused instead of stored.
- ``cancel`` works on active jobs only (by id or a unique prefix of ≥ 6 characters); the row
  and its history stay.

Times are integer epoch milliseconds in SQLite; the dataclasses carry aware datetimes in the
job's own zone.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from clawmem.engine.errors import ClawmemError
from clawmem.engine.intents.cron import CronError, CronSchedule, parse_cron, resolve_wall_time
from clawmem.engine.kinds import JOB_STATUSES, JobStatus, narrow
from clawmem.engine.store import jobs_rows as rows
from clawmem.engine.store.jobs_rows import JobRow, RunRow

if TYPE_CHECKING:
    from clawmem.engine.runtime import Runtime

MAX_DESCRIPTION_CHARS = 500
MAX_SCOPE_CHARS = 200
MIN_ID_PREFIX = 6
SKIP_COUNT_CAP = 10_000
HISTORY_SHOWN = 20


@dataclass(frozen=True)
class JobRun:
    job_id: str
    scheduled_for: datetime
    ran_at: datetime
    outcome: str  # "ran" | "caught_up"
    skipped: int  # due times missed and folded into this run


@dataclass(frozen=True)
class Job:
    id: str
    description: str
    schedule_kind: str  # "at" | "cron"
    run_at: datetime | None
    cron: str | None
    timezone: str
    channel: str | None
    sender: str | None
    status: JobStatus
    next_run_at: datetime | None
    last_run_at: datetime | None
    created_at: datetime
    runs: tuple[JobRun, ...]  # newest first, at most 20
    run_count: int

    @property
    def short_id(self) -> str:
        return self.id[:8]

    @property
    def schedule(self) -> str:
        if self.schedule_kind == "cron":
            return f"cron {self.cron} ({self.timezone})"
        assert self.run_at is not None
        return f"at {self.run_at.strftime('%Y-%m-%d %H:%M')} ({self.timezone})"


@dataclass(frozen=True)
class DueJob:
    job: Job
    scheduled_for: datetime  # the most recent due time ≤ now
    skipped: int  # earlier due times folded into this run


@dataclass(frozen=True)
class JobRunResult:
    job: Job  # after the run
    run: JobRun


@dataclass(frozen=True)
class RunDueReport:
    at: datetime
    results: tuple[JobRunResult, ...]


class JobValidationError(ClawmemError):
    def __init__(self, errors: tuple[str, ...]) -> None:
        self.errors = errors
        super().__init__("; ".join(errors))


def _ms(value: datetime) -> int:
    return round(value.timestamp() * 1000)


def zone(name: str) -> ZoneInfo:
    """An IANA zone, or a one-line error."""
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ClawmemError(f"unknown time zone {name!r}; use an IANA name such as Europe/Berlin") from None


def local_zone_name(configured: str | None) -> str:
    """The configured zone, else $TZ, else /etc/localtime's zone, else UTC."""
    candidates = [configured, os.environ.get("TZ", "").lstrip(":")]
    try:
        link = os.readlink("/etc/localtime")
        if "zoneinfo/" in link:
            candidates.append(link.split("zoneinfo/", 1)[1])
    except OSError:
        pass
    for name in candidates:
        if name:
            try:
                ZoneInfo(name)
                return name
            except (ZoneInfoNotFoundError, ValueError):
                continue
    return "UTC"


def parse_run_at(text: str, tz: ZoneInfo) -> datetime:
    """An ISO date-time; a naive one is a wall-clock time in ``tz``. Returns aware UTC."""
    raw = text.strip()
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ClawmemError(f"run time {raw!r} is not an ISO date-time (use YYYY-MM-DDTHH:MM)") from None
    if len(raw) <= 10:
        raise ClawmemError(f"run time {raw!r} has no time of day (use YYYY-MM-DDTHH:MM)")
    if value.tzinfo is None:
        return resolve_wall_time(value, tz)
    return value.astimezone(UTC)


def latest_due(schedule: CronSchedule, tz: ZoneInfo, first: datetime, now: datetime) -> tuple[datetime, int]:
    """The most recent due time ≤ ``now`` from ``first`` (itself due), and how many earlier due
    times it folds in (exact up to SKIP_COUNT_CAP)."""
    latest, skipped = first, 0
    while True:
        nxt = schedule.next_after(latest, tz)
        if nxt is None or nxt > now:
            return latest, skipped
        latest = nxt
        if skipped < SKIP_COUNT_CAP:
            skipped += 1
        else:  # stop counting; jump close to now so a dense schedule does not take long
            recent = schedule.next_after(max(latest, now - timedelta(days=1)), tz)
            if recent is not None and recent <= now:
                latest = recent


class JobService:
    """Add, list, cancel and run timed jobs of one agent."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    # ------------------------------------------------------------------ conversion

    def _job(self, row: JobRow, *, with_runs: bool = True) -> Job:
        tz = ZoneInfo(row.timezone)
        conn = self.runtime.store.conn()

        def dt(ms: int | None) -> datetime | None:
            return None if ms is None else datetime.fromtimestamp(ms / 1000, tz)

        history = rows.runs(conn, row.id, HISTORY_SHOWN) if with_runs else []
        created = dt(row.created_at)
        assert created is not None
        return Job(
            id=row.id,
            description=row.description,
            schedule_kind=row.schedule_kind,
            run_at=dt(row.run_at),
            cron=row.cron,
            timezone=row.timezone,
            channel=row.channel,
            sender=row.sender,
            status=narrow(row.status, JOB_STATUSES, "job status"),
            next_run_at=dt(row.next_run_at),
            last_run_at=dt(row.last_run_at),
            created_at=created,
            runs=tuple(self._run(r, tz) for r in history),
            run_count=rows.run_count(conn, row.id) if with_runs else 0,
        )

    @staticmethod
    def _run(r: RunRow, tz: ZoneInfo) -> JobRun:
        return JobRun(
            job_id=r.job_id,
            scheduled_for=datetime.fromtimestamp(r.scheduled_for / 1000, tz),
            ran_at=datetime.fromtimestamp(r.ran_at / 1000, tz),
            outcome=r.outcome,
            skipped=r.skipped,
        )

    def _resolve(self, ident: str) -> JobRow:
        conn = self.runtime.store.conn()
        key = ident.strip().lower()
        row = rows.get(conn, key) if key else None
        if row is not None:
            return row
        if len(key) < MIN_ID_PREFIX:
            raise ClawmemError(f"give the job's full id or at least its first {MIN_ID_PREFIX} characters")
        found = rows.find_by_prefix(conn, key)
        if not found:
            raise ClawmemError(f"no job with id {ident.strip()!r} (see `clawmem job list`)")
        if len(found) > 1:
            raise ClawmemError(f"id prefix {ident.strip()!r} matches several jobs; give more characters")
        return found[0]

    # ------------------------------------------------------------------ create

    def check(
        self,
        description: str,
        *,
        at: str | datetime | None = None,
        cron: str | None = None,
        tz: str | None = None,
        channel: str | None = None,
        sender: str | None = None,
    ) -> tuple[str, ...]:
        """Every problem with an add request, one line each (empty: it can be added)."""
        return self._prepare(description, at=at, cron=cron, tz=tz, channel=channel, sender=sender)[1]

    def _prepare(
        self,
        description: str,
        *,
        at: str | datetime | None,
        cron: str | None,
        tz: str | None,
        channel: str | None,
        sender: str | None,
    ) -> tuple[JobRow | None, tuple[str, ...]]:
        errors: list[str] = []
        now = self.runtime.clock.now()
        desc = (description or "").strip()
        if not desc:
            errors.append("the description is empty; say what to remind of")
        elif len(desc) > MAX_DESCRIPTION_CHARS:
            errors.append(f"the description is {len(desc)} characters; the limit is {MAX_DESCRIPTION_CHARS}")
        chan = (channel or "").strip() or None
        who = (sender or "").strip() or None
        if chan is None or who is None:
            missing = " and ".join(
                n for n, v in (("a channel (--channel)", chan), ("a sender (--sender)", who)) if v is None
            )
            errors.append(f"a job needs {missing}: a reminder with no recipient is never delivered")
        for label, value in (("channel", chan), ("sender", who)):
            if value is not None and len(value) > MAX_SCOPE_CHARS:
                errors.append(f"the {label} is {len(value)} characters; the limit is {MAX_SCOPE_CHARS}")
        zone_name = (tz or "").strip() or local_zone_name(self.runtime.settings.timezone)
        zi: ZoneInfo | None = None
        try:
            zi = zone(zone_name)
        except ClawmemError as exc:
            errors.append(str(exc))
        has_at = at is not None and at != ""
        has_cron = bool((cron or "").strip())
        run_at: datetime | None = None
        schedule: CronSchedule | None = None
        if has_at == has_cron:
            errors.append('give exactly one schedule: --at YYYY-MM-DDTHH:MM or --cron "MIN HOUR DOM MON DOW"')
        elif has_at and zi is not None:
            try:
                if isinstance(at, datetime):
                    run_at = resolve_wall_time(at, zi) if at.tzinfo is None else at.astimezone(UTC)
                else:
                    run_at = parse_run_at(str(at), zi)
            except ClawmemError as exc:
                errors.append(str(exc))
            else:
                if run_at <= now:
                    shown = f"{run_at.astimezone(zi):%Y-%m-%d %H:%M} ({zone_name})"
                    errors.append(f"the run time {shown} is not in the future")
        elif has_cron:
            try:
                schedule = parse_cron(cron or "")
            except CronError as exc:
                errors.append(str(exc))
        if errors or zi is None:
            return None, tuple(errors)
        if schedule is not None:
            first = schedule.next_after(now, zi)
            if first is None:
                return None, (f"cron expression {schedule.expression!r} never runs",)
            next_run = first
        else:
            assert run_at is not None
            next_run = run_at
        row = JobRow(
            id=str(uuid.uuid4()),
            description=desc,
            schedule_kind="cron" if schedule is not None else "at",
            run_at=_ms(run_at) if run_at is not None else None,
            cron=schedule.expression if schedule is not None else None,
            timezone=zone_name,
            channel=chan,
            sender=who,
            status="active",
            next_run_at=_ms(next_run),
            last_run_at=None,
            created_at=_ms(now),
        )
        return row, ()

    def add(
        self,
        description: str,
        *,
        at: str | datetime | None = None,
        cron: str | None = None,
        tz: str | None = None,
        channel: str | None = None,
        sender: str | None = None,
    ) -> Job:
        """Add an active job; raise JobValidationError listing every problem."""
        row, errors = self._prepare(description, at=at, cron=cron, tz=tz, channel=channel, sender=sender)
        if row is None:
            raise JobValidationError(errors)
        with self.runtime.store.write() as conn:
            rows.insert(conn, row)
        return self._job(row)

    # ------------------------------------------------------------------ read / cancel

    def list(self, status: str | None = None) -> tuple[Job, ...]:
        if status is not None and status not in JOB_STATUSES:
            raise ClawmemError(f"unknown job status {status!r}; use one of {', '.join(JOB_STATUSES)}")
        return tuple(self._job(r) for r in rows.all_jobs(self.runtime.store.conn(), status))

    def get(self, ident: str) -> Job:
        return self._job(self._resolve(ident))

    def history(self, ident: str, limit: int = 1_000) -> tuple[JobRun, ...]:
        row = self._resolve(ident)
        tz = ZoneInfo(row.timezone)
        return tuple(self._run(r, tz) for r in rows.runs(self.runtime.store.conn(), row.id, limit))

    def cancel(self, ident: str) -> Job:
        with self.runtime.store.write() as conn:
            row = self._resolve(ident)
            if row.status != "active":
                raise ClawmemError(f"job {row.id[:8]} is {row.status}; only active jobs can be cancelled")
            rows.cancel(conn, row.id)
            updated = rows.get(conn, row.id)
        assert updated is not None
        return self._job(updated)

    # ------------------------------------------------------------------ due / run

    def _due(self, now: datetime) -> tuple[tuple[JobRow, datetime, int], ...]:
        out = []
        for row in rows.due(self.runtime.store.conn(), _ms(now)):
            assert row.next_run_at is not None
            first = datetime.fromtimestamp(row.next_run_at / 1000, UTC)
            if row.schedule_kind == "cron" and row.cron:
                latest, skipped = latest_due(parse_cron(row.cron), ZoneInfo(row.timezone), first, now)
            else:
                latest, skipped = first, 0
            out.append((row, latest, skipped))
        return tuple(out)

    def due(self, now: datetime | None = None) -> tuple[DueJob, ...]:
        """Jobs due at ``now`` (default: the clock), without changing anything."""
        now = now or self.runtime.clock.now()
        result = []
        for row, latest, skipped in self._due(now):
            tz = ZoneInfo(row.timezone)
            result.append(DueJob(self._job(row), latest.astimezone(tz), skipped))
        return tuple(result)

    def run_due(self, now: datetime | None = None) -> RunDueReport:
        """Run every due job once (see the module docstring) and record it."""
        now = now or self.runtime.clock.now()
        now_ms = _ms(now)
        done: list[tuple[str, RunRow]] = []
        with self.runtime.store.write() as conn:
            for row, latest, skipped in self._due(now):
                if row.schedule_kind == "cron" and row.cron:
                    nxt = parse_cron(row.cron).next_after(now, ZoneInfo(row.timezone))
                    next_ms, status = (_ms(nxt), "active") if nxt is not None else (None, "done")
                else:
                    next_ms, status = None, "done"
                run = RunRow(row.id, _ms(latest), now_ms, "caught_up" if skipped else "ran", skipped)
                rows.record_run(conn, run, next_run_at=next_ms, status=status)
                done.append((row.id, run))
        results = []
        for job_id, run in done:
            updated = rows.get(self.runtime.store.conn(), job_id)
            assert updated is not None
            job = self._job(updated)
            results.append(JobRunResult(job, self._run(run, ZoneInfo(job.timezone))))
        return RunDueReport(at=now, results=tuple(results))
