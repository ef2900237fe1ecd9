"""The spec's score factors and MMR, as small pure functions (each tested on constructed cases).

- decay = exp(−ln2 / half_life · age_days), only for an exact ``memory/YYYY-MM-DD.md`` path
  (date at UTC midnight), negative ages clamped to 0;
- importance factor = 0.75 + 0.05 · clamp(floor(importance), 1, 10), NULL → 1.0;
- project factor = ×1.15 if every key of the entry is active, ×0.9 if any is not, untagged 1.0;
- MMR: greedily pick max λ·(min-max normalised relevance) − (1−λ)·(max Jaccard similarity of
  snippet tokens to those already picked). MMR reorders; it never changes scores.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TypeVar

from engine.workspace.files import EXACT_DIARY

LN2 = math.log(2)
PROJECT_MATCH = 1.15
PROJECT_MISMATCH = 0.9


def diary_age_days(path: str, now: datetime) -> float | None:
    """Age of a dated diary in days (fractional, ≥ 0); None for evergreen paths."""
    m = EXACT_DIARY.match(path)
    if not m:
        return None
    try:
        day = datetime.strptime(m.group(1), "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None
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


def snippet_tokens(text: str) -> frozenset[str]:
    """Lowercased word tokens for MMR's Jaccard similarity; CJK runs become bigrams."""
    out: set[str] = set()
    for tok in _WORD.findall(text.lower()):
        if any(_is_cjk(ch) for ch in tok) and len(tok) > 2:
            out.update(tok[i : i + 2] for i in range(len(tok) - 1))
        else:
            out.add(tok)
    return frozenset(out)


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (
        0x3040 <= o <= 0x30FF
        or 0x3400 <= o <= 0x4DBF
        or 0x4E00 <= o <= 0x9FFF
        or 0xAC00 <= o <= 0xD7AF
        or 0xF900 <= o <= 0xFAFF
        or 0x20000 <= o <= 0x3134F
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter) if inter else 0.0


T = TypeVar("T")


def mmr_order(
    items: Sequence[T], relevance: Callable[[T], float], tokens: Callable[[T], frozenset[str]], lam: float
) -> list[T]:
    """Items reordered by Maximal Marginal Relevance (scores untouched)."""
    if len(items) <= 1:
        return list(items)
    rel = [relevance(i) for i in items]
    lo, hi = min(rel), max(rel)
    span = hi - lo
    norm = [(r - lo) / span if span > 0 else 1.0 for r in rel]
    toks = [tokens(i) for i in items]
    remaining = list(range(len(items)))
    picked: list[int] = []
    while remaining:
        best, best_val = remaining[0], -math.inf
        for idx in remaining:
            sim = max((jaccard(toks[idx], toks[p]) for p in picked), default=0.0)
            val = lam * norm[idx] - (1 - lam) * sim
            if val > best_val + 1e-12:
                best, best_val = idx, val
        picked.append(best)
        remaining.remove(best)
    return [items[i] for i in picked]
