"""Workspace-relative paths, and the one rule that decides whether a path may be read.

Every read of a user-named file (``memory_get``, the editor, the CLI's ``get``) goes through
:func:`resolve_memory_path`, so the rule lives in one place: inside the workspace, a memory
path, ending in ``.md``, no ``..``, not absolute, and no symlink that escapes.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path, PurePosixPath

from clawmem.engine.errors import PathRefused
from clawmem.engine.text_clip import clip_flat
from clawmem.engine.workspace.names import CURATED_ROOT_FILES, DREAMS_FILES


def to_rel(workspace: Path, path: Path) -> str:
    """The POSIX path of ``path`` relative to the workspace (no normalisation of case)."""
    return path.relative_to(workspace).as_posix()


def normalize_for_match(path: str) -> str:
    """Normalise a path for comparison: ``\\`` → ``/``, ``./`` stripped, NFC, lowercased."""
    text = unicodedata.normalize("NFC", path.strip().replace("\\", "/"))
    while text.startswith("./"):
        text = text[2:]
    return text.lower()


def is_memory_rel_path(rel: str) -> bool:
    """True for paths the memory tools may read: root curated files and ``memory/…``."""
    if rel in CURATED_ROOT_FILES or rel in DREAMS_FILES:
        return True
    return rel.startswith("memory/")


def resolve_memory_path(workspace: Path, user_path: str, *, allow_dreams: bool = True) -> Path:
    """Resolve a user-supplied workspace path for reading, or raise :class:`PathRefused`.

    The returned path may not exist yet (callers decide what a missing file means).
    """
    raw = user_path.strip()
    if not raw:
        raise PathRefused("empty path")
    if "\x00" in raw:
        raise PathRefused("path contains a NUL byte")
    text = raw.replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    pure = PurePosixPath(text)
    if pure.is_absolute() or (len(text) > 1 and text[1] == ":"):
        raise PathRefused(f"{user_path}: absolute paths are refused; give a path inside the workspace")
    if any(part == ".." for part in pure.parts):
        raise PathRefused(f"{user_path}: '..' is refused; give a path inside the workspace")
    rel = pure.as_posix()
    if not rel.lower().endswith(".md"):
        raise PathRefused(f"{user_path}: only Markdown (.md) memory files can be read")
    if not is_memory_rel_path(rel) or (not allow_dreams and rel in DREAMS_FILES):
        raise PathRefused(f"{user_path}: not a memory path (MEMORY.md, memory.md, USER.md, DREAMS.md or memory/…)")
    root = workspace.resolve()
    try:
        resolved = _inside(root, rel, user_path)
        resolved.exists()  # the file system's own refusals (a name too long) surface here
    except (OSError, ValueError) as exc:
        # A name the file system refuses (too long) or cannot encode (a lone surrogate): no file.
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a valid file name"
        raise PathRefused(f"{clip_flat(user_path, 120)}: {why}") from None
    return resolved


def _inside(root: Path, rel: str, user_path: str) -> Path:
    """``root / rel`` resolved, refusing a symlink on the way and anything outside ``root``."""
    # Refuse symlinks anywhere below the workspace root, even when they point inside:
    # the index skips them, so reading through one would show text search never sees.
    probe = root
    for part in PurePosixPath(rel).parts:
        probe = probe / part
        if probe.is_symlink():
            raise PathRefused(f"{user_path}: symbolic links are refused")
    resolved = (root / rel).resolve()
    if not resolved.is_relative_to(root):
        raise PathRefused(f"{user_path}: resolves outside the workspace")
    return resolved
