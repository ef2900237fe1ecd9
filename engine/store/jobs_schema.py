"""Tables of timed jobs ("remind me at 9 tomorrow"): clawmem's own, OpenClaw keeps these in cron.

Times are integer epoch milliseconds (UTC), like the intent tables; ``timezone`` is the IANA
zone the schedule is read in. ``automation_job_runs`` is the run history (never deleted);
``skipped`` counts the due times that were missed and folded into this one run.
"""

from __future__ import annotations

from clawmem.engine.store.schema import _sql, register_component

JOBS_V1 = """
CREATE TABLE IF NOT EXISTS automation_jobs (
    job_key INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL CHECK (length(trim(description)) > 0),
    schedule_kind TEXT NOT NULL CHECK (schedule_kind IN ('at', 'cron')),
    run_at INTEGER,
    cron TEXT,
    timezone TEXT NOT NULL,
    channel TEXT,
    sender TEXT,
    status TEXT NOT NULL CHECK (status IN ('active', 'done', 'cancelled')),
    next_run_at INTEGER,
    last_run_at INTEGER,
    created_at INTEGER NOT NULL,
    CHECK ((schedule_kind = 'at' AND run_at IS NOT NULL AND cron IS NULL)
        OR (schedule_kind = 'cron' AND cron IS NOT NULL AND run_at IS NULL)),
    CHECK (status <> 'active' OR next_run_at IS NOT NULL)
) STRICT;
CREATE INDEX IF NOT EXISTS idx_automation_jobs_due ON automation_jobs (status, next_run_at);

CREATE TABLE IF NOT EXISTS automation_job_runs (
    run_key INTEGER PRIMARY KEY,
    job_id TEXT NOT NULL REFERENCES automation_jobs (id) ON DELETE CASCADE,
    scheduled_for INTEGER NOT NULL,
    ran_at INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('ran', 'caught_up')),
    skipped INTEGER NOT NULL DEFAULT 0 CHECK (skipped >= 0)
) STRICT;
CREATE INDEX IF NOT EXISTS idx_automation_job_runs_job ON automation_job_runs (job_id, ran_at);
"""

register_component("jobs", (_sql(JOBS_V1),))
