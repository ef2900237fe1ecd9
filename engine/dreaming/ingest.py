"""Daily-note ingestion (docs/memory-core.md §5 "Daily ingestion adds to dailyCount"), as OpenClaw's Light/REM
prelude does it.

Each dated note directly under ``memory/`` whose day lies within max(14, phase lookback) days is
cut into claims: a bullet (with its continuation lines, prefixed by its parent bullets and the
nearest specific heading, ``"酒店: 看了三家酒店…"``) or a run of up to 4 prose lines. Managed
dreaming blocks are skipped. Every claim adds one daily signal (score 0.62) to
``memory:claim:<claimHash>`` under the synthetic query ``__dreaming_daily__:<day>``, with the note's
day as recall day. A ledger makes it idempotent: one signal per (dreaming day, file, claim).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import apsw
from clawmem.engine.config import Clock
from clawmem.engine.recall import DailyClaim, record_daily
from clawmem.engine.store import dreaming_rows
from clawmem.engine.store.db import immediate
from clawmem.engine.workspace.reading import FileText, read_memory_text

DAILY_INGESTION_SCORE = 0.62
MAX_SNIPPET_CHARS = 280
MIN_SNIPPET_CHARS = 8
MAX_CHUNK_LINES = 4
MIN_LOOKBACK_DAYS = 14
DAILY_FILE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-[^/]+)?\.md$")
_HEADING = re.compile(r"^#{1,6}\s+(.+)$")
_LIST = re.compile(r"^(\s*)(?:[-*+]|\d+\.)\s+(.+)$")
_GENERIC_HEADING = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}(?:\s.*)?|(?:daily\s+)?(?:log|notes?|summary|journal|memory)|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day(?:,?\s.*)?|session(?::.*)?)$",
    re.IGNORECASE,
)
_MANAGED_BLOCKS = (
    ("## Light Sleep", "<!-- openclaw:dreaming:light:start -->", "<!-- openclaw:dreaming:light:end -->"),
    ("## REM Sleep", "<!-- openclaw:dreaming:rem:start -->", "<!-- openclaw:dreaming:rem:end -->"),
)


def ingestion_lookback_days(phase_lookback_days: int) -> int:
    return max(MIN_LOOKBACK_DAYS, phase_lookback_days)


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _strip_list_marker(line: str) -> str:
    return re.sub(r"^[-*+]\s+", "", re.sub(r"^\d+\.\s+", "", line)).strip()


def _generic_heading(heading: str) -> bool:
    normalized = _collapse(heading.strip())
    if not normalized:
        return True
    if normalized.lower() in ("today", "yesterday", "tomorrow", "morning", "afternoon", "evening", "night"):
        return True
    return bool(_GENERIC_HEADING.match(normalized))


def _heading(line: str) -> str | None:
    m = _HEADING.match(line.strip())
    if not m:
        return None
    heading = _strip_list_marker(m.group(1))
    if not heading or DAILY_FILE.match(heading) or _generic_heading(heading):
        return None
    return _collapse(heading[:MAX_SNIPPET_CHARS])


def _prose(line: str) -> str | None:
    trimmed = line.strip()
    if not trimmed or trimmed.startswith(("#", "<!--")):
        return None
    text = _strip_list_marker(trimmed)
    if len(text) < MIN_SNIPPET_CHARS:
        return None
    return _collapse(text[:MAX_SNIPPET_CHARS])


def _strip_managed(lines: list[str]) -> list[str]:
    out = list(lines)
    starts = {start: (heading, end) for heading, start, end in _MANAGED_BLOCKS}
    i = 0
    while i < len(out):
        block = starts.get(out[i].strip())
        if block is None:
            i += 1
            continue
        heading, end = block
        stop = -1
        for j in range(i + 1, len(out)):
            t = out[j].strip()
            if t == end:
                stop = j
                break
            if re.match(r"^#{1,2}\s", t) or t in starts:
                stop = j - 1
                break
        if stop < i:
            i += 1
            continue
        first = i
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        if k >= 0 and lines[k].strip() == heading:
            first = k
        for j in range(first, stop + 1):
            out[j] = ""
        i = stop + 1
    return out


@dataclass(frozen=True)
class _Chunk:
    start_line: int
    end_line: int
    snippet: str


def _chunk_snippet(heading: str | None, body: str) -> str:
    text = f"{heading}: {body}" if heading else body
    return _collapse(text[:MAX_SNIPPET_CHARS]).strip()


def daily_chunks(text: str, limit: int) -> list[_Chunk]:
    """OpenClaw's ``buildDailySnippetChunks``: claims with 1-based line ranges."""
    lines = _strip_managed(text.split("\n"))
    chunks: list[_Chunk] = []
    heading: str | None = None
    buf: list[str] = []
    start = end = 0
    ancestors: list[tuple[int, str]] = []

    def flush() -> None:
        nonlocal buf, start, end
        if buf:
            snippet = _chunk_snippet(heading, " ".join(buf).strip())
            if len(snippet) >= MIN_SNIPPET_CHARS:
                chunks.append(_Chunk(start, end, snippet))
        buf, start, end = [], 0, 0

    index = 0
    while index < len(lines):
        line = lines[index]
        h = _heading(line)
        if h:
            flush()
            heading, ancestors = h, []
            index += 1
            continue
        trimmed = line.strip()
        if not trimmed or trimmed.startswith("<!--"):
            flush()
            ancestors = []
            index += 1
            continue
        m = _LIST.match(line)
        if m:
            flush()
            indent = len(m.group(1))
            item = _collapse(_strip_list_marker(trimmed)[:MAX_SNIPPET_CHARS])
            if not item:
                ancestors = []
                index += 1
                continue
            while ancestors and ancestors[-1][0] >= indent:
                ancestors.pop()
            continuation: list[str] = []
            end_index = index
            nested_at: int | None = None
            has_child = False
            for cursor in range(index + 1, len(lines)):
                nxt = lines[cursor]
                nt = nxt.strip()
                if not nt:
                    k = cursor + 1
                    while k < len(lines) and not lines[k].strip():
                        k += 1
                    loose = _LIST.match(lines[k]) if k < len(lines) else None
                    if loose and len(loose.group(1)) > indent:
                        has_child, nested_at = True, k
                    break
                if nt.startswith(("#", "<!--")):
                    break
                nm = _LIST.match(nxt)
                if nm:
                    has_child = len(nm.group(1)) > indent
                    break
                continuation.append(_collapse(nt))
                end_index = cursor
            body = " ".join([item, *continuation])
            context = " > ".join([*(a for _, a in ancestors), body]).replace(": > ", ": ")
            snippet = _chunk_snippet(heading, context)
            container_only = has_child and not continuation and item.endswith(":")
            if not container_only and len(snippet) >= MIN_SNIPPET_CHARS:
                chunks.append(_Chunk(index + 1, end_index + 1, snippet))
            ancestors.append((indent, body))
            index = end_index + 1 if nested_at is None else nested_at
            if len(chunks) >= limit:
                break
            continue
        ancestors = []
        prose = _prose(line)
        if not prose:
            flush()
            index += 1
            continue
        if len(buf) >= MAX_CHUNK_LINES:
            flush()
        if not buf:
            start = index + 1
        buf.append(prose)
        end = index + 1
        index += 1
        if len(chunks) >= limit:
            break
    flush()
    return chunks[:limit]


def _within_lookback(day: str, today: date, lookback_days: int) -> bool:
    try:
        d = date.fromisoformat(day)
    except ValueError:
        return False
    return d >= today - timedelta(days=lookback_days)


def ingest_daily_notes(
    conn: apsw.Connection,
    workspace: Path,
    clock: Clock,
    *,
    lookback_days: int,
    limit: int,
    max_file_bytes: int,
    file_origin: dict[str, str] | None = None,
) -> int:
    """Count today's daily signals for recent notes; returns how many claims were counted now."""
    memory_dir = workspace / "memory"
    if not memory_dir.is_dir() or memory_dir.is_symlink():
        return 0
    today = date.fromisoformat(clock.today())
    files: list[tuple[str, Path]] = []
    for path in memory_dir.iterdir():
        m = DAILY_FILE.match(path.name)
        if m and path.is_file() and not path.is_symlink() and _within_lookback(m.group(1), today, lookback_days):
            files.append((m.group(1), path))
    files.sort(key=lambda item: (item[0], item[1].name), reverse=True)
    total_cap = max(20, limit * 4)
    per_file = max(6, math.ceil(total_cap / max(1, len(files))))
    now_ms = int(clock.timestamp() * 1000)
    counted = 0
    total = 0
    with immediate(conn):
        dreaming_rows.prune_ingested(conn, (today - timedelta(days=MIN_LOOKBACK_DAYS * 2)).isoformat())
        for day, path in files:
            if total >= total_cap:
                break
            rel = f"memory/{path.name}"
            read = read_memory_text(path, rel, max_file_bytes)
            if not isinstance(read, FileText):
                continue
            origin = (file_origin or {}).get(rel, "agent")
            chunks = daily_chunks(read.text, min(per_file, total_cap - total))
            total += len(chunks)
            claims = [
                DailyClaim(rel, c.start_line, c.end_line, c.snippet, DAILY_INGESTION_SCORE, origin_class=origin)
                for c in chunks
            ]
            fresh = [c for c in claims if dreaming_rows.mark_ingested(conn, clock.today(), rel, c.key, now_ms)]
            if fresh:
                counted += len(record_daily(conn, f"__dreaming_daily__:{day}", fresh, clock, day_bucket=day))
    return counted
