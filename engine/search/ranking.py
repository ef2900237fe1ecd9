"""The spec's score factors and MMR, as small pure functions (each tested on constructed cases).

- decay = exp(−ln2 / half_life · age_days), only for an exact ``memory/YYYY-MM-DD.md`` path
  (date at UTC midnight), negative ages clamped to 0;
- importance factor = 0.75 + 0.05 · clamp(floor(importance), 1, 10), NULL → 1.0;
- project factor = ×1.15 if every key of the entry is active, ×0.9 if any is not, untagged 1.0;
- MMR: greedily pick max λ·(min-max normalised relevance) − (1−λ)·(max Jaccard similarity of
  snippet tokens to those already picked). MMR reorders; it never changes scores.

``scoring="openclaw"`` reproduces OpenClaw 2026.9.6 where it differs from the spec's wording
(checked against its code): every ``memory/**/YYYY-MM-DD[-slug].md`` path decays (slugged notes
and nested dated files too), MMR tokens are ASCII words plus CJK unigrams and adjacent bigrams,
and an exact MMR tie goes to the higher score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import TypeVar

import numpy as np
from clawmem.engine.search.dates import diary_date

LN2 = math.log(2)
PROJECT_MATCH = 1.15
PROJECT_MISMATCH = 0.9


def diary_age_days(path: str, now: datetime) -> float | None:
    """Age of a dated diary in days (fractional, ≥ 0); None for evergreen paths."""
    d = diary_date(path)
    if d is None:
        return None
    day = datetime(d.year, d.month, d.day, tzinfo=UTC)
    return max(0.0, (now - day).total_seconds() / 86400.0)


OPENCLAW_DATED = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md$")


def openclaw_age_days(path: str, now: datetime, mtime_ms: int | None) -> float | None:
    """Age as OpenClaw 2026.9.6 decays it: a date anywhere under memory/ (slug allowed).

    A dated-looking path whose date does not exist falls back to the file's mtime (what
    OpenClaw stats); every other memory path is evergreen.
    """
    m = OPENCLAW_DATED.search(path.replace("\\", "/").removeprefix("./"))
    if not m:
        return None
    try:
        day = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
    except ValueError:
        if mtime_ms is None:
            return None
        day = datetime.fromtimestamp(mtime_ms / 1000, UTC)
    return max(0.0, (now - day).total_seconds() / 86400.0)


def decay_factor(age_days: float | None, half_life_days: float) -> float:
    if age_days is None:
        return 1.0
    return math.exp(-LN2 / half_life_days * max(0.0, age_days))


def importance_factor(importance: int | float | None) -> float:
    if importance is None:
        return 1.0
    return 0.75 + 0.05 * min(10, max(1, math.floor(importance)))


def project_factor(entry_keys: Sequence[str], active: Sequence[str]) -> float:
    if not entry_keys or not active:
        return 1.0
    active_set = {k.strip() for k in active if k.strip()}
    return PROJECT_MATCH if all(k in active_set for k in entry_keys) else PROJECT_MISMATCH


_WORD = re.compile(r"[^\W]+", re.UNICODE)
_ASCII_WORD = re.compile(r"[a-z0-9_]+")  # the ASCII words of lowercased text (OpenClaw's tokens)
# The same words of lowercased ASCII text, faster: every other byte becomes a space, one split().
_ASCII_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_")
_ASCII_NON_WORD_TO_SPACE = bytes(i if i in _ASCII_WORD_BYTES else 0x20 for i in range(256))


_CJK_ANY = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f]")


# A snippet's tokens are a pure function of its text; the app searches as the user types, so the
# same candidates come back keystroke after keystroke (tokenising them was a fifth of a search).
MMR_TOKEN_CACHE = 32_768


@lru_cache(maxsize=MMR_TOKEN_CACHE)
def snippet_tokens(text: str) -> frozenset[str]:
    """Lowercased word tokens for MMR's Jaccard similarity; CJK runs become bigrams."""
    lower = text.lower()
    if lower.isascii():  # no CJK: the words themselves (a byte translation finds them 2x faster)
        return frozenset(lower.encode("ascii").translate(_ASCII_NON_WORD_TO_SPACE).decode("ascii").split())
    out: set[str] = set()
    for tok in _WORD.findall(lower):
        if len(tok) > 2 and _CJK_ANY.search(tok):
            out.update(tok[i : i + 2] for i in range(len(tok) - 1))
        else:
            out.add(tok)
    return frozenset(out)


_OC_CJK_RUN = re.compile("[\u3040-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u1100-\u11ff]+")


@lru_cache(maxsize=MMR_TOKEN_CACHE)
def openclaw_snippet_tokens(text: str) -> frozenset[str]:
    """OpenClaw's MMR tokens: ASCII words, CJK characters and adjacent CJK pairs.

    A text with no such token is represented by its whole lowercased text (prefixed by NUL so
    it never meets a real token), so two empty ones are similar exactly when they are equal.
    """
    lower = text.strip().lower()
    tokens = set(_ASCII_WORD.findall(lower))
    for run in _OC_CJK_RUN.findall(lower):
        tokens.update(run)
        tokens.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(tokens) if tokens else frozenset({"\x00" + lower})


@lru_cache(maxsize=MMR_TOKEN_CACHE)
def _token_ids(tokens: frozenset[str]) -> np.ndarray:
    """A token set as its tokens' 64-bit hashes (strings keep the hash the frozenset computed):
    no vocabulary to number them, grow and lock. Cached, as the sets come back search after
    search and the array fill is still a Python step per token.
    Two different words with the same 64-bit hash would count as one; for the 10⁵ words of a
    large workspace the chance that any two collide is about 3 × 10⁻¹⁰."""
    return np.fromiter(map(hash, tokens), dtype=np.int64, count=len(tokens))


def prepare_mmr_tokens(tokens: frozenset[str]) -> None:
    """Fill the cache of a token set's hashes ahead of MMR, e.g. while the query is embedded."""
    _token_ids(tokens)


def _jaccard_matrix(token_sets: Sequence[frozenset[str]]) -> np.ndarray:
    """Pairwise Jaccard similarities, equal to :func:`jaccard` for every pair.

    One token-incidence matrix over the tokens two or more sets share (the others never
    intersect), built with array operations, and one product for every intersection count.
    (Computing only the rows MMR reads, one product each, measured slower: a search reads about
    half of them, and one product for all costs about what forty rows do.)
    """
    n = len(token_sets)
    arrays = [_token_ids(t) for t in token_sets]
    sizes = np.array([len(a) for a in arrays], dtype=np.float64)
    inter = np.zeros((n, n))
    if n and sizes.any():
        ids = np.concatenate(arrays)
        rows = np.repeat(np.arange(n), [len(a) for a in arrays])
        _, column, counts = np.unique(ids, return_inverse=True, return_counts=True)
        shared = counts[column] > 1
        if shared.any():
            kept = np.flatnonzero(counts > 1)
            remap = np.full(len(counts), -1, dtype=np.int64)
            remap[kept] = np.arange(len(kept))
            incidence = np.zeros((n, len(kept)), dtype=np.float32)
            incidence[rows[shared], remap[column[shared]]] = 1.0
            inter = (incidence @ incidence.T).astype(np.float64)  # small integers: exact in float32
    union = sizes[:, None] + sizes[None, :] - inter
    return np.divide(inter, union, out=np.zeros((n, n)), where=inter > 0)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter) if inter else 0.0


T = TypeVar("T")


def mmr_picks(
    items: Sequence[T],
    relevance: Callable[[T], float],
    tokens: Callable[[T], frozenset[str]],
    lam: float,
    *,
    exact_ties: bool = False,
) -> Iterator[T]:
    """The items in Maximal Marginal Relevance order, picked one at a time as they are read.

    ``exact_ties`` is OpenClaw's rule: an equal MMR value goes to the higher relevance (then
    the earlier item); otherwise a value must beat the best so far, scanning in order, by 1e-12.

    All pairwise similarities come from one matrix product over the token-incidence matrix
    (exact integer intersection counts), and each item's max similarity to the picked ones is
    kept up to date, so a pick is a few vector steps, not set intersections; a search that
    reads half the order pays for half the steps. The order is exactly the greedy definition's.
    """
    n = len(items)
    if n <= 1:
        yield from items
        return
    rel = np.array([relevance(i) for i in items], dtype=np.float64)
    lo, hi = float(rel.min()), float(rel.max())
    span = hi - lo
    norm = (rel - lo) / span if span > 0 else np.ones(n)
    sim = _jaccard_matrix([tokens(i) for i in items])
    gain = lam * norm  # a picked item's gain becomes -inf, so it is never picked again
    max_sim = np.zeros(n)
    penalty = np.empty(n)
    vals = np.empty(n)
    for _ in range(n):
        np.multiply(1 - lam, max_sim, out=penalty)
        np.subtract(gain, penalty, out=vals)
        top = float(vals.max())
        if exact_ties:
            tied = np.flatnonzero(vals == top)
            best = int(tied[int(np.argmax(rel[tied]))])  # argmax keeps the earliest of equal ones
        else:
            best, best_val = -1, -math.inf
            for idx in np.flatnonzero(vals >= top - 1e-9):  # only these can win the in-order scan
                if vals[idx] > best_val + 1e-12:
                    best, best_val = int(idx), float(vals[idx])
        yield items[best]
        gain[best] = -np.inf
        np.maximum(max_sim, sim[best], out=max_sim)


def snippet_of(text: str, limit: int) -> str:
    """The first ``limit`` UTF-16 code units, never splitting a character (no marker, no trim)."""
    if len(text) <= limit // 2:
        return text  # even if every character took two units
    head = text[:limit]
    if head.isascii() or len(head.encode("utf-16-le", "surrogatepass")) == 2 * len(head):
        return head  # one unit per character (only the head decides: it is all that is kept)
    units = 0
    for i, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return text[:i]
    return text
