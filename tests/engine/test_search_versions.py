"""A changed fact in search (issue 36): an entry marked superseded — in a diary or in MEMORY.md,
by `clawmem supersede` or by hand — ranks directly below the entry that replaced it, says so in
its breakdown, its JSON and the MCP result (``supersededBy``), and goes back to its place when
the mark is undone. The found-versions rule itself (two daily notes of one fact) is measured on
the recency fixture in tests/engine/test_recency.py.

Keyword-only engines (no model): the order here is BM25's and the markers', which is what the
marker rule must override; real files, a real SQLite index."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.search.explain import breakdown_rows, hit_record, why_sentence
from clawmem.engine.search.types import SearchHit, SearchResponse
from clawmem.engine.search.versions import fact_date
from clawmem.mcp_server.door import MemoryDoor
from clawmem.mcp_server.server import build_server
from mcp import Client

from tests.conftest import make_settings
from tests.mcp.conftest import structured

# the found-versions rule and decay off: what is checked is what the marker alone does to BM25's order
NO_FOUND_RULE = {"newer_version_first": False, "decay_enabled": False}
GYM = "memory/2026-03-02.md"
POOL = "memory/2026-10-20.md"


@pytest.fixture
def eng(home: Path, workspace: Path) -> Iterator[MemoryEngine]:
    # The older note says "gym" three times: BM25 ranks it first for "gym schedule" on its own.
    (workspace / GYM).write_text(
        "# 2026-03-02\n\n- Gym schedule: the gym at 7am, gym bag packed the night before.\n- Lunch with Priya.\n"
    )
    (workspace / POOL).write_text("# 2026-10-20\n\n- New schedule: no more gym, I swim at the pool at 7am now.\n")
    engine = MemoryEngine(make_settings(home, workspace, embedding={"provider": "none"}, search=NO_FOUND_RULE))
    engine.sync()
    yield engine
    engine.close()


def ranks(r: SearchResponse) -> dict[str, int]:
    return {h.path: i for i, h in reversed(list(enumerate(r.results)))}


def hit(r: SearchResponse, path: str) -> SearchHit:
    return next(h for h in r.results if h.path == path)


def test_unmarked_the_older_note_ranks_first(eng: MemoryEngine) -> None:
    # the baseline the marker must change (if this fails, the tests below prove nothing)
    r = eng.search("gym schedule", record=False, sync=False, min_score=0.0)
    assert ranks(r)[GYM] < ranks(r)[POOL]
    assert all(h.newer_version is None and h.status == "active" for h in r.results)


def test_a_marked_diary_entry_ranks_below_its_successor_and_says_so(eng: MemoryEngine) -> None:
    eng.supersede(f"{GYM}:3", f"{POOL}:3")
    r = eng.search("gym schedule", record=False, sync=False, min_score=0.0)
    assert ranks(r)[POOL] + 1 == ranks(r)[GYM]
    old = hit(r, GYM)
    assert old.status == "superseded" and old.superseded_by == f"{POOL}#3"
    assert old.newer_version is not None and old.newer_version.marked
    assert old.newer_version.rank == ranks(r)[POOL] + 1 and old.newer_version.citation.startswith(POOL)
    words = {row.label: row.words for row in breakdown_rows(old, r, 0.0)}
    assert words["version"] == f"marked superseded by #{ranks(r)[POOL] + 1} (2026-10-20)"
    assert "ranked below it" in why_sentence(old, ranks(r)[GYM] + 1, r, threshold=0.0, rescue=False)
    record = hit_record(old)
    assert record["supersededBy"] == f"{POOL}#3" and record["newerVersion"]["marked"] is True
    assert hit_record(hit(r, POOL))["supersededBy"] is None


def test_unmarked_the_found_rule_takes_the_two_notes_for_versions(eng: MemoryEngine) -> None:
    s = eng.settings
    on = MemoryEngine(replace(s, search=replace(s.search, newer_version_first=True)))
    try:
        r = on.search("gym schedule", record=False, sync=False, min_score=0.0)
        assert ranks(r)[POOL] + 1 == ranks(r)[GYM]
        old = hit(r, GYM)
        assert old.status == "active" and old.superseded_by is None
        assert old.newer_version is not None and not old.newer_version.marked
        assert {row.label: row.words for row in breakdown_rows(old, r, 0.0)}["version"].startswith("older version of #")
        # a note on another subject is not taken for a version
        assert hit(r, POOL).newer_version is None
    finally:
        on.close()


def test_openclaw_scoring_moves_nothing_and_still_shows_the_mark(eng: MemoryEngine) -> None:
    eng.supersede(f"{GYM}:3", f"{POOL}:3")
    r = eng.search("gym schedule", record=False, sync=False, min_score=0.0, scoring="openclaw")
    # OpenClaw's formula has no such rule: nothing is moved (and nothing says it was)
    assert all(h.newer_version is None for h in r.results)
    assert hit(r, GYM).status == "superseded" and hit(r, GYM).superseded_by == f"{POOL}#3"


def test_undo_puts_the_entry_back_in_its_place(eng: MemoryEngine) -> None:
    eng.supersede(f"{GYM}:3", f"{POOL}:3")
    eng.unsupersede(f"{GYM}:4")  # the marker line above it moved the bullet down one
    r = eng.search("gym schedule", record=False, sync=False, min_score=0.0)
    assert ranks(r)[GYM] < ranks(r)[POOL]
    assert hit(r, GYM).status == "active" and hit(r, GYM).superseded_by is None


def test_a_memory_md_entry_marked_by_hand_ranks_below_the_diary_that_replaced_it(
    eng: MemoryEngine, workspace: Path
) -> None:
    (workspace / "MEMORY.md").write_text(
        "# Memory\n\n"
        "<!-- observed: 2026-03-02 | status: superseded | by: memory/2026-10-20.md#3 -->\n"
        "- Gym schedule: gym at 7am, gym on weekdays, gym bag by the door.\n",
        encoding="utf-8",
    )
    eng.sync()
    r = eng.search("gym schedule", record=False, sync=False, min_score=0.0)
    assert ranks(r)[POOL] + 1 == ranks(r)["MEMORY.md"]
    m = hit(r, "MEMORY.md")
    assert m.status == "superseded" and m.superseded_by == f"{POOL}#3" and m.newer_version is not None


def test_a_pointer_to_a_result_that_is_not_there_still_shows_the_mark(eng: MemoryEngine, workspace: Path) -> None:
    (workspace / "memory/2026-01-05.md").write_text(
        "# 2026-01-05\n\n- Gym schedule: gym on Mondays. <!-- observed: 2026-01-05 | status: superseded | by: USER.md#9 -->\n",
        encoding="utf-8",
    )
    eng.sync()
    r = eng.search("gym schedule", record=False, sync=False, min_score=0.0)
    old = hit(r, "memory/2026-01-05.md")
    assert old.status == "superseded" and old.superseded_by == "USER.md#9" and old.newer_version is None
    assert {row.label: row.words for row in breakdown_rows(old, r, 0.0)}["version"] == "marked superseded by USER.md#9"


def test_the_date_of_a_fact_is_its_diary_day() -> None:
    assert str(fact_date("memory/2026-10-20.md")) == "2026-10-20"
    assert str(fact_date("memory/2026-10-20-standup.md")) == "2026-10-20"
    assert fact_date("MEMORY.md") is None and fact_date("memory/2026-02-30.md") is None


async def test_agents_see_superseded_by_in_memory_search(eng: MemoryEngine, home: Path, workspace: Path) -> None:
    eng.supersede(f"{GYM}:3", f"{POOL}:3")
    engine = MemoryEngine(make_settings(home, workspace, embedding={"provider": "none"}, search=NO_FOUND_RULE))
    door = MemoryDoor(engine, watch=False, embed=False, sync=False)
    try:
        async with Client(build_server(door, read_only=True)) as client:
            args = {"query": "gym schedule", "minScore": 0}
            lean = structured(await client.call_tool("memory_search", args))
            out = structured(await client.call_tool("memory_search", {**args, "explain": True}))
    finally:
        door.close()
    by_path = {h["path"]: h for h in out["results"]}
    assert by_path[GYM]["supersededBy"] == f"{POOL}#3"
    assert by_path[GYM]["newerVersion"]["rank"] == [h["path"] for h in out["results"]].index(POOL) + 1
    assert "supersededBy" not in by_path[POOL]
    assert json.dumps(out, ensure_ascii=False).count("supersededBy") == 1
    # the lean result keeps the pointer: an agent must not act on the replaced fact
    assert [h["supersededBy"] for h in lean["results"] if "supersededBy" in h] == [f"{POOL}#3"]
