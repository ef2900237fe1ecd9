"""OpenClaw's injection budgets, reproduced exactly, with a map from what survives back to lines.

OpenClaw is JavaScript, so every length here is a count of **UTF-16 code units** (``str.length``):
the same as characters for all BMP text including CJK; a character outside the BMP (most emoji)
counts 2. Cuts never split a surrogate pair (OpenClaw's ``sliceUtf16Safe``/``truncateUtf16Safe``).

Bootstrap files (``buildBootstrapContextFiles`` in ``src/agents/embedded-agent-helpers/bootstrap.ts``):
the text is ``trimEnd``-ed; over its cap it keeps a **head and a tail** — the cap minus a marker is
split 75 % / 25 % — joined by a marker that names the file and the kept counts::

    <head>
    (blank)
    [...truncated, read MEMORY.md for full content...]
    …(truncated MEMORY.md: kept 14920+4973 chars of 23412)…
    (blank)
    <tail>

When the cap is too small for that marker (< 16 chars of content left) a compact
``[…truncated H+T/N]`` marker is used. The shared total budget is applied file by file in load
order: a file gets ``min(cap, remaining)``; if the result is still longer than what remains it is
cut to ``remaining − 1`` and ends with ``…``; when fewer than 64 chars remain, the rest of the
files are skipped.

Startup notes (``src/auto-reply/reply/startup-context.ts``) are ``trim``-ed and keep only a
**head**, followed by ``\\n...[truncated]...``.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

MIN_TRIMMED_CONTENT_CHARS = 16  # below this the compact marker is used
HEAD_RATIO = 0.75
TAIL_RATIO = 0.25
AGENTS_HEAD_RATIO = 0.45  # AGENTS.md keeps a "policy digest" between head and tail
AGENTS_TAIL_RATIO = 0.15
STARTUP_TRUNCATION_MARKER = "\n...[truncated]..."

# ECMAScript WhiteSpace + LineTerminator (what String.prototype.trim removes).
_JS_SPACE = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(chr(c) for c in range(0x2000, 0x200B))
)


def u16len(text: str) -> int:
    """JavaScript ``text.length``."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_trim_end(text: str) -> str:
    end = len(text)
    while end > 0 and text[end - 1] in _JS_SPACE:
        end -= 1
    return text[:end]


def js_trim_start_offset(text: str) -> int:
    """Index of the first character ``trim()`` keeps."""
    start = 0
    while start < len(text) and text[start] in _JS_SPACE:
        start += 1
    return start


def truncate_u16(text: str, limit: int) -> str:
    """``truncateUtf16Safe``: at most ``limit`` code units, never half a surrogate pair."""
    if limit <= 0:
        return ""
    if u16len(text) <= limit:
        return text
    return text[: U16Index(text).head(limit)]


class U16Index:
    """Code-point offsets ↔ UTF-16 unit offsets for one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._astral = u16len(text) != len(text)
        self._cum: list[int] = []
        if self._astral:
            total = 0
            cum = [0]
            for ch in text:
                total += 2 if ord(ch) > 0xFFFF else 1
                cum.append(total)
            self._cum = cum
        self.total = self._cum[-1] if self._astral else len(text)

    def at(self, index: int) -> int:
        """Units before code point ``index``."""
        return self._cum[index] if self._astral else index

    def head(self, units: int) -> int:
        """Largest code-point index whose prefix fits in ``units``."""
        if units >= self.total:
            return len(self.text)
        if units <= 0:
            return 0
        return bisect_right(self._cum, units) - 1 if self._astral else units

    def tail(self, units: int) -> int:
        """Smallest code-point index whose suffix fits in ``units``."""
        if units <= 0:
            return len(self.text)
        if units >= self.total:
            return 0
        return bisect_left(self._cum, self.total - units) if self._astral else self.total - units

    def units(self, start: int, end: int) -> int:
        return self.at(end) - self.at(start) if end > start else 0


@dataclass(frozen=True)
class Piece:
    """A run of injected text: a slice of the source (``start`` set) or literal marker text."""

    text: str
    start: int | None = None  # code-point offset in the source text


def render(pieces: Sequence[Piece]) -> str:
    return "".join(p.text for p in pieces)


def truncate_pieces(pieces: Sequence[Piece], limit: int) -> list[Piece]:
    """``truncateUtf16Safe`` over the concatenation, keeping track of source offsets."""
    out: list[Piece] = []
    left = limit
    for p in pieces:
        if left <= 0:
            break
        n = u16len(p.text)
        if n <= left:
            out.append(p)
            left -= n
            continue
        cut = p.text[: U16Index(p.text).head(left)]
        if cut:
            out.append(Piece(cut, p.start))
        break
    return out


def source_spans(pieces: Sequence[Piece]) -> list[tuple[int, int]]:
    return [(p.start, p.start + len(p.text)) for p in pieces if p.start is not None and p.text]


@dataclass(frozen=True)
class Trimmed:
    pieces: tuple[Piece, ...]
    truncated: bool
    original_len: int  # units after trimEnd: what the cap is compared with
    max_chars: int
    head: int = 0  # units the marker reports as kept
    tail: int = 0
    compact: bool = False
    approximate: bool = False  # AGENTS.md policy digest: not reproduced line by line


def trim_bootstrap(content: str, file_name: str, max_chars: int) -> Trimmed:
    """``trimBootstrapContent``: keep a bootstrap file within ``max_chars`` (head + marker + tail)."""
    trimmed = js_trim_end(content)
    idx = U16Index(trimmed)
    total = idx.total
    if total <= max_chars:
        return Trimmed((Piece(trimmed, 0),) if trimmed else (), False, total, max_chars)
    if file_name.lower() == "agents.md":
        return _approximate_agents(trimmed, idx, max_chars)

    def full_marker(h: int, t: int) -> str:
        return "\n".join(
            [
                "",
                f"[...truncated, read {file_name} for full content...]",
                f"…(truncated {file_name}: kept {h}+{t} chars of {total})…",
                "",
            ]
        )

    def compact_marker(h: int, t: int) -> str:
        return f"[…truncated {h}+{t}/{total}]"

    def separators(h: int, t: int, marker: str) -> int:
        return (int(h > 0) + int(t > 0)) if "\n" in marker else 0

    first = full_marker(0, 0)
    compact = max_chars - u16len(first) - separators(1, 1, first) < MIN_TRIMMED_CONTENT_CHARS
    template = compact_marker if compact else full_marker
    head = tail = 0
    marker = template(0, 0)
    for _ in range(3):
        budget = max(0, max_chars - u16len(marker) - separators(head, tail, marker))
        next_head = math.floor(budget * HEAD_RATIO)
        next_tail = math.floor(budget * TAIL_RATIO)
        next_marker = template(next_head, next_tail)
        if next_head == head and next_tail == tail and u16len(next_marker) == u16len(marker):
            break
        head, tail, marker = next_head, next_tail, next_marker
    rendered = head + tail + u16len(marker) + separators(head, tail, marker)
    while rendered > max_chars and (tail > 0 or head > 0):
        overflow = rendered - max_chars
        if tail > 0:
            tail = max(0, tail - overflow)
        else:
            head = max(0, head - overflow)
        marker = template(head, tail)
        rendered = head + tail + u16len(marker) + separators(head, tail, marker)
    if head == 0 and tail == 0 and total > 0:
        single = template(1, 0)
        if 1 + u16len(single) + separators(1, 0, single) <= max_chars:
            head, marker = 1, single
    head_end = idx.head(head)
    tail_start = idx.tail(tail) if tail > 0 else len(trimmed)
    parts: list[Piece] = []
    joiner = "\n" if "\n" in marker else ""
    for part in (Piece(trimmed[:head_end], 0), Piece(marker), Piece(trimmed[tail_start:], tail_start)):
        if part.text:
            if parts and joiner:
                parts.append(Piece(joiner))
            parts.append(part)
    if u16len(render(parts)) > max_chars:
        parts = truncate_pieces(parts, max_chars)
    return Trimmed(tuple(parts), True, total, max_chars, head, tail, compact)


def _approximate_agents(trimmed: str, idx: U16Index, max_chars: int) -> Trimmed:
    """AGENTS.md over its cap: OpenClaw adds a policy digest of middle lines; clawmem keeps the
    budget it uses (up to the cap) but does not rebuild the digest line by line."""
    head = math.floor(max_chars * AGENTS_HEAD_RATIO)
    tail = math.floor(max_chars * AGENTS_TAIL_RATIO)
    tail_start = idx.tail(tail)
    marker = "\n[...truncated, read AGENTS.md for full content...]\n[policy digest not reproduced by clawmem]\n"
    parts = [Piece(trimmed[: idx.head(head)], 0), Piece(marker), Piece(trimmed[tail_start:], tail_start)]
    return Trimmed(tuple(p for p in parts if p.text), True, idx.total, max_chars, head, tail, False, True)


def clamp_to_budget(pieces: Sequence[Piece], budget: int) -> list[Piece]:
    """``clampToBudget``: what still fits in the shared total; a cut ends with ``…``."""
    if budget <= 0:
        return []
    if u16len(render(pieces)) <= budget:
        return list(pieces)
    if budget <= 3:
        return truncate_pieces(pieces, budget)
    return [*truncate_pieces(pieces, budget - 1), Piece("…")]


def trim_startup(content: str, max_chars: int) -> list[Piece]:
    """``trimStartupMemoryContent`` on a file: trim, then keep a head and add the marker."""
    lead = js_trim_start_offset(content)
    trimmed = js_trim_end(content[lead:])
    if u16len(trimmed) <= max_chars:
        return [Piece(trimmed, lead)] if trimmed else []
    return [Piece(trimmed[: U16Index(trimmed).head(max_chars)], lead), Piece(STARTUP_TRUNCATION_MARKER)]


def retrim_startup(pieces: Sequence[Piece], max_chars: int) -> list[Piece]:
    """``trimStartupMemoryContent`` applied again to already-trimmed content (the block fitter)."""
    if u16len(render(pieces)) <= max_chars:
        return list(pieces)
    return [*truncate_pieces(pieces, max_chars), Piece(STARTUP_TRUNCATION_MARKER)]


# --------------------------------------------------------------------------- lines


@dataclass(frozen=True)
class SourceLine:
    number: int  # 1-based line number in the file
    text: str  # as shown (no newline, no CR, no BOM)
    start: int  # code-point offset in the source text
    end: int  # offset of the line's end (its newline, if any, is at ``end``)


@dataclass(frozen=True)
class LineCoverage:
    number: int
    text: str
    status: str  # kept | partial | cut | trimmed
    kept_chars: int
    chars: int


def line_coverage(
    source: str,
    lines: Sequence[SourceLine],
    live: tuple[int, int],
    kept: Sequence[tuple[int, int]],
) -> list[LineCoverage]:
    """How much of each line reaches the model.

    ``live`` is the part of ``source`` left after whitespace trimming (outside it a line is
    ``trimmed``: only whitespace was dropped). ``kept`` are the source spans in the injected text.
    A blank line counts as kept when its newline is.
    """
    idx = U16Index(source)
    lo, hi = live
    spans = sorted(kept)
    out: list[LineCoverage] = []
    for ln in lines:
        a, b = max(ln.start, lo), min(ln.end, hi)
        if ln.start == ln.end:  # blank line: judge by its newline
            nl = ln.end
            if nl >= len(source) or not lo <= nl < hi:
                status = "trimmed"
            else:
                status = "kept" if any(s <= nl < e for s, e in spans) else "cut"
            out.append(LineCoverage(ln.number, ln.text, status, 0, 0))
            continue
        if a >= b:
            out.append(LineCoverage(ln.number, ln.text, "trimmed", 0, idx.units(ln.start, ln.end)))
            continue
        total = idx.units(a, b)
        got = sum(idx.units(max(a, s), min(b, e)) for s, e in spans if s < b and e > a)
        status = "kept" if got >= total else ("cut" if got == 0 else "partial")
        out.append(LineCoverage(ln.number, ln.text, status, got, idx.units(ln.start, ln.end)))
    return out


def kept_units(source: str, kept: Sequence[tuple[int, int]], live: tuple[int, int]) -> int:
    """UTF-16 units of ``source`` inside ``live`` that the injected text carries."""
    idx = U16Index(source)
    lo, hi = live
    return sum(idx.units(max(lo, a), min(hi, b)) for a, b in kept if a < hi and b > lo)


def split_lines(text: str, skip: frozenset[int] = frozenset()) -> tuple[str, list[SourceLine]]:
    """Join the lines of ``text`` except those numbered in ``skip``; return the joined text and
    where each kept line sits in it (CR and BOM stay in the text, not in the shown line)."""
    raw_lines = text.split("\n")
    kept_text: list[str] = []
    lines: list[SourceLine] = []
    offset = 0
    for number, raw in enumerate(raw_lines, 1):
        if number in skip:
            continue
        if kept_text:
            offset += 1  # the newline joining it to the previous kept line
        shown = raw[:-1] if raw.endswith("\r") else raw
        if number == 1:
            shown = shown.lstrip("\ufeff")
        lines.append(SourceLine(number, shown, offset, offset + len(raw)))
        kept_text.append(raw)
        offset += len(raw)
    return "\n".join(kept_text), lines


def ranges_of(numbers: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive runs: [3, 4, 5, 9] → [(3, 5), (9, 9)]."""
    runs: list[tuple[int, int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def describe_ranges(runs: Sequence[tuple[int, int]], limit: int = 4) -> str:
    """``lines 181–240`` / ``line 7`` / ``lines 3–5, 9`` (at most ``limit`` runs, then ``…``)."""
    if not runs:
        return ""
    parts = [f"{a}" if a == b else f"{a}–{b}" for a, b in runs[:limit]]
    more = ", …" if len(runs) > limit else ""
    single = len(runs) == 1 and runs[0][0] == runs[0][1]
    return f"{'line' if single else 'lines'} {', '.join(parts)}{more}"
