"""The entries that may have replaced one: what the app's "superseded by…" picker offers.

A search for the older entry's own words (every memory file, no threshold: what replaced a fact
often reads unlike it; nothing recorded as a recall), each hit taken to the bullet that holds its
best line — without the entry itself, entries already superseded, anything that is not a bullet
(a supersession names two bullets: engine/curation/service.py) and daily notes written before the
old one (they cannot be its newer version). The search order is kept, not re-sorted by date: each
candidate shows its date, and the person decides which one replaced the old fact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from clawmem.engine.search.types import SearchHit, SearchResponse
from clawmem.engine.search.versions import fact_date
from clawmem.engine.text_clip import clip_flat
from clawmem.engine.workspace.entries import Entry

QUERY_CHARS = 300  # the older entry's words searched for (a long entry's opening says what it is about)


@dataclass(frozen=True)
class Successor:
    """A possible newer version: its ``PATH:LINE`` (the bullet's first line), its words, the day
    of its daily note (None for an undated file) and its search score."""

    ref: str
    text: str
    date: str | None
    score: float


def _entry_of(hit: SearchHit, entries: list[Entry]) -> Entry | None:
    line = hit.breakdown.line or hit.start_line
    holding = [e for e in entries if e.marker_line <= line <= e.end_line]
    if holding:
        return holding[0]
    return next((e for e in entries if hit.start_line <= e.start_line <= hit.end_line), None)


def successors(
    search: Callable[..., SearchResponse],
    entries_of: Callable[[str], list[Entry]],
    older: Entry,
    *,
    limit: int = 8,
) -> list[Successor]:
    """Up to ``limit`` entries that may supersede ``older`` (module docstring)."""
    query = clip_flat(older.display, QUERY_CHARS)
    if not query.strip():
        return []
    # synced first: the newer entry may have been written a moment ago
    r = search(query, record=False, sync=True, min_score=0.0, max_results=limit * 2, sources=("memory",))
    since = fact_date(older.path)
    out: list[Successor] = []
    seen = {(older.path, older.start_line)}
    parsed: dict[str, list[Entry]] = {}
    for hit in r.results:
        if hit.path not in parsed:
            parsed[hit.path] = entries_of(hit.path)
        e = _entry_of(hit, parsed[hit.path])
        if e is None or e.kind != "bullet" or e.superseded or (e.path, e.start_line) in seen:
            continue
        seen.add((e.path, e.start_line))
        day = fact_date(e.path)
        if since is not None and day is not None and day < since:
            continue  # a note written before the old one cannot be its newer version
        out.append(Successor(f"{e.path}:{e.start_line}", e.display, day.isoformat() if day else None, hit.score))
        if len(out) >= limit:
            break
    return out
