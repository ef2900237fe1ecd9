"""What text a candidate puts into MEMORY.md: the lines its recalls matched, cleaned.

A search-recall entry is a whole index chunk — often a date heading and several bullets, each a
different fact (``# 2026-11-02`` / ``- 周六下午在西湖边散步…`` / ``- 返程车票还没买…``). Promoting
the chunk as one bullet glues the heading and every fact together. So, deterministically:

1. The chunk's lines are cut into *items*: a list item with its continuation lines, or a
   paragraph of prose. Headings, HTML comments, fences and blank lines are never items.
2. Every interactive query that recalled the entry recorded which file lines contained one of
   its terms (:func:`engine.recall.matched_lines`). Each item counts the distinct queries that
   matched one of its lines.
3. When the chunk has more than one item and some item was matched, the promoted span runs
   from the first to the last item with the highest count (the items between them come too,
   so ``Source: path#La-Lb`` is exactly what the text covers). Otherwise every item is kept.
4. The text is the kept items with list markers and comments removed, joined into one line
   (``; `` between items unless the previous one ends a sentence), prefixed by the nearest
   specific heading inside the chunk (``酒店: …``), never by a date or a generic heading.
5. The range is narrowed to the kept items whenever a non-blank line of the chunk is left out;
   a chunk that is one clean item keeps its range and the rehydrated text (bullets stripped).

``dream explain`` shows the promoted text, its source and which lines how many queries matched.
Cleaning the text instead of choosing lines would still glue unrelated facts into one entry,
which is why the matched lines win whenever the recalls recorded them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clawmem.engine.recall import normalize_snippet

_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s+(.*?))?\s*#*\s*$")
_LIST = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+")
_MARKERS = re.compile(r"^(?:(?:[-*+]|\d+[.)])\s+|>\s*)+")
_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_SENTENCE_END = ("。", "！", "？", ".", "!", "?", "；", ";", "…")


@dataclass(frozen=True)
class Item:
    start_line: int  # 1-based file lines
    end_line: int
    text: str  # markers and comments removed, one line
    queries: int  # distinct recalling queries that matched one of its lines


@dataclass(frozen=True)
class Focus:
    start_line: int
    end_line: int
    text: str
    basis: str  # matched | whole | single
    items: tuple[Item, ...]  # every item of the chunk, with its query count

    @property
    def detail(self) -> str:
        """One plain line for `dream explain` (why these lines; the range is shown beside it)."""
        if self.basis == "matched":
            best = max(i.queries for i in self.items)
            return f"the lines matched by the most recalling queries ({best}); {len(self.items)} items in the chunk"
        if self.basis == "whole":
            return f"all {len(self.items)} items of the chunk (no recorded line matches to choose by)"
        return "the chunk is one item"


def _clean(text: str) -> str:
    return normalize_snippet(_MARKERS.sub("", _COMMENT.sub(" ", text).strip()))


def _specific_heading(line: str) -> str | None:
    from clawmem.engine.dreaming.ingest import _generic_heading

    m = _HEADING.match(line)
    if not m:
        return None
    heading = _clean(m.group(1) or "")
    if not heading or re.match(r"^\d{4}-\d{2}-\d{2}", heading) or _generic_heading(heading):
        return None
    return heading


def items_of(span: Sequence[str], first_line: int, matches: Mapping[int, int]) -> tuple[list[Item], list[str | None]]:
    """The chunk's items, and for each line of the span the specific heading above it (or None)."""
    items: list[Item] = []
    headings: list[str | None] = []
    heading: str | None = None
    current: list[tuple[int, str]] = []
    in_fence = False

    def flush() -> None:
        nonlocal current
        text = normalize_snippet(" ".join(_clean(t) for _, t in current))
        if current and text:
            lines = [n for n, _ in current]
            items.append(Item(lines[0], lines[-1], text, max(matches.get(n, 0) for n in lines)))
        current = []

    for offset, raw in enumerate(span):
        number = first_line + offset
        headings.append(heading)
        stripped = _COMMENT.sub(" ", raw).strip()
        if _FENCE.match(raw):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if _HEADING.match(raw):
            flush()
            heading = _specific_heading(raw)
            continue
        if not stripped:
            flush()
            continue
        if _LIST.match(raw) and current:
            flush()
        current.append((number, raw))
    flush()
    return items, headings


def _join(texts: Sequence[str]) -> str:
    out = ""
    for text in texts:
        if not out:
            out = text
        else:
            out += (" " if out.endswith(_SENTENCE_END) else "; ") + text
    return out


def focus(
    span: Sequence[str], first_line: int, rehydrated: str, matches: Mapping[int, int] | None = None
) -> Focus | None:
    """The promoted text and range for the chunk ``span`` (its lines, from ``first_line``).

    ``matches``: file line → distinct interactive queries that matched it. ``rehydrated`` is the
    text the live file gave for the whole range; it is kept when the chunk is one clean item.
    None when the chunk has no item at all (only headings or comments).
    """
    counts = dict(matches or {})
    items, headings = items_of(span, first_line, counts)
    if not items:
        return None
    nonblank = [first_line + i for i, ln in enumerate(span) if ln.strip()]
    best = max(i.queries for i in items)
    if len(items) > 1 and best > 0:
        top = [i for i, item in enumerate(items) if item.queries == best]
        kept, basis = items[top[0] : top[-1] + 1], "matched"
    else:
        kept, basis = items, ("single" if len(items) == 1 else "whole")
    start, end = kept[0].start_line, kept[-1].end_line
    covered = {n for item in kept for n in range(item.start_line, item.end_line + 1)}
    if basis == "single" and all(n in covered for n in nonblank):
        return Focus(first_line, first_line + len(span) - 1, _clean(rehydrated) or kept[0].text, basis, tuple(items))
    text = _join([item.text for item in kept])
    heading = headings[start - first_line]
    if heading and not text.lower().startswith(heading.lower()):
        text = f"{heading}: {text}"
    if all(n in covered for n in nonblank):
        start, end = first_line, first_line + len(span) - 1
    return Focus(start, end, text, basis, tuple(items))
