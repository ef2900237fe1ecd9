"""``memory_get`` (docs/memory-core.md §4): read a slice of a memory file, safely.

The path must pass :func:`engine.paths.resolve_memory_path`. Defaults: 120 lines and at most
12,000 characters; when the slice is cut short, ``next_from`` says where to continue.
A missing file returns empty text (``missing=True``), not an error, like OpenClaw.

Where clawmem differs from OpenClaw (whose reader cuts a single over-long line at 12,000
characters and offers no way to read the rest): **a line is never cut**. A line longer than
the budget is returned whole and alone, with ``char_budget_exceeded``, and ``next_from`` points
at the line after it, so every character of every line is reachable through ``memory_get``.
A ``from`` beyond the last line is not an error: the result is empty with ``past_end`` and the
file's ``total_lines``, so a caller can tell "nothing there" from "an empty file".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clawmem.engine.errors import ClawmemError
from clawmem.engine.paths import resolve_memory_path
from clawmem.engine.search.types import MemoryGetResult
from clawmem.engine.workspace.reading import FileText, read_memory_text

DEFAULT_LINES = 120
MAX_CHARS = 12_000
MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class MemoryRead(MemoryGetResult):
    """A ``memory_get`` result with what the spec's fields leave implicit."""

    total_lines: int = 0  # lines in the file
    truncated: bool = False  # more lines follow (``next_from`` says where)
    char_budget_exceeded: bool = False  # one line longer than MAX_CHARS, returned whole
    past_end: bool = False  # ``from_line`` is beyond the last line


def read_lines(workspace: Path, path: str, *, from_line: int = 1, lines: int = DEFAULT_LINES) -> MemoryRead:
    """Lines ``from_line`` … of a memory file, within the character budget (never cutting a line)."""
    if from_line < 1:
        raise ClawmemError("--from must be 1 or more")
    if lines < 1:
        raise ClawmemError("--lines must be 1 or more")
    resolved = resolve_memory_path(workspace, path)
    rel = resolved.relative_to(workspace.resolve()).as_posix()
    if not resolved.exists():
        return MemoryRead(path=rel, from_line=from_line, lines=0, text="", next_from=None, missing=True)
    if not resolved.is_file():
        raise ClawmemError(f"{path}: not a file")
    read = read_memory_text(resolved, rel, MAX_FILE_BYTES)
    if not isinstance(read, FileText):
        raise ClawmemError(f"{path}: cannot be read ({read.reason})")
    all_lines = read.text.split("\n")
    if read.text.endswith("\n") or read.text == "":
        all_lines = all_lines[:-1]
    total = len(all_lines)
    start = from_line - 1
    chosen = all_lines[start : start + lines]
    out: list[str] = []
    used = 0
    for line in chosen:
        cost = len(line) + (1 if out else 0)
        if used + cost > MAX_CHARS and out:
            break
        out.append(line)  # whole: a first line over the budget comes alone, uncut
        used += cost
        if used > MAX_CHARS:
            break
    end = start + len(out)
    next_from = end + 1 if end < total else None
    return MemoryRead(
        path=rel,
        from_line=from_line,
        lines=len(out),
        text="\n".join(out),
        next_from=next_from,
        total_lines=total,
        truncated=next_from is not None,
        char_budget_exceeded=used > MAX_CHARS,
        past_end=from_line > total and not (total == 0 and from_line == 1),
    )
