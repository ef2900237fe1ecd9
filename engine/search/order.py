"""Stage 3 of a search: the order. Exact-path tiers 3 → 2 → 1 first, then the rest, MMR within
each group (hybrid); then the threshold, the rescue when nothing qualified, the spare places
filled by keyword-only hits, and the near-misses — each with its MMR rank.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from clawmem.engine.config import SearchSettings
from clawmem.engine.kinds import SearchMode
from clawmem.engine.search.scoring import Scored, Scorer
from clawmem.engine.search.versions import OlderVersion

# (the selected hits, every qualifying live hit, every live hit) -> the order with newer versions
# first, and {older chunk id: its newer version} (engine/search/versions.py)
VersionOrder = Callable[[list[Scored], list[Scored], list[Scored]], tuple[list[Scored], dict[str, OlderVersion]]]


class LazyOrder:
    """The final order of the live hits, produced only as far as it is read: each read goes on
    from where the last stopped, and every item keeps its 1-based rank within its group.
    ``items`` are all of them, in any order: what a read looks for is counted there first, so it
    stops when the last is found (MMR's picks are the costly part, and a search usually reads its
    first max_results passing hits and a few near-misses' ranks)."""

    def __init__(self, items: Sequence[Scored], groups: Sequence[Iterable[Scored]]) -> None:
        self._items = items
        self._source = ((x, i + 1) for g in groups for i, x in enumerate(g))
        self._read: list[tuple[Scored, int]] = []

    def _more(self) -> bool:
        nxt = next(self._source, None)
        if nxt is None:
            return False
        self._read.append(nxt)
        return True

    def first(self, wanted: Callable[[Scored], bool], k: int) -> list[Scored]:
        """The first ``k`` items in order that are ``wanted`` (fewer when fewer are)."""
        k = min(k, sum(1 for x in self._items if wanted(x)))
        out: list[Scored] = []
        i = 0
        while len(out) < k and (i < len(self._read) or self._more()):
            x = self._read[i][0]
            if wanted(x):
                out.append(x)
            i += 1
        return out

    def ranks(self, ids: set[str]) -> dict[str, int]:
        """Rank within its group of each id asked for (reading on until all have one)."""
        found = {x.cand.id: r for x, r in self._read if x.cand.id in ids}
        while len(found) < len(ids) and self._more():
            x, r = self._read[-1]
            if x.cand.id in ids:
                found[x.cand.id] = r
        return found


@dataclass(frozen=True)
class Selection:
    results: list[Scored]
    near_misses: list[Scored]
    mmr_rank: dict[str, int]
    rescue: bool  # nothing qualified: the best hits the scorer rescues were returned instead
    older: dict[str, OlderVersion]  # {chunk id: its newer version among the results} (a changed fact)


def select(
    scored: Sequence[Scored],
    scorer: Scorer,
    settings: SearchSettings,
    mode: SearchMode,
    *,
    max_results: int,
    min_score: float,
    keyword_found: bool,
    versions: VersionOrder | None = None,
) -> Selection:
    """Order the live hits and choose the results and the near-misses."""
    live = [x for x in scored if x.excluded is None]
    excluded = [x for x in scored if x.excluded is not None]
    groups = [sorted((x for x in live if x.score.path_tier == t), key=scorer.group_key(t, mode)) for t in (3, 2, 1, 0)]

    def in_order(group: list[Scored]) -> Iterable[Scored]:
        if not (settings.mmr_enabled and mode == "hybrid" and len(group) > 1):
            return group
        return scorer.mmr(group)

    order = LazyOrder(live, [in_order(g) for g in groups])

    # The threshold (on the scorer's eligibility score); when nothing qualifies, the rescue (the
    # scorer says which hits it returns); else spare places filled by keyword-only hits.
    selected = order.first(lambda x: x.qualifies >= min_score, max_results)
    rescue = False
    if not selected and (keyword_found or scorer.rescues_without_keywords):
        selected = order.first(scorer.rescues, max_results)
        rescue = bool(selected)
    elif selected and keyword_found and len(selected) < max_results and scorer.fills_spare_places(mode):
        chosen = {x.cand.id for x in selected}
        selected += order.first(
            lambda x: x.cand.id not in chosen and x.cand.kw is not None and x.score.vector_raw is None,
            max_results - len(selected),
        )
    older: dict[str, OlderVersion] = {}
    if versions is not None and selected and not rescue:
        # A changed fact: a hit's newer version directly above it (exact-path hits keep their tier).
        qualifying = [x for x in live if x.qualifies >= min_score and x.score.path_tier == 0]
        selected, older = versions(selected, qualifying, live)
    chosen_ids = {x.cand.id for x in selected}
    misses = scorer.near_misses([x for x in live if x.cand.id not in chosen_ids], min_score)
    # The best max_results of what was not returned: below the threshold, or left out (an invalid
    # project annotation, an untrusted origin) — ranked together by the score each would have had.
    near = sorted(
        [*misses, *excluded],
        key=lambda x: (
            -x.score.pre_threshold,
            -x.public,
            x.cand.path,
            x.cand.start_line,
            x.cand.end_line,
            x.cand.id,
        ),
    )[:max_results]
    # Each shown hit's MMR rank: the order is read on until every one of them has its place.
    mmr_rank = order.ranks({x.cand.id for x in (*selected, *near) if x.excluded is None})
    return Selection(selected, near, mmr_rank, rescue, older)
