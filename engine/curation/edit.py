"""The supersede edits as pure functions over a file's lines, keeping every other byte.

A memory file is split into lines *with their own line ends* (``\\n``, ``\\r\\n`` or a lone ``\\r``)
and a leading BOM, so inserting a line and removing it again gives back the same bytes, whatever
mix of line ends the file has. Line numbers are the ones every other part of clawmem uses (the
text with CRLF and CR turned into LF, split on LF).

When a line is inserted or removed, the ``by: PATH#LN`` pointers *of the same file* that point
below it are moved with it, so a pointer written by an earlier supersede keeps naming its entry
(pointers from other files to this one are not rewritten: only this file is written).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clawmem.engine.workspace.annotations import OBSERVED_MARKER
from clawmem.engine.workspace.reading import BOM, decode_memory_bytes, sha256_bytes

_BREAK = re.compile(r"(\r\n|\r|\n)")
_DIGITS = re.compile(r"#L?(\d+)\s*$")


@dataclass
class RawFile:
    """One read of a file: its lines and their ends, exactly as on disk."""

    rel: str
    lines: list[str]  # line contents, without their ends
    ends: list[str]  # each line's own end; "" for the last line
    bom: bool
    sha256: str  # of the bytes read
    _newline: str = field(default="\n", repr=False)

    @classmethod
    def from_bytes(cls, rel: str, data: bytes) -> RawFile:
        """Split ``data``; ``ValueError`` when it is not UTF-8 text (binary, another encoding)."""
        _, had_bom, newline = decode_memory_bytes(data)
        text = data.decode("utf-8")
        if had_bom:
            text = text[len(BOM) :]
        parts = _BREAK.split(text)
        lines = parts[0::2]
        ends = [*parts[1::2], ""]
        return cls(rel, lines, ends, had_bom, sha256_bytes(data), newline)

    @property
    def text(self) -> str:
        """LF text, as the entry parser reads it."""
        return "\n".join(self.lines)

    def to_bytes(self) -> bytes:
        body = "".join(c + e for c, e in zip(self.lines, self.ends, strict=True))
        return ((BOM if self.bom else "") + body).encode("utf-8")

    def copy(self) -> RawFile:
        return RawFile(self.rel, list(self.lines), list(self.ends), self.bom, self.sha256, self._newline)

    # ------------------------------------------------------------------ edits

    def insert(self, index: int, content: str) -> None:
        """Insert a line before ``lines[index]``, ended as the line it is put above ends (the
        line before it when that one is the file's unterminated last line)."""
        end = self.ends[index] or (self.ends[index - 1] if index > 0 else "") or self._newline
        shift_pointers(self, first_line=index + 1, delta=1)
        self.lines.insert(index, content)
        self.ends.insert(index, end)

    def remove(self, index: int) -> None:
        """Remove ``lines[index]`` with its end (the inverse of :meth:`insert`)."""
        shift_pointers(self, first_line=index + 2, delta=-1)
        del self.lines[index]
        del self.ends[index]


def shift_pointers(raw: RawFile, *, first_line: int, delta: int) -> None:
    """Move every ``by: <this file>#LN`` with ``LN >= first_line`` by ``delta`` lines."""
    for i, line in enumerate(raw.lines):
        if "by:" not in line.lower():
            continue
        raw.lines[i] = _shift_line(line, raw.rel, first_line, delta)


def _shift_line(line: str, rel: str, first_line: int, delta: int) -> str:
    out: list[str] = []
    cursor = 0
    for m in OBSERVED_MARKER.finditer(line):
        pointer = m.group(3)
        if not pointer:
            continue
        d = _DIGITS.search(pointer)
        if d is None or pointer[: d.start()].strip() != rel:
            continue
        number = int(d.group(1))
        if number < first_line:
            continue
        start = m.start(3) + d.start(1)
        out.append(line[cursor:start])
        out.append(str(max(1, number + delta)))
        cursor = m.start(3) + d.end(1)
    if not out:
        return line
    out.append(line[cursor:])
    return "".join(out)


def pointer_free(line: str) -> str:
    """``line`` with the line numbers of its ``by`` pointers left out: two versions of one marker
    whose pointer only moved with its entry compare equal."""
    out: list[str] = []
    cursor = 0
    for m in OBSERVED_MARKER.finditer(line):
        pointer = m.group(3)
        d = _DIGITS.search(pointer) if pointer else None
        if d is None:
            continue
        out.append(line[cursor : m.start(3) + d.start(1)])
        cursor = m.start(3) + d.end(1)
    out.append(line[cursor:])
    return "".join(out)


def bullet_key(line: str) -> str:
    """A bullet line without its observed/status marker: the same before and after a supersede."""
    return re.sub(r"[ \t]+$", "", OBSERVED_MARKER.sub("", line)).strip()
