"""``PATH:LINE``: how a person or an agent names one entry of a memory file.

Accepted forms: ``MEMORY.md:7``, and the citation forms search results carry — ``MEMORY.md#L7``,
``MEMORY.md#L7-L9``, ``MEMORY.md:7-9`` (the first line counts) — so a citation can be passed as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clawmem.engine.errors import ClawmemError

_REF = re.compile(r"^(?P<path>.+?)(?::|#L?)(?P<line>\d+)(?:-L?\d+)?$")


@dataclass(frozen=True)
class EntryRef:
    path: str  # as given (resolved against the workspace by the service)
    line: int  # 1-based

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def parse_entry_ref(text: str, what: str = "the entry") -> EntryRef:
    """``PATH:LINE`` → :class:`EntryRef`; anything else is a one-line :class:`ClawmemError` that
    starts with ``what`` (``the older entry``, a flag such as ``--by``, a tool argument)."""
    raw = str(text).strip()
    if not raw:
        raise ClawmemError(f"{what} is empty: give PATH:LINE, e.g. MEMORY.md:7")
    m = _REF.match(raw)
    if m is None:
        shown = raw if len(raw) <= 60 else raw[:57] + "..."
        raise ClawmemError(f"{what} {shown!r} is not PATH:LINE (e.g. MEMORY.md:7 or memory/2026-11-02.md:4)")
    line = int(m.group("line"))
    if line < 1:
        raise ClawmemError(f"{what} {raw!r} names line {line}: lines start at 1")
    return EntryRef(m.group("path").strip(), line)


def as_ref(value: EntryRef | str, what: str = "the entry") -> EntryRef:
    return value if isinstance(value, EntryRef) else parse_entry_ref(value, what)
