"""Calibrating cosine similarity so the spec's 0.7·vector + 0.3·keyword merge works.

multilingual-e5 puts every pair of texts between about 0.70 and 0.85 cosine, so used raw the
vector leg is a near-constant ≈ 0.55 and evergreen, importance-boosted MEMORY.md lines outrank
every relevant diary. clawmem standardises each query's cosines against the *background*: how
similar the query is to this workspace's chunks in general, measured on a fixed spread of stored
vectors with a robust median and MAD (so the few relevant chunks do not move it).

The background is kept per script: a Chinese query is closer to *every* Chinese chunk than to
any English one (and the other way round), so one background would bury cross-lingual answers
and flatter same-language noise. Each chunk is standardised against the background of chunks
in its own script (CJK or not), falling back to the whole sample when a script has too few:

    vector = clamp((cosine − median[script]) / (Z_FULL · 1.4826 · MAD[script]), 0, 1)

A chunk at its background level scores 0; one ``Z_FULL`` robust deviations above it scores 1.
It costs one dot product per sampled chunk (~0.1 ms) and needs no tuning by the user. The
breakdown shows both the raw cosine and the calibrated value; the response says what the
background was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.search.tokens import is_cjk_char

SAMPLE_SIZE = 512
MIN_SAMPLE = 6
Z_FULL = 4.0
MIN_SPREAD = 0.01
CJK_SHARE = 0.3


def script_of(text: str) -> str:
    """'cjk' when at least 30 % of the letters are CJK, else 'latin'."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return "latin"
    cjk = sum(1 for ch in letters if is_cjk_char(ch))
    return "cjk" if cjk / len(letters) >= CJK_SHARE else "latin"


@dataclass(frozen=True)
class Background:
    """Stored unit vectors and the script of each (what a query is compared against)."""

    vectors: np.ndarray  # (n, dims)
    scripts: tuple[str, ...]


@dataclass(frozen=True)
class Band:
    median: float
    spread: float
    size: int


@dataclass(frozen=True)
class Calibration:
    method: str  # "workspace-background" or "raw"
    bands: dict[str, Band] = field(default_factory=dict)  # per script, plus "all"
    z_full: float = Z_FULL

    def apply(self, cosine: float, text: str = "") -> float:
        if self.method == "raw":
            return max(0.0, min(1.0, cosine))
        band = self.bands.get(script_of(text)) or self.bands["all"]
        return max(0.0, min(1.0, (cosine - band.median) / (self.z_full * band.spread)))

    def describe(self) -> str:
        if self.method == "raw":
            return "raw cosine (openclaw scoring)"
        parts = [
            f"{name} {b.median:.3f} ± {b.spread:.3f} (n={b.size})"
            for name, b in sorted(self.bands.items())
            if name != "all"
        ] or [f"{self.bands['all'].median:.3f} ± {self.bands['all'].spread:.3f}"]
        return f"cosine vs this workspace's background ({'; '.join(parts)}); {self.z_full:g} deviations above = 1.0"


RAW = Calibration("raw")


def _band(sims: np.ndarray) -> Band:
    median = float(np.median(sims))
    mad = float(np.median(np.abs(sims - median)))
    return Band(median, max(MIN_SPREAD, 1.4826 * mad), len(sims))


def measure(query_vec: np.ndarray, background: Background | None) -> Calibration:
    """The background of one query, per script."""
    if background is None or len(background.vectors) < MIN_SAMPLE:
        return RAW
    sims = background.vectors @ np.asarray(query_vec, dtype=np.float32)
    bands = {"all": _band(sims)}
    scripts = np.array(background.scripts)
    for name in ("cjk", "latin"):
        mask = scripts == name
        if int(mask.sum()) >= MIN_SAMPLE:
            bands[name] = _band(sims[mask])
    return Calibration("workspace-background", bands, Z_FULL)


def build_background(vectors: Sequence[np.ndarray], texts: Sequence[str]) -> Background | None:
    if not vectors:
        return None
    matrix = np.stack(vectors).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return Background(matrix / norms, tuple(script_of(t) for t in texts))
