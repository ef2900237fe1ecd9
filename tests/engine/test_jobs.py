"""Timed jobs: the cron parser (DST-safe next run), due(), run-due with history, cancel."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.intents.automation import JobValidationError
from clawmem.engine.intents.cron import CronError, parse_cron, resolve_wall_time

from tests.conftest import NOW, make_settings

T0 = datetime.fromisoformat(NOW)  # Thursday 2026-11-05 09:00 UTC
BERLIN = ZoneInfo("Europe/Berlin")
SHANGHAI = ZoneInfo("Asia/Shanghai")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def runs(expr: str, start: datetime, tz: ZoneInfo, n: int) -> list[datetime]:
    schedule = parse_cron(expr)
    out: list[datetime] = []
    t = start
    for _ in range(n):
        nxt = schedule.next_after(t, tz)
        assert nxt is not None
        out.append(nxt)
        t = nxt
    return out


# --------------------------------------------------------------------------- cron


def test_cron_fields_lists_ranges_steps_and_names() -> None:
    s = parse_cron("*/15 9-17/4 1,15 jan-mar,DEC mon-fri")
    assert s.minutes == (0, 15, 30, 45)
    assert s.hours == (9, 13, 17)
    assert s.days == {1, 15} and s.months == {1, 2, 3, 12} and s.weekdays == {1, 2, 3, 4, 5}
    assert parse_cron("5/20 * * * *").minutes == (5, 25, 45)  # A/S runs to the field's maximum
    assert parse_cron("0 0 * * 7").weekdays == {0} == parse_cron("0 0 * * 0").weekdays  # 7 and 0 are Sunday
    assert parse_cron("0 0 * * 5-7").weekdays == {5, 6, 0}


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("* * * *", "needs 5 fields"),
        ("60 * * * *", "cron minute: 60 is outside 0-59"),
        ("* 24 * * *", "cron hour: 24 is outside 0-23"),
        ("* * 0 * *", "cron day of month: 0 is outside 1-31"),
        ("* * * 13 *", "cron month: 13 is outside 1-12"),
        ("* * * * 8", "cron day of week: 8 is outside 0-7"),
        ("5-1 * * * *", "range '5-1' runs backwards"),
        ("*/0 * * * *", "step '0' must be a whole number"),
        ("1,,2 * * * *", "empty list item"),
        ("x * * * *", "'x' is not a number"),
        ("0 0 30 2 *", "never runs"),
    ],
)
def test_cron_errors_are_one_line(expr: str, message: str) -> None:
    with pytest.raises(CronError) as info:
        parse_cron(expr)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_weekday_schedule_skips_the_weekend() -> None:
    got = runs("0 9 * * 1-5", T0, BERLIN, 3)  # from Thursday 10:00 Berlin
    assert [d.astimezone(BERLIN).strftime("%a %d %H:%M") for d in got] == [
        "Fri 06 09:00",
        "Mon 09 09:00",
        "Tue 10 09:00",
    ]


def test_day_of_month_and_day_of_week_are_ored_like_cron() -> None:
    got = runs("0 9 15 * 1", utc("2026-11-06T12:00"), UTC, 4)
    assert [d.strftime("%a %d") for d in got] == ["Mon 09", "Sun 15", "Mon 16", "Mon 23"]
    # With a '*' day of week only the day of month counts (and vice versa).
    assert [d.day for d in runs("0 9 15 * *", utc("2026-11-06T12:00"), UTC, 2)] == [15, 15]


def test_next_run_keeps_local_time_across_dst() -> None:
    got = runs("0 9 * * *", utc("2026-03-27T12:00"), BERLIN, 3)
    assert [d.astimezone(BERLIN).strftime("%d %H:%M") for d in got] == ["28 09:00", "29 09:00", "30 09:00"]
    assert [d.hour for d in got] == [8, 7, 7]  # UTC hour changes when Berlin springs forward


def test_a_time_in_the_spring_forward_gap_runs_once_at_the_end_of_the_gap() -> None:
    got = runs("30 2 * * *", utc("2026-03-28T12:00"), BERLIN, 2)
    assert got[0] == utc("2026-03-29T01:00")  # 03:00 CEST, the first instant after the gap
    assert got[1].astimezone(BERLIN).strftime("%d %H:%M %Z") == "30 02:30 CEST"
    # Several times inside the gap collapse into that one run.
    gap = runs("0,30 2,3 * * *", utc("2026-03-29T00:00"), BERLIN, 2)
    assert [d.astimezone(BERLIN).strftime("%H:%M") for d in gap] == ["03:00", "03:30"]
    assert resolve_wall_time(datetime(2026, 3, 29, 2, 30), BERLIN) == utc("2026-03-29T01:00")


def test_a_repeated_fall_back_time_runs_once_at_its_first_occurrence() -> None:
    got = runs("30 2 * * *", utc("2026-10-24T12:00"), BERLIN, 2)
    assert got[0] == utc("2026-10-25T00:30")  # 02:30 CEST, not again at 02:30 CET
    assert got[1].astimezone(BERLIN).strftime("%d %H:%M %Z") == "26 02:30 CET"


def test_leap_day_schedule() -> None:
    assert runs("0 0 29 2 *", utc("2026-01-01T00:00"), UTC, 1) == [utc("2028-02-29T00:00")]


# --------------------------------------------------------------------------- jobs


TO = {"channel": "telegram", "sender": "u1"}  # every job has a recipient


@pytest.fixture
def at(home: Path, workspace: Path) -> Iterator:  # type: ignore[type-arg]
    settings = make_settings(home, workspace, embedding={"provider": "none"})
    engines: list[MemoryEngine] = []

    def make(when: timedelta | datetime = timedelta(0)) -> MemoryEngine:
        instant = T0 + when if isinstance(when, timedelta) else when
        e = MemoryEngine(dataclasses.replace(settings, now=instant.isoformat()))
        engines.append(e)
        return e

    yield make
    for e in engines:
        e.close()


def test_one_shot_job_in_its_time_zone(at) -> None:  # type: ignore[no-untyped-def]
    e = at()
    job = e.jobs.add(
        "confirm the return ticket", at="2026-11-06T09:00", tz="Asia/Shanghai", channel="telegram", sender="u1"
    )
    assert job.status == "active" and job.schedule_kind == "at"
    assert job.next_run_at == utc("2026-11-06T01:00") and job.next_run_at.tzinfo == SHANGHAI
    assert job.schedule == "at 2026-11-06 09:00 (Asia/Shanghai)"
    assert e.jobs.due(utc("2026-11-06T00:59")) == ()
    due = e.jobs.due(utc("2026-11-06T01:00"))
    assert [d.job.id for d in due] == [job.id] and due[0].skipped == 0

    later = at(utc("2026-11-06T02:00"))
    report = later.jobs.run_due()
    assert report.at == utc("2026-11-06T02:00")
    (result,) = report.results
    assert result.job.status == "done" and result.job.next_run_at is None
    assert result.job.last_run_at == utc("2026-11-06T02:00")
    assert (result.run.scheduled_for, result.run.outcome, result.run.skipped) == (utc("2026-11-06T01:00"), "ran", 0)
    assert later.jobs.run_due().results == ()  # a one-shot job runs once
    assert later.jobs.get(job.id[:8]).run_count == 1


def test_cron_job_missed_for_several_periods_runs_once_and_counts_the_skipped(at) -> None:  # type: ignore[no-untyped-def]
    job = at().jobs.add("standup", cron="0 9 * * 1-5", tz="Europe/Berlin", **TO)
    assert job.next_run_at == utc("2026-11-06T08:00")  # Friday 09:00 CET
    e = at(utc("2026-11-12T08:30"))  # Thursday; missed Fri, Mon, Tue, Wed, ran due Thu
    (due,) = e.jobs.due()
    assert (due.scheduled_for, due.skipped) == (utc("2026-11-12T08:00"), 4)
    (result,) = e.jobs.run_due().results
    assert (result.run.outcome, result.run.skipped) == ("caught_up", 4)
    assert result.job.next_run_at == utc("2026-11-13T08:00")
    assert result.job.status == "active" and result.job.run_count == 1
    assert e.jobs.run_due().results == ()

    on_time = at(utc("2026-11-13T08:00"))
    (second,) = on_time.jobs.run_due().results
    assert (second.run.outcome, second.run.skipped) == ("ran", 0)
    assert second.job.next_run_at == utc("2026-11-16T08:00")  # Monday
    history = on_time.jobs.history(job.id)
    assert [r.scheduled_for for r in history] == [utc("2026-11-13T08:00"), utc("2026-11-12T08:00")]


def test_cron_next_run_after_a_dst_change(at) -> None:  # type: ignore[no-untyped-def]
    job = at(utc("2026-10-24T12:00")).jobs.add("daily", cron="0 9 * * *", tz="Europe/Berlin", **TO)
    assert job.next_run_at == utc("2026-10-25T08:00")  # Sunday 09:00 CET, the day clocks fall back
    (result,) = at(utc("2026-10-25T08:00")).jobs.run_due().results
    assert result.job.next_run_at == utc("2026-10-26T08:00")


def test_due_is_a_pure_query(at) -> None:  # type: ignore[no-untyped-def]
    job = at().jobs.add("ping", cron="*/10 * * * *", tz="UTC", **TO)
    e = at(timedelta(hours=1))
    first = e.jobs.due()
    assert first == e.jobs.due() and first[0].skipped == 5
    assert e.jobs.get(job.id).next_run_at == T0 + timedelta(minutes=10)
    assert e.jobs.get(job.id).run_count == 0


def test_cancel_stops_runs_and_keeps_history(at) -> None:  # type: ignore[no-untyped-def]
    job = at().jobs.add("ping", cron="0 * * * *", tz="UTC", **TO)
    assert at(timedelta(hours=1)).jobs.run_due().results
    e = at(timedelta(hours=1, minutes=30))
    cancelled = e.jobs.cancel(job.id[:6])
    assert (cancelled.status, cancelled.next_run_at, cancelled.run_count) == ("cancelled", None, 1)
    assert at(timedelta(hours=5)).jobs.run_due().results == ()
    with pytest.raises(ClawmemError, match="is cancelled; only active jobs can be cancelled"):
        e.jobs.cancel(job.id)
    with pytest.raises(ClawmemError, match="no job with id"):
        e.jobs.cancel("abcdef12")
    assert [j.status for j in e.jobs.list()] == ["cancelled"] and e.jobs.list("active") == ()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"at": "2026-11-06T09:00", "cron": "0 9 * * *"}, "give exactly one schedule"),
        ({}, "give exactly one schedule"),
        ({"at": "2026-11-05T08:00"}, "the run time 2026-11-05 08:00 (UTC) is not in the future"),
        ({"at": "2026-11-06"}, "has no time of day"),
        ({"at": "tomorrow"}, "is not an ISO date-time"),
        ({"cron": "0 9 * *"}, "needs 5 fields"),
        ({"cron": "0 9 * * *", "tz": "Mars/Olympus"}, "unknown time zone 'Mars/Olympus'"),
        ({"cron": "0 9 * * *", "description": ""}, "the description is empty"),
        ({"cron": "0 9 * * *", "channel": None}, "a job needs a channel (--channel): a reminder with no recipient"),
        ({"cron": "0 9 * * *", "sender": "  "}, "a job needs a sender (--sender)"),
        ({"cron": "0 9 * * *", "channel": "", "sender": None}, "a job needs a channel (--channel) and a sender"),
    ],
)
def test_add_validation(at, kwargs: dict[str, str], message: str) -> None:  # type: ignore[no-untyped-def]
    e = at()
    args = {"description": "remind me", "tz": "UTC", **TO} | kwargs
    with pytest.raises(JobValidationError) as info:
        e.jobs.add(args.pop("description"), **args)
    assert any(message in err for err in info.value.errors), info.value.errors
    assert e.jobs.list() == ()


def test_default_time_zone_is_the_configured_one(at) -> None:  # type: ignore[no-untyped-def]
    job = at().jobs.add("x", at="2026-11-06T09:00", **TO)
    assert job.timezone == "UTC" and job.next_run_at == utc("2026-11-06T09:00")
