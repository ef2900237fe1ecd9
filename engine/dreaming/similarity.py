"""OpenClaw's CJK-aware Jaccard similarity, used by Light's dedupe (0.9), REM's (0.88) and the
diary-coverage check (0.35).

Tokens: lowercased ``[\\p{L}\\p{N}_]+`` words without CJK characters, plus every CJK character
and every pair of originally adjacent CJK characters. Two texts that both tokenize to nothing are
similar only when they are equal.
"""

from __future__ import annotations

import itertools
import re

_CJK = re.compile(r"[\u3040-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u1100-\u11ff]")
_WORD = re.compile(r"[^\W]+", re.UNICODE)


def tokenize(text: str) -> frozenset[str]:
    lower = text.strip().lower()
    words = [w for w in _WORD.findall(lower) if not _CJK.search(w)]
    cjk = [(i, ch) for i, ch in enumerate(lower) if _CJK.match(ch)]
    bigrams = [a + b for (i, a), (j, b) in itertools.pairwise(cjk) if j == i + 1]
    return frozenset((*words, *bigrams, *(ch for _, ch in cjk)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    inter = len(a & b)
    union = len(a) + len(b) - inter
    return inter / union if union else 0.0


def text_similarity(a: str, b: str) -> float:
    ta, tb = tokenize(a), tokenize(b)
    if not ta and not tb:
        return 1.0 if a.strip().lower() == b.strip().lower() else 0.0
    return jaccard(ta, tb)
