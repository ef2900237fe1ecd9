"""Texts to the model for an indexing pass: identical texts once, in calls of about one window.

One provider call is the unit a cancel and the thread budget act on, so a call holds about one
full 512-token window of text (CALL_CHARS) and no more: Escape in the app stops a pass within
about a second, and a build started beside the pass takes a core back from the next call
(engine/index/thread_budget.py). Identical texts (a line repeated across transcript diaries)
are embedded once.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from clawmem.engine.embed.provider import EmbeddingProvider, Vector
from clawmem.engine.index.thread_budget import ThreadBudget

CALL_CHARS = 2_000  # ~one 512-token decode of English; fewer characters of Chinese or Japanese


@dataclass
class ModelCalls:
    """One pass's way to the model: its thread budget, its cancel, and what it has done."""

    provider: EmbeddingProvider
    budget: ThreadBudget
    cancel: threading.Event | None = None
    texts: int = 0  # texts run through the model
    calls: int = 0  # provider calls made
    thread_counts: dict[int, int] = field(default_factory=dict)  # threads -> calls made with them

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def embed(self, texts: Sequence[str]) -> dict[str, Vector]:
        """Vectors by text for ``texts`` (each distinct text once). Stops early when cancelled:
        the texts not reached are missing from the result."""
        distinct = list(dict.fromkeys(texts))
        out: dict[str, Vector] = {}
        start = 0
        while start < len(distinct) and not self.cancelled:
            end, size = start, 0
            while end < len(distinct) and (end == start or size + len(distinct[end]) <= CALL_CHARS):
                size += len(distinct[end])
                end += 1
            group = distinct[start:end]
            threads = self.budget.threads()
            vectors = self.provider.embed_passages(group, threads=threads)
            out.update(zip(group, vectors, strict=True))
            self.texts += len(group)
            self.calls += 1
            self.thread_counts[threads] = self.thread_counts.get(threads, 0) + 1
            start = end
        return out
