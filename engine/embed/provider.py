"""The embedding provider protocol and the provider key derived from it.

Every embedding source (the llama.cpp GGUF provider today) implements
:class:`EmbeddingProvider`. Cached vectors are keyed by ``provider_key``: a digest of
everything that changes the vectors (model file, prefixes, pooling, normalisation, windowing),
so switching any of them never mixes incompatible vectors.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["EmbeddingProvider", "Vector", "provider_key"]

Vector = npt.NDArray[np.float32]


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns text into L2-normalised float32 vectors of a fixed dimension."""

    provider_id: str  # e.g. "llama-cpp"
    model: str  # e.g. "multilingual-e5-small-q4_0" or the gguf file stem
    dims: int

    def cache_key(self) -> dict[str, object]:
        """JSON-able identity of everything that determines the vectors."""
        ...

    def embed_query(self, text: str) -> Vector:
        """Embed a search query: float32, L2-normalised, shape ``(dims,)``."""
        ...

    def embed_passages(self, texts: Sequence[str], *, threads: int | None = None) -> list[Vector]:
        """Embed stored texts (chunks, lines); one vector per input, same contract as queries.
        ``threads``: how many threads these calls may use (None: the provider's own count)."""
        ...


def provider_key(provider: EmbeddingProvider) -> str:
    """SHA-256 hex of the provider's canonical cache-key JSON."""
    canonical = json.dumps(provider.cache_key(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
