"""Keep MEMORY.md within its character budget (MC ``memory-budget.ts``, docs/memory-core.md §5 Apply 6).

Only *fully generated* dated sections — ``## Promoted From Short-Term Memory (…)`` or
``## Consolidated Memory (…)`` whose whole body is marker + single bullet pairs (optionally under
``### Global`` / ``### Project: …`` and with a lineage marker) — may be dropped, oldest first, and
only while the dropped entries stay within the prior-entry loss bound. Anything mixed with other
text is preserved. The caller checks the final fit.

The shape alone does not prove a section is Dreaming's: a user who corrects the text of a
promoted bullet keeps its marker. So a section also has to be *pristine*: every non-blank line
of it must be a line Dreaming itself added in an applied rewrite (``written``, see
:class:`engine.dreaming.consolidate.Written`). A section with one byte the user changed, or one
clawmem has no record of writing (an OpenClaw-era section), is never dropped; when nothing can
be dropped the caller leaves MEMORY.md unchanged and the candidates stay eligible.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

DEFAULT_MEMORY_FILE_MAX_CHARS = 10_000
WRITE_OVERHEAD_RESERVE = 21  # the empty-file header and a final newline

_SECTION = re.compile(r"^## (?:Promoted From Short-Term Memory|Consolidated Memory) \(([^)]+)\)\s*$")
_SUBSECTION = re.compile(r"^### (?:Global|Project: .+?)\s*$")
_MARKER = re.compile(r"^<!--\s*openclaw-memory-promotion:.*-->\s*$", re.IGNORECASE)
_GENERATED_MARKER = re.compile(r"^<!--\s*openclaw-memory-promotion:(?:(?!-->).)*-->\s*$", re.IGNORECASE)
_LINEAGE = re.compile(r"^<!--\s*openclaw-memory-lineage:(?:(?!-->).)*-->\s*$", re.IGNORECASE)
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")


@dataclass
class _Block:
    text: str
    date: str | None  # set for a fully generated promotion section
    entries: int = 0


def _generated(lines: list[str]) -> bool:
    saw = False
    i = 1
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if _SUBSECTION.match(lines[i]):
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
        if i < len(lines) and _LINEAGE.match(lines[i]):
            i += 1
        if i >= len(lines) or not _GENERATED_MARKER.match(lines[i]):
            return False
        if i + 1 >= len(lines) or not lines[i + 1].startswith("- "):
            return False
        saw = True
        i += 2
    return saw


def _starts_subsection(lines: list[str], index: int) -> bool:
    if not _SUBSECTION.match(lines[index]):
        return False
    for nxt in lines[index + 1 :]:
        if nxt.strip():
            return bool(_MARKER.match(nxt))
    return False


def _take_setext(current: list[str]) -> list[str] | None:
    start = len(current)
    while start > 1 and current[start - 1].strip():
        start -= 1
    if start == len(current):
        return None
    heading = current[start:]
    if any(_MARKER.match(ln) for ln in heading):
        return None
    del current[start:]
    return heading


def parse_blocks(content: str) -> list[_Block]:
    if not content:
        return []
    lines = content.split("\n")
    blocks: list[_Block] = []
    current: list[str] = []
    date: str | None = None

    def flush() -> None:
        nonlocal current, date
        if not current:
            return
        text = "\n".join(current)
        if date and _generated(current):
            blocks.append(_Block(text, date, sum(1 for ln in current if _MARKER.match(ln))))
        else:
            blocks.append(_Block(text, None))
        current, date = [], None

    for index, line in enumerate(lines):
        if date and _SETEXT.match(line):
            heading = _take_setext(current)
            if heading:
                flush()
                current = [*heading, line]
                continue
        continues = bool(date) and _starts_subsection(lines, index)
        if _ATX.match(line) and not continues:
            flush()
            m = _SECTION.match(line)
            date = m.group(1) if m else None
            current = [line]
        else:
            current.append(line)
    flush()
    return blocks


def pristine(text: str, written: Collection[str]) -> bool:
    """Every non-blank line of ``text`` is exactly a line Dreaming wrote (no user byte in it)."""
    return all(line in written for line in text.split("\n") if line.strip())


def compact_for_budget(
    existing: str, new_section: str, budget: int, max_loss: float = 1.0, *, written: Collection[str]
) -> str:
    """Drop the oldest pristine generated sections until ``existing + new_section`` fits (within the loss
    bound); ``written`` is the set of lines Dreaming added in applied rewrites."""
    if budget <= 0:
        return existing
    effective = max(0, budget - WRITE_OVERHEAD_RESERVE)
    if len(existing) + len(new_section) <= effective:
        return existing
    blocks = parse_blocks(existing)
    generated = sorted(((i, b) for i, b in enumerate(blocks) if b.date), key=lambda ib: ib[1].date or "")
    total = sum(b.entries for _, b in generated)
    generated = [(i, b) for i, b in generated if pristine(b.text, written)]
    if not generated:
        return existing
    bound = max(0.0, min(1.0, max_loss))
    dropped: set[int] = set()
    left: dict[int, str] = {}  # dropped section → the blank lines it ended with, kept
    dropped_entries = 0
    size = len(existing)
    sep = 1 if len(blocks) > 1 else 0
    last = len(blocks) - 1
    for index, block in generated:
        if size + len(new_section) <= effective:
            break
        if total > 0 and (dropped_entries + block.entries) / total > bound:
            break
        dropped.add(index)
        dropped_entries += block.entries
        # Blank lines before the user's next section may be the user's layout: they stay. Before
        # another generated section (or the end) they are Dreaming's own separator.
        blank = _trailing_blank(block.text) if index != last and not blocks[index + 1].date else None
        if blank is not None:
            left[index] = blank
        size = max(0, size - len(block.text) - sep + (len(blank) + sep if blank is not None else 0))
    if not dropped:
        return existing
    kept = [b.text if i not in dropped else left[i] for i, b in enumerate(blocks) if i not in dropped or i in left]
    return "\n".join(kept)


def _trailing_blank(text: str) -> str | None:
    """The blank lines a dropped section ends with (the layout before the next section, possibly
    the user's), kept as they were; None when there are none."""
    lines = text.split("\n")
    n = 0
    while n < len(lines) and not lines[len(lines) - 1 - n].strip():
        n += 1
    return "\n".join(lines[len(lines) - n :]) if n else None
