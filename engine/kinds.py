"""The engine's closed vocabularies: each a ``Literal`` that mypy checks where it travels, and
the tuple of its values (``typing.get_args``) that validates what a user or a file hands in.

Only names that cross module boundaries live here; a state private to one module stays there.
"""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

from clawmem.engine.errors import ClawmemError

K = TypeVar("K", bound=str)

ScoringMode = Literal["calibrated", "openclaw"]
"""How a search scores: clawmem's calibrated vectors, or OpenClaw 2026.9.6's exact formula."""

Legs = Literal["hybrid", "keyword", "vector"]
"""Which retrieval legs a search runs (``--mode``)."""

Leg = Literal["keyword", "path", "vector", "date"]
"""One leg that found a hit (a hit lists every leg that found it)."""

SearchMode = Literal["hybrid", "fts-only", "vector-only"]
"""What a search actually ran, after the model and the index had their say."""

OriginClass = Literal["owner", "agent", "system", "untrusted"]
"""Who a line came from (docs/memory-core.md §8); ordered from most to least trusted."""

IntentStatus = Literal["pending", "armed", "fired", "done", "cancelled", "expired"]
"""A standing intent's state (docs/memory-core.md §7's state machine)."""

JobStatus = Literal["active", "done", "cancelled"]
"""A timed job's state."""

ProposalStatus = Literal["pending", "applied", "rejected", "stale", "reverted", "superseded-by-newer"]
"""A Dreaming rewrite of MEMORY.md in the review queue."""

SCORING_MODES: tuple[ScoringMode, ...] = get_args(ScoringMode)
LEG_CHOICES: tuple[Legs, ...] = get_args(Legs)
ORIGIN_CLASSES: tuple[OriginClass, ...] = get_args(OriginClass)
INTENT_STATUSES: tuple[IntentStatus, ...] = get_args(IntentStatus)
JOB_STATUSES: tuple[JobStatus, ...] = get_args(JobStatus)
PROPOSAL_STATUSES: tuple[ProposalStatus, ...] = get_args(ProposalStatus)


def narrow(value: str, allowed: tuple[K, ...], what: str) -> K:
    """``value`` as one of ``allowed`` (a row read back from the store), or a one-line error."""
    for name in allowed:
        if value == name:
            return name
    raise ClawmemError(f"unknown {what} {value!r} in the database (expected one of {', '.join(allowed)})")


def origin_class(value: str | None) -> OriginClass:
    """A stored origin class; an unknown or missing one counts as untrusted (docs/memory-core.md §8: trust is
    never assumed)."""
    for name in ORIGIN_CLASSES:
        if value == name:
            return name
    return "untrusted"
