"""The workspace as a person browses it: files with entry counts, snapshots, entries, saves.

A snapshot carries the SHA-256 of the bytes it was read from; saving hands it back, and the
write refuses if the file changed on disk in between (another editor, the agent). The caller
then shows both versions and lets the person choose — nothing is ever silently overwritten.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from clawmem.engine.errors import ClawmemError, ConflictError
from clawmem.engine.paths import resolve_memory_path
from clawmem.engine.workspace.entries import Entry, parse_entries
from clawmem.engine.workspace.files import MemoryFile, discover
from clawmem.engine.workspace.names import CURATED_ROOT_FILES
from clawmem.engine.workspace.reading import FileText, read_memory_text, sha256_bytes
from clawmem.engine.workspace.writes import MISSING, encode_text, replace_file

MAX_EDIT_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class FileInfo:
    rel: str
    kind: str
    size: int
    mtime: float
    date: str | None
    entries: int  # -1 when the file could not be read
    active_entries: int
    superseded_entries: int
    origin: str
    indexed: bool
    problem: str | None  # why it cannot be read, when it cannot


@dataclass(frozen=True)
class FileSnapshot:
    rel: str
    text: str  # LF line ends, BOM removed
    sha256: str  # of the bytes on disk when read (MISSING when the file does not exist)
    had_bom: bool
    newline: str
    exists: bool


@dataclass(frozen=True)
class SaveResult:
    rel: str
    sha256: str
    bytes_written: int


# (rel, curated, SHA-256 of the bytes) -> parsed entries. The app re-reads the file list and the
# open file on every index change; parsing a 10,000-entry MEMORY.md takes about a second, and the
# bytes rarely changed. Entries are frozen, so sharing them is safe. Two threads asking for the
# same bytes at once parse them once: the second waits for the first (on 2 cores, two parses of
# the same file under the GIL took twice as long for both).
_PARSED: OrderedDict[tuple[str, bool, str], tuple[Entry, ...]] = OrderedDict()
_PARSED_SIZE = 64
_PARSED_LOCK = threading.Lock()
_PARSING: dict[tuple[str, bool, str], threading.Lock] = {}


def _entries(rel: str, text: str, curated: bool, sha256: str) -> list[Entry]:
    key = (rel, curated, sha256)
    with _PARSED_LOCK:
        hit = _PARSED.get(key)
        if hit is not None:
            _PARSED.move_to_end(key)
            return list(hit)
        flight = _PARSING.setdefault(key, threading.Lock())
    with flight:
        with _PARSED_LOCK:
            hit = _PARSED.get(key)
        if hit is None:
            hit = tuple(parse_entries(rel, text, curated_root=curated))
            with _PARSED_LOCK:
                _PARSED[key] = hit
                if len(_PARSED) > _PARSED_SIZE:
                    _PARSED.popitem(last=False)
    with _PARSED_LOCK:
        _PARSING.pop(key, None)
    return list(hit)


def file_infos(workspace: Path, extra_paths: tuple[str, ...], max_bytes: int) -> list[FileInfo]:
    out = []
    for f in discover(workspace, extra_paths):
        out.append(_info(f, max_bytes))
    return out


def _info(f: MemoryFile, max_bytes: int) -> FileInfo:
    read = read_memory_text(f.path, f.rel, max_bytes)
    if not isinstance(read, FileText):
        return FileInfo(f.rel, f.kind, f.size, f.mtime, f.date, -1, 0, 0, f.path_origin, f.indexed, read.reason)
    entries = _entries(f.rel, read.text, f.curated_root, read.raw_sha256)
    superseded = sum(1 for e in entries if e.superseded)
    return FileInfo(
        f.rel,
        f.kind,
        f.size,
        f.mtime,
        f.date,
        len(entries),
        len(entries) - superseded,
        superseded,
        f.path_origin,
        f.indexed,
        None,
    )


def snapshot(workspace: Path, rel: str) -> FileSnapshot:
    path = resolve_memory_path(workspace, rel)
    clean = path.relative_to(workspace.resolve()).as_posix()
    if not path.exists():
        return FileSnapshot(clean, "", MISSING, False, "\n", False)
    read = read_memory_text(path, clean, MAX_EDIT_BYTES)
    if not isinstance(read, FileText):
        raise ClawmemError(f"{clean} cannot be opened: {read.reason}")
    return FileSnapshot(clean, read.text, read.raw_sha256, read.had_bom, read.newline, True)


def entries_of(workspace: Path, rel: str) -> list[Entry]:
    snap = snapshot(workspace, rel)
    curated = snap.rel in CURATED_ROOT_FILES
    return _entries(snap.rel, snap.text, curated, snap.sha256)


def save(workspace: Path, base: FileSnapshot, text: str) -> SaveResult:
    """Write ``text`` over the version ``base`` was read from, keeping BOM and line ends."""
    path = resolve_memory_path(workspace, base.rel)
    data = encode_text(text, bom=base.had_bom, newline=base.newline)
    try:
        result = replace_file(path, data, expected_sha256=base.sha256)
    except ConflictError:
        raise
    return SaveResult(base.rel, result.sha256, result.bytes_written)


def disk_matches(workspace: Path, base: FileSnapshot) -> bool:
    """True when the file still has the bytes ``base`` was read from."""
    path = resolve_memory_path(workspace, base.rel)
    try:
        return sha256_bytes(path.read_bytes()) == base.sha256
    except FileNotFoundError:
        return base.sha256 == MISSING


def save_conflict_copy(home: Path, rel: str, text: str, label: str, stamp: str) -> Path:
    """Keep a version the user did not choose in a conflict, outside the workspace (not indexed)."""
    folder = home / "conflicts"
    folder.mkdir(parents=True, exist_ok=True)
    safe = rel.replace("/", "__")
    path = folder / f"{safe}.{stamp}.{label}.md"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"{safe}.{stamp}.{label}-{n}.md"
    replace_file(path, text.encode("utf-8"), expected_sha256=MISSING)
    return path
