"""A changed fact: when two qualifying hits are versions of one fact, the newer ranks first and
the older says so ("older version of #1 (2026-10-12)"). README "A changed fact" has the rule in
words; bench/RESULTS.md ("A changed fact") what each alternative rule cost.

Two hits are versions of one fact when

- one is *marked* superseded by the other (``<!-- observed: … | status: superseded | by: PATH#LN -->``
  in any memory file, engine/workspace/entries.py) — always honoured; or
- *found*: both are daily notes of different dates; the lines that answer the query (each hit's
  best line, else its text) have at least :data:`VERSION_OVERLAP` of their word weight in common
  (their content words, each weighed by how rare it is among the search's candidates: the same
  named things, not the same speaker or "great"); and the newer answers the query at least
  :data:`VERSION_RELEVANCE` as well as the older (its qualifying score) — so a newer note on
  another subject that happens to share words never jumps above a clearly better answer.

Not when the question names a day ("what did we decide on August 20?"): it asks for the fact as
it was then, and the diary of that day ranks first (engine/search/dated.py). Age alone still
reorders by at most ``search.max_decay``; this moves a hit only above its own older version among
the results, never above anything else, and brings nothing in from below the cut (:data:`BRING_IN`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from clawmem.engine.search.ranking import MMR_TOKEN_CACHE, OPENCLAW_DATED, jaccard, snippet_tokens
from clawmem.engine.search.scoring import Scored
from clawmem.engine.search.tokens import STOP_WORDS

# The share of the two lines' word weight (WordWeights) they have in common to be read as one
# fact said twice. Measured (bench/RESULTS.md, "A changed fact"): the recency fixture's version
# pairs share 0.11-0.52 of it, its newer distractors at most 0.07; of the pairs of LoCoMo
# transcript lines that pass the relevance test below (2,771 in the first conversation, nearly all
# of them two turns on one topic, not a changed fact) 90 % share under 0.09.
VERSION_OVERLAP = 0.1
# The newer must qualify at least half as well as the older: a version answers the same question
# (the recency fixture's pairs: 0.52-1.84×). Without this test a weakly related newer line moves
# above a strong answer: with plain word overlap it cost LoCoMo's MRR at min score 0 0.669 -> 0.552.
VERSION_RELEVANCE = 0.5
# Whether a qualifying newer version from below the cut is brought into the results (the last
# result then drops out). Off: the rule reorders the results it is given ("two results that both
# qualify"). Measured both ways (bench/RESULTS.md, plain word overlap): bringing versions in cost
# LoCoMo's recall@5 at min score 0 another 0.010 (0.826 -> 0.816), and gained no recency case.
BRING_IN = False
# Which words the overlap counts: "content" leaves out stop words and one- or two-letter Latin
# words (as the keyword leg does, engine/search/tokens.py), "all" counts every MMR token.
VERSION_WORDS = "content"
# How shared words count: "idf" by how rare they are among the search's candidates (WordWeights),
# "flat" all alike.
VERSION_WEIGHTS = "idf"


def fact_date(path: str) -> date | None:
    """The day a dated note under memory/ was written (its file name, a session note's slug
    allowed: ranking.OPENCLAW_DATED), or None for an undated file."""
    m = OPENCLAW_DATED.search(path)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def _fact_text(x: Scored) -> str:
    """The words that answer the query: the hit's best line, else its whole text."""
    return x.score.line.text if x.score.line is not None else x.cand.text


def fact_words(text: str) -> frozenset[str]:
    """The words two versions of a fact are compared by (:data:`VERSION_WORDS`)."""
    return _fact_words(text, VERSION_WORDS)


@lru_cache(maxsize=MMR_TOKEN_CACHE)  # every candidate's words, keystroke after keystroke in the app
def _fact_words(text: str, words: str) -> frozenset[str]:
    tokens = snippet_tokens(text)
    if words == "all":
        return tokens
    return frozenset(t for t in tokens if t not in STOP_WORDS and not (t.isascii() and len(t) < 3))


class WordWeights:
    """How much a shared word says that two hits state one fact: its inverse frequency among the
    search's candidates, ln(1 + N / df). A word in every candidate (a speaker's name on each line
    of a transcript, "great") says little; a word two candidates share and no other ("Lakeside",
    "搬家") says they are about the same thing — the "same named things" of a changed fact.
    :data:`VERSION_WEIGHTS` "flat" weighs every word 1 (plain Jaccard, the measured alternative)."""

    def __init__(self, context: Sequence[Scored]) -> None:
        self.context = context
        self.total = max(1, len(context))
        self._df: Counter[str] | None = None

    @property
    def df(self) -> Counter[str]:
        """Counted on the first pair that gets this far (most searches have none: no two dated
        results, or the newer answering too weakly)."""
        if self._df is None:
            self._df = Counter()
            for x in self.context:
                self._df.update(fact_words(x.cand.text))
        return self._df

    def overlap(self, a: frozenset[str], b: frozenset[str]) -> float:
        if VERSION_WEIGHTS != "idf":
            return jaccard(a, b)
        union = a | b
        if not union:
            return 0.0
        df = self.df
        weight = {w: math.log(1 + self.total / max(1, df[w])) for w in union}
        return sum(weight[w] for w in a & b) / sum(weight.values())


def found_versions(older: Scored, newer: Scored, weights: WordWeights) -> bool:
    """Whether ``newer`` is a later version of the fact ``older`` states (module docstring)."""
    d_old, d_new = fact_date(older.cand.path), fact_date(newer.cand.path)
    if d_old is None or d_new is None or d_new <= d_old:
        return False
    if newer.qualifies < VERSION_RELEVANCE * older.qualifies:
        return False
    return weights.overlap(fact_words(_fact_text(older)), fact_words(_fact_text(newer))) >= VERSION_OVERLAP


@dataclass(frozen=True)
class OlderVersion:
    """Why a hit sits below another: ``newer_id`` is the chunk of the newer version, ``marked``
    whether a superseded marker said so (else the rule found it)."""

    newer_id: str
    marked: bool


def order_versions(
    selected: Sequence[Scored],
    qualifying: Sequence[Scored],
    context: Sequence[Scored],
    max_results: int,
    *,
    marked_newer: Callable[[Scored, Sequence[Scored]], Scored | None],
    find: bool,
) -> tuple[list[Scored], dict[str, OlderVersion]]:
    """The results with each hit's newest version directly above it.

    ``qualifying`` are every live hit that qualifies, in the order (those not selected may be
    brought in); ``marked_newer(x, pool)`` the hit a superseded marker on ``x`` points at, if it
    is in ``pool``; ``find`` whether unmarked versions are looked for (calibrated scoring only);
    ``context`` every candidate of the search (what the words are weighed against).
    Returns the new order, cut to ``max_results``, and {older chunk id: its newer version}."""
    out = list(selected)
    pool = list(qualifying) if BRING_IN else list(selected)
    older: dict[str, OlderVersion] = {}
    weights = WordWeights(context) if find else None
    i = 0
    while i < len(out):  # each turn moves on or learns one more older version: it ends
        x = out[i]
        if x.cand.id in older or x.score.path_tier:  # exact-path hits keep their tier's place
            i += 1
            continue
        newest = marked_newer(x, pool)
        marked = newest is not None
        if newest is None and weights is not None:
            versions = [y for y in pool if y.cand.id != x.cand.id and found_versions(x, y, weights)]
            newest = max(versions, key=lambda y: (fact_date(y.cand.path) or date.min, y.qualifies), default=None)
        if newest is None or newest.cand.id in older:  # none, or a loop of markers
            i += 1
            continue
        older[x.cand.id] = OlderVersion(newest.cand.id, marked)
        at = next((k for k, y in enumerate(out) if y.cand.id == newest.cand.id), None)
        if at is not None and at < i:
            i += 1
            continue
        if at is not None:
            del out[at]
        out.insert(i, newest)  # the newer directly above; it is looked at next (it may have a newer one)
    kept = out[:max_results]
    ids = {y.cand.id for y in kept}
    return kept, {k: v for k, v in older.items() if k in ids}
