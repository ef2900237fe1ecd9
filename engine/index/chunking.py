"""Split a memory file into chunks exactly as the spec's chunker (version 6) does.

- Cost units: 1 per UTF-16 code unit for Latin text, 4 for a common CJK character, more for
  rare and supplementary ideographs (they cost several tokens each).
- Budget max(32, tokens × 4) units, overlap tokens × 4; lines are added whole, each costing its
  units plus 1 for the newline; on overflow the chunk is flushed and its tail carried forward.
- Curated files (MEMORY.md, USER.md) use per-entry mode: a new entry starts at each line
  beginning with ``- `` or a heading; chunks never cross entries and every fragment keeps its
  entry's line span (annotations are read from the whole span).
- clawmem's rules: chunk id = first 16 hex of SHA-256 over ``source|path|start|end|hash``;
  a heading-only chunk in a note or diary is merged into the chunk that follows it (in
  per-entry mode a heading is an entry of its own, so it stays separate, as in OpenClaw).
  Entry boundaries in curated files are OpenClaw's, so search line ranges match it exactly.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from clawmem.engine.workspace.annotations import (
    NEUTRAL_METADATA,
    RecallMetadata,
    extract_recall_metadata,
    strip_annotation_carriers,
)
from clawmem.engine.workspace.names import CURATED_ROOT_FILES

CHUNKING_VERSION = 6
CHARS_PER_TOKEN = 4

_HEADING = re.compile(r"^#{1,6}(?:\s|$)")
_COMMON_CJK = re.compile("[\u00b7\u3000-\u319f\u4e00-\u9fa5\uac00-\ud7af\uff01-\uff60]")
_RARE_CJK = re.compile("[\u2e80-\u2fff\u31a0-\u4dbf\u9fa6-\u9fff\ua000-\ua4ff\uf900-\ufaff\uffe0-\uffe6]")
_SUPPLEMENTARY_CJK = re.compile("[\U00020000-\U0003134f]")
COMMON_CJK_UNITS = 4
RARE_CJK_UNITS = 11
SUPPLEMENTARY_CJK_UNITS = 14


def char_units(ch: str) -> int:
    """Cost of one code point in the chunker's units."""
    if ch < "\u00b7":
        return 1
    if _COMMON_CJK.match(ch):
        return COMMON_CJK_UNITS
    if _RARE_CJK.match(ch):
        return RARE_CJK_UNITS
    if _SUPPLEMENTARY_CJK.match(ch):
        return SUPPLEMENTARY_CJK_UNITS
    return 2 if ord(ch) > 0xFFFF else 1


def estimate_units(text: str) -> int:
    """Cost of a string (fast path for ASCII)."""
    if text.isascii():
        return len(text)
    return sum(char_units(ch) for ch in text)


def estimate_tokens(text: str) -> int:
    return -(-estimate_units(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str
    hash: str  # SHA-256 hex of text
    entry_start_line: int | None = None
    entry_end_line: int | None = None
    metadata: RecallMetadata = NEUTRAL_METADATA

    @property
    def span(self) -> tuple[int, int]:
        """The line span annotations are read from (the entry's, in per-entry mode)."""
        return (self.entry_start_line or self.start_line, self.entry_end_line or self.end_line)


def chunk_id(source: str, path: str, start_line: int, end_line: int, text_hash: str) -> str:
    key = f"{source}|{path}|{start_line}|{end_line}|{text_hash}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def hash_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _curated_spans(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of each curated entry: a new entry starts at each line beginning with
    ``- `` (kind 'entry') or a heading ('section'), exactly as OpenClaw's chunker; comment lines
    (USER.md's ``observed`` markers) stay with the entry above them, so line ranges match."""
    start = 1
    kind = "entry" if lines and lines[0].startswith("- ") else "section"
    for index in range(1, len(lines)):
        line = lines[index]
        nxt = "entry" if line.startswith("- ") else "section" if _HEADING.match(line) else None
        if nxt:
            yield start, index, kind
            start, kind = index + 1, nxt
    yield start, len(lines), kind


def _tail_within(text: str, budget: int) -> str:
    """The trailing slice of ``text`` whose cost fits ``budget`` (whole code points)."""
    acc = 0
    start = len(text)
    while start > 0:
        cost = char_units(text[start - 1])
        if acc + cost > budget:
            break
        acc += cost
        start -= 1
    return text[start:]


def _segments(line: str, max_units: int) -> Iterator[tuple[str, int]]:
    """A line split into pieces of at most ``max_units`` each, on code-point boundaries."""
    if not line:
        yield "", 0
        return
    units = estimate_units(line)
    if units <= max_units:
        yield line, units
        return
    part: list[str] = []
    part_units = 0
    for ch in line:
        cost = char_units(ch)
        if part and part_units + cost > max_units:
            yield "".join(part), part_units
            part, part_units = [], 0
        part.append(ch)
        part_units += cost
    if part:
        yield "".join(part), part_units


def chunk_markdown(content: str, tokens: int, overlap: int, *, per_entry: bool) -> list[Chunk]:
    """The spec's chunker over already-normalised text (LF line ends)."""
    lines = content.split("\n")
    max_units = max(32, tokens * CHARS_PER_TOKEN)
    overlap_units = max(0, overlap * CHARS_PER_TOKEN)
    chunks: list[Chunk] = []
    current: list[tuple[str, int]] = []  # (segment, line_no)
    current_units = 0

    def flush() -> None:
        if current:
            text = "\n".join(seg for seg, _ in current)
            chunks.append(Chunk(current[0][1], current[-1][1], text, hash_text(text)))

    def carry(window: int) -> None:
        nonlocal current, current_units
        if window <= 0 or not current:
            current, current_units = [], 0
            return
        acc = 0
        kept: list[tuple[str, int]] = []
        for seg, line_no in reversed(current):
            size = estimate_units(seg) + 1
            remaining = window - acc
            if size > remaining:
                if not kept:
                    tail = _tail_within(seg, remaining - 1)
                    if tail:
                        kept.insert(0, (tail, line_no))
                        acc += estimate_units(tail) + 1
                break
            acc += size
            kept.insert(0, (seg, line_no))
            if acc >= window:
                break
        current, current_units = kept, acc

    def append(seg: str, line_no: int, units: int) -> None:
        nonlocal current_units
        size = units + 1
        if current and current_units + size > max_units:
            flush()
            carry(min(overlap_units, max(0, max_units - size)))
        current.append((seg, line_no))
        current_units += size

    spans = list(_curated_spans(lines)) if per_entry else [(1, len(lines), "section")]
    for start, end, kind in spans:
        first = len(chunks)
        for index in range(start - 1, end):
            for seg, units in _segments(lines[index], max_units):
                append(seg, index + 1, units)
        flush()
        if kind == "entry":
            for i in range(first, len(chunks)):
                chunks[i] = replace(chunks[i], entry_start_line=start, entry_end_line=end)
        current, current_units = [], 0
    return chunks


def _is_heading_only(text: str) -> bool:
    lines = [ln for ln in text.split("\n") if ln.strip()]
    return bool(lines) and all(_HEADING.match(ln.lstrip()) for ln in lines)


def merge_heading_only(chunks: list[Chunk]) -> list[Chunk]:
    """Merge each heading-only chunk into the chunk that follows it (earlier start line kept)."""
    out: list[Chunk] = []
    pending: Chunk | None = None
    for chunk in chunks:
        if pending is not None:
            if chunk.start_line <= pending.start_line:
                merged_text = chunk.text  # the overlap already carried the heading forward
            else:
                head = [
                    seg
                    for seg, line_no in zip(
                        pending.text.split("\n"),
                        range(pending.start_line, pending.end_line + 1),
                        strict=False,
                    )
                    if line_no < chunk.start_line
                ]
                merged_text = "\n".join([*head, chunk.text]) if head else chunk.text
            chunk = replace(
                chunk,
                start_line=min(pending.start_line, chunk.start_line),
                text=merged_text,
                hash=hash_text(merged_text),
            )
            pending = None
        if _is_heading_only(chunk.text):
            pending = chunk
            continue
        out.append(chunk)
    if pending is not None:
        out.append(pending)  # a final heading stays: never drop content
    return out


def chunk_memory_file(
    content: str,
    rel: str,
    *,
    tokens: int,
    overlap: int,
    curated_root: bool,
) -> list[Chunk]:
    """Chunks of one memory file with their recall metadata, blank chunks dropped."""
    per_entry = rel in CURATED_ROOT_FILES
    indexing = strip_annotation_carriers(content)
    chunks = [c for c in chunk_markdown(indexing, tokens, overlap, per_entry=per_entry) if c.text.strip()]
    if not per_entry:
        chunks = merge_heading_only(chunks)
    source_lines = content.split("\n")
    eligible = rel.upper() != "USER.MD"
    cache: dict[tuple[int, int], RecallMetadata] = {}
    out: list[Chunk] = []
    for chunk in chunks:
        span = chunk.span
        meta = cache.get(span)
        if meta is None:
            meta = extract_recall_metadata(
                source_lines[span[0] - 1 : span[1]],
                curated_root=curated_root,
                project_scope_eligible=eligible,
            )
            cache[span] = meta
        out.append(replace(chunk, metadata=meta))
    return out
