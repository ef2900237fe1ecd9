"""Read a memory file's text safely: size cap, binary and encoding checks, one snapshot.

A file that cannot be read as text is *skipped with a reason* (reported by ``status``);
it never aborts a sync. The returned hash is of the raw bytes, so a later write can
check that nothing changed on disk in between.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

BOM = "\ufeff"


@dataclass(frozen=True)
class FileText:
    text: str  # decoded, BOM removed, CRLF/CR normalised to LF
    raw_sha256: str  # SHA-256 of the bytes on disk
    size: int
    mtime: float
    had_bom: bool
    newline: str  # "\n" or "\r\n": what the file used, so writes can keep it


@dataclass(frozen=True)
class Skipped:
    rel: str
    reason: str


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def decode_memory_bytes(data: bytes) -> tuple[str, bool, str]:
    """Decode UTF-8 text; raise ValueError for binary or non-UTF-8 content."""
    if b"\x00" in data[:8192] or b"\x00" in data:
        raise ValueError("binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte {exc.start})") from exc
    had_bom = text.startswith(BOM)
    if had_bom:
        text = text[1:]
    newline = "\r\n" if "\r\n" in text else "\n"
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, had_bom, newline


def read_memory_text(path: Path, rel: str, max_bytes: int) -> FileText | Skipped:
    """One consistent read of ``path``; a :class:`Skipped` explains why it was not read."""
    try:
        st = path.stat()
        if st.st_size > max_bytes:
            return Skipped(rel, f"larger than {max_bytes:,} bytes ({st.st_size:,})")
        data = path.read_bytes()
    except FileNotFoundError:
        return Skipped(rel, "disappeared while reading")
    except OSError as exc:
        return Skipped(rel, f"unreadable: {exc.strerror or exc}")
    if len(data) > max_bytes:
        return Skipped(rel, f"larger than {max_bytes:,} bytes ({len(data):,})")
    try:
        text, had_bom, newline = decode_memory_bytes(data)
    except ValueError as exc:
        return Skipped(rel, str(exc))
    return FileText(
        text=text,
        raw_sha256=sha256_bytes(data),
        size=len(data),
        mtime=st.st_mtime,
        had_bom=had_bom,
        newline=newline,
    )
