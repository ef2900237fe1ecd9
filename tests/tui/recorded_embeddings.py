"""The real model's vectors, recorded once and replayed in the TUI tests.

Why a replay: the snapshots show scores to three decimals, and llama.cpp's vectors differ in
their last digits from one CPU to the next (its SIMD kernels sum in another order); through the
calibration's z-scores a shown score moved by up to 0.009 between two machines, and seven
search snapshots drawn on one failed on the other. The engine tests run the model live; the
TUI tests draw screens, so they read the vectors the real model (``multilingual-e5-small-q4_0``)
gave for every text they embed, stored in ``tests/fixtures/tui-embeddings.npz`` with the
model's provider key.

A text missing from the recording is embedded live (the test still runs) and reported: the
test then fails with the command that records it (``make record-embeddings``). That target runs
all the TUI tests with ``CLAWMEM_RECORD_EMBEDDINGS=fresh`` and rewrites the file with exactly
the texts they embedded; ``=1`` adds what a run embeds and keeps the rest (for running a few
tests: a subset never drops what the others need).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from clawmem.engine.embed.provider import EmbeddingProvider, Vector, provider_key

RECORDING = Path(__file__).resolve().parent.parent / "fixtures" / "tui-embeddings.npz"
RECORD = os.environ.get("CLAWMEM_RECORD_EMBEDDINGS") in ("1", "fresh")
FRESH = os.environ.get("CLAWMEM_RECORD_EMBEDDINGS") == "fresh"


def text_key(kind: str, text: str) -> str:
    return hashlib.sha256(f"{kind}\0{text}".encode()).hexdigest()[:24]


class Recording:
    """Recorded vectors by text key, what the session used, and what it had to embed live."""

    def __init__(self, path: Path = RECORDING) -> None:
        self.path = path
        self.vectors: dict[str, Vector] = {}
        self.key = ""
        if path.exists():
            with np.load(path) as data:
                self.key = str(data["provider_key"])
                self.vectors = {str(k): v for k, v in zip(data["keys"], data["vectors"], strict=True)}
        self.used: dict[str, Vector] = {}
        self.missing: list[str] = []
        # A test of background indexing needs the model's real pace (a replay finishes before the
        # test can edit a file mid-pass) and draws no scores: it embeds live and records nothing.
        self.live = False

    def save(self, *, fresh: bool) -> None:
        """Write what was used (``fresh``), or everything known: the file's vectors and the new."""
        keep = self.used if fresh else self.vectors
        keys = sorted(keep)
        vectors = np.stack([keep[k] for k in keys]).astype(np.float32) if keys else np.zeros((0, 0), np.float32)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, provider_key=np.array(self.key), keys=np.array(keys), vectors=vectors)
        tmp.replace(self.path)


class RecordedProvider:
    """The real provider, answering from the recording where it can (same identity and key)."""

    def __init__(self, real: EmbeddingProvider, recording: Recording) -> None:
        self._real = real
        self._recording = recording
        self.provider_id = real.provider_id
        self.model = real.model
        self.dims = real.dims
        real_key = provider_key(real)
        if recording.key and recording.key != real_key:
            if not RECORD:
                raise RuntimeError(
                    f"{recording.path.name} was recorded with another model or settings: run `make record-embeddings`"
                )
            recording.vectors.clear()  # recording anew: none of the other model's vectors is kept
        recording.key = real_key

    def __getattr__(self, name: str) -> object:  # loaded, load, …: the real provider's
        return getattr(self._real, name)

    def cache_key(self) -> dict[str, object]:
        return self._real.cache_key()

    def _live(self, kind: str, text: str) -> Vector:
        return self._real.embed_query(text) if kind == "query" else self._real.embed_passages([text])[0]

    def _vector(self, kind: str, text: str) -> Vector:
        if self._recording.live:
            return self._live(kind, text)
        key = text_key(kind, text)
        vec = self._recording.vectors.get(key)
        if vec is None:
            vec = self._live(kind, text)
            if not RECORD:
                self._recording.missing.append(f"{kind} {text[:60]!r}")
            self._recording.vectors[key] = vec
        self._recording.used[key] = vec
        return vec

    def embed_query(self, text: str) -> Vector:
        return self._vector("query", text)

    def embed_passages(self, texts: Sequence[str], *, threads: int | None = None) -> list[Vector]:
        if self._recording.live:  # as a batch, at the model's own pace
            return self._real.embed_passages(texts, threads=threads)
        return [self._vector("passage", t) for t in texts]
