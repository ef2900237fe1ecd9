"""SHA-256 of model files, with a small "verified" sidecar to skip re-hashing.

Hashing a 74 MB GGUF costs a few hundred milliseconds; the app does it once after preparing a
model and records ``{size, mtime_ns, sha256}`` in ``<file>.verified``. Later runs trust that
record while the file's size and mtime are unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path

__all__ = ["file_sha256", "read_sidecar_sha256", "sidecar_path", "write_sidecar"]

_CHUNK = 1 << 20


def sidecar_path(path: Path) -> Path:
    """Where the verification record of ``path`` lives."""
    return path.with_name(path.name + ".verified")


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's contents (always reads the whole file)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def read_sidecar_sha256(path: Path) -> str | None:
    """The recorded SHA-256 of ``path`` if its sidecar matches the file's size and mtime."""
    try:
        stat = path.stat()
        record = json.loads(sidecar_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    sha = record.get("sha256")
    if (
        record.get("size") == stat.st_size
        and record.get("mtime_ns") == stat.st_mtime_ns
        and isinstance(sha, str)
        and len(sha) == 64
    ):
        return sha
    return None


def write_sidecar(path: Path, sha256: str) -> None:
    """Record that ``path`` (as it is now) hashes to ``sha256``; best effort, atomic."""
    try:
        stat = path.stat()
        record = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}
        target = sidecar_path(path)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(record, handle, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(name, 0o644)
            os.replace(name, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)
    except OSError:
        pass  # the sidecar only saves time; a read-only directory is fine
