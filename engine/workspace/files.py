"""Discover and classify memory files exactly as the spec lists them.

Indexed: root ``MEMORY.md``, ``memory.md``, ``USER.md`` and ``memory/**/*.md`` (plus configured
extra paths). ``DREAMS.md`` is discovered for display but, as in OpenClaw, not indexed.
Symlinks — files or directories — are skipped, and nothing outside the workspace is read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from clawmem.engine.workspace.names import CURATED_ROOT_FILES, DREAMS_FILES, MEMORY_FILES, USER_FILE

DATED_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-(.+))?\.md$")
EXACT_DIARY = re.compile(r"^memory/(\d{4}-\d{2}-\d{2})\.md$")
SHORT_TERM = re.compile(r"^memory/(?:.*/)?(\d{4}-\d{2}-\d{2})(?:-[^/]*)?\.md$")

# What a file is, for the tree, decay, dreaming and trust.
KIND_USER = "user"  # USER.md
KIND_CURATED = "curated"  # MEMORY.md / memory.md
KIND_DREAMS = "dreams"  # DREAMS.md (review surface, not indexed)
KIND_DIARY = "diary"  # memory/YYYY-MM-DD.md
KIND_SLUG = "slug"  # memory/YYYY-MM-DD-<slug>.md (session notes)
KIND_DREAM_REPORT = "dream-report"  # memory/dreaming/**
KIND_DREAM_STATE = "dream-state"  # memory/.dreams/**
KIND_NOTE = "note"  # any other memory/**.md
KIND_EXTRA = "extra"  # a configured extra path


@dataclass(frozen=True)
class MemoryFile:
    """One discovered file. ``rel`` is the workspace-relative POSIX path used everywhere."""

    rel: str
    path: Path
    kind: str
    size: int
    mtime: float
    date: str | None  # YYYY-MM-DD from the file name, when it has one
    source: str = "memory"

    @property
    def indexed(self) -> bool:
        return self.kind != KIND_DREAMS

    @property
    def curated_root(self) -> bool:
        """Root curated files: per-entry chunking, trigger and importance annotations."""
        return self.kind in (KIND_USER, KIND_CURATED)

    @property
    def decays(self) -> bool:
        """Only an exact ``memory/YYYY-MM-DD.md`` path decays (docs/memory-core.md §4 step 6)."""
        return self.kind == KIND_DIARY

    @property
    def short_term(self) -> bool:
        """Short-term for Dreaming: dated notes anywhere under memory/, except dreaming reports."""
        return is_short_term_path(self.rel)

    @property
    def path_origin(self) -> str:
        """Index-time origin class from the path alone (docs/memory-core.md §8)."""
        return origin_for_rel(self.rel, self.kind)


def classify(rel: str) -> tuple[str, str | None]:
    """Return ``(kind, date)`` for a workspace-relative path of an indexable file."""
    if rel == USER_FILE:
        return KIND_USER, None
    if rel in MEMORY_FILES:
        return KIND_CURATED, None
    if rel in DREAMS_FILES:
        return KIND_DREAMS, None
    if rel.startswith("memory/dreaming/"):
        return KIND_DREAM_REPORT, _name_date(rel)
    if rel.startswith("memory/.dreams/"):
        return KIND_DREAM_STATE, _name_date(rel)
    exact = EXACT_DIARY.match(rel)
    if exact:
        return KIND_DIARY, exact.group(1)
    if rel.startswith("memory/") and rel.count("/") == 1:
        m = DATED_NAME.match(rel.split("/", 1)[1])
        if m and m.group(2):
            return KIND_SLUG, m.group(1)
    return KIND_NOTE, _name_date(rel)


def _name_date(rel: str) -> str | None:
    m = DATED_NAME.match(rel.rsplit("/", 1)[-1])
    return m.group(1) if m else None


def is_short_term_path(rel: str) -> bool:
    if rel.startswith("memory/dreaming/"):
        return False
    if rel.startswith("memory/.dreams/session-corpus/"):
        return bool(re.search(r"/\d{4}-\d{2}-\d{2}\.(md|txt)$", rel))
    return bool(SHORT_TERM.match(rel))


def origin_for_rel(rel: str, kind: str | None = None) -> str:
    kind = kind or classify(rel)[0]
    if kind in (KIND_DREAMS, KIND_DREAM_REPORT, KIND_DREAM_STATE):
        return "system"
    if kind == KIND_EXTRA and (rel.startswith("/") or ":" in rel[:3]):
        return "untrusted"  # outside the workspace
    return "agent"


def _walk_markdown(root: Path) -> Iterator[Path]:
    """Every ``*.md`` file under ``root`` without following or yielding symlinks."""
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False) and entry.name.lower().endswith(".md"):
                yield Path(entry.path)


def discover(workspace: Path, extra_paths: Sequence[str] = (), *, include_dreams: bool = True) -> list[MemoryFile]:
    """All memory files of a workspace, sorted by relative path. Missing workspace → []."""
    root = workspace.resolve()
    if not root.is_dir():
        return []
    found: dict[str, MemoryFile] = {}

    def add(path: Path, rel: str, kind: str | None = None) -> None:
        try:
            st = path.lstat()
        except OSError:
            return
        k, date = classify(rel)
        found[rel] = MemoryFile(rel=rel, path=path, kind=kind or k, size=st.st_size, mtime=st.st_mtime, date=date)

    names = CURATED_ROOT_FILES + (DREAMS_FILES if include_dreams else ())
    try:
        present = {p.name for p in root.iterdir()}
    except OSError:
        present = set()
    for name in names:
        path = root / name
        # Exact-case match: on case-insensitive file systems MEMORY.md and memory.md are one file.
        if name in present and not path.is_symlink() and path.is_file():
            add(path, name)
    if all(name in found for name in DREAMS_FILES):
        del found[DREAMS_FILES[1]]
    memory_dir = root / "memory"
    if memory_dir.is_dir() and not memory_dir.is_symlink():
        for path in _walk_markdown(memory_dir):
            add(path, path.relative_to(root).as_posix())
    for extra in extra_paths:
        _add_extra(root, Path(extra).expanduser(), found)
    return [found[k] for k in sorted(found)]


def _add_extra(root: Path, extra: Path, found: dict[str, MemoryFile]) -> None:
    base = extra if extra.is_absolute() else root / extra
    if base.is_symlink() or not base.exists():
        return
    paths = [base] if base.is_file() else list(_walk_markdown(base))
    for path in paths:
        if not path.name.lower().endswith(".md"):
            continue
        resolved = path.resolve()
        rel = resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else str(resolved)
        if rel in found:
            continue
        try:
            st = path.lstat()
        except OSError:  # deleted between the walk and now: not a memory file any more
            continue
        found[rel] = MemoryFile(
            rel=rel,
            path=resolved,
            kind=KIND_EXTRA,
            size=st.st_size,
            mtime=st.st_mtime,
            date=_name_date(rel),
        )
