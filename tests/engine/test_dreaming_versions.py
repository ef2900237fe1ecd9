"""A changed fact in Dreaming (issue 36): a candidate that a person's superseded marker names as
the newer version of a promoted fact's source is consolidated as ``superseded`` — the old promoted
entry is replaced, the new one carries the lineage — and never beside it as ``added``; a candidate
whose own entry is marked superseded is not promoted at all. The plan level on hand-built texts,
then the whole path (real searches on three days, the Deep run, the files) on the Dreaming fixture.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from clawmem.engine.dreaming import consolidate, newer
from clawmem.engine.workspace.annotations import StatusMarker
from clawmem.engine.workspace.entries import MarkedEntry

from tests.dreaming_fixture import DIARY, DREAM_AT, FACT, write_fact
from tests.engine.test_dreaming import base_settings, candidate, dreaming_wrote, engine_at, plan_for, recall_three_days

OLD_SOURCE = "memory/2026-10-01.md"
OLD_KEY = "memory:memory/2026-10-01.md:3:3:old"
OLD = f"- The staging password rotates every Monday. Source: {OLD_SOURCE}#L3-L3 <!-- trigger: x --> <!-- importance: 5 -->"
MEMORY = "\n".join(
    [
        "# Long-Term Memory",
        "",
        "- a",
        "- b",
        "- c",
        "- d",
        "- e",
        f"<!-- openclaw-memory-promotion:{OLD_KEY} -->",
        OLD,
        "",
    ]
)


def marked_by(path: str, line: int) -> newer.Markers:
    """The markers of the old fact's diary as a person's `clawmem supersede` leaves them."""
    marked = (MarkedEntry(3, 3, 3, StatusMarker("2026-10-01", "superseded", path, line)),)
    return lambda rel: marked if rel == OLD_SOURCE else ()


def test_the_marker_names_the_promoted_entry_the_candidate_replaces() -> None:
    found = newer.replaced_entries(MEMORY, DIARY, 1, 1, marked_by(DIARY, 1))
    assert found == newer.Replaced((OLD,), OLD_KEY)
    assert newer.replaced_entries(MEMORY, DIARY, 1, 1, marked_by("memory/2026-11-09.md", 1)) is None  # another entry
    assert newer.replaced_entries(MEMORY, DIARY, 1, 1, marked_by(DIARY, 7)) is None  # another line of it
    unmarked = newer.replaced_entries(MEMORY, DIARY, 1, 1, lambda rel: ())
    assert unmarked is None
    # only Dreaming-written entries (a promotion marker above) are candidates for replacing
    by_hand = MEMORY.replace(f"<!-- openclaw-memory-promotion:{OLD_KEY} -->\n", "")
    assert newer.replaced_entries(by_hand, DIARY, 1, 1, marked_by(DIARY, 1)) is None


def test_a_newer_version_is_consolidated_as_superseded_not_added() -> None:
    c = candidate(replaces=(OLD,), supersedes_key=OLD_KEY)
    plan = plan_for(MEMORY, [c], written=dreaming_wrote(MEMORY))
    assert plan.mode == "rewrite" and (plan.superseded, plan.added) == (1, 0)
    (op,) = plan.operations
    assert op.action == "superseded" and op.prior_entries == (OLD,) and op.lineage_key == OLD_KEY
    assert plan.content is not None and OLD not in plan.content and f"promotion:{OLD_KEY}" not in plan.content
    assert f"<!-- openclaw-memory-lineage:{OLD_KEY} -->\n<!-- openclaw-memory-promotion:{c.key} -->\n- {FACT}" in (
        plan.content
    )
    assert "- a\n- b\n- c\n- d\n- e\n" in plan.content  # every other entry kept
    # without the link the same candidate is added beside the old fact (what the marker prevents)
    plain = plan_for(MEMORY, [candidate()], written=dreaming_wrote(MEMORY))
    assert plain.added == 1 and plain.content is not None and OLD in plain.content


def test_the_next_version_supersedes_through_the_lineage_it_carries() -> None:
    first = plan_for(MEMORY, [candidate(replaces=(OLD,), supersedes_key=OLD_KEY)], written=dreaming_wrote(MEMORY))
    assert first.content is not None
    entry = first.operations[0].result_entry
    third = candidate(key="memory:memory/2026-11-20.md:1:1:new", path="memory/2026-11-20.md", snippet="Rotates daily.")
    found = newer.replaced_entries(
        first.content,
        third.path,
        1,
        1,
        lambda rel: (MarkedEntry(1, 1, 1, StatusMarker("x", "superseded", third.path, 1)),) if rel == DIARY else (),
    )
    assert found == newer.Replaced((entry,), OLD_KEY)  # the lineage marker it was written with
    written = consolidate.Written.from_rewrites([("", MEMORY), (MEMORY, first.content)])
    again = plan_for(
        first.content, [dataclasses.replace(third, replaces=found.entries, supersedes_key=OLD_KEY)], written=written
    )
    assert again.superseded == 1 and again.content is not None and entry not in again.content


def test_an_old_entry_the_user_edited_is_kept_and_the_new_fact_appended() -> None:
    edited = MEMORY.replace("every Monday", "every Monday (I checked)")
    line = OLD.replace("every Monday", "every Monday (I checked)")
    plan = plan_for(edited, [candidate(replaces=(line,), supersedes_key=OLD_KEY)], written=dreaming_wrote(MEMORY))
    assert plan.superseded == 0 and plan.content is not None and line in plan.content
    assert plan.fallback_reason is not None and "not exactly as clawmem wrote it" in plan.fallback_reason


MARK = f"<!-- observed: 2026-10-01 | status: superseded | by: {DIARY}#1 -->\n"
OLD_DIARY = "# 2026-10-01\n\n- The staging password rotates every Monday.\n"


def test_deep_supersedes_the_promoted_old_fact_end_to_end(home: Path, workspace: Path) -> None:
    settings = base_settings(home, workspace)
    memory = workspace / "MEMORY.md"
    # first, a real run promotes the old fact (recalled on three days), and the person approves it
    (workspace / OLD_SOURCE).write_text(OLD_DIARY, encoding="utf-8")
    old_queries = (
        ("2026-10-02T10:00:00+00:00", "staging password monday"),
        ("2026-10-03T10:00:00+00:00", "password rotates monday"),
        ("2026-10-04T10:00:00+00:00", "staging password rotates"),
    )
    for now, query in old_queries:
        with engine_at(settings, now) as e:
            assert any(h.path == OLD_SOURCE for h in e.search(query).results), query
    with engine_at(settings, "2026-10-04T11:00:00+00:00") as e:
        first = e.dreaming.run()
        assert first.proposal is not None and first.proposal.added >= 1
        assert e.dreaming.approve(first.proposal.id).applied
    assert "rotates every Monday" in memory.read_text(encoding="utf-8")
    # then the fact changes: the new one is written and recalled, the person marks the old one
    write_fact(workspace)
    (workspace / OLD_SOURCE).write_text(OLD_DIARY.replace("\n\n- ", "\n\n" + MARK + "- "), encoding="utf-8")
    recall_three_days(settings)
    with engine_at(settings, DREAM_AT) as e:
        run = e.dreaming.run()
        assert run.proposal is not None
        assert [op.action for op in run.proposal.operations] == ["superseded"]
        assert (run.proposal.superseded, run.proposal.added) == (1, 0)
        assert e.dreaming.approve(run.proposal.id).applied
    after = memory.read_text(encoding="utf-8")
    assert "rotates every Monday" not in after and FACT in after
    assert "<!-- openclaw-memory-lineage:memory:memory/2026-10-01.md:" in after  # the old promotion's key


def test_a_candidate_marked_superseded_is_not_promoted(home: Path, workspace: Path) -> None:
    write_fact(workspace)
    (workspace / DIARY).write_text(
        f"<!-- observed: 2026-11-02 | status: superseded | by: memory/2026-11-04.md#1 -->\n- {FACT}\n", encoding="utf-8"
    )
    (workspace / "memory/2026-11-04.md").write_text("- The staging password no longer rotates.\n", encoding="utf-8")
    settings = base_settings(home, workspace)
    recall_three_days(settings)
    with engine_at(settings, DREAM_AT) as e:
        run = e.dreaming.run()
    assert run.deep is not None
    skipped = {n.category: n.reason for n in run.deep.not_promoted}
    assert "superseded" in skipped and "memory/2026-11-04.md#1" in skipped["superseded"]
    assert run.proposal is None or all(FACT not in op.result_entry for op in run.proposal.operations)
