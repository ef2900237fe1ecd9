"""Re-read a candidate's snippet from its live source file before it is written (docs/memory-core.md §5 Apply 1).

As OpenClaw's ``rehydratePromotionCandidate``: the stored line range is used when its text still
matches; otherwise the nearest window (up to max(span + 3, 8) lines) that contains the stored
snippet — compared without HTML comments, also without list markers and with the nearest
heading as context — wins. A mere fragment does not count, two equally close places leave the
candidate orphaned, windows inside managed dreaming blocks are never used, and the file's
SHA-256 must not change during the read. HTML comments never reach MEMORY.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from clawmem.engine.recall import normalize_snippet
from clawmem.engine.workspace.annotations import extract_project_keys, find_supersedes
from clawmem.engine.workspace.reading import decode_memory_bytes, sha256_bytes

_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_LIST_MARKER = re.compile(r"^(?:\d+\.\s+|[-*+]\s+)")
_FENCE_START = re.compile(r"<!--\s*openclaw:dreaming:[a-z][a-z0-9-]*:start\s*-->", re.IGNORECASE)
_FENCE_END = re.compile(r"<!--\s*openclaw:dreaming:[a-z][a-z0-9-]*:end\s*-->", re.IGNORECASE)
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}(?:-[^/]+)?(?:\.md)?$")
_MAX_TRACKED = 16


@dataclass(frozen=True)
class Rehydrated:
    start_line: int
    end_line: int
    snippet: str  # normalized, comments removed
    supersedes_key: str | None  # from a <!-- supersedes: KEY --> on the source lines
    project_key: str | None
    file_sha256: str
    span: tuple[str, ...] = ()  # the raw lines start_line..end_line, for :mod:`engine.dreaming.focus`


@dataclass(frozen=True)
class RehydrationFailure:
    category: str  # source rehydration | source changed
    reason: str


def _comparable(text: str) -> str:
    return normalize_snippet(_COMMENT.sub(" ", text))


def _fence_lines(lines: list[str]) -> list[bool]:
    managed: list[bool] = []
    inside = False
    for line in lines:
        start, end = bool(_FENCE_START.search(line)), bool(_FENCE_END.search(line))
        managed.append(start or end or inside)
        inside = True if start else False if end else inside
    return managed


def _heading_lookup(lines: list[str]) -> list[str | None]:
    from clawmem.engine.dreaming.ingest import _generic_heading

    out: list[str | None] = [None] * (len(lines) + 1)
    current: str | None = None
    for i, line in enumerate(lines):
        out[i + 1] = current
        if _FENCE_START.search(line) or _FENCE_END.search(line):
            current = None
            continue
        m = re.match(r"^#{1,6}\s+(.+)$", line.strip())
        if m:
            heading = normalize_snippet(_LIST_MARKER.sub("", m.group(1).strip()))
            bad = not heading or _DATED.match(heading) or heading.lower() in ("light sleep", "rem sleep")
            current = None if bad or _generic_heading(heading) else heading
    return out


def _range_text(lines: list[str], start: int, end: int) -> str:
    return normalize_snippet(" ".join(lines[max(0, start - 1) : min(len(lines), end)]))


def _marker_free(lines: list[str], start: int, end: int) -> str:
    stripped = [
        (_LIST_MARKER.sub("", ln.strip()), bool(_LIST_MARKER.match(ln.strip()))) for ln in lines[start - 1 : end]
    ]
    joiner = "; " if len(stripped) > 1 and all(had for _, had in stripped) else " "
    return normalize_snippet(joiner.join(text for text, _ in stripped))


def _quality(target: str, window: str) -> int:
    if not target or not window:
        return 0
    if window == target:
        return 3
    if target in window:
        return 2
    if window in target:
        return 1
    return 0


def relocate(lines: list[str], start: int, end: int, snippet: str) -> tuple[int, int, str] | None:
    target = normalize_snippet(snippet)
    comparable_target = _comparable(snippet) or target
    if not target:
        text = _range_text(lines, start, end)
        return (start, end, _comparable(text)) if text else None
    fences = _fence_lines(lines)

    def managed(a: int, b: int) -> bool:
        return any(fences[i - 1] for i in range(max(1, a), min(len(lines), b) + 1))

    exact = _range_text(lines, start, end)
    if not managed(start, end) and exact and (exact == target or _comparable(exact) == comparable_target):
        return start, end, _comparable(exact)
    preferred = max(1, end - start + 1)
    max_span = min(len(lines), max(preferred + 3, 8))
    headings = _heading_lookup(lines)
    best: tuple[int, int, int, int, str, bool] | None = None  # quality, distance, a, b, snippet, rebuilt
    top_quality = 0
    groups: list[list[int]] = []  # [a, b, distance]
    for i in range(len(lines)):
        for span in range(1, max_span + 1):
            a, b = i + 1, i + span
            if b > len(lines):
                break
            if managed(a, b):
                continue
            plain = _range_text(lines, a, b)
            free = _marker_free(lines, a, b)
            heading = headings[a]
            with_heading = normalize_snippet(f"{heading}: {free}") if heading and free else free
            options = [(_quality(comparable_target, _comparable(plain)), plain, False)]
            if free != plain:
                options.append((_quality(comparable_target, _comparable(free)), free, True))
            if with_heading != free:
                options.append((_quality(comparable_target, _comparable(with_heading)), with_heading, True))
            quality, text, rebuilt = max(options, key=lambda o: o[0])
            if quality == 0:
                continue
            distance = abs(a - start)
            if quality > top_quality:
                top_quality, groups = quality, []
            if quality == top_quality:
                group = next((g for g in groups if g[0] <= b and a <= g[1]), None)
                if group is not None:
                    group[0], group[1], group[2] = min(group[0], a), max(group[1], b), min(group[2], distance)
                elif len(groups) < _MAX_TRACKED:
                    groups.append([a, b, distance])
            if (
                best is None
                or quality > best[0]
                or (quality == best[0] and distance < best[1])
                or (
                    quality == best[0]
                    and distance == best[1]
                    and abs(span - preferred) < abs(best[3] - best[2] + 1 - preferred)
                )
            ):
                best = (quality, distance, a, b, text, rebuilt)
    if best is None or (best[0] < 2 and not best[5]):
        return None
    nearest = min(g[2] for g in groups)
    if sum(1 for g in groups if g[2] == nearest) > 1:
        return None
    return best[2], best[3], _comparable(best[4])


def rehydrate(workspace: Path, path: str, start: int, end: int, snippet: str) -> Rehydrated | RehydrationFailure:
    source = workspace / path
    try:
        if source.is_symlink() or not source.is_file():
            return RehydrationFailure("source rehydration", f"{path} no longer exists")
        before = source.read_bytes()
        text, _, _ = decode_memory_bytes(before)
    except (OSError, ValueError) as exc:
        return RehydrationFailure("source rehydration", f"{path} cannot be read ({exc})")
    lines = text.split("\n")
    found = relocate(lines, start, end, snippet)
    try:
        after = source.read_bytes()
    except OSError:
        after = b""
    if sha256_bytes(after) != sha256_bytes(before):
        return RehydrationFailure("source changed", f"{path} changed during the read")
    if found is None:
        return RehydrationFailure("source rehydration", f"the snippet is no longer in {path}")
    a, b, text_found = found
    span = "\n".join(lines[a - 1 : b])
    projects = extract_project_keys(span)
    return Rehydrated(
        start_line=a,
        end_line=b,
        snippet=text_found,
        supersedes_key=find_supersedes(span),
        project_key="; ".join(projects.keys) if projects.valid and projects.keys else None,
        file_sha256=sha256_bytes(before),
        span=tuple(lines[a - 1 : b]),
    )
