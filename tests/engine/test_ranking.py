"""Each scoring formula on constructed cases (docs/memory-core.md §4 steps 6–9)."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

import pytest
from clawmem.engine.search.keyword import bm25_to_score, exact_tier
from clawmem.engine.search.ranking import (
    decay_factor,
    diary_age_days,
    importance_factor,
    jaccard,
    mmr_picks,
    openclaw_age_days,
    openclaw_snippet_tokens,
    project_factor,
    snippet_tokens,
)

NOW = datetime(2026, 11, 5, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("age", "expected"), [(0, 1.0), (30, 0.5), (60, 0.25)])
def test_decay_halves_every_30_days(age: float, expected: float) -> None:
    assert decay_factor(age, 30.0) == pytest.approx(expected)


def test_decay_applies_only_to_exact_dated_diaries_and_clamps_future_dates() -> None:
    assert diary_age_days("memory/2026-10-06.md", NOW) == pytest.approx(30.0)
    assert diary_age_days("memory/2026-12-01.md", NOW) == 0.0  # written "later": never negative
    for evergreen in (
        "MEMORY.md",
        "USER.md",
        "memory/2026-10-06-call.md",
        "memory/warm/2026-10-06.md",
        "memory/projects/billing.md",
        "memory/2026-02-30.md",
    ):
        assert diary_age_days(evergreen, NOW) is None
    assert decay_factor(None, 30.0) == 1.0


@pytest.mark.parametrize(
    ("importance", "factor"), [(1, 0.80), (5, 1.00), (10, 1.25), (None, 1.0), (0, 0.80), (99, 1.25), (7.9, 1.10)]
)
def test_importance_factor(importance: float | None, factor: float) -> None:
    assert importance_factor(importance) == pytest.approx(factor)


def test_project_factor() -> None:
    assert project_factor(("a/x", "b/y"), ("a/x", "b/y", "c")) == pytest.approx(1.15)
    assert project_factor(("a/x", "b/y"), ("a/x",)) == pytest.approx(0.9)
    assert project_factor((), ("a/x",)) == 1.0  # untagged is neutral
    assert project_factor(("a/x",), ()) == 1.0  # no active projects: neutral


def test_bm25_rank_to_score() -> None:
    assert bm25_to_score(-3.0) == pytest.approx(0.75)
    assert bm25_to_score(1.0) == pytest.approx(0.5)
    assert bm25_to_score(math.inf) == pytest.approx(0.001)


@pytest.mark.parametrize(
    ("query", "path", "tier"),
    [
        ("memory/2026-11-01.md", "memory/2026-11-01.md", 3),
        ("./Memory/2026-11-01.md", "memory/2026-11-01.md", 3),
        ("2026-11-01.md", "memory/2026-11-01.md", 2),
        ("2026-11-01", "memory/2026-11-01.md", 1),
        ("billing", "memory/projects/billing.md", 1),
        ("projects/billing", "memory/projects/billing.md", 0),
        ("bill", "memory/projects/billing.md", 0),
    ],
)
def test_exact_path_tiers(query: str, path: str, tier: int) -> None:
    assert exact_tier(query, path) == tier


def test_mmr_reorders_near_duplicates_without_changing_scores() -> None:
    items = [
        ("a", 0.90, "hotel by the lake budget"),
        ("b", 0.89, "hotel by the lake budget too"),
        ("c", 0.85, "return train ticket friday"),
        ("d", 0.50, "deploys on tuesday"),
    ]
    # normalised relevance a 1.0, b 0.975, c 0.875, d 0: b is 5/6 similar to a, c is new
    ordered = list(mmr_picks(items, relevance=lambda x: x[1], tokens=lambda x: snippet_tokens(x[2]), lam=0.7))
    assert [x[0] for x in ordered] == ["a", "c", "b", "d"]
    assert sorted(x[1] for x in ordered) == [0.50, 0.85, 0.89, 0.90]  # scores untouched
    plain = list(mmr_picks(items, relevance=lambda x: x[1], tokens=lambda x: snippet_tokens(x[2]), lam=1.0))
    assert [x[0] for x in plain] == ["a", "b", "c", "d"]


def test_snippet_tokens_handle_cjk_with_bigrams() -> None:
    toks = snippet_tokens("返程车票 ticket")
    assert {"返程", "程车", "车票", "ticket"} <= toks
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(1 / 3)


def test_snippet_tokens_of_ascii_text_are_its_unicode_words() -> None:
    # The ASCII fast path must give exactly the word tokens the general pattern gives.
    import re

    every_ascii = "".join(chr(i) for i in range(128))
    texts = ["Gina's dance_class at 10:30, then F1 re-runs!", "ALL CAPS and x2y", "tabs\tand\nlines — no", ""]
    texts += [every_ascii, every_ascii.replace(" ", ""), "a\x00b\x7fc\x1fd__e"]
    for text in texts:
        assert snippet_tokens(text) == frozenset(re.findall(r"[^\W]+", text.lower())), text
    assert snippet_tokens("Gina's dance_class") == {"gina", "s", "dance_class"}


def test_openclaw_scoring_decays_every_dated_memory_path() -> None:
    # OpenClaw 2026.9.6 decays slugged and nested dated notes too; other memory paths never decay.
    for dated in ("memory/2026-10-06.md", "memory/2026-10-06-call.md", "memory/warm/2026-10-06.md"):
        assert openclaw_age_days(dated, NOW, None) == pytest.approx(30.0)
    for evergreen in ("MEMORY.md", "USER.md", "memory/projects/billing.md", "notes/2026-10-06.md"):
        assert openclaw_age_days(evergreen, NOW, None) is None
    mtime = int(datetime(2026, 11, 4, tzinfo=UTC).timestamp() * 1000)
    assert openclaw_age_days("memory/2026-02-30.md", NOW, mtime) == pytest.approx(1.0)  # no such day: mtime


def test_openclaw_mmr_tokens_and_ties() -> None:
    assert openclaw_snippet_tokens("返程 ticket G7") == {"返", "程", "返程", "ticket", "g7"}
    empty_a, empty_b = openclaw_snippet_tokens("Привет"), openclaw_snippet_tokens("привет ")
    assert jaccard(empty_a, empty_b) == 1.0 and jaccard(empty_a, openclaw_snippet_tokens("мир")) == 0.0
    # After p, r1 and r2 have the same MMR value (0.5·0.5 − 0 = 0.5·0.75 − 0.5·0.25): OpenClaw
    # takes the higher score (r2); the default rule keeps list order (r1).
    items = [("p", 1.0, {"a"}), ("r1", 0.5, {"b"}), ("r2", 0.75, {"a", "c", "d", "e"}), ("z", 0.0, {"z"})]
    tied = list(mmr_picks(items, relevance=lambda x: x[1], tokens=lambda x: frozenset(x[2]), lam=0.5, exact_ties=True))
    assert [x[0] for x in tied] == ["p", "r2", "r1", "z"]
    first = list(mmr_picks(items, relevance=lambda x: x[1], tokens=lambda x: frozenset(x[2]), lam=0.5))
    assert [x[0] for x in first] == ["p", "r1", "r2", "z"]


def test_the_jaccard_matrix_equals_jaccard_for_every_pair() -> None:
    # MMR's similarities come from one incidence-matrix product over hashed tokens; every pair
    # must get the set definition's value (shared words, CJK bigrams, empty and identical sets;
    # the diagonal is never read).
    from clawmem.engine.search.ranking import _jaccard_matrix

    rng = random.Random(7)
    words = [f"w{i}" for i in range(60)] + ["返程", "程车", "车票", "ticket"]
    sets = [frozenset(rng.sample(words, rng.randint(0, 12))) for _ in range(40)]
    sets += [snippet_tokens("返程车票 ticket friday"), snippet_tokens("返程车票 ticket friday"), frozenset()]
    matrix = _jaccard_matrix(sets)
    for i, a in enumerate(sets):
        for j, b in enumerate(sets):
            if i != j:
                assert matrix[i, j] == jaccard(a, b), (i, j)


def _greedy_reference(rel: list[float], sets: list[frozenset[str]], lam: float, exact_ties: bool) -> list[int]:
    """MMR straight from its definition, one Python comparison at a time (the rules of mmr_picks)."""
    lo, hi = min(rel), max(rel)
    norm = [(r - lo) / (hi - lo) if hi > lo else 1.0 for r in rel]
    order: list[int] = []
    left = list(range(len(rel)))
    while left:
        vals = {
            i: lam * norm[i] - (1 - lam) * max((jaccard(sets[i], sets[p]) for p in order), default=0.0) for i in left
        }
        if exact_ties:
            top = max(vals.values())
            best = max((i for i in left if vals[i] == top), key=lambda i: (rel[i], -i))
        else:
            best, best_val = -1, -math.inf
            for i in left:
                if vals[i] > best_val + 1e-12:
                    best, best_val = i, vals[i]
        order.append(best)
        left.remove(best)
    return order


def test_mmr_picks_follow_the_greedy_definition_on_random_candidates() -> None:
    # mmr_picks keeps every item's value up to date with array operations; the order must be the
    # definition's, ties included (repeated relevances, identical and empty token sets).
    rng = random.Random(11)
    words = [f"w{i}" for i in range(25)]
    for trial in range(60):
        n = rng.randint(2, 40)
        rel = [rng.choice([0.2, 0.5, 0.5, 0.9]) if trial % 3 == 0 else rng.random() for _ in range(n)]
        sets = [frozenset(rng.sample(words, rng.randint(0, 8))) for _ in range(n)]
        if n > 3:
            sets[1] = sets[0]
        items = list(range(n))
        for lam in (0.7, 0.5, 1.0):
            for ties in (False, True):
                got = list(
                    mmr_picks(items, relevance=rel.__getitem__, tokens=sets.__getitem__, lam=lam, exact_ties=ties)
                )
                assert got == _greedy_reference(rel, sets, lam, ties), (trial, lam, ties)


def test_snippets_keep_the_first_utf16_units_and_never_split_a_character() -> None:
    # OpenClaw cuts a snippet at 700 UTF-16 code units: CJK characters are one unit, an emoji
    # (an astral character) is two and is dropped whole when only one unit is left.
    from clawmem.engine.search.ranking import snippet_of

    assert snippet_of("short", 10) == "short"
    assert snippet_of("abcdefghijkl", 10) == "abcdefghij"
    assert snippet_of("湖景房" * 5, 10) == ("湖景房" * 5)[:10]
    assert snippet_of("a😀" * 6, 10) == "a😀a😀a😀a"  # 3 × 3 units + 1: the next emoji does not fit
    assert snippet_of("abcdefghi😀" + "x" * 20, 10) == "abcdefghi"
    assert snippet_of("😀" * 3, 6) == "😀" * 3
    assert snippet_of("\udc80" * 12, 10) == "\udc80" * 10  # a lone surrogate (undecodable byte) is one unit
