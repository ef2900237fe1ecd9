"""Which dated notes a bare ``/new`` loads (OpenClaw ``daily-startup-selection.ts``).

The rule, step by step:

1. Local days scanned: today and the days before it, ``min(14, max(1, dailyMemoryDays))`` in all
   (so with the default of 2, only today and yesterday are candidates — older notes never load,
   however recent they are). With a 1-day setting yesterday is also scanned; the UTC day is
   scanned when it differs from the local day.
2. Candidate files: ``memory/YYYY-MM-DD.md`` and ``memory/YYYY-MM-DD-<slug>.md`` directly in
   ``memory/`` (slug ``[a-z0-9][a-z0-9._-]*``, case-insensitive), regular files only.
3. Within a day: session-summary notes first (newest first), then the canonical note, then the
   other slug notes (newest first).
4. Days selected, in order: today (if it has a readable note); the UTC day when it is ahead of
   the local day or holds a session summary; with a 1-day setting and nothing selected yet,
   yesterday — but only its session-summary notes; then the scanned local days, newest first,
   until ``dailyMemoryDays`` days are selected.
5. Paths are interleaved: the first note of every selected day, then the second of each …

"Readable" follows OpenClaw's startup reader: a regular, not hard-linked file of at most 16,384
bytes whose text is not blank. Larger notes are skipped entirely, not truncated.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

SELECTION_DAYS_CAP = 14
DAILY_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-([a-z0-9][a-z0-9._-]*))?\.md$", re.IGNORECASE)
SESSION_SUMMARY_SENTINEL = "<!-- openclaw:session-memory-summary -->"
_LEGACY_HEADER = re.compile(r"^# Session: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?: [A-Za-z0-9_+\-/:]+)?$", re.M)
_LEGACY_MARKERS = ("- **Session Key**:", "- **Session ID**:", "- **Source**:")
_LEGACY_NON_NOTES_SOURCE = re.compile(r"^- \*\*Source\*\*: (?!notes\b)\S+", re.M | re.I)
_LEGACY_CONVERSATION = re.compile(r"(?:^|\n)## Conversation Summary(?:\n|$)")
_LEGACY_TRANSCRIPT_LINE = re.compile(r"^(?:assistant|user|system):\s+\S", re.M)
_LEGACY_SESSION_KEY = re.compile(r"^- \*\*Session Key\*\*: (.+)$", re.M)
_AGENT_SESSION_KEY = re.compile(r"^agent:[^:\s]+:\S+")


def is_session_summary(text: str) -> bool:
    """A session-memory note: the sentinel comment, or the legacy generated layout."""
    if SESSION_SUMMARY_SENTINEL in text:
        return True
    if not _LEGACY_HEADER.search(text) or not all(m in text for m in _LEGACY_MARKERS):
        return False
    if _LEGACY_CONVERSATION.search(text) or _LEGACY_TRANSCRIPT_LINE.search(text):
        return True
    key = _LEGACY_SESSION_KEY.search(text)
    return bool(key and _AGENT_SESSION_KEY.match(key.group(1).strip()) and _LEGACY_NON_NOTES_SOURCE.search(text))


@dataclass(frozen=True)
class DailyNote:
    rel: str  # memory/<name>
    name: str
    day: str
    canonical: bool  # memory/YYYY-MM-DD.md (no slug)
    mtime_ms: float
    session_summary: bool
    readable: bool
    skip_reason: str | None  # why OpenClaw's startup reader cannot use it


@dataclass(frozen=True)
class DailySelection:
    local_today: str
    utc_today: str
    days_scanned: tuple[str, ...]  # every day whose notes were looked at
    days_selected: tuple[str, ...]
    notes: tuple[DailyNote, ...]  # every note on a scanned day, in per-day order
    paths: tuple[str, ...]  # the notes to load, in load order


def shift_day(day: str, offset: int) -> str:
    return (date.fromisoformat(day) + timedelta(days=offset)).isoformat()


def _name_key(name: str) -> tuple[str, str]:
    """An approximation of JavaScript ``localeCompare`` for file names (case-insensitive first)."""
    return (name.casefold(), name)


class _Desc:
    """Wraps a sort key so it sorts descending inside an ascending tuple key."""

    def __init__(self, value: tuple[str, str]) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value


def _scanned_days(days: int, local_today: str, utc_today: str) -> tuple[list[str], list[str]]:
    """Step 1: the local days that may be selected, newest first, and every day whose notes are scanned.

    The scanned days add yesterday with a 1-day setting, and the UTC day when it differs from the local day.
    """
    scan = min(SELECTION_DAYS_CAP, max(1, int(days)))
    local_days = [shift_day(local_today, -i) for i in range(scan)]
    yesterday = shift_day(local_today, -1)
    target = list(local_days)
    if days == 1 and yesterday not in target:
        target.append(yesterday)
    if utc_today != local_today and utc_today not in target:
        target.append(utc_today)
    return local_days, target


def _notes_by_day(
    memory_dir: Path,
    target: list[str],
    read: Callable[[str], str | None],
    skip_reason: Callable[[Path], str | None],
) -> dict[str, list[DailyNote]]:
    """Step 2: the dated notes directly in ``memory/`` on the scanned days (regular files only), in name order.

    Each note is read once, to know whether the startup reader can use it and whether it is a session summary.
    """
    by_day: dict[str, list[DailyNote]] = {d: [] for d in target}
    try:
        entries = sorted(os.scandir(memory_dir), key=lambda e: e.name) if memory_dir.is_dir() else []
    except OSError:
        entries = []
    for entry in entries:
        m = DAILY_NAME.match(entry.name)
        if not m or m.group(1) not in by_day:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            mtime_ms = entry.stat(follow_symlinks=False).st_mtime * 1000
        except OSError:
            continue
        rel = f"memory/{entry.name}"
        reason = skip_reason(Path(entry.path))
        text = read(rel) if reason is None else None
        readable = bool(text and text.strip())
        if reason is None and not readable:
            reason = "blank"
        by_day[m.group(1)].append(
            DailyNote(
                rel,
                entry.name,
                m.group(1),
                m.group(2) is None,
                mtime_ms,
                bool(text) and is_session_summary(text or ""),
                readable,
                reason,
            )
        )
    return by_day


def _group_priority(pair: tuple[int, DailyNote]) -> tuple[object, ...]:
    """groupStartupPathsByDay's sort key for one (listed position, note) pair."""
    i, n = pair
    if n.session_summary:
        return (0, -n.mtime_ms, n.canonical, _Desc(_name_key(n.rel)), i)
    return (1 if n.canonical else 2, 0.0, False, _Desc(("", "")), i)


def _order_within_days(by_day: dict[str, list[DailyNote]]) -> dict[str, list[DailyNote]]:
    """Step 3: each day's notes in load order — OpenClaw sorts twice, and both sorts are kept."""
    # listRecentDailyMemoryFiles: canonical first, then newest, then by name.
    for notes in by_day.values():
        notes.sort(key=lambda n: (not n.canonical, -n.mtime_ms, _name_key(n.name)))
    # groupStartupPathsByDay: session summaries first (newest, slug before canonical, name desc),
    # then the canonical note, then the rest in the order above.
    ordered: dict[str, list[DailyNote]] = {}
    for d, notes in by_day.items():
        ordered[d] = [n for _, n in sorted(enumerate(notes), key=_group_priority)]
    return ordered


def _has_readable(notes: list[DailyNote]) -> bool:
    """A day is selected only when the startup reader can use at least one of its notes."""
    return any(n.readable for n in notes)


def _select_days(
    ordered: dict[str, list[DailyNote]], *, days: int, local_days: list[str], local_today: str, utc_today: str
) -> list[str]:
    """Step 4: which days load, in order — today, the UTC boundary day, a 1-day setting's yesterday
    (session summaries only), then the scanned local days newest first, until ``days`` are selected."""
    yesterday = shift_day(local_today, -1)
    current = local_days[0]
    boundary = None
    if utc_today != local_today and (
        utc_today > local_today or any(n.session_summary for n in ordered.get(utc_today, []))
    ):
        boundary = utc_today
    selected: list[str] = []
    if ordered.get(current) and _has_readable(ordered[current]):
        selected.append(current)
    if boundary and boundary not in selected and _has_readable(ordered.get(boundary, [])):
        selected.append(boundary)
    if (
        days == 1
        and yesterday not in selected
        and not selected
        and _has_readable([n for n in ordered.get(yesterday, []) if n.session_summary])
    ):
        selected.append(yesterday)
    for d in local_days:
        if len(selected) >= days:
            break
        if d not in selected and ordered.get(d) and _has_readable(ordered[d]):
            selected.append(d)
    return selected


def _interleave(ordered: dict[str, list[DailyNote]], selected: list[str]) -> list[str]:
    """Step 5: the first note of every selected day, then the second of each, and so on."""
    paths: list[str] = []
    for offset in range(max((len(ordered[d]) for d in selected), default=0)):
        for d in selected:
            if offset < len(ordered[d]):
                paths.append(ordered[d][offset].rel)
    return paths


def select_daily_notes(
    memory_dir: Path,
    *,
    days: int,
    local_today: str,
    utc_today: str,
    read: Callable[[str], str | None],
    skip_reason: Callable[[Path], str | None],
) -> DailySelection:
    """Apply OpenClaw's startup selection. ``read(rel)`` returns a note's text or None when the
    startup reader would refuse it; ``skip_reason(path)`` says why."""
    local_days, target = _scanned_days(days, local_today, utc_today)
    ordered = _order_within_days(_notes_by_day(memory_dir, target, read, skip_reason))
    selected = _select_days(ordered, days=days, local_days=local_days, local_today=local_today, utc_today=utc_today)
    paths = _interleave(ordered, selected)
    all_notes = tuple(n for d in target for n in ordered[d])
    return DailySelection(local_today, utc_today, tuple(target), tuple(selected), all_notes, tuple(paths))
