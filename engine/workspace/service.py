"""``FileService``: the memory files as a person reads and edits them — the file list,
parsed entries with their origin class, ``memory_get``, and the atomic, hash-checked save.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

from clawmem.engine import memory_get as memget
from clawmem.engine.runtime import Runtime
from clawmem.engine.search.types import MemoryGetResult
from clawmem.engine.store import search_queries
from clawmem.engine.workspace import catalog
from clawmem.engine.workspace.catalog import FileInfo, FileSnapshot, SaveResult
from clawmem.engine.workspace.entries import Entry


@dataclass(frozen=True)
class EntryView:
    entry: Entry
    origin_class: str


class FileService:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def get(self, path: str, *, from_line: int = 1, lines: int = memget.DEFAULT_LINES) -> MemoryGetResult:
        """``memory_get``: read part of a memory file under the one path rule."""
        return memget.read_lines(self.runtime.workspace, path, from_line=from_line, lines=lines)

    def memory_files(self) -> list[FileInfo]:
        """Every memory file with its kind and entry counts (DREAMS.md included)."""
        return catalog.file_infos(
            self.runtime.workspace, self.runtime.settings.index.extra_paths, self.runtime.settings.index.max_file_bytes
        )

    def snapshot(self, rel: str) -> FileSnapshot:
        """A file's text plus the hash of the bytes it came from (for a hash-checked save)."""
        return catalog.snapshot(self.runtime.workspace, rel)

    def entries(self, rel: str) -> list[EntryView]:
        """Parsed entries of a file, each with the origin class the index recorded for it."""
        entries = catalog.entries_of(self.runtime.workspace, rel)
        origins = sorted(search_queries.origins_by_line(self.runtime.store.conn(), rel))
        starts = [a for (a, _), _ in origins]
        out = []
        for e in entries:
            # The chunk that starts nearest before the entry's line and covers it (in curated files,
            # the entry's own chunk), found by bisection: a scan made a 10,000-entry MEMORY.md
            # take 10 s to open.
            origin = None
            i = bisect.bisect_right(starts, e.start_line) - 1
            for j in range(i, max(-1, i - 64), -1):
                (a, b), o = origins[j]
                if a <= e.start_line <= b:
                    origin = o
                    break
            out.append(EntryView(e, origin or "unindexed"))
        return out

    def save_file(self, base: FileSnapshot, text: str) -> SaveResult:
        """Atomic, hash-checked save; raises ConflictError when the file changed on disk."""
        return catalog.save(self.runtime.workspace, base, text)

    def disk_matches(self, base: FileSnapshot) -> bool:
        return catalog.disk_matches(self.runtime.workspace, base)

    def save_conflict_copy(self, rel: str, text: str, label: str) -> Path:
        """Keep the version not chosen in an edit conflict under ``<home>/conflicts/``."""
        stamp = self.runtime.clock.now().strftime("%Y%m%dT%H%M%SZ")
        return catalog.save_conflict_copy(self.runtime.settings.home, rel, text, label, stamp)
