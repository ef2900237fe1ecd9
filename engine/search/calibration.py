"""Calibrating cosine similarity so the spec's 0.7·vector + 0.3·keyword merge works.

multilingual-e5 puts every pair of texts between about 0.70 and 0.85 cosine, so used raw the
vector leg is a near-constant ≈ 0.55 and evergreen, importance-boosted MEMORY.md lines outrank
every relevant diary. clawmem turns each cosine into evidence *relative to this workspace*:

1. **Background, per script.** The query's similarity to a fixed spread of the workspace's
   stored vectors gives a robust median and spread (MAD): what "unrelated" looks like for this
   query here. It is kept per script, because a Chinese query is closer to *every* Chinese chunk
   than to any English one (and the other way round): one background would bury cross-lingual
   answers and flatter same-language noise. A chunk is standardised against the chunks of its
   own script — CJK (≥ 80 % of its letters), Latin (≤ 20 %) — and a mixed line ("Prefer
   坐高铁出行"), close to both languages, against the whole sample.
2. **Relevance.** The cosine becomes a z-score against that background, and the z-score a
   probability-like relevance with a logistic curve (Platt scaling):

       vector = 1 / (1 + exp(−(z − Z_MID) / Z_SLOPE))

   ≈ 0.03 at the background level, 0.5 at ``Z_MID`` deviations above it, → 1 for a
   near-duplicate; strong matches saturate, so among them the keyword part decides.

The constants were chosen by measurement (bench/fixture_queries.py, bench/locomo.py; see
bench/RESULTS.md). It costs one (512 × dims) product per query and no tuning by the user. The
breakdown shows the raw cosine, the deviations and the calibrated value; the response says what
the background was.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

SAMPLE_SIZE = 512
MIN_SAMPLE = 6
Z_MID = 3.5
Z_SLOPE = 1.0
MIN_SPREAD = 0.01
CJK_SHARE = 0.8
SCRIPT_SAMPLE = 600  # characters: enough to tell a Chinese note from an English one

_LETTER = re.compile(r"[^\W\d_]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_CJK = re.compile("[\u3040-\u30ff\u3131-\u3163\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


_HEADING_LINE = re.compile(r"^\s*#{1,6}(?:\s.*)?$")


@functools.lru_cache(maxsize=4096)  # asked of every candidate with a vector, search after search
def has_content(text: str) -> bool:
    """Whether a chunk holds anything but headings, blank lines and comment markers.

    A curated file's heading is an entry of its own (``# User``, ``## Work`` plus the marker line
    below it): its vector is a generic "a note" direction, close to every query, and its cosine
    says nothing about relevance. Calibrated scoring gives such chunks no vector evidence.
    """
    body = _COMMENT.sub(" ", text)
    return any(line.strip() and not _HEADING_LINE.match(line) for line in body.split("\n"))


def script_of(text: str) -> str:
    """'cjk' when ≥ 80 % of the letters are CJK, 'latin' when ≤ 20 %, else 'mixed'.

    Markers in HTML comments (``<!-- observed: … -->``) are machine text, not the note's language.
    """
    return _script_of_head(text[: SCRIPT_SAMPLE * 2])


@functools.lru_cache(maxsize=4096)  # the same candidates come back search after search (≤ ~10 MB)
def _script_of_head(head: str) -> str:
    sample = _COMMENT.sub(" ", head)[:SCRIPT_SAMPLE]
    if sample.isascii():  # no CJK letter can be in it: the share is 0 (a findall is 36 µs a chunk)
        return "latin" if _ASCII_LETTER.search(sample) else "mixed"
    letters = len(_LETTER.findall(sample))
    if not letters:
        return "mixed"
    share = len(_CJK.findall(sample)) / letters
    return "cjk" if share >= CJK_SHARE else "latin" if share <= 1 - CJK_SHARE else "mixed"


@dataclass(frozen=True)
class Background:
    """A fixed spread of the workspace's unit vectors and the script of each."""

    vectors: np.ndarray  # (n, dims), unit length
    scripts: tuple[str, ...]


@dataclass(frozen=True)
class Band:
    median: float
    spread: float
    size: int


@dataclass(frozen=True)
class Calibration:
    method: str  # "workspace-background" or "raw"
    bands: dict[str, Band] = field(default_factory=dict)  # "all", and "cjk"/"latin" when sampled
    z_mid: float = Z_MID
    z_slope: float = Z_SLOPE

    def band_for(self, text: str) -> Band:
        return self.bands.get(script_of(text)) or self.bands["all"]

    def z_score(self, cosine: float, text: str = "") -> float:
        """Deviations above the background of chunks in the same script as ``text``."""
        band = self.band_for(text)
        return (cosine - band.median) / band.spread

    def relevance(self, z: float) -> float:
        """The logistic curve: ≈ 0 at the background, 0.5 at ``z_mid`` deviations, → 1 above."""
        return 1.0 / (1.0 + math.exp(-(z - self.z_mid) / self.z_slope))

    def apply(self, cosine: float, text: str = "") -> float:
        if self.method == "raw":
            return max(0.0, min(1.0, cosine))
        return self.relevance(self.z_score(cosine, text))

    def describe(self) -> str:
        if self.method == "raw":
            return "raw cosine (openclaw scoring)"
        parts = [f"{name} {b.median:.3f} ± {b.spread:.3f} (n={b.size})" for name, b in sorted(self.bands.items())]
        return f"cosine vs this workspace's background ({'; '.join(parts)}); {self.z_mid:g} deviations above it = 0.5"


RAW = Calibration("raw")


def _band(sims: np.ndarray) -> Band:
    median = float(np.median(sims))
    mad = float(np.median(np.abs(sims - median)))
    return Band(median, max(MIN_SPREAD, 1.4826 * mad), len(sims))


def measure(query_vec: np.ndarray, background: Background | None) -> Calibration:
    """What "unrelated" looks like for this query in this workspace, per script."""
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
