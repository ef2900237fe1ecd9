"""Time formats, defined once: the ISO instants files and rows store, local days, the diary's
date line, and the minute-precision local time the CLI and the app show."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

DAY_MS = 24 * 60 * 60 * 1000


def iso_ms(ms: int | None) -> str | None:
    """``2026-11-05T09:00:00.000Z`` (JavaScript's ``toISOString``), or None."""
    if ms is None:
        return None
    dt = datetime.fromtimestamp(ms / 1000, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def local_day(ms: int, tz: tzinfo) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).astimezone(tz).date().isoformat()


def diary_date(ms: int, tz: tzinfo) -> str:
    """``November 5, 2026 at 9:00 AM UTC``: OpenClaw's en-US narrative date with a zone name."""
    local = datetime.fromtimestamp(ms / 1000, UTC).astimezone(tz)
    hour = local.hour % 12 or 12
    ampm = "AM" if local.hour < 12 else "PM"
    name = local.tzname() or "UTC"
    if not name.isalpha():
        offset = local.utcoffset()
        minutes = int(offset.total_seconds() // 60) if offset is not None else 0
        sign = "+" if minutes >= 0 else "-"
        h, m = divmod(abs(minutes), 60)
        name = f"GMT{sign}{h}" + (f":{m:02d}" if m else "") if minutes else "GMT"
    return f"{local.strftime('%B')} {local.day}, {local.year} at {hour}:{local.minute:02d} {ampm} {name}"


def local_minute(value: datetime | None, tz: tzinfo, *, zone: bool = True) -> str:
    """``2026-11-05 17:00 CST`` (``zone=False``: without the zone name), or ``—`` for no time."""
    if value is None:
        return "—"
    return value.astimezone(tz).strftime("%Y-%m-%d %H:%M %Z" if zone else "%Y-%m-%d %H:%M").strip()


def iso_instant(ms: int | None) -> str | None:
    """``2026-11-05T09:00:00Z`` (Python's ISO form, microseconds when any), or None: the
    observed-at time a search hit's provenance shows."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")
