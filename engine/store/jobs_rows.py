"""SQL of timed jobs and their run history. Times are epoch milliseconds."""

from __future__ import annotations

from dataclasses import dataclass

import apsw

COLUMNS = (
    "id, description, schedule_kind, run_at, cron, timezone, channel, sender, status, next_run_at, last_run_at, "
    "created_at"
)


@dataclass(frozen=True)
class JobRow:
    id: str
    description: str
    schedule_kind: str
    run_at: int | None
    cron: str | None
    timezone: str
    channel: str | None
    sender: str | None
    status: str
    next_run_at: int | None
    last_run_at: int | None
    created_at: int


@dataclass(frozen=True)
class RunRow:
    job_id: str
    scheduled_for: int
    ran_at: int
    outcome: str
    skipped: int


def _job(r: tuple) -> JobRow:  # type: ignore[type-arg]
    return JobRow(*r)


def insert(conn: apsw.Connection, row: JobRow) -> None:
    conn.execute(
        f"INSERT INTO automation_jobs ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            row.id,
            row.description,
            row.schedule_kind,
            row.run_at,
            row.cron,
            row.timezone,
            row.channel,
            row.sender,
            row.status,
            row.next_run_at,
            row.last_run_at,
            row.created_at,
        ),
    )


def get(conn: apsw.Connection, job_id: str) -> JobRow | None:
    row = next(iter(conn.execute(f"SELECT {COLUMNS} FROM automation_jobs WHERE id = ?", (job_id,))), None)
    return _job(row) if row else None


def find_by_prefix(conn: apsw.Connection, prefix: str, limit: int = 3) -> list[JobRow]:
    return [
        _job(r)
        for r in conn.execute(
            f"SELECT {COLUMNS} FROM automation_jobs WHERE substr(id, 1, ?) = ? ORDER BY created_at, id LIMIT ?",
            (len(prefix), prefix, limit),
        )
    ]


def all_jobs(conn: apsw.Connection, status: str | None = None) -> list[JobRow]:
    if status is None:
        cursor = conn.execute(f"SELECT {COLUMNS} FROM automation_jobs ORDER BY created_at, id")
    else:
        cursor = conn.execute(
            f"SELECT {COLUMNS} FROM automation_jobs WHERE status = ? ORDER BY created_at, id", (status,)
        )
    return [_job(r) for r in cursor]


def due(conn: apsw.Connection, now_ms: int) -> list[JobRow]:
    """Active jobs whose next run is at or before ``now_ms``, earliest first."""
    return [
        _job(r)
        for r in conn.execute(
            f"SELECT {COLUMNS} FROM automation_jobs WHERE status = 'active' AND next_run_at <= ? "
            "ORDER BY next_run_at, created_at, id",
            (now_ms,),
        )
    ]


def record_run(conn: apsw.Connection, run: RunRow, *, next_run_at: int | None, status: str) -> None:
    conn.execute(
        "INSERT INTO automation_job_runs (job_id, scheduled_for, ran_at, outcome, skipped) VALUES (?, ?, ?, ?, ?)",
        (run.job_id, run.scheduled_for, run.ran_at, run.outcome, run.skipped),
    )
    conn.execute(
        "UPDATE automation_jobs SET last_run_at = ?, next_run_at = ?, status = ? WHERE id = ? AND status = 'active'",
        (run.ran_at, next_run_at, status, run.job_id),
    )


def runs(conn: apsw.Connection, job_id: str, limit: int = 20) -> list[RunRow]:
    """Run history of one job, newest first."""
    return [
        RunRow(*r)
        for r in conn.execute(
            "SELECT job_id, scheduled_for, ran_at, outcome, skipped FROM automation_job_runs WHERE job_id = ? "
            "ORDER BY ran_at DESC, run_key DESC LIMIT ?",
            (job_id, limit),
        )
    ]


def run_count(conn: apsw.Connection, job_id: str) -> int:
    row = next(iter(conn.execute("SELECT count(*) FROM automation_job_runs WHERE job_id = ?", (job_id,))))
    return int(row[0])


def cancel(conn: apsw.Connection, job_id: str) -> bool:
    conn.execute(
        "UPDATE automation_jobs SET status = 'cancelled', next_run_at = NULL WHERE id = ? AND status = 'active'",
        (job_id,),
    )
    return conn.changes() == 1
