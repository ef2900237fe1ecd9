"""Each forget participant alone (engine/forget/participants.py): what it plans from the derived
state of the main scenario (tests/engine/test_forget.py), that deleting exactly that empties its
residual, and that it leaves what does not hold the forgotten text."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from clawmem.engine.facade import MemoryEngine
from clawmem.engine.forget.participants import DreamingArtifacts, IndexArtifacts, PlanContext, RecallArtifacts
from clawmem.engine.sessions import trust
from clawmem.engine.store import dreaming_rows, index_rows, recall_rows
from clawmem.engine.store.dreaming_rows import PreimageRow

from tests.engine.test_forget import scenario
from tests.session_fixture import AFTER, B_FACT

PROBE = trust.normalize(B_FACT)  # the selected snippet, as forget matches it


def context(e: MemoryEngine) -> PlanContext:
    """Only the snippet of B's fact: no file is changed, so only the participants' own rules apply."""
    conn = e.store.conn()
    return PlanContext(conn, [PROBE], (), (), {}, {}, set())


def engine_after(home: Path, workspace: Path) -> MemoryEngine:
    settings = scenario(home, workspace)
    return MemoryEngine(dataclasses.replace(settings, now=AFTER))


def test_index_plans_the_chunks_holding_the_snippet_deletes_them_and_then_finds_none(
    home: Path, workspace: Path
) -> None:
    with engine_after(home, workspace) as e:
        conn = e.store.conn()
        ctx = context(e)
        found = IndexArtifacts.plan(ctx)
        assert found.chunks and all(c.holds_text for c in found.chunks)
        assert {c.path for c in found.chunks} == {p for p, _ in found.sources}
        before = IndexArtifacts.residual(conn, ctx.probes, (), found.cache_hashes)
        assert {h.where for h in before} >= {"chunk", "fts"}
        others = [c.id for c in index_rows.chunk_texts(conn) if c.path not in {p for p, _ in found.sources}]
        with e.store.write() as c:
            IndexArtifacts.delete(c, found.sources, [x.chunk_id for x in found.chunks], found.cache_hashes)
        assert IndexArtifacts.residual(conn, ctx.probes, (), found.cache_hashes) == []
        assert others and [c.id for c in index_rows.chunk_texts(conn) if c.id in set(others)] == others


def test_recall_plans_the_entries_recalled_with_the_snippet_and_their_ledger(home: Path, workspace: Path) -> None:
    with engine_after(home, workspace) as e:
        conn = e.store.conn()
        ctx = context(e)
        found = RecallArtifacts.plan(ctx)
        assert found.items and {i.why for i in found.items} == {"snippet"}
        assert RecallArtifacts.residual(conn, ctx.probes, ()) != []
        kept = [r.entry_key for r in recall_rows.all_rows(conn) if r.entry_key not in found.keys]
        with e.store.write() as c:
            RecallArtifacts.delete(c, found.keys, found.ledger)
        assert RecallArtifacts.residual(conn, ctx.probes, ()) == []
        assert [r.entry_key for r in recall_rows.all_rows(conn)] == kept
        assert all(row.claim_key not in found.keys for row in dreaming_rows.ledger_rows(conn))


def test_dreaming_plans_the_proposal_and_its_preimage_and_deletes_both(home: Path, workspace: Path) -> None:
    with engine_after(home, workspace) as e:
        conn = e.store.conn()
        proposal = dreaming_rows.list_proposals(conn)[0]
        with e.store.write() as c:
            dreaming_rows.insert_preimage(
                c, PreimageRow("2026-11-04T00:00:00.000Z:abc", proposal.id, 1, f"# Memory\n{B_FACT}\n", "x", "y")
            )
        ctx = context(e)
        found = DreamingArtifacts.plan(ctx)
        assert proposal.id in found.proposal_ids and "2026-11-04T00:00:00.000Z:abc" in found.preimage_keys
        assert {s.kind for s in found.state} == {"proposal", "preimage"}
        assert {h.where for h in DreamingArtifacts.residual(conn, ctx.probes)} >= {"proposal", "preimage"}
        with e.store.write() as c:
            DreamingArtifacts.delete(c, found.proposal_ids, found.preimage_keys)
        left = {h.where for h in DreamingArtifacts.residual(conn, ctx.probes)}
        assert left <= {"run-report"}  # run reports are checked, never rewritten
        assert dreaming_rows.list_proposals(conn) == []
