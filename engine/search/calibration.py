"""Calibrating cosine similarity so the spec's 0.7·vector + 0.3·keyword merge works.

multilingual-e5 puts every pair of texts between about 0.70 and 0.85 cosine, so used raw the
vector leg is a near-constant ≈ 0.55 and evergreen, importance-boosted MEMORY.md lines outrank
every relevant diary. clawmem standardises each query's cosines against the *background*: how
similar the query is to this workspace's chunks in general, measured on a fixed spread of stored
vectors with a robust median and MAD (so the few relevant chunks do not move it).

The background is kept per script: a Chinese query is closer to *every* Chinese chunk than to
any English one (and the other way round), so one background would bury cross-lingual answers
and flatter same-language noise. Each chunk's cosine becomes a robust z-score against the
background of chunks in its own script (CJK or not; the whole sample when a script has too few),
and the z-score becomes a probability-like relevance with a logistic curve (Platt scaling):

    z = (cosine − median[script]) / (1.4826 · MAD[script])
    vector = 1 / (1 + exp(−(z − Z_MID) / Z_SLOPE))

A chunk at its background level scores ≈ 0.03, one 2.5 deviations above it 0.5, a
near-duplicate ≈ 1. Strong matches saturate, so among them the keyword part decides. The curve
was chosen by measurement (bench/fixture_queries.py and bench/locomo.py; see bench/RESULTS.md).
It costs one dot product per sampled chunk (~0.1 ms) and needs no tuning by the user; the
breakdown shows the raw cosine beside the calibrated value and the response says what the
background was.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

SAMPLE_SIZE = 512
MIN_SAMPLE = 6
Z_MID = 2.5
Z_SLOPE = 0.7
MIN_SPREAD = 0.01
CJK_SHARE = 0.3


_LETTER = re.compile(r"[^\W\d_]")
_CJK = re.compile("[\u3040-\u30ff\u3131-\u3163\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
SCRIPT_SAMPLE = 600  # characters: enough to tell a Chinese note from an English one


_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def script_of(text: str) -> str:
    """'cjk' when at least 30 % of the letters are CJK, else 'latin'.

    Markers in HTML comments (``<!-- observed: … -->``) are machine text, not the note's language.
    """
    sample = _COMMENT.sub(" ", text[: SCRIPT_SAMPLE * 2])[:SCRIPT_SAMPLE]
    letters = len(_LETTER.findall(sample))
    if not letters:
        return "latin"
    return "cjk" if len(_CJK.findall(sample)) / letters >= CJK_SHARE else "latin"


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
    z_mid: float = Z_MID
    z_slope: float = Z_SLOPE

    def z_score(self, cosine: float, text: str = "") -> float:
        band = self.bands.get(script_of(text)) or self.bands["all"]
        return (cosine - band.median) / band.spread

    def apply(self, cosine: float, text: str = "") -> float:
        if self.method == "raw":
            return max(0.0, min(1.0, cosine))
        z = self.z_score(cosine, text)
        return 1.0 / (1.0 + math.exp(-(z - self.z_mid) / self.z_slope))

    def describe(self) -> str:
        if self.method == "raw":
            return "raw cosine (openclaw scoring)"
        parts = [
            f"{name} {b.median:.3f} ± {b.spread:.3f} (n={b.size})"
            for name, b in sorted(self.bands.items())
            if name != "all"
        ] or [f"{self.bands['all'].median:.3f} ± {self.bands['all'].spread:.3f}"]
        return f"cosine vs this workspace's background ({'; '.join(parts)}); {self.z_mid:g} deviations above it = 0.5"


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
    return Calibration("workspace-background", bands, Z_MID, Z_SLOPE)


def build_background(vectors: Sequence[np.ndarray], texts: Sequence[str]) -> Background | None:
    if not vectors:
        return None
    matrix = np.stack(vectors).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return Background(matrix / norms, tuple(script_of(t) for t in texts))
