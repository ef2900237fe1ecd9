"""MEMORY.md reads and writes for Dreaming: hash-checked rewrite and byte-exact revert.

A proposal records the SHA-256 of the MEMORY.md bytes it was planned on. Applying re-reads the
file, refuses when the hash changed, and replaces it atomically through
:func:`engine.workspace.writes.replace_file` with that hash as the expectation, keeping the file's
BOM and line-end convention. The preimage is the exact decoded text of the old bytes, so a revert
restores MEMORY.md byte for byte.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from clawmem.engine.errors import ClawmemError, ConflictError
from clawmem.engine.workspace.names import MEMORY_FILE
from clawmem.engine.workspace.reading import decode_memory_bytes, sha256_bytes
from clawmem.engine.workspace.writes import MISSING, WriteResult, encode_text, replace_file


@dataclass(frozen=True)
class MemoryFileState:
    path: Path
    exists: bool
    raw_text: str  # the exact bytes decoded (BOM and CRLF kept): the preimage
    text: str  # LF-normalized, BOM removed: what plans and diffs use
    sha256: str  # of the bytes, or MISSING
    had_bom: bool
    newline: str


def memory_path(workspace: Path) -> Path:
    return workspace / MEMORY_FILE


def read_memory(workspace: Path) -> MemoryFileState:
    path = memory_path(workspace)
    if path.is_symlink():
        raise ClawmemError("MEMORY.md is a symbolic link; Dreaming does not write through links")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return MemoryFileState(path, False, "", "", MISSING, False, "\n")
    except OSError as exc:
        raise ClawmemError(f"cannot read MEMORY.md: {exc.strerror or exc}") from exc
    try:
        text, had_bom, newline = decode_memory_bytes(data)
    except ValueError as exc:
        raise ClawmemError(f"MEMORY.md is not UTF-8 text ({exc}); Dreaming will not rewrite it") from exc
    return MemoryFileState(path, True, data.decode("utf-8"), text, sha256_bytes(data), had_bom, newline)


def encode_for(state: MemoryFileState, text: str) -> bytes:
    return encode_text(text, bom=state.had_bom, newline=state.newline)


def write_rewrite(state: MemoryFileState, after_text: str, expected_sha256: str) -> WriteResult:
    """Replace MEMORY.md with ``after_text`` if it still has ``expected_sha256`` (ConflictError otherwise)."""
    return replace_file(state.path, encode_for(state, after_text), expected_sha256=expected_sha256)


def restore_preimage(path: Path, preimage_raw: str, preimage_sha256: str, expected_sha256: str) -> None:
    """Put the preimage bytes back, only if MEMORY.md still has the rewrite's result hash."""
    if preimage_sha256 == MISSING:
        # The rewrite created MEMORY.md: restoring means removing the file clawmem wrote, verified first.
        current = sha256_bytes(path.read_bytes()) if path.is_file() else None
        if current != expected_sha256:
            raise ConflictError("MEMORY.md changed on disk since the rewrite; nothing was restored")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    replace_file(path, preimage_raw.encode("utf-8"), expected_sha256=expected_sha256)


def current_sha256(path: Path) -> str:
    try:
        return sha256_bytes(path.read_bytes())
    except FileNotFoundError:
        return MISSING
