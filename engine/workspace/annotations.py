"""Entry annotations and markers: ``trigger``, ``importance``, ``project``, USER.md
``observed/status``, ``supersedes``, and Dreaming's lineage / promotion markers.

Rules (docs/memory-core.md §1): trigger and importance are read only from root curated files and only on
lines that end in ``-->``; phrases split on ``,``/``;`` and are joined with ``"; "``; the highest
valid importance (1–10) wins; a project key containing CR, LF, ``<`` or ``>`` (or an
unterminated project marker) makes the whole annotation invalid, flagged with
``!invalid-project-annotation`` so the entry is dropped from search instead of leaking.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

INVALID_PROJECT_ANNOTATION = "!invalid-project-annotation"

_CARRIER_OPEN = re.compile(r"<!--\s*(trigger|importance|project)\s*:", re.IGNORECASE)
_PROJECT_OPEN = re.compile(r"<!--\s*(project)\s*:", re.IGNORECASE)
_LINE_BREAK = re.compile(r"[\r\n]")

OBSERVED_MARKER = re.compile(
    r"<!--\s*observed:\s*(\d{4}-\d{2}-\d{2})\s*\|\s*status:\s*(active|superseded)"
    r"(?:\s*\|\s*by:\s*([^|<>\r\n]*?))?\s*-->",
    re.IGNORECASE,
)
"""``<!-- observed: YYYY-MM-DD | status: active|superseded [| by: PATH#LN] -->``: group 1 the date,
group 2 the status, group 3 (optional) the pointer to the newer entry, ``PATH#LN``."""
SUPERSEDES_MARKER = re.compile(r"<!--\s*supersedes:\s*([^\r\n]*?)\s*-->", re.IGNORECASE)
LINEAGE_MARKER = re.compile(r"^\s*<!--\s*openclaw-memory-lineage:([^\s>]+)\s*-->\s*$")
PROMOTION_MARKER = re.compile(r"^\s*<!--\s*openclaw-memory-promotion:([^\s>]+)\s*-->\s*$")


@dataclass(frozen=True)
class Annotation:
    start: int
    end: int
    kind: str
    value: str


def scan_annotations(text: str, opener: re.Pattern[str], line_scoped: bool = False) -> Iterator[Annotation]:
    """Yield well-formed ``<!-- kind: value -->`` carriers; unterminated ones are skipped.

    With ``line_scoped`` a carrier must close on the line it opens, so an unterminated
    marker never swallows the next entry's valid annotation.
    """
    pos = 0
    while True:
        match = opener.search(text, pos)
        if not match:
            return
        value_start = match.end()
        closing = text.find("-->", value_start)
        if closing < 0:
            return
        if line_scoped:
            newline = _LINE_BREAK.search(text, value_start)
            if newline is not None and newline.start() < closing:
                pos = value_start
                continue
        yield Annotation(match.start(), closing + 3, match.group(1).lower(), text[value_start:closing].strip())
        pos = closing + 3


def strip_annotation_carriers(text: str) -> str:
    """Remove trigger/importance/project carriers (what gets indexed and shown as snippet)."""
    parts: list[str] = []
    cursor = 0
    for ann in scan_annotations(text, _CARRIER_OPEN, line_scoped=True):
        parts.append(text[cursor : ann.start])
        cursor = ann.end
    if cursor == 0:
        return text
    parts.append(text[cursor:])
    joined = "".join(parts)
    # Trailing blanks left where a carrier was removed are dropped; inner spacing is kept.
    return re.sub(r"[ \t]+(?=\n|$)", "", joined)


def normalize_project_key(value: str) -> str | None:
    """``path:`` keys verbatim; otherwise the host part before the first ``/`` lowercased."""
    trimmed = value.strip()
    if not trimmed or re.search(r"[\r\n<>]", trimmed):
        return None
    if trimmed.startswith("path:"):
        return trimmed
    sep = trimmed.find("/")
    if sep < 1:
        return trimmed
    return trimmed[:sep].lower() + trimmed[sep:]


@dataclass(frozen=True)
class ProjectAnnotations:
    annotated: bool
    valid: bool
    keys: tuple[str, ...]


def extract_project_keys(text: str) -> ProjectAnnotations:
    markers = len(_PROJECT_OPEN.findall(text))
    keys: dict[str, None] = {}
    parsed = raw = valid_count = 0
    for ann in scan_annotations(text, _PROJECT_OPEN):
        parsed += 1
        for raw_key in ann.value.split(";"):
            raw += 1
            key = normalize_project_key(raw_key)
            if key:
                keys[key] = None
                valid_count += 1
    annotated = markers > 0
    valid = not annotated or (parsed == markers and raw > 0 and raw == valid_count)
    return ProjectAnnotations(annotated, valid, tuple(keys))


@dataclass(frozen=True)
class RecallMetadata:
    importance: int | None
    triggers: str | None  # phrases joined with "; "
    project_key: str | None  # keys joined with "; ", or INVALID_PROJECT_ANNOTATION

    @property
    def trigger_phrases(self) -> tuple[str, ...]:
        return tuple(p for p in (self.triggers or "").split("; ") if p)

    @property
    def project_keys(self) -> tuple[str, ...]:
        return tuple(k.strip() for k in (self.project_key or "").split(";") if k.strip())

    @property
    def project_invalid(self) -> bool:
        return INVALID_PROJECT_ANNOTATION in self.project_keys


NEUTRAL_METADATA = RecallMetadata(None, None, None)


def extract_recall_metadata(
    source_lines: Sequence[str], *, curated_root: bool, project_scope_eligible: bool
) -> RecallMetadata:
    """Importance, triggers and project scope of one entry span (docs/memory-core.md §1)."""
    phrases: dict[str, None] = {}
    importance: int | None = None
    projects = (
        extract_project_keys("\n".join(source_lines)) if project_scope_eligible else ProjectAnnotations(False, True, ())
    )
    if curated_root:
        for line in source_lines:
            if not line.rstrip().endswith("-->"):
                continue
            for ann in scan_annotations(line, _CARRIER_OPEN):
                if ann.kind == "trigger":
                    for phrase in re.split(r"[,;]", ann.value):
                        if phrase.strip():
                            phrases[phrase.strip()] = None
                elif ann.kind == "importance" and ann.value.isdigit() and ann.value.isascii():
                    n = int(ann.value)
                    if 1 <= n <= 10:
                        importance = n if importance is None else max(importance, n)
    if projects.annotated and not projects.valid:
        project_key: str | None = INVALID_PROJECT_ANNOTATION
    else:
        project_key = "; ".join(projects.keys) if projects.keys else None
    return RecallMetadata(importance, "; ".join(phrases) if phrases else None, project_key)


def find_supersedes(text: str) -> str | None:
    m = SUPERSEDES_MARKER.search(text)
    return m.group(1).strip() or None if m else None


# ----------------------------------------------------------------------------- status markers

_POINTER = re.compile(r"^(.+?)#L?(\d+)$")
_TRAILING_COMMENTS = re.compile(r"(?:\s*<!--[^\r\n]*?-->)*\s*$")
_MARKER_ONLY_LINE = (LINEAGE_MARKER, PROMOTION_MARKER)


@dataclass(frozen=True)
class StatusMarker:
    """One ``<!-- observed: YYYY-MM-DD | status: … [| by: PATH#LN] -->`` marker.

    ``by_path`` is workspace-relative and ``by_line`` the 1-based line of the newer entry's bullet
    when the marker was written (``None`` when the marker has no ``by`` part, or ``by_line`` when
    its text has no ``#LN``)."""

    observed: str
    status: str  # "active" or "superseded"
    by_path: str | None = None
    by_line: int | None = None

    @property
    def superseded(self) -> bool:
        return self.status == "superseded"

    @property
    def by(self) -> str | None:
        """The pointer as written, ``PATH#LN`` (or ``PATH`` alone)."""
        if self.by_path is None:
            return None
        return self.by_path if self.by_line is None else f"{self.by_path}#{self.by_line}"


def status_marker(observed: str, status: str, by: str | None = None) -> StatusMarker:
    """A :class:`StatusMarker` from its parts; ``by`` as written (``PATH#LN``, ``PATH#LLN`` or ``PATH``)."""
    by_path: str | None = None
    by_line: int | None = None
    pointer = (by or "").strip()
    if pointer:
        pm = _POINTER.match(pointer)
        if pm:
            by_path, by_line = pm.group(1).strip(), int(pm.group(2))
        else:
            by_path = pointer
    return StatusMarker(observed, status.lower(), by_path, by_line)


def _marker_of(m: re.Match[str]) -> StatusMarker:
    return status_marker(m.group(1), m.group(2), m.group(3))


def parse_status_marker(line: str) -> StatusMarker | None:
    """The first observed/status marker on ``line`` (a marker line, or a bullet carrying one), or None."""
    m = OBSERVED_MARKER.search(line)
    return _marker_of(m) if m else None


def format_status_marker(marker: StatusMarker) -> str:
    """The marker as clawmem writes it: ``<!-- observed: D | status: S -->`` or ``… | by: PATH#LN -->``."""
    by = marker.by
    return f"<!-- observed: {marker.observed} | status: {marker.status}" + (f" | by: {by}" if by else "") + " -->"


def is_status_marker_line(line: str) -> bool:
    """A line that holds nothing but an observed/status marker."""
    return OBSERVED_MARKER.fullmatch(line.strip()) is not None


def inline_status_marker(line: str) -> re.Match[str] | None:
    """The marker a bullet line *ends* with (only other ``<!-- … -->`` comments may follow it)."""
    found = None
    for m in OBSERVED_MARKER.finditer(line):
        if _TRAILING_COMMENTS.fullmatch(line, m.end()):
            found = m
    return found


def marker_line_above(lines: Sequence[str], bullet_index: int) -> int | None:
    """Index of the observed/status marker line that belongs to the bullet at ``bullet_index``: the
    line directly above it, or above it within a block of marker lines directly above it (a
    Dreaming lineage or promotion marker may sit between). None when there is none."""
    i = bullet_index - 1
    while i >= 0:
        line = lines[i].strip()
        if OBSERVED_MARKER.fullmatch(line):
            return i
        if not any(p.match(line) for p in _MARKER_ONLY_LINE):
            return None
        i -= 1
    return None


def entry_status(lines: Sequence[str], bullet_index: int) -> StatusMarker | None:
    """The status marker of the bullet at ``lines[bullet_index]`` (0-based): the marker line above it
    (:func:`marker_line_above`), else a marker the bullet line ends with; None when it has none."""
    above = marker_line_above(lines, bullet_index)
    if above is not None:
        return parse_status_marker(lines[above])
    if not 0 <= bullet_index < len(lines):
        return None
    m = inline_status_marker(lines[bullet_index])
    return _marker_of(m) if m else None


def strip_all_markers(text: str) -> str:
    """Entry text for display: carriers, observed/supersedes markers removed."""
    out = strip_annotation_carriers(text)
    out = OBSERVED_MARKER.sub("", out)
    out = SUPERSEDES_MARKER.sub("", out)
    return re.sub(r"[ \t]+(?=\n|$)", "", out)
