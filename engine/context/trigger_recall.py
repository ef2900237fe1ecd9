"""Active Memory lane 1: how strongly a message hits an entry's trigger phrases (docs/memory-core.md §9).

OpenClaw (``extensions/active-memory/trigger-recall.ts``):

- words are the lowercase runs of ``[\\p{L}\\p{N}_]+`` longer than one UTF-16 unit, deduplicated;
- a trigger annotation is split into phrases on newline, ``;`` or ``|`` (clawmem stores the
  phrases of ``<!-- trigger: a, b -->`` joined with ``"; "``);
- a phrase with one word scores 0.85 when the message has that word, else 0; a longer phrase
  scores ``coverage·0.8 + min(1, overlap/2)·0.2`` where ``overlap`` is how many of its distinct
  words the message has and ``coverage = overlap / words`` (0 when nothing overlaps);
- match = ``0.8·best phrase + 0.2·clamp(retrieval score, 0, 1)``; strong at ≥ 0.65;
- the top strong hits are injected as ``- <text> (Source: path#L<n>)`` lines, cut together at a
  char budget (:func:`inject`).

**CJK (clawmem's rule).** Chinese and Japanese have no spaces, so the regex turns a whole
sentence into one "word": OpenClaw never finds ``杭州`` in ``周末去杭州的车票订好了吗`` (the only
message word is the whole sentence). clawmem counts a trigger word that contains a CJK character
(Han, kana, Hangul) as present when it occurs **anywhere in the lowercased message**; words without
CJK keep OpenClaw's whole-word rule (``car`` does not hit ``carpet``). Every phrase also reports
OpenClaw's own score so the difference is visible.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from clawmem.engine.context.budget import truncate_u16, u16len
from clawmem.engine.search.tokens import is_cjk_char

STRONG_MATCH = 0.65
ONE_WORD_SCORE = 0.85
PHRASE_WEIGHT = 0.8
RELEVANCE_WEIGHT = 0.2
_WORD = re.compile(r"[^\W]+")  # Python's \w without '_' exclusions == [\p{L}\p{N}_]
_PHRASE_SPLIT = re.compile(r"[\n;|]+")


def normalize_words(text: str) -> list[str]:
    """OpenClaw's ``normalizeWords``: lowercase word runs longer than one UTF-16 unit."""
    return [w for w in _WORD.findall(text.lower()) if u16len(w) > 1]


def split_phrases(triggers: str) -> list[str]:
    return [p.strip() for p in _PHRASE_SPLIT.split(triggers) if p.strip()]


def has_cjk(word: str) -> bool:
    return any(is_cjk_char(ch) for ch in word)


@dataclass(frozen=True)
class MessageWords:
    """The message as the scorer sees it."""

    text: str  # lowercased message
    words: frozenset[str]

    @classmethod
    def of(cls, message: str) -> MessageWords:
        return cls(message.lower(), frozenset(normalize_words(message)))

    def has(self, word: str) -> tuple[bool, bool]:
        """(present for clawmem, present for OpenClaw)."""
        exact = word in self.words
        return exact or (has_cjk(word) and word in self.text), exact


@dataclass(frozen=True)
class PhraseScore:
    phrase: str
    words: tuple[str, ...]  # the phrase's distinct words
    matched: tuple[str, ...]  # the ones the message has (clawmem rule)
    overlap: int
    coverage: float
    score: float  # clawmem
    openclaw_score: float  # OpenClaw's whole-word rule only
    cjk_match: bool  # a word matched only through the CJK substring rule


def _phrase_value(n_words: int, overlap: int) -> float:
    if n_words == 0 or overlap == 0:
        return 0.0
    if n_words == 1:
        return ONE_WORD_SCORE
    return (overlap / n_words) * 0.8 + min(1.0, overlap / 2) * 0.2


def score_phrase(phrase: str, message: MessageWords) -> PhraseScore:
    words = tuple(dict.fromkeys(normalize_words(phrase)))
    hits = [message.has(w) for w in words]
    matched = tuple(w for w, (ours, _) in zip(words, hits, strict=True) if ours)
    exact = sum(1 for _, theirs in hits if theirs)
    overlap = len(matched)
    return PhraseScore(
        phrase=phrase,
        words=words,
        matched=matched,
        overlap=overlap,
        coverage=overlap / len(words) if words else 0.0,
        score=_phrase_value(len(words), overlap),
        openclaw_score=_phrase_value(len(words), exact),
        cjk_match=overlap > exact,
    )


@dataclass(frozen=True)
class TriggerScore:
    phrases: tuple[PhraseScore, ...]
    trigger_score: float  # best phrase (clawmem)
    relevance: float  # clamp(retrieval score, 0, 1)
    match_score: float
    openclaw_match_score: float
    strong: bool


def score_entry(triggers: str | None, retrieval_score: float | None, message: MessageWords) -> TriggerScore:
    phrases = tuple(score_phrase(p, message) for p in split_phrases(triggers or ""))
    best = max((p.score for p in phrases), default=0.0)
    best_oc = max((p.openclaw_score for p in phrases), default=0.0)
    relevance = max(0.0, min(1.0, retrieval_score or 0.0))
    match = best * PHRASE_WEIGHT + relevance * RELEVANCE_WEIGHT if triggers else 0.0
    match_oc = best_oc * PHRASE_WEIGHT + relevance * RELEVANCE_WEIGHT if triggers else 0.0
    return TriggerScore(phrases, best, relevance, match, match_oc, match >= STRONG_MATCH)


def source_line(excerpt: str, path: str, start_line: int) -> str:
    """One injected line as OpenClaw writes it: ``- <text> (Source: path#L<n>)`` (docs/memory-core.md §9)."""
    return f"- {excerpt} (Source: {path}#L{start_line})"


@dataclass(frozen=True)
class Injection:
    """The injected lines after the char-budget cut, and where each line sat before the cut."""

    summary: str  # the lines joined by newlines, cut at the budget
    spans: tuple[tuple[int, int], ...]  # each line's [start, end) in the joined text, UTF-16 units

    def kept(self, span: tuple[int, int]) -> int:
        """How many UTF-16 units of the line at ``span`` survive the cut."""
        a, z = span
        return max(0, min(z, u16len(self.summary)) - a)


def inject(lines: Sequence[str], max_chars: int) -> Injection:
    """The top strong hits' lines, joined and cut at ``max_chars`` UTF-16 units (never half a surrogate pair).

    The spans let each hit say whether it went in whole, in part, or not at all.
    """
    summary = truncate_u16("\n".join(lines), max_chars)
    spans: list[tuple[int, int]] = []
    pos = 0
    for line in lines:
        n = u16len(line)
        spans.append((pos, pos + n))
        pos += n + 1
    return Injection(summary, tuple(spans))
