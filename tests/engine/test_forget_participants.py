"""Lineage forget participants, each alone: its plan (what it lists and keeps), its delete (only
what it listed) and its residual check (what is found before and after).

Real SQLite and real files, like tests/engine/test_forget.py; the draft is filled by hand with
what earlier participants would have found, so no other participant runs.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from clawmem.engine.facade import MemoryEngine
from clawmem.engine.forget.draft import Draft, ResidualQuery, Run
from clawmem.engine.forget.memory_files import FlushSegments, MemoryFiles, read_files
from clawmem.engine.forget.participants import DreamingReview, IndexChunks, Origins, Participant, RecallStore
from clawmem.engine.forget.plan import OriginItem, SessionResolution
from clawmem.engine.sessions import trust
from clawmem.engine.store import dreaming_rows, index_rows, recall_rows
from clawmem.engine.store import sessions_rows as srows
from clawmem.engine.store.dreaming_rows import PreimageRow, ProposalRow

from tests.session_fixture import AFTER, B_FACT, LINGYIN, A, B, scenario

SNIPPET = trust.normalize(B_FACT)  # "Lingyin Temple tickets are booked for Saturday at 9:00, two adults."


def draft_for(e: MemoryEngine, *session_ids: str, **found: object) -> Draft:
    """A draft of these sessions (archived resolutions unless imported), with ``found`` set as if
    earlier participants had planned."""
    conn = e.store.conn()
    resolutions = tuple(
        SessionResolution(sid, sid, None, "live" if srows.get_window(conn, sid) else "archived", None, 0)
        for sid in session_ids
    )
    settings = e.runtime.settings
    draft = Draft(
        conn=conn,
        agent=settings.agent_id,
        workspace=e.runtime.workspace,
        extra_paths=tuple(settings.index.extra_paths),
        max_file_bytes=settings.index.max_file_bytes,
        selectors=tuple(session_ids),
        resolutions=resolutions,
        purge=False,
    )
    for name, value in found.items():
        setattr(draft, name, value)
    return draft


def run_of(draft: Draft) -> Run:
    return Run(draft, now=1, refusals=[])


def delete(e: MemoryEngine, participant: Participant, run: Run) -> None:
    with e.store.write() as conn:
        participant.delete(conn, run)


def residual(e: MemoryEngine, participant: Participant, draft: Draft, *, probes: list[str]) -> list[str]:
    q = ResidualQuery(
        conn=e.store.conn(),
        agent=draft.agent,
        workspace=draft.workspace,
        extra_paths=draft.extra_paths,
        probes=probes,
        session_ids=draft.ids,
        entry_keys=draft.entry_keys,
        cache_hashes=(),
        purge=False,
    )
    return [f"{h.where} {h.location.split(' ')[0]}" for h in participant.residual(q)]


# ------------------------------------------------------------------------------------------ origins


def test_origins_plan_the_entries_of_the_sessions_and_delete_only_this_agents_rows(fts_engine: MemoryEngine) -> None:
    e = fts_engine
    agent = e.runtime.settings.agent_id
    with e.store.write() as conn:
        dreaming_rows.reserve_origin(conn, "memory:only-b", agent, B, "k", "agent", 10)
        dreaming_rows.reserve_origin(conn, "memory:b-and-a", agent, B, "k", "agent", 11)
        dreaming_rows.reserve_origin(conn, "memory:b-and-a", agent, A, "k", "owner", 12)
        dreaming_rows.reserve_origin(conn, "memory:only-a", agent, A, "k", "owner", 13)
        dreaming_rows.reserve_origin(conn, "memory:elsewhere", "other-agent", B, "k", "agent", 14)
    origins = Origins()
    draft = draft_for(e, B)
    origins.plan(draft)

    assert draft.entry_keys == ("memory:b-and-a", "memory:only-b")
    assert draft.mixed == ("memory:b-and-a",)  # A's row too: the entry goes whole
    assert draft.sessions_of == {"memory:b-and-a": [A, B], "memory:only-b": [B]}
    assert OriginItem("memory:b-and-a", A, "k", "owner") in draft.origin_items
    assert draft.origin_count == 3  # B's two rows and A's row of the mixed entry, not the other agent's
    assert [s.what for s in draft.kept["origins"]] == ["1 origin row(s)"]
    assert residual(e, origins, draft, probes=[]) == [
        "origin memory:b-and-a",
        "origin memory:only-b",
        "origin memory:b-and-a",
    ]

    delete(e, origins, run_of(draft))
    conn = e.store.conn()
    assert [o.entry_key for o in srows.origins_for_sessions(conn, [A])] == ["memory:only-a"]
    assert [(o.agent_id, o.entry_key) for o in srows.origins_for_sessions(conn, [B])] == [
        ("other-agent", "memory:elsewhere")
    ]
    assert residual(e, origins, draft, probes=[]) == []


# ------------------------------------------------------------------------------------- recall store


def test_the_recall_store_lists_entries_by_key_and_snippet_and_deletes_their_events(fts_engine: MemoryEngine) -> None:
    e = fts_engine
    e.sessions.import_file(LINGYIN)
    e.sessions.flush(B, B_FACT, date="2026-10-31")
    assert any("2026-10-31" in h.path for h in e.search("Lingyin Temple tickets").results)
    conn = e.store.conn()
    rows = recall_rows.all_rows(conn)
    assert [r.path for r in rows] == ["memory/2026-10-31.md"]
    fact_key = rows[0].entry_key
    keyed = dataclasses.replace(rows[0], entry_key="memory:keyed", snippet="an unrelated remembered line")
    other = dataclasses.replace(rows[0], entry_key="memory:other", snippet="West Lake boat tour prices, please")
    with e.store.write() as c:
        recall_rows.upsert(c, keyed)
        recall_rows.upsert(c, other)
        recall_rows.add_event(c, fact_key, "q-extra", "2026-11-01", 0.5, True, 1)

    recall = RecallStore()
    draft = draft_for(e, B, entry_keys=("memory:keyed",), probes=[SNIPPET])
    recall.plan(draft)
    assert [(i.entry_key, i.why) for i in draft.recall_items] == [("memory:keyed", "entry key"), (fact_key, "snippet")]
    assert residual(e, recall, draft, probes=[SNIPPET]) == ["recall memory:keyed", f"recall {fact_key}"]

    delete(e, recall, run_of(draft))
    assert [r.entry_key for r in recall_rows.all_rows(conn)] == ["memory:other"]
    events = e.store.scalar("SELECT COUNT(*) FROM memory_short_term_recall_events WHERE entry_key = ?", (fact_key,))
    assert events == 0
    assert residual(e, recall, draft, probes=[SNIPPET]) == []


# ---------------------------------------------------------------------------------- dreaming review


def proposal(pid: str, after: str, created_at: int) -> ProposalRow:
    return ProposalRow(
        pid,
        None,
        created_at,
        "pending",
        "append",
        "base",
        "# Long-Term Memory\n",
        after,
        None,
        [],
        {},
        [],
        None,
        None,
        None,
    )


def test_dreaming_review_lists_proposals_with_their_preimages_and_never_edits_run_reports(
    fts_engine: MemoryEngine,
) -> None:
    e = fts_engine
    with e.store.write() as conn:
        dreaming_rows.insert_proposal(conn, proposal("p-lingyin", f"# Long-Term Memory\n{B_FACT}\n", 1))
        dreaming_rows.insert_proposal(conn, proposal("p-keyed", "<!-- openclaw-memory-promotion:memory:k1 -->", 2))
        dreaming_rows.insert_proposal(conn, proposal("p-other", "# Long-Term Memory\n- West Lake at dawn.\n", 3))
        dreaming_rows.insert_preimage(
            conn, PreimageRow("pre-of-lingyin", "p-lingyin", 1, "# Long-Term Memory\n", "x", "y")
        )
        dreaming_rows.insert_preimage(conn, PreimageRow("pre-holding", "p-other", 2, f"# Notes\n{B_FACT}\n", "x", "y"))
        dreaming_rows.insert_preimage(conn, PreimageRow("pre-other", "p-other", 3, "# Notes\n- Tea.\n", "x", "y"))
        dreaming_rows.insert_run(conn, "run-1", 1, ["light"], "manual")
        dreaming_rows.finish_run(conn, "run-1", 2, {}, "p-lingyin", f"Staged: {B_FACT}", phases_done=["light"])

    review = DreamingReview()
    draft = draft_for(e, B, entry_keys=("memory:k1",), probes=[SNIPPET])
    review.plan(draft)
    assert [(s.kind, s.key, s.status) for s in draft.state] == [
        ("proposal", "p-lingyin", "pending"),
        ("proposal", "p-keyed", "pending"),
        ("preimage", "pre-of-lingyin", None),  # its proposal goes: it could never be reverted
        ("preimage", "pre-holding", None),
    ]
    assert draft.proposal_ids == ["p-lingyin", "p-keyed"]
    assert residual(e, review, draft, probes=[SNIPPET]) == [
        "preimage pre-holding",
        "proposal p-lingyin",
        "run-report run-1",
    ]

    delete(e, review, run_of(draft))
    conn = e.store.conn()
    assert [p.id for p in dreaming_rows.list_proposals(conn)] == ["p-other"]
    assert dreaming_rows.preimage_keys(conn) == {"p-other": "pre-other"}
    assert dreaming_rows.recent_runs(conn, 5)[0].proposal_id is None  # unlinked, not deleted
    assert residual(e, review, draft, probes=[SNIPPET]) == ["run-report run-1"]  # reports are checked, never edited


# ---------------------------------------------------------------------------------- flush segments


def test_flush_segments_mark_their_lines_protect_other_sessions_and_delete_their_records(
    fts_engine: MemoryEngine, workspace: Path
) -> None:
    e = fts_engine
    e.sessions.import_file(LINGYIN)
    e.sessions.flush(B, B_FACT, date="2026-10-31")
    daily = "memory/2026-10-31.md"
    segments = FlushSegments()
    draft = draft_for(e, B)
    read_files(draft)
    segments.plan(draft)
    assert [(s.path, s.session_id, s.line_start, s.line_end) for s in draft.segments] == [(daily, B, 1, 1)]
    assert draft.by_rel[daily].remove == {1: "segment"}
    assert draft.refusals == [] and draft.protected == []
    assert residual(e, segments, draft, probes=[]) == [f"segment {daily}#1"]

    other = draft_for(e, A)  # another session's selection: B's segment is protected text
    read_files(other)
    segments.plan(other)
    assert other.segments == [] and other.protected == [SNIPPET]

    delete(e, segments, run_of(draft))
    assert srows.segments_for_sessions(e.store.conn(), [B]) == []
    assert (workspace / daily).read_text(encoding="utf-8") == f"{B_FACT}\n"  # the file is the files' participant's
    assert residual(e, segments, draft, probes=[]) == []


# ------------------------------------------------------------------------------------ memory files


def test_memory_files_remove_snippet_lines_keep_user_md_and_delete_emptied_files(
    fts_engine: MemoryEngine, workspace: Path
) -> None:
    e = fts_engine
    notes = workspace / "memory" / "notes.md"
    notes.write_text(f"{B_FACT}\n", encoding="utf-8")
    kept = workspace / "memory" / "kept.md"
    kept.write_text(f"- Keep this line.\n{B_FACT}\n", encoding="utf-8")
    with (workspace / "USER.md").open("a", encoding="utf-8") as fh:
        fh.write(f"{B_FACT}\n")
    files = MemoryFiles()
    draft = draft_for(e, B, transcript_probes=[SNIPPET])
    read_files(draft)
    files.plan(draft)
    assert draft.probes == [SNIPPET]
    assert {(c.path, c.action, c.lines_removed) for c in draft.changes} == {
        ("memory/notes.md", "delete", 1),
        ("memory/kept.md", "rewrite", 1),
    }
    assert [s.where.split(":")[0] for s in draft.kept["memory-files"]] == ["USER.md"]
    assert sorted(residual(e, files, draft, probes=[SNIPPET])) == [
        "file USER.md:11",
        "file memory/kept.md:2",
        "file memory/notes.md:1",
    ]

    run = run_of(draft)
    files.delete(e.store.conn(), run)  # each file in its own transaction
    assert run.refusals == [] and run.reindex == {"memory/notes.md", "memory/kept.md"}
    assert not notes.exists() and kept.read_text(encoding="utf-8") == "- Keep this line.\n"
    assert residual(e, files, draft, probes=[SNIPPET]) == ["file USER.md:11"]


def test_a_file_changed_since_it_was_read_is_refused(fts_engine: MemoryEngine, workspace: Path) -> None:
    e = fts_engine
    notes = workspace / "memory" / "notes.md"
    notes.write_text(f"{B_FACT}\n", encoding="utf-8")
    files = MemoryFiles()
    draft = draft_for(e, B, transcript_probes=[SNIPPET])
    read_files(draft)
    files.plan(draft)
    notes.write_text(f"{B_FACT}\n- Added after the preview.\n", encoding="utf-8")
    run = run_of(draft)
    files.delete(e.store.conn(), run)
    assert [r.what for r in run.refusals] == ["memory/notes.md"] and run.reindex == set()
    assert "Added after the preview" in notes.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------- index


def test_index_plans_the_chunks_holding_the_snippet_deletes_them_and_then_finds_none(
    home: Path, workspace: Path
) -> None:
    settings = scenario(home, workspace)
    with MemoryEngine(dataclasses.replace(settings, now=AFTER)) as e:
        conn = e.store.conn()
        index = IndexChunks()
        draft = draft_for(e, B, probes=[SNIPPET])  # no file changed: only the index's own rules apply
        index.plan(draft)
        assert draft.chunks and all(c.holds_text for c in draft.chunks)
        assert {c.path for c in draft.chunks} == {p for p, _ in draft.sources}
        assert {h.split(" ")[0] for h in residual(e, index, draft, probes=[SNIPPET])} >= {"chunk", "fts"}
        others = [c.id for c in index_rows.chunk_texts(conn) if c.path not in {p for p, _ in draft.sources}]
        run = run_of(draft)
        delete(e, index, run)
        assert residual(e, index, draft, probes=[SNIPPET]) == []
        assert others and [c.id for c in index_rows.chunk_texts(conn) if c.id in set(others)] == others
        assert run.reindex == {p for p, s in draft.sources if s == "memory"}
