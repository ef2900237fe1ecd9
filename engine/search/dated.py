"""The dates a question names, as one more keyword concept and as the point decay counts from
(calibrated scoring; OpenClaw's has neither)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from clawmem.engine.search.dates import REPORT_DAYS, DateSpan, date_match, diary_date, query_dates
from clawmem.engine.store import search_queries as q
from clawmem.engine.store.search_reader import SearchReader

if TYPE_CHECKING:
    from clawmem.engine.search.pipeline import SearchRequest


@dataclass
class DatedDiaries:
    """The dates a query names as one more concept of the keyword part (calibrated scoring),
    and the time decay counts from.

    A daily diary covers the concept by its date (``dates.date_match``: 1 inside a span, less
    on the few days after it). Its weight is an IDF like the words' (``concept_weights``) over
    the chunks of the diaries that match, so a day is strong evidence and a year is weak. When
    those chunks are no more than a candidate window, they are candidates themselves (the
    "date" leg): a diary of the named day is scored even if no word of the query is in it.
    """

    spans: tuple[DateSpan, ...] = ()
    match: dict[str, float] = field(default_factory=dict)  # diary path -> its date match (> 0)
    chunks: int = 0  # chunks of those diaries
    weight: float = 0.0  # the concept's weight; 0: no concept (no date, or no diary of it)
    others: float = 0.0  # the weight of the query's word concepts together
    rows: list[q.BodyRow] = field(default_factory=list)  # the date leg's candidates

    @classmethod
    def of(
        cls,
        reader: SearchReader,
        query: str,
        req: SearchRequest,
        now: datetime,
        total: int,
        concepts: list[str],
        weights: dict[str, float],
        window: int,
    ) -> DatedDiaries:
        if req.scoring != "calibrated" or req.legs == "vector" or "memory" not in req.sources:
            return cls()  # vector-only search is the query's meaning alone
        spans = query_dates(query, req.today or now.date())
        if not spans:
            return cls()
        first = min(s.start for s in spans)
        last = max(s.end for s in spans) + timedelta(days=REPORT_DAYS)
        counts = reader.diary_chunk_counts(first.isoformat(), last.isoformat())
        match = {p: m for p in counts if (m := date_match(diary_date(p), spans)) > 0}
        chunks = sum(counts[p] for p in match)
        if not chunks:
            return cls(spans)
        if weights:  # the words have IDF weights: the date gets its own
            weight, others = math.log(1 + total / (chunks + 1)), sum(weights.get(c, 1.0) for c in concepts)
        else:  # one word or none: equal shares
            weight, others = 1.0, float(len(concepts))
        rows = reader.chunks_of_paths(sorted(match)) if chunks <= window else []
        return cls(spans, match, chunks, weight, others, rows)

    def match_of(self, path: str, source: str, text: str) -> float:
        """A chunk's date match: its diary's date, or the text naming the day or month itself
        (its ISO form, e.g. a MEMORY.md entry "2026-03-03: …", or the query's own words for it
        when they hold a number, "March 3")."""
        by_date = self.match.get(path, 0.0) if source == "memory" else 0.0
        if by_date >= 1.0:
            return by_date
        low = text.lower()
        for s in self.spans:
            label = s.label()
            if (len(label) in (7, 10) and label in low) or (
                any(ch.isdigit() for ch in s.phrase) and s.phrase.lower() in low
            ):
                return 1.0
        return by_date

    def age_days(self, path: str, age_from_now: float) -> float:
        """A diary's age for decay when the query names dates: its distance in days from the
        nearest span (0 inside one). "What broke on August 20?" asks about August 20, so the
        diaries of then are fresh for it and today's are not; without a date, age is from now."""
        day = diary_date(path)
        if day is None:
            return age_from_now
        return float(min(max((s.start - day).days, (day - s.end).days, 0) for s in self.spans))

    def keyword(self, coverage: float, match: float | None) -> float:
        """A chunk's keyword part: its word coverage with the date concept's share added."""
        if not self.weight or match is None:
            return coverage
        return (coverage * self.others + self.weight * match) / (self.others + self.weight)

    def labels(self) -> tuple[str, ...]:
        """The spans understood, as the response shows them: "2023-10-13 (October 13, 2023)"."""
        return tuple(f"{s.label()} ({s.phrase})" for s in self.spans)
