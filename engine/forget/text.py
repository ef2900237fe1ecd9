"""How forget recognises forgotten text: the files and line patterns it knows, snippet matching
and the excerpts its residual check shows."""

from __future__ import annotations

import re
from collections.abc import Sequence

from clawmem.engine.sessions import trust
from clawmem.engine.text_clip import clip
from clawmem.engine.workspace.reading import decode_memory_bytes

CURATED = ("MEMORY.md", "memory.md")
NEVER_EDITED = ("USER.md",)
ROOT_FILES = ("MEMORY.md", "memory.md", "USER.md", "DREAMS.md", "dreams.md")
CORPUS_DIR = "memory/.dreams/session-corpus/"
PREFIX_PROBE_CHARS = 100  # long snippets also match by their first 100 characters (truncated copies)
USER_MD_NOTE = "USER.md is never edited by forget"
SESSION_ID = re.compile(r"^\s*(?:[-*+]\s+)?\**Session ID\**\s*:\s*\**\s*([^\s*]+?)\**\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s")
DREAMING_HEADING = re.compile(
    r"^(?:## Consolidated Memory \(|## Promoted From Short-Term Memory \(|### Project: |### Global\s*$)"
)
BOILERPLATE = re.compile(
    r"^(?:#\s*Session:|\**Session Key\**\s*:|\**Source\**\s*:|#+\s*Conversation Summary|#+\s*Consolidated Memory|"
    r"#+\s*Promoted From Short-Term Memory|#+\s*Long-Term Memory)",
    re.IGNORECASE,
)
COMMENT = re.compile(r"<!--[\s\S]*?-->")
_SOURCE_TAIL = re.compile(r"\s+Source:\s+\S+#L\d+-L\d+\s*$")
_SCORE_TAIL = re.compile(r"\s+\[score=[^\]]*\]\s*$")
_ROLE = re.compile(r"^(?:user|assistant|tool):\s*")


def split_lines(data: bytes) -> list[str] | None:
    """Line texts numbered like the index (None when the file has bare CR line ends)."""
    try:
        text, _, _ = decode_memory_bytes(data)
    except ValueError:
        return None
    raw = data.decode("utf-8")
    if "\r" in raw.replace("\r\n", ""):
        return None
    return text.split("\n")


def fact(text: str) -> str:
    """An entry or note line reduced to its fact: no comments, Source/score tails, bullets or role."""
    out = COMMENT.sub(" ", text)
    out = _SOURCE_TAIL.sub("", out)
    out = _SCORE_TAIL.sub("", out)
    out = trust.normalize(out)
    return _ROLE.sub("", out)


def matches(line: str, probes: Sequence[str]) -> str | None:
    """The first selected snippet this line holds (compared normalized)."""
    norm = trust.normalize(line)
    for p in probes:
        if p in norm:
            return p
    return None


def first_match(text: str, probes: Sequence[str]) -> str | None:
    """The snippet held by the first line of ``text`` that holds one."""
    return next((matches(line, probes) for line in text.split("\n") if matches(line, probes)), None)


def holds(text: str, probes: Sequence[str], entry_keys: Sequence[str]) -> bool:
    """Whether a stored text names a removed entry key or has a line holding a snippet."""
    if any(k in text for k in entry_keys):
        return True
    return any(matches(line, probes) is not None for line in text.split("\n"))


def excerpt(text: str, probe: str | None = None, width: int = 160) -> str:
    flat = " ".join(text.split())
    if probe and probe in flat and len(flat) > width:
        at = max(0, flat.index(probe) - 20)
        return ("…" if at else "") + flat[at : at + width] + ("…" if at + width < len(flat) else "")
    return clip(flat, width)
