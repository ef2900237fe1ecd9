"""Five-field cron expressions and their next run in an IANA time zone (DST-safe).

Fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or jan-dec), day of week
(0-7 or sun-sat; 0 and 7 are Sunday). Each field is ``*`` or a comma list of ``N``, ``A-B``,
``*/S``, ``A-B/S`` or ``A/S`` (from A to the field's maximum in steps of S).

Rules, as classic (Vixie) cron has them:

- Day of month and day of week: when both are restricted (neither starts with ``*``), a day
  matches if **either** matches (``0 9 15 * 1`` = the 15th *and* every Monday).
- Times are wall-clock times in the schedule's zone. A time that does not exist because the
  clocks spring forward (02:30 on a DST start day in Europe/Berlin) runs once, at the first
  instant after the gap (03:00). A time that exists twice because the clocks fall back runs
  once, at its first occurrence.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from clawmem.engine.errors import ClawmemError

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)
_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # 29: a leap year allows it
# How far ahead next_after() looks: long enough for any schedule that can run at all
# (Feb 29 on a given weekday repeats within 28 years).
SEARCH_YEARS = 29


class CronError(ClawmemError):
    """A cron expression that cannot be parsed or never runs."""


@dataclass(frozen=True)
class CronSchedule:
    expression: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]  # day of month
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday … 6 = Saturday
    dom_restricted: bool
    dow_restricted: bool

    def matches_day(self, d: date) -> bool:
        if d.month not in self.months:
            return False
        dom = d.day in self.days
        dow = (d.isoweekday() % 7) in self.weekdays
        if self.dom_restricted and self.dow_restricted:
            return dom or dow
        if self.dom_restricted:
            return dom
        if self.dow_restricted:
            return dow
        return True

    def next_after(self, instant: datetime, tz: tzinfo) -> datetime | None:
        """The first run strictly after ``instant`` (aware), as an aware UTC datetime."""
        local = instant.astimezone(tz)
        day = local.date()
        last = day + timedelta(days=366 * SEARCH_YEARS)
        while day <= last:
            if self.matches_day(day):
                for hour in self.hours:
                    for minute in self.minutes:
                        when = resolve_wall_time(datetime.combine(day, time(hour, minute)), tz)
                        if when > instant:
                            return when
            day += timedelta(days=1)
        return None


def _value(text: str, name: str, lo: int, hi: int, names: tuple[str, ...]) -> int:
    lowered = text.lower()
    if names and lowered in names:
        return names.index(lowered) + (1 if name == "month" else 0)
    if not text.isdigit():
        raise CronError(f"cron {name}: {text!r} is not a number" + (f" or a name ({names[0]}…)" if names else ""))
    value = int(text)
    if not lo <= value <= hi:
        raise CronError(f"cron {name}: {value} is outside {lo}-{hi}")
    return value


def _field(text: str, name: str, lo: int, hi: int, names: tuple[str, ...]) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        if not part:
            raise CronError(f"cron {name}: empty list item in {text!r}")
        base, slash, step_text = part.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) < 1:
                raise CronError(f"cron {name}: step {step_text!r} must be a whole number of 1 or more")
            step = int(step_text)
        if base == "*":
            start, end = lo, hi
        elif "-" in base:
            a, _dash, b = base.partition("-")
            start, end = _value(a, name, lo, hi, names), _value(b, name, lo, hi, names)
            if start > end:
                raise CronError(f"cron {name}: range {base!r} runs backwards")
        else:
            start = _value(base, name, lo, hi, names)
            end = hi if slash else start
        out.update(range(start, end + 1, step))
    return out


def parse_cron(expression: str) -> CronSchedule:
    """Parse a 5-field expression; raise CronError (one line) when it is invalid or never runs."""
    parts = expression.split()
    if len(parts) != 5:
        raise CronError(
            f"cron expression {expression!r} needs 5 fields (minute hour day-of-month month day-of-week), "
            f"got {len(parts)}"
        )
    sets = [_field(p, name, lo, hi, names) for p, (name, lo, hi, names) in zip(parts, _FIELDS, strict=True)]
    weekdays = frozenset(d % 7 for d in sets[4])
    schedule = CronSchedule(
        expression=" ".join(parts),
        minutes=tuple(sorted(sets[0])),
        hours=tuple(sorted(sets[1])),
        days=frozenset(sets[2]),
        months=frozenset(sets[3]),
        weekdays=weekdays,
        dom_restricted=not parts[2].startswith("*"),
        dow_restricted=not parts[4].startswith("*"),
    )
    possible = any(d <= _DAYS_IN_MONTH[m - 1] for m in schedule.months for d in schedule.days)
    if schedule.dom_restricted and not schedule.dow_restricted and not possible:
        raise CronError(f"cron expression {expression!r} never runs (no such day in those months)")
    return schedule


def resolve_wall_time(wall: datetime, tz: tzinfo) -> datetime:
    """A naive local wall-clock time in ``tz`` as an aware UTC instant (see module rules)."""
    first = wall.replace(tzinfo=tz, fold=0)
    utc = first.astimezone(UTC)
    if utc.astimezone(tz).replace(tzinfo=None) == wall:
        return utc  # exists (first occurrence when ambiguous)
    # In a spring-forward gap: fold=1 reads it with the later offset (an instant before the
    # jump), fold=0 with the earlier one (after it). The gap ends at the first instant between
    # them whose wall time is past ``wall``.
    a = int(wall.replace(tzinfo=tz, fold=1).timestamp())
    b = int(utc.timestamp())
    lo, hi = min(a, b), max(a, b)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if datetime.fromtimestamp(mid, tz).replace(tzinfo=None) >= wall:
            hi = mid
        else:
            lo = mid
    return datetime.fromtimestamp(hi, UTC)
