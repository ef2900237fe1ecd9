"""What a value given from outside means: the types of command-line flag values and of MCP tool
arguments (both arrive as text), each a one-line :class:`~clawmem.engine.errors.ClawmemError` when bad.

They raise ClawmemError rather than argparse's ``ArgumentTypeError``: argparse lets it through and
the program prints it as one line and exits 1 — a bad *value* is a user error. Unknown commands or
flags and missing arguments stay argparse's usage errors (exit 2).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import date, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from clawmem.engine.curation.refs import EntryRef, parse_entry_ref
from clawmem.engine.errors import ClawmemError
from clawmem.engine.intents.cron import CronError, parse_cron
from clawmem.engine.intents.service import LATEST_EXPIRY, MAX_COOLDOWN_HOURS, MAX_FIRES

# Spec §1: a project key containing CR, LF, '<' or '>' makes the whole annotation invalid.
PROJECT_KEY_FORBIDDEN = ("\r", "\n", "<", ">")


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37] + "...")


def whole_number(flag: str, low: int, high: int | None = None) -> Callable[[str], int]:
    """A type for an integer flag within [low, high]; a bad value is a one-line user error."""

    def convert(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ClawmemError(f"{flag} must be a whole number (got {_shown(text)})") from None
        if high is None and value < low:
            raise ClawmemError(f"{flag} must be {low} or more (got {value})")
        if high is not None and not low <= value <= high:
            raise ClawmemError(f"{flag} must be between {low} and {high} (got {value})")
        return value

    return convert


def number(flag: str, low: float, high: float) -> Callable[[str], float]:
    """A type for a decimal flag within [low, high]."""

    def convert(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise ClawmemError(f"{flag} must be a number (got {_shown(text)})") from None
        if not low <= value <= high:  # also refuses nan
            raise ClawmemError(f"{flag} must be between {low:g} and {high:g} (got {text.strip()})")
        return value

    return convert


def one_of(flag: str, choices: Sequence[str]) -> Callable[[str], str]:
    """A type for a flag with fixed values (argparse's ``choices`` would make a typo exit 2)."""

    def convert(text: str) -> str:
        value = text.strip()
        if value not in choices:
            raise ClawmemError(f"{flag} must be one of {', '.join(choices)} (got {_shown(text)})")
        return value

    return convert


def choices_metavar(choices: Sequence[str]) -> str:
    return "{" + ",".join(choices) + "}"


def project_key(flag: str = "--project") -> Callable[[str], str]:
    """A type for an active project key: not empty, and valid by the spec's annotation rule."""

    def convert(text: str) -> str:
        value = text.strip()
        if not value:
            raise ClawmemError(f"{flag} needs a project key (got an empty one)")
        if any(ch in value for ch in PROJECT_KEY_FORBIDDEN):
            raise ClawmemError(f"{flag} {_shown(text)}: a project key cannot contain a line break, '<' or '>'")
        return value

    return convert


def iso_date(flag: str) -> Callable[[str], str]:
    def convert(text: str) -> str:
        try:
            date.fromisoformat(text.strip())
        except ValueError:
            raise ClawmemError(f"{flag} is not a date: {_shown(text)} (use YYYY-MM-DD)") from None
        return text.strip()

    return convert


def non_empty(flag: str, what: str) -> Callable[[str], str]:
    def convert(text: str) -> str:
        if not text.strip():
            raise ClawmemError(f"{flag} needs {what} (got an empty one)")
        return text.strip()

    return convert


def entry_ref(flag: str) -> Callable[[str], EntryRef]:
    """One entry of a memory file, ``PATH:LINE`` (or a citation, ``PATH#L7``)."""

    def convert(text: str) -> EntryRef:
        return parse_entry_ref(text, flag)

    return convert


# ----------------------------------------------------------------------------- standing intents and jobs


def max_fires(text: str) -> int:
    """``--max-fires``: a whole number from 1 to MAX_FIRES (never a traceback for a huge one)."""
    try:
        value = int(text.strip())
    except ValueError:
        raise ClawmemError(f"--max-fires: not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_FIRES:
        raise ClawmemError(f"--max-fires: must be a whole number from 1 to {MAX_FIRES:,}")
    return value


def cooldown_hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ClawmemError(f"--cooldown: not a number of hours: {text!r}") from None
    if not math.isfinite(value) or not 0 <= value <= MAX_COOLDOWN_HOURS:
        raise ClawmemError(f"--cooldown: must be between 0 and {MAX_COOLDOWN_HOURS} hours")
    return value


def expiry_date(text: str) -> str:
    raw = text.strip()
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            if day > date.fromisoformat(LATEST_EXPIRY):
                raise ClawmemError(f"--expires: {text!r} is out of range; the latest allowed is {LATEST_EXPIRY}")
        else:
            datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ClawmemError(f"--expires: not an ISO date: {text!r} (use YYYY-MM-DD or YYYY-MM-DDTHH:MM)") from None
    return raw


def iso_datetime(text: str) -> str:
    raw = text.strip()
    try:
        datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ClawmemError(f"--at: not an ISO date-time: {text!r} (use YYYY-MM-DDTHH:MM)") from None
    if len(raw) <= 10:
        raise ClawmemError(f"--at: {text!r} has no time of day (use YYYY-MM-DDTHH:MM)")
    return raw


def time_zone(text: str) -> str:
    try:
        ZoneInfo(text.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ClawmemError(f"--tz: unknown time zone {text!r} (use an IANA name such as Europe/Berlin)") from None
    return text.strip()


def cron_expression(text: str) -> str:
    try:
        return parse_cron(text).expression
    except CronError as exc:
        raise ClawmemError(f"--cron: {exc}") from None
