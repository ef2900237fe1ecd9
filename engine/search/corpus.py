"""Which indexed sources a search covers: memory files, session transcripts, or both.

The CLI's ``--source`` and the MCP ``corpus`` argument name them the same way; asking for session
transcripts that are not indexed is refused (alone) or warned about (with memory), never answered
silently from memory only.
"""

from __future__ import annotations

from collections.abc import Sequence

from clawmem.engine.errors import ClawmemError

SOURCES = {"memory": ("memory",), "sessions": ("sessions",), "all": ("memory", "sessions")}


def choose_sources(indexed: Sequence[str], choice: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The sources to search for ``choice`` (None: every indexed one) and warnings about them."""
    if choice is None:
        return tuple(indexed), ()
    wanted = SOURCES[choice]
    if "sessions" in wanted and "sessions" not in indexed:
        hint = 'add "sessions" to [index] sources in config.toml, then run `clawmem index`'
        if choice == "sessions":
            raise ClawmemError(f"session transcripts are not indexed: {hint}")
        return tuple(s for s in wanted if s != "sessions"), (f"session transcripts are not indexed ({hint})",)
    return wanted, ()
