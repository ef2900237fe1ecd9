"""``memory_get`` (spec §4): read a slice of a memory file, safely.

The path must pass :func:`engine.paths.resolve_memory_path`. Defaults: 120 lines and at most
12,000 characters; when the slice is cut short, ``next_from`` says where to continue.
A missing file returns empty text (``missing=True``), not an error, like OpenClaw.
"""

from __future__ import annotations

from pathlib import Path

from engine.errors import ClawmemError
from engine.paths import resolve_memory_path
from engine.search.types import MemoryGetResult
from engine.workspace.reading import FileText, read_memory_text

DEFAULT_LINES = 120
MAX_CHARS = 12_000
MAX_FILE_BYTES = 64 * 1024 * 1024


def read_lines(workspace: Path, path: str, *, from_line: int = 1, lines: int = DEFAULT_LINES) -> MemoryGetResult:
    if from_line < 1:
        raise ClawmemError("--from must be 1 or more")
    if lines < 1:
        raise ClawmemError("--lines must be 1 or more")
    resolved = resolve_memory_path(workspace, path)
    rel = resolved.relative_to(workspace.resolve()).as_posix()
    if not resolved.exists():
        return MemoryGetResult(path=rel, from_line=from_line, lines=0, text="", next_from=None, missing=True)
    if not resolved.is_file():
        raise ClawmemError(f"{path}: not a file")
    read = read_memory_text(resolved, rel, MAX_FILE_BYTES)
    if not isinstance(read, FileText):
        raise ClawmemError(f"{path}: cannot be read ({read.reason})")
    all_lines = read.text.split("\n")
    if read.text.endswith("\n"):
        all_lines = all_lines[:-1]
    start = from_line - 1
    chosen = all_lines[start : start + lines]
    out: list[str] = []
    used = 0
    for line in chosen:
        cost = len(line) + (1 if out else 0)
        if used + cost > MAX_CHARS and out:
            break
        out.append(line[:MAX_CHARS] if not out else line)
        used += cost
    end = start + len(out)
    next_from = end + 1 if end < len(all_lines) else None
    return MemoryGetResult(path=rel, from_line=from_line, lines=len(out), text="\n".join(out), next_from=next_from)
