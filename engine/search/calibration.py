"""Calibrating cosine similarity so the spec's 0.7·vector + 0.3·keyword merge works.

multilingual-e5 puts every pair of texts between about 0.70 and 0.85 cosine, so used raw the
vector leg is a near-constant ≈ 0.55 and evergreen, importance-boosted MEMORY.md lines outrank
every relevant diary. clawmem standardises each query's cosines against the *background*: how
similar the query is to this workspace's chunks in general (a fixed spread of stored vectors,
robust median and MAD so the few relevant chunks do not move it). A chunk at the background
level scores 0; one ``Z_FULL`` robust deviations above it (a near-duplicate) scores 1:

    vector = clamp((cosine − median) / (Z_FULL · 1.4826 · MAD), 0, 1)

The background is measured per query (one 384-float dot product per sampled chunk, ~0.1 ms),
so it adapts to the model, the language and the workspace with no tuning by the user. The
breakdown shows both the raw cosine and the calibrated value, and the response carries the
background it was measured against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SAMPLE_SIZE = 512
MIN_SAMPLE = 8
Z_FULL = 6.0
MIN_SPREAD = 0.01


@dataclass(frozen=True)
class Calibration:
    method: str  # "workspace-background" or "raw"
    median: float
    spread: float  # 1.4826 · MAD, floored
    sample_size: int
    z_full: float

    def apply(self, cosine: float) -> float:
        if self.method == "raw":
            return max(0.0, min(1.0, cosine))
        return max(0.0, min(1.0, (cosine - self.median) / (self.z_full * self.spread)))

    def describe(self) -> str:
        if self.method == "raw":
            return "raw cosine (openclaw scoring)"
        return (
            f"cosine vs this workspace's background {self.median:.3f} ± {self.spread:.3f} "
            f"({self.sample_size} chunks); {self.z_full:g} deviations above it = 1.0"
        )


RAW = Calibration("raw", 0.0, 1.0, 0, 1.0)


def measure(query_vec: np.ndarray, background: np.ndarray | None) -> Calibration:
    """The background of one query against a (n, dims) matrix of unit vectors."""
    if background is None or len(background) < MIN_SAMPLE:
        return RAW
    sims = background @ np.asarray(query_vec, dtype=np.float32)
    median = float(np.median(sims))
    mad = float(np.median(np.abs(sims - median)))
    return Calibration("workspace-background", median, max(MIN_SPREAD, 1.4826 * mad), len(background), Z_FULL)
