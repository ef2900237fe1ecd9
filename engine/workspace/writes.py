"""Every write to a Markdown file: atomic (temp, fsync, rename) and hash-checked.

``replace_file`` refuses when the file on disk is not the version the caller read (its SHA-256
differs from ``expected_sha256``), so an edit made meanwhile — by the user in another editor or
by the agent — is never silently overwritten. ``append_text`` only ever adds bytes at the end.
After each write the file is read back and its hash verified.

The file's encoding conventions are kept: a leading BOM and CRLF line ends survive a rewrite.

Every write holds :func:`directory_lock` on the file's folder from the hash check to the rename,
so two clawmem writers (the app's editor, an agent's flush through the CLI or an MCP server,
Dreaming, forget) never both pass the check on the same old bytes. A workspace whose index is
shared through PostgreSQL (store.url) may be written from several machines over a network volume,
where no lock file can be trusted: its writes also hold the file's advisory lock on that server
(:func:`share_writes`, engine/store/postgres/locks.py), taken before the folder's.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from clawmem.engine.errors import ClawmemError, ConflictError
from clawmem.engine.workspace.reading import BOM, sha256_bytes

MISSING = "missing"  # expected_sha256 value meaning "the file must not exist yet"


@dataclass(frozen=True)
class WriteResult:
    path: Path
    sha256: str  # hash of the bytes now on disk
    previous_sha256: str | None  # None when the file did not exist
    bytes_written: int


_held = threading.local()  # the folders this thread holds the lock of (the lock is re-entrant)


@contextlib.contextmanager
def directory_lock(directory: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``directory`` itself (no lock file in the workspace).

    Shared by every clawmem process, home and agent on the machine, and — being an ``flock`` on
    its own open file description — it also excludes another thread of this process. Re-entrant
    within a thread: a flush holds it around read → write → provenance commit and the write
    inside takes it again.
    """
    directory.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(directory)
    held: set[str] = _held.__dict__.setdefault("dirs", set())
    if key in held:
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


FileLock = Callable[[str], AbstractContextManager[None]]  # workspace-relative path -> its lock
# Workspace root -> the lock of its files on the shared store, while an engine with store.url has
# it open (engine/runtime.py): a lock is the workspace's, like the folder lock, not one engine's.
_shared_locks: dict[str, FileLock] = {}
_shared_lock_guard = threading.Lock()


def share_writes(root: Path, lock: FileLock) -> Callable[[], None]:
    """Make every write under ``root`` also hold ``lock(relative path)``; returns the undo."""
    key = os.path.realpath(root)
    with _shared_lock_guard:
        _shared_locks[key] = lock

    def undo() -> None:
        with _shared_lock_guard:
            if _shared_locks.get(key) is lock:
                del _shared_locks[key]

    return undo


@contextlib.contextmanager
def _shared_lock(path: Path) -> Iterator[None]:
    """The shared store's lock of ``path`` when its workspace has one (re-entrant within a
    thread, as :func:`directory_lock`: an append rewrites through :func:`replace_file`)."""
    real = os.path.realpath(path)
    held: set[str] = _held.__dict__.setdefault("shared", set())
    lock: FileLock | None = None
    if _shared_locks and real not in held:
        with _shared_lock_guard:
            root = next((r for r in _shared_locks if real.startswith(r + os.sep)), None)
            lock = _shared_locks[root] if root is not None else None
    if lock is None:
        yield
        return
    assert root is not None
    with lock(Path(os.path.relpath(real, root)).as_posix()):
        held.add(real)
        try:
            yield
        finally:
            held.discard(real)


def current_sha256(path: Path) -> str | None:
    try:
        return sha256_bytes(path.read_bytes())
    except FileNotFoundError:
        return None


def encode_text(text: str, *, bom: bool = False, newline: str = "\n") -> bytes:
    body = text.replace("\r\n", "\n")
    if newline == "\r\n":
        body = body.replace("\n", "\r\n")
    return ((BOM if bom else "") + body).encode("utf-8")


TEMP_SUFFIX = ".clawmem-tmp"


def remove_stale_temps(directory: Path) -> int:
    """Delete the temp files a killed writer left in ``directory``; returns how many.

    Only call it holding the folder's :func:`directory_lock`: every clawmem writer holds it while
    its temp file exists, so any temp found then belongs to a process that died mid-write (a
    ``kill -9`` or a power cut between the temp's creation and its rename).
    """
    removed = 0
    for stale in directory.glob(f".*{TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):  # gone already, or a read-only folder: the write says so
            stale.unlink()
            removed += 1
    return removed


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = 0o644
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def replace_file(path: Path, data: bytes, *, expected_sha256: str | None) -> WriteResult:
    """Atomically replace ``path`` with ``data`` if it still has ``expected_sha256``.

    ``expected_sha256`` is the hash of the bytes the caller read, ``MISSING`` when the caller
    expects to create the file, or ``None`` to skip the check (only for files clawmem owns).
    """
    if path.is_symlink():
        raise ConflictError(f"{path.name} is a symbolic link; clawmem does not write through links")
    with _shared_lock(path), directory_lock(path.parent):
        before = current_sha256(path)
        if expected_sha256 == MISSING:
            if before is not None:
                raise ConflictError(f"{path.name} was created on disk meanwhile; nothing was written")
        elif expected_sha256 is not None and before != expected_sha256:
            what = "deleted" if before is None else "changed"
            raise ConflictError(f"{path.name} {what} on disk since it was read; nothing was written")
        remove_stale_temps(path.parent)
        try:
            _atomic_write_bytes(path, data)
        except OSError as exc:  # a full disk, a read-only folder: the old file is untouched
            raise ClawmemError(f"cannot write {path.name}: {exc.strerror or exc}; it was not changed") from exc
        after = current_sha256(path)
    if after != sha256_bytes(data):
        raise ConflictError(f"{path.name} changed during the write; check the file")
    return WriteResult(path=path, sha256=after, previous_sha256=before, bytes_written=len(data))


def append_text(path: Path, text: str, *, expected_sha256: str | None = None) -> WriteResult:
    """Append ``text`` (UTF-8) at the end, keeping every existing byte.

    The new content is the old bytes plus the addition, written atomically; if the old bytes
    changed since ``expected_sha256`` was read, nothing is written. A missing newline at the
    end of the old content is added first so the appended lines stand on their own.
    """
    with _shared_lock(path), directory_lock(path.parent):
        try:
            old: bytes | None = path.read_bytes()
        except FileNotFoundError:
            old = None
        current = sha256_bytes(old) if old is not None else None
        if expected_sha256 is not None and expected_sha256 != MISSING and current != expected_sha256:
            raise ConflictError(f"{path.name} changed on disk since it was read; nothing was appended")
        old = old or b""
        newline = b"\r\n" if b"\r\n" in old else b"\n"
        addition = text.replace("\r\n", "\n").encode("utf-8")
        if newline == b"\r\n":
            addition = addition.replace(b"\n", b"\r\n")
        sep = b"" if not old or old.endswith(b"\n") else newline
        data = old + sep + addition
        # the bytes just read, or none at all: a file created meanwhile is never overwritten
        result = replace_file(path, data, expected_sha256=current or MISSING)
    if not data.startswith(old):  # defensive: an append must keep every old byte
        raise ConflictError(f"{path.name}: append would not keep the existing content")
    return result
