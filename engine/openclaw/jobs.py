"""The gateway's scheduled jobs, read in place from ``cron_jobs`` (state DB): name, schedule,
enabled, last and next run, so they can be listed next to clawmem's own timed jobs.

``job_json`` holds the declaration (``schedule`` is ``{"kind":"cron","expr":…}``,
``{"kind":"every","everyMs":…}`` or ``{"kind":"at",…}``); ``state_json`` the runtime state
(``nextRunAtMs``, and ``lastRunAtMs`` / ``lastStatus`` once it ran). Times are epoch ms.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clawmem.engine.store.openclaw.rows import CronJobRow


@dataclass(frozen=True)
class OpenClawJob:
    id: str
    source: str  # always "openclaw"
    name: str
    description: str | None
    enabled: bool
    agent_id: str | None
    kind: str | None  # the payload kind: agentTurn, heartbeat, …
    schedule: str  # "cron 0 3 * * *", "every 30 min", "at 2026-11-06T09:00:00Z"
    next_run_at: datetime | None
    last_run_at: datetime | None  # None: it never ran
    last_status: str | None

    @property
    def short_id(self) -> str:
        return self.id[:8]


def _object(raw: str | None) -> dict[str, Any]:
    try:
        parsed = json.loads(raw or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _dt(ms: object) -> datetime | None:
    return datetime.fromtimestamp(ms / 1000, UTC) if isinstance(ms, int | float) else None


def _every(ms: float) -> str:
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size and ms % size == 0:
            return f"every {int(ms // size)} {unit}"
    return f"every {ms:g} ms"


def schedule_text(schedule: dict[str, Any]) -> str:
    kind = schedule.get("kind")
    if kind == "cron":
        tz = schedule.get("tz")
        return f"cron {schedule.get('expr', '?')}" + (f" ({tz})" if tz else "")
    if kind == "every" and isinstance(schedule.get("everyMs"), int | float):
        return _every(float(schedule["everyMs"]))
    if kind == "at":
        at = schedule.get("at") or _dt(schedule.get("atMs"))
        return f"at {at.isoformat() if isinstance(at, datetime) else at}"
    return str(kind or "?")


def decode(row: CronJobRow) -> OpenClawJob:
    job, state = _object(row.job_json), _object(row.state_json)
    payload = job.get("payload")
    schedule = job.get("schedule")
    return OpenClawJob(
        id=row.job_id,
        source="openclaw",
        name=row.name,
        description=row.description or None,
        enabled=bool(row.enabled),
        agent_id=row.agent_id,
        kind=payload.get("kind") if isinstance(payload, dict) else None,
        schedule=schedule_text(schedule) if isinstance(schedule, dict) else "?",
        next_run_at=_dt(state.get("nextRunAtMs")),
        last_run_at=_dt(state.get("lastRunAtMs")),
        last_status=state.get("lastStatus") or state.get("lastRunStatus"),
    )
