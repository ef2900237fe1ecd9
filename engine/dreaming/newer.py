"""A changed fact in Deep: which MEMORY.md entries a candidate replaces, and whether the candidate
itself has been replaced (issue 36; README "A changed fact").

The link is the person's ``<!-- observed: … | status: superseded | by: PATH#LN -->`` marker on
the *source* of a fact (engine/workspace/entries.py), never a guess — Dreaming writes MEMORY.md,
and a write is only as good as the evidence for it:

- a candidate whose own source entry is marked superseded states an old fact: it is not promoted
  (the newer version is, when it recurs);
- a candidate that a marker names as the newer version of the source of a Dreaming-written
  MEMORY.md entry replaces that entry: Deep's decision is ``superseded`` (docs/memory-core.md §5,
  Apply 2-3), not ``added``, so MEMORY.md never holds the old and the new fact both as current.
  The lineage key is the replaced entry's own lineage marker, else its promotion key (the first
  promoted version names the lineage); the new entry carries it, so a later version supersedes it
  the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from clawmem.engine.workspace.annotations import StatusMarker
from clawmem.engine.workspace.entries import MarkedEntry

_SOURCE = re.compile(r"\sSource:\s+(\S+)#L(\d+)-L(\d+)(?:\s|$)")
_PROMOTION_KEY = re.compile(r"^<!--\s*openclaw-memory-promotion:\s*([^\n]+?)\s*-->$")
_LINEAGE_KEY = re.compile(r"^<!--\s*openclaw-memory-lineage:\s*([^\n]+?)\s*-->$")

Markers = Callable[[str], tuple[MarkedEntry, ...]]  # workspace-relative path -> its marked entries


@dataclass(frozen=True)
class Replaced:
    """The MEMORY.md entry lines a candidate supersedes (exactly as they stand) and their lineage key."""

    entries: tuple[str, ...]
    lineage_key: str


def marker_at(marked: tuple[MarkedEntry, ...], start: int, end: int) -> StatusMarker | None:
    """The marker of the first marked entry whose lines (its marker lines included) overlap
    ``start``–``end`` (1-based): a citation made before a marker line was inserted above its
    bullet still finds it."""
    return next((m.marker for m in marked if m.first_line <= end and start <= m.end_line), None)


def _names(m: StatusMarker, path: str, start: int, end: int) -> bool:
    return m.superseded and m.by_path == path and (m.by_line is None or start <= m.by_line <= end)


def replaced_entries(memory_text: str, path: str, start: int, end: int, markers_of: Markers) -> Replaced | None:
    """The Dreaming-written MEMORY.md entries whose cited source (``Source: P#La-Lb``) is marked
    superseded by the candidate's lines ``path``:``start``–``end``; None when there are none."""
    lines = memory_text.replace("\r\n", "\n").split("\n")
    found: list[str] = []
    key: str | None = None
    for i, line in enumerate(lines):
        promo = _PROMOTION_KEY.match(lines[i - 1].strip()) if i >= 1 else None
        src = _SOURCE.search(line)
        if promo is None or src is None or not line.strip().startswith(("-", "*", "+")):
            continue
        m = marker_at(markers_of(src.group(1)), int(src.group(2)), int(src.group(3)))
        if m is None or not _names(m, path, start, end):
            continue
        lineage = _LINEAGE_KEY.match(lines[i - 2].strip()) if i >= 2 else None
        this_key = lineage.group(1) if lineage else promo.group(1)
        if key is not None and this_key != key:
            continue  # one lineage per candidate: another lineage's entry stays (it is not this fact)
        key = this_key
        found.append(line.strip())
    return Replaced(tuple(found), key) if found and key is not None else None
