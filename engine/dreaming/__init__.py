"""Dreaming (docs/memory-core.md §5, docs/design.md §6): Light, REM and Deep over the short-term
recall store, the review queue for MEMORY.md rewrites, approve / reject / revert with preimages,
and the DREAMS.md report.

The public entry point is :class:`engine.dreaming.service.DreamingService` (``engine.dreaming`` on
the facade); everything it returns is a frozen dataclass from :mod:`engine.dreaming.models`.
"""
