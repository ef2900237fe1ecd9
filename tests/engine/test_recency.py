"""A changed fact, newer first (issue 36): where a newer diary supersedes an older one on the same
subject, the newer ranks first and the older says it is the older version, in Chinese and English
(tests/fixtures/recency-queries.json); a newer note on another subject that shares words (each
newer case's "distractor") is not taken for a version. Age alone only reorders within
search.max_decay (tests/engine/test_search.py has the breakdown side)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.search.types import SearchHit

from tests.conftest import FIXTURES, NOW, copy_fixture, make_settings

CASES = json.loads((FIXTURES / "recency-queries.json").read_text(encoding="utf-8"))
assert CASES["now"] == NOW
# Known misses of the rule (bench/RESULTS.md, "A changed fact"): the newer note does not qualify
# for the question — the model scores "now swim at the city pool" 0.18 for "when do I work out"
# and "不去健身房了，改成…游泳" 0.28 for "去健身房的时间", under the 0.35 threshold — and the
# rule orders versions that both qualify (an older note is never hidden, and a newer one that
# does not answer the question is not brought in). Strict, so a fix shows up as an unexpected pass.
KNOWN_MISSES = {"when do I work out", "去健身房的时间"}
PARAMS = [
    pytest.param(
        c,
        id=c["query"],
        marks=[pytest.mark.xfail(strict=True, reason="the newer version does not qualify")]
        if c["query"] in KNOWN_MISSES
        else [],
    )
    for c in CASES["queries"]
]


@pytest.fixture(scope="module")
def recency_engine(tmp_path_factory: pytest.TempPathFactory, default_model_path: Path) -> Iterator[MemoryEngine]:
    tmp = tmp_path_factory.mktemp("recency")
    (tmp / "home").mkdir()
    engine = MemoryEngine(make_settings(tmp / "home", copy_fixture("workspace-recency", tmp)))
    engine.sync()
    yield engine
    engine.close()


def _rank(results: tuple[SearchHit, ...], target: str) -> int | None:
    path, line = target.rsplit(":", 1)
    return next((i for i, h in enumerate(results) if h.path == path and h.start_line <= int(line) <= h.end_line), None)


@pytest.mark.parametrize("case", PARAMS)
def test_the_newer_memory_on_the_same_subject_ranks_first(recency_engine: MemoryEngine, case: dict[str, str]) -> None:
    r = recency_engine.search(case["query"], record=False, sync=False)
    newer, older = _rank(r.results, case["newer"]), _rank(r.results, case["older"])
    shown = [f"{h.path}:{h.start_line} {h.score:.3f}" for h in r.results]
    assert newer is not None and (older is None or newer < older), shown
    if older is not None and older == newer + 1:
        # moved by the version rule, or ranked so on its own: either way the label names the newer
        label = r.results[older].newer_version
        if label is not None:
            assert label.rank == newer + 1 and label.citation.startswith(r.results[newer].path)
    distractor = _rank(r.results, case["distractor"]) if "distractor" in case else None
    if distractor is not None:  # the newer note on another subject is nobody's newer version
        assert all(h.newer_version is None or h.newer_version.rank != distractor + 1 for h in r.results), shown


def test_the_older_version_says_which_result_replaced_it(recency_engine: MemoryEngine) -> None:
    r = recency_engine.search("搬家是哪一天", record=False, sync=False)
    newer, older = _rank(r.results, "memory/2026-10-02.md:3"), _rank(r.results, "memory/2026-08-05.md:3")
    assert newer is not None and older == newer + 1
    label = r.results[older].newer_version
    assert label is not None and not label.marked
    assert (label.rank, label.citation, label.date) == (newer + 1, "memory/2026-10-02.md#L3", "2026-10-02")
    assert r.results[newer].newer_version is None and r.results[older].status == "active"


def test_the_version_rule_can_be_turned_off(recency_engine: MemoryEngine) -> None:
    s = recency_engine.settings
    off = MemoryEngine(replace(s, search=replace(s.search, newer_version_first=False)))
    try:
        r = off.search("搬家是哪一天", record=False, sync=False)
        assert all(h.newer_version is None for h in r.results)
        # without the rule the model's preference for the older note decides (the case it fixes)
        newer, older = _rank(r.results, "memory/2026-10-02.md:3"), _rank(r.results, "memory/2026-08-05.md:3")
        assert older is not None and (newer is None or older < newer)
    finally:
        off.close()


def test_decay_off_lets_relevance_alone_decide(recency_engine: MemoryEngine) -> None:
    # The same cases with decay off: age is what put the newer ones first above (some lose).
    s = recency_engine.settings
    off = MemoryEngine(replace(s, search=replace(s.search, decay_enabled=False, newer_version_first=False)))
    try:
        lost = 0
        for case in CASES["queries"]:
            r = off.search(case["query"], record=False, sync=False)
            newer, older = _rank(r.results, case["newer"]), _rank(r.results, case["older"])
            lost += not (newer is not None and (older is None or newer < older))
            assert all(h.breakdown.decay == 1.0 for h in r.results)
        assert lost >= 1
    finally:
        off.close()
