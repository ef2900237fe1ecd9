"""Parse a memory file into entries (for the entries table, context loading, Dreaming, forget).

Structure comes from markdown-it-py: each top-level list item, paragraph or code block is an
entry; headings name the section; HTML comment lines directly before an entry carry its
markers (USER.md ``observed/status``, Dreaming's lineage and promotion markers). Annotations
on the entry's own lines (trigger, importance, project, supersedes) are parsed with the
spec's rules. Nothing here ever raises on odd input: bad annotations become flags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from clawmem.engine.workspace.annotations import (
    INVALID_PROJECT_ANNOTATION,
    LINEAGE_MARKER,
    OBSERVED_MARKER,
    PROMOTION_MARKER,
    StatusMarker,
    extract_recall_metadata,
    find_supersedes,
    status_marker,
    strip_all_markers,
)
from markdown_it import MarkdownIt


@dataclass(frozen=True)
class Entry:
    path: str
    start_line: int  # 1-based first line of the entry itself
    end_line: int  # inclusive
    marker_line: int  # first line including the marker comments that belong to it
    kind: str  # "bullet", "paragraph", "code"
    text: str  # the raw lines
    display: str  # text without markers and annotation carriers
    section: str | None
    status: str  # "active" or "superseded"
    observed: str | None
    triggers: tuple[str, ...]
    importance: int | None
    project_keys: tuple[str, ...]
    flags: tuple[str, ...]
    supersedes: str | None
    lineage_key: str | None
    promotion_key: str | None
    superseded_by: str | None = None  # the marker's ``by`` pointer, ``PATH#LN``, as written

    @property
    def superseded(self) -> bool:
        return self.status == "superseded"

    @property
    def marker(self) -> StatusMarker | None:
        """The entry's observed/status marker (with its ``by`` pointer), or None without one."""
        if self.observed is None:
            return None
        return status_marker(self.observed, self.status, self.superseded_by)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


_LINE_END = re.compile(r"\r\n?|\n")  # markdown-it's own line ends
_BULLET_PREFIX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def parse_entries(rel: str, text: str, *, curated_root: bool) -> list[Entry]:
    """Entries of one file, in order. ``text`` should use LF line ends; a CR left in it is a line
    end too, as markdown-it reads it, so the token maps always index ``lines``."""
    lines = _LINE_END.split(text)
    tokens = _parser().parse(text)
    entries: list[Entry] = []
    section: str | None = None
    markers: list[tuple[int, str]] = []  # (line index, marker line text)
    project_eligible = rel.upper() != "USER.MD"
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level != 0 or tok.map is None:
            i += 1
            continue
        begin, end = tok.map
        if tok.type == "heading_open" and tok.markup in ("-", "=") and end - begin > 2:
            # A multi-line "setext heading" is usually prose followed by a stray ``---``
            # (a leading rule that is not front matter): keep it as content, not a title.
            entries.append(
                _entry(rel, lines, begin, end - 1, "paragraph", section, markers, curated_root, project_eligible)
            )
            markers = []
        elif tok.type == "heading_open":
            inline = tokens[i + 1] if i + 1 < len(tokens) else None
            section = strip_all_markers(inline.content).strip() if inline is not None else None
            markers = []
        elif tok.type == "html_block":
            block = lines[begin:end]
            if all(_is_marker(ln) or not ln.strip() for ln in block):
                markers.extend((begin + k, ln) for k, ln in enumerate(block) if ln.strip())
            else:
                markers = []
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            depth = 0
            j = i
            while j < len(tokens):
                t = tokens[j]
                if t.type in ("bullet_list_open", "ordered_list_open"):
                    depth += 1
                elif t.type in ("bullet_list_close", "ordered_list_close"):
                    depth -= 1
                    if depth == 0:
                        break
                elif t.type == "list_item_open" and depth == 1 and t.map is not None:
                    b, e = t.map
                    entries.append(_entry(rel, lines, b, e, "bullet", section, markers, curated_root, project_eligible))
                    markers = []
                j += 1
            i = j
        elif tok.type in ("paragraph_open", "fence", "code_block"):
            kind = "paragraph" if tok.type == "paragraph_open" else "code"
            entries.append(_entry(rel, lines, begin, end, kind, section, markers, curated_root, project_eligible))
            markers = []
        else:
            markers = []
        i += 1
    return entries


def _is_marker(line: str) -> bool:
    s = line.strip()
    return bool(OBSERVED_MARKER.fullmatch(s) or LINEAGE_MARKER.match(s) or PROMOTION_MARKER.match(s))


def _entry(
    rel: str,
    lines: list[str],
    begin: int,
    end: int,
    kind: str,
    section: str | None,
    markers: list[tuple[int, str]],
    curated_root: bool,
    project_eligible: bool,
) -> Entry:
    # Trailing blank lines inside a list item's map are not part of the entry.
    while end - 1 > begin and not lines[end - 1].strip():
        end -= 1
    body = lines[begin:end]
    raw = "\n".join(body)
    observed = status = lineage = promotion = by = None
    for _, marker in markers:
        m = OBSERVED_MARKER.search(marker)
        if m:
            observed, status, by = m.group(1), m.group(2).lower(), (m.group(3) or "").strip() or None
        m = LINEAGE_MARKER.match(marker)
        if m:
            lineage = m.group(1)
        m = PROMOTION_MARKER.match(marker)
        if m:
            promotion = m.group(1)
    # A marker may also sit on the entry's own first line (``- text <!-- observed: … -->``).
    if observed is None:
        m = OBSERVED_MARKER.search(raw)
        if m:
            observed, status, by = m.group(1), m.group(2).lower(), (m.group(3) or "").strip() or None
    meta = extract_recall_metadata(body, curated_root=curated_root, project_scope_eligible=project_eligible)
    flags = (INVALID_PROJECT_ANNOTATION,) if meta.project_invalid else ()
    display = strip_all_markers(raw)
    if kind == "bullet":
        display = _BULLET_PREFIX.sub("", display, count=1)
    return Entry(
        path=rel,
        start_line=begin + 1,
        end_line=end,
        marker_line=(markers[0][0] + 1) if markers else begin + 1,
        kind=kind,
        text=raw,
        display=display.strip(),
        section=section,
        status=status or "active",
        observed=observed,
        triggers=meta.trigger_phrases,
        importance=meta.importance,
        project_keys=tuple(k for k in meta.project_keys if k != INVALID_PROJECT_ANNOTATION),
        flags=flags,
        supersedes=find_supersedes(raw),
        lineage_key=lineage,
        promotion_key=promotion,
        superseded_by=by,
    )


@dataclass(frozen=True)
class MarkedEntry:
    """An entry that carries an observed/status marker: its lines from the first marker line
    (``first_line``) to its last, its bullet's line (``start_line``), and the marker."""

    first_line: int
    start_line: int
    end_line: int
    marker: StatusMarker


@dataclass(frozen=True)
class _FileMarkers:
    statuses: dict[int, str]  # every entry's start line -> "active" | "superseded"
    markers: dict[int, StatusMarker]  # start line -> marker, for the entries that carry one
    marked: tuple[MarkedEntry, ...] = ()


_MARKER_CACHE: dict[tuple[str, int, int], _FileMarkers] = {}
_EMPTY = _FileMarkers({}, {})


def _file_markers(path: Path, rel: str) -> _FileMarkers:
    """The parsed markers of one memory file, cached by (path, size, mtime): search asks for them
    on every hit, and the marker line sits above its bullet, often in the previous chunk, so the
    chunk's text alone cannot tell."""
    from clawmem.engine.workspace.names import CURATED_ROOT_FILES
    from clawmem.engine.workspace.reading import FileText, read_memory_text

    try:
        st = path.stat()
    except OSError:
        return _EMPTY
    key = (str(path), st.st_size, st.st_mtime_ns)
    cached = _MARKER_CACHE.get(key)
    if cached is not None:
        return cached
    read = read_memory_text(path, rel, 16 * 1024 * 1024)
    found = _EMPTY
    if isinstance(read, FileText):
        entries = parse_entries(rel, read.text, curated_root=rel in CURATED_ROOT_FILES)
        marked = tuple(
            MarkedEntry(e.marker_line, e.start_line, e.end_line, m) for e in entries if (m := e.marker) is not None
        )
        markers = {m.start_line: m.marker for m in marked}
        found = _FileMarkers({e.start_line: e.status for e in entries}, markers, marked)
    if len(_MARKER_CACHE) > 64:
        _MARKER_CACHE.clear()
    _MARKER_CACHE[key] = found
    return found


def forget_markers(path: Path) -> None:
    """Drop the cached markers of a file a writer just changed (a rewrite of the same size within
    the file system's timestamp granularity would otherwise look unchanged)."""
    for key in list(_MARKER_CACHE):  # a copy: a search thread may add meanwhile
        if key[0] == str(path):
            _MARKER_CACHE.pop(key, None)


def entry_markers(path: Path, rel: str) -> dict[int, StatusMarker]:
    """{entry start line: its observed/status marker} of any memory file (MEMORY.md, USER.md, a
    diary, any memory/*.md), for the entries that carry one — with the ``by`` pointer
    (``marker.by_path``, ``marker.by_line``) of a superseded one. ``path`` the file on disk,
    ``rel`` its workspace-relative path. Cached by (path, size, mtime); the dict is shared, do not
    change it."""
    return _file_markers(path, rel).markers


def marked_entries(path: Path, rel: str) -> tuple[MarkedEntry, ...]:
    """The entries of a memory file that carry a marker, with their full line spans (a marker
    line inserted above a bullet moves it down one: a citation made before still overlaps)."""
    return _file_markers(path, rel).marked


def entry_statuses(path: Path, rel: str) -> dict[int, str]:
    """{entry start line: "active" | "superseded"} of every entry of a memory file (same cache as
    :func:`entry_markers`)."""
    return _file_markers(path, rel).statuses
