"""Dates a query names, matched against the dates of the diaries (calibrated scoring).

A daily diary ``memory/YYYY-MM-DD.md`` carries its date in its name, not always in its text: a
question about "October 13, 2023", "2023年10月13日", "last week" or "in June" should credit the
diaries written then, although none of them says "October". The query's date expressions become
one more **concept** of the keyword part (``pipeline``): a diary chunk covers it when its date
falls in one of the spans, with partial credit for the few days after a span (a diary tells what
happened on the days before it was written). Its weight is an IDF like the words': a day's
diary is rare evidence, a whole year's is not.

Understood (English and Chinese, case-insensitive):

- a day: ``2023-10-13``, ``2023/10/13``, ``October 13, 2023``, ``13 October 2023``, ``Oct 13``,
  ``2023年10月13日``, ``10月13号``;
- a month: ``2023-10``, ``October 2023``, ``in October``, ``2023年10月``, ``10月``;
- a year: ``in 2023``, ``2023年``;
- relative to today: today, yesterday, the day before yesterday, this/last week, this/last month,
  this/last year (calendar spans), the last/past week, month or year (the 7, 30 or 365 days up to
  today); 今天, 昨天, 前天, 本周/这周, 上周, 本月/这个月, 上个月, 今年, 去年.

A day or month without a year is the latest one on or before today. A day "before" or "after"
which something happened stands for the week on that side of it. "May" and "March" are
words too: alone they count only after a preposition ("in May"); abbreviations only with a day
or a year ("Oct 13"). A bare number counts as a year only after "in", "since", "during", etc.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

from clawmem.engine.workspace.files import EXACT_DIARY

__all__ = ["REPORT_DAYS", "DateSpan", "date_match", "diary_date", "query_dates"]

# A diary written up to this many days after a span still tells of it: credit 1 − k/(N+1) on
# day k after it (0.75, 0.5, 0.25). Measured on LoCoMo (bench/RESULTS.md): 3 and 7 days gave
# the same recall@5, 0 days less.
REPORT_DAYS = 3
# "before"/"after" a day: the week on that side of it ("the weekend before April 10, 2023").
AROUND_DAYS = 7
_BEFORE_AFTER = re.compile(r"\b(before|after)\s+(?:the\s+)?$", re.I)


@dataclass(frozen=True)
class DateSpan:
    """A span of days the query names (inclusive), and the words that named it."""

    start: date
    end: date
    phrase: str

    def label(self) -> str:
        if self.start == self.end:
            return self.start.isoformat()
        if self.start.day == 1 and self.end == _month_end(self.start.year, self.start.month):
            return self.start.isoformat()[:7]
        if self.start == date(self.start.year, 1, 1) and self.end == date(self.start.year, 12, 31):
            return str(self.start.year)
        return f"{self.start.isoformat()}…{self.end.isoformat()}"


_FULL = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_ABBR = {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m} | {"sept": 9}
_MONTH = "|".join(sorted([*_FULL, *_ABBR], key=len, reverse=True))
_AMBIGUOUS = {"may", "march"}  # also everyday words
_PREP = r"(?:in|on|of|since|until|till|before|after|during|by|from|early|late|mid|last|this|next)"
_YEAR = r"(?:19|20)\d\d"

_ISO_DAY = re.compile(rf"(?<![\d-])({_YEAR})[-/.](\d{{1,2}})[-/.](\d{{1,2}})(?![\d-])")
_ISO_MONTH = re.compile(rf"(?<![\d-])({_YEAR})-(\d{{1,2}})(?![\d-])")
_MONTH_DAY = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+({_YEAR})\b)?", re.I)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b\.?(?:,?\s+({_YEAR})\b)?", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+({_YEAR})\b", re.I)
_MONTH_ALONE = re.compile(rf"(?:\b({_PREP})\s+)?\b({_MONTH})\b", re.I)
_YEAR_ALONE = re.compile(rf"\b({_PREP})\s+(?:the\s+year\s+)?({_YEAR})\b", re.I)
_ZH_DAY = re.compile(rf"(?:({_YEAR})\s*年\s*)?(\d{{1,2}})\s*月\s*(\d{{1,2}})\s*[日号號]")
_ZH_MONTH = re.compile(rf"(?:({_YEAR})\s*年\s*)?(\d{{1,2}})\s*月(?!\s*\d)")
_ZH_YEAR = re.compile(rf"({_YEAR})\s*年(?!\s*\d)")
# "last week" is the calendar week before this one; "the last week" / "the past week" are the 7
# days up to today; "the last week of October" is not relative at all.
_RELATIVE = re.compile(
    r"\b(?:the\s+day\s+before\s+yesterday|today|yesterday"
    r"|(?:the\s+)?(?:this|last|past)\s+(?:week|month|year)\b(?!\s+of\b))\b"
    r"|今天|今日|昨天|昨日|前天|本周|这周|這週|上周|上週|本月|这个月|這個月|上个月|上個月|今年|去年",
    re.I,
)
_ROLLING = {"week": 7, "month": 30, "year": 365}


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def _latest(month: int, day: int | None, today: date) -> tuple[int, int, int | None] | None:
    """The latest (year, month, day) on or before today with that month (and day)."""
    for year in (today.year, today.year - 1, today.year - 4):  # Feb 29 recurs within 4 years
        try:
            first = date(year, month, day or 1)
        except ValueError:
            continue
        if first <= today:
            return year, month, day
    return None


def _span(year: int | None, month: int, day: int | None, phrase: str, today: date) -> DateSpan | None:
    if not 1 <= month <= 12:
        return None
    if year is None:
        found = _latest(month, day, today)
        if found is None:
            return None
        year = found[0]
    try:
        if day is not None:
            d = date(year, month, day)
            return DateSpan(d, d, phrase)
        return DateSpan(date(year, month, 1), _month_end(year, month), phrase)
    except ValueError:
        return None  # "February 30": no such day


def _relative(word: str, today: date) -> DateSpan:
    w = " ".join(word.lower().split())
    if w in ("today", "今天", "今日"):
        return DateSpan(today, today, word)
    if w in ("yesterday", "昨天", "昨日"):
        d = today - timedelta(days=1)
        return DateSpan(d, d, word)
    if w in ("the day before yesterday", "前天"):
        d = today - timedelta(days=2)
        return DateSpan(d, d, word)
    parts = w.split()
    if parts[-1] in _ROLLING and (parts[0] == "the" or parts[-2] == "past"):
        return DateSpan(today - timedelta(days=_ROLLING[parts[-1]] - 1), today, word)
    monday = today - timedelta(days=today.weekday())
    if w in ("this week", "本周", "这周", "這週"):
        return DateSpan(monday, today, word)
    if w in ("last week", "上周", "上週"):
        return DateSpan(monday - timedelta(days=7), monday - timedelta(days=1), word)
    if w in ("this month", "本月", "这个月", "這個月"):
        return DateSpan(today.replace(day=1), today, word)
    if w in ("last month", "上个月", "上個月"):
        end = today.replace(day=1) - timedelta(days=1)
        return DateSpan(end.replace(day=1), end, word)
    if w in ("this year", "今年"):
        return DateSpan(date(today.year, 1, 1), today, word)
    return DateSpan(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31), word)  # last year, 去年


def query_dates(query: str, today: date) -> tuple[DateSpan, ...]:
    """The spans of days a query names, in the order found (duplicates dropped)."""
    found: list[tuple[int, DateSpan]] = []
    taken: list[tuple[int, int]] = []

    def free(m: re.Match[str]) -> bool:
        return all(m.end() <= a or m.start() >= b for a, b in taken)

    def add(m: re.Match[str], span: DateSpan | None) -> None:
        taken.append(m.span())
        if span is None:
            return
        side = _BEFORE_AFTER.search(query, 0, m.start())
        if side and span.start == span.end:  # "the week before August 3": the days next to it
            week = timedelta(days=AROUND_DAYS)
            before = side[1].lower() == "before"
            span = DateSpan(
                span.start - week if before else span.start, span.end if before else span.end + week, span.phrase
            )
        found.append((m.start(), span))

    def month_of(word: str) -> int:
        w = word.lower()
        return _FULL.get(w) or _ABBR[w]

    for m in _ISO_DAY.finditer(query):
        add(m, _span(int(m[1]), int(m[2]), int(m[3]), m[0], today))
    for m in _ZH_DAY.finditer(query):
        if free(m):
            add(m, _span(int(m[1]) if m[1] else None, int(m[2]), int(m[3]), m[0], today))
    for m in _MONTH_DAY.finditer(query):
        if free(m):
            add(m, _span(int(m[3]) if m[3] else None, month_of(m[1]), int(m[2]), m[0].strip(), today))
    for m in _DAY_MONTH.finditer(query):
        if free(m):
            add(m, _span(int(m[3]) if m[3] else None, month_of(m[2]), int(m[1]), m[0].strip(), today))
    for m in _ISO_MONTH.finditer(query):
        if free(m):
            add(m, _span(int(m[1]), int(m[2]), None, m[0], today))
    for m in _MONTH_YEAR.finditer(query):
        if free(m):
            add(m, _span(int(m[2]), month_of(m[1]), None, m[0], today))
    for m in _ZH_MONTH.finditer(query):
        if free(m):
            add(m, _span(int(m[1]) if m[1] else None, int(m[2]), None, m[0], today))
    for m in _MONTH_ALONE.finditer(query):
        word = m[2].lower()
        if not free(m) or word not in _FULL or (word in _AMBIGUOUS and not m[1]):
            continue
        add(m, _span(None, _FULL[word], None, m[2], today))
    for m in _YEAR_ALONE.finditer(query):
        if free(m):
            year = int(m[2])
            add(m, DateSpan(date(year, 1, 1), date(year, 12, 31), m[2]))
    for m in _ZH_YEAR.finditer(query):
        if free(m):
            year = int(m[1])
            add(m, DateSpan(date(year, 1, 1), date(year, 12, 31), m[0]))
    for m in _RELATIVE.finditer(query):
        if free(m):
            add(m, _relative(m[0], today))
    out: dict[tuple[date, date], DateSpan] = {}
    for _, span in sorted(found, key=lambda x: x[0]):
        out.setdefault((span.start, span.end), span)
    return tuple(out.values())


def diary_date(path: str) -> date | None:
    """The date of an exact daily diary path (``memory/YYYY-MM-DD.md``), else None."""
    m = EXACT_DIARY.match(path)
    if not m or not m.group(1).isascii():  # \d also matches other scripts' digits
        return None
    try:
        return date.fromisoformat(m.group(1))
    except ValueError:
        return None


def date_match(day: date | None, spans: tuple[DateSpan, ...]) -> float:
    """How well a diary of ``day`` covers the spans: 1 inside one, less on the days after."""
    if day is None:
        return 0.0
    best = 0.0
    for s in spans:
        if s.start <= day <= s.end:
            return 1.0
        late = (day - s.end).days
        if 0 < late <= REPORT_DAYS:
            best = max(best, 1 - late / (REPORT_DAYS + 1))
    return best
