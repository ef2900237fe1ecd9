"""Every write to a Markdown file: atomic (temp, fsync, rename) and hash-checked.

``replace_file`` refuses when the file on disk is not the version the caller read (its SHA-256
differs from ``expected_sha256``), so an edit made meanwhile — by the user in another editor or
by the agent — is never silently overwritten. ``append_text`` only ever adds bytes at the end.
After each write the file is read back and its hash verified.

The file's encoding conventions are kept: a leading BOM and CRLF line ends survive a rewrite.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from clawmem.engine.errors import ConflictError
from clawmem.engine.workspace.reading import BOM, sha256_bytes

MISSING = "missing"  # expected_sha256 value meaning "the file must not exist yet"


@dataclass(frozen=True)
class WriteResult:
    path: Path
    sha256: str  # hash of the bytes now on disk
    previous_sha256: str | None  # None when the file did not exist
    bytes_written: int


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


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = 0o644
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".clawmem-tmp", dir=path.parent)
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
    before = current_sha256(path)
    if expected_sha256 == MISSING:
        if before is not None:
            raise ConflictError(f"{path.name} was created on disk meanwhile; nothing was written")
    elif expected_sha256 is not None and before != expected_sha256:
        what = "deleted" if before is None else "changed"
        raise ConflictError(f"{path.name} {what} on disk since it was read; nothing was written")
    _atomic_write_bytes(path, data)
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
    try:
        old = path.read_bytes()
    except FileNotFoundError:
        old = b""
    if expected_sha256 is not None and expected_sha256 != MISSING and sha256_bytes(old) != expected_sha256:
        raise ConflictError(f"{path.name} changed on disk since it was read; nothing was appended")
    newline = b"\r\n" if b"\r\n" in old else b"\n"
    addition = text.replace("\r\n", "\n").encode("utf-8")
    if newline == b"\r\n":
        addition = addition.replace(b"\n", b"\r\n")
    sep = b"" if not old or old.endswith(b"\n") else newline
    data = old + sep + addition
    result = replace_file(path, data, expected_sha256=sha256_bytes(old) if old else None)
    if not data.startswith(old):  # defensive: an append must keep every old byte
        raise ConflictError(f"{path.name}: append would not keep the existing content")
    return result
