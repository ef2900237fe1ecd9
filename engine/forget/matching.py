"""How forget recognises forgotten text: a selected snippet inside a (normalised) line, the
excerpt it shows, and a file as forget loads it (its lines and the ones it removes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clawmem.engine.sessions import trust
from clawmem.engine.workspace.reading import sha256_bytes


@dataclass
class LoadedFile:
    """A file forget read: its bytes, its lines numbered like the index, the lines to remove."""

    rel: str
    path: Path
    data: bytes
    lines: list[str]  # decoded line texts (no newline), numbered like the index
    corpus: bool
    remove: dict[int, str] = field(default_factory=dict)  # line -> reason

    @property
    def sha(self) -> str:
        return sha256_bytes(self.data)


def matches(line: str, probes: Sequence[str]) -> str | None:
    norm = trust.normalize(line)
    for p in probes:
        if p in norm:
            return p
    return None


def excerpt(text: str, probe: str | None = None, width: int = 160) -> str:
    flat = " ".join(text.split())
    if probe and probe in flat and len(flat) > width:
        at = max(0, flat.index(probe) - 20)
        return ("…" if at else "") + flat[at : at + width] + ("…" if at + width < len(flat) else "")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def holds(text: str, probes: Sequence[str], entry_keys: Sequence[str]) -> bool:
    if any(k in text for k in entry_keys):
        return True
    return any(matches(line, probes) is not None for line in text.split("\n"))
