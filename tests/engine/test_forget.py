"""Lineage forget: the plan (every artifact, a dry run that writes nothing), the run (tombstones first,
then index and plugin state, files, origins) and the residual check.

Keyword-only engines on real SQLite and real files. The main scenario is the issue's: a session's
fact is imported, flushed, recalled on three days by three queries, promoted into MEMORY.md by
Dreaming, then forgotten.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.store import dreaming_rows, recall_rows
from clawmem.engine.store import sessions_rows as srows
from clawmem.engine.store.dreaming_rows import PreimageRow

from tests.conftest import make_settings
from tests.session_fixture import A_FACT, AFTER, B_FACT, CRON, HZ, LINGYIN, A, B, scenario


def at(settings: object, now: str) -> MemoryEngine:
    return MemoryEngine(dataclasses.replace(settings, now=now))  # type: ignore[type-var]


def workspace_hashes(workspace: Path) -> dict[str, str]:
    return {
        p.relative_to(workspace).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(workspace.rglob("*"))
        if p.is_file()
    }


def db_dump(e: MemoryEngine) -> dict[str, str]:
    conn = e.store.conn()
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    out = {}
    for t in tables:
        rows = sorted(repr(r) for r in conn.execute(f'SELECT * FROM "{t}"'))
        out[t] = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    return out


# ------------------------------------------------------------------------------------- the scenario


def test_forget_removes_a_promoted_fact_everywhere_and_proves_it(home: Path, workspace: Path) -> None:
    original_memory = (workspace / "MEMORY.md").read_bytes()
    settings = scenario(home, workspace)
    memory = workspace / "MEMORY.md"
    assert "Lingyin Temple tickets" in memory.read_text(encoding="utf-8")
    a_files = {
        rel: (workspace / rel).read_bytes()
        for rel in ("memory/2026-10-30.md", "memory/2026-11-03-plan-our-hangzhou-weekend-trip.md")
    }
    with at(settings, AFTER) as e:
        conn = e.store.conn()
        origins = srows.origins_for_sessions(conn, [B])
        assert origins and all(o.session_id == B and o.origin_class == "agent" for o in origins)
        assert not srows.origins_for_sessions(conn, [A])  # A's fact was never recalled
        promoted = {o.entry_key for o in origins}
        assert all(f"openclaw-memory-promotion:{k}" in memory.read_text(encoding="utf-8") for k in promoted)
        assert any("Lingyin" in r.snippet for r in recall_rows.all_rows(conn))

        plan = e.forget.plan([B])
        report = plan.report()
        assert report["dryRun"] is True and report["sessionIds"] == [B]
        assert report["sessionResolutions"] == [{"sessionId": B, "sessionKey": "agent:main:main", "source": "live"}]
        assert set(report["entryKeys"]) == promoted and report["mixedLineageEntryKeys"] == []
        assert report["curatedWrites"][0]["relativePath"] == "MEMORY.md"
        artifacts = report["artifacts"]
        assert artifacts["memoryEntries"] == len(promoted)
        assert artifacts["indexChunks"] > 0 and artifacts["ftsRows"] == artifacts["indexChunks"]
        assert artifacts["shortTermEntries"] > 0 and artifacts["originRows"] == len(origins)
        assert {f.path: f.action for f in plan.files}["memory/2026-10-31.md"] == "delete"
        assert {f.path: f.action for f in plan.files}["MEMORY.md"] == "rewrite"
        assert any(line.path == "DREAMS.md" and line.reason == "snippet" for line in plan.lines)
        assert not any(line.path in a_files for line in plan.lines)
        assert any(s.what.startswith(f"transcript of session {B}") for s in plan.survives)

        result = e.forget.run([B], expected=plan)
        assert result.tombstoned == (B,) and result.residual == () and result.residual_count == 0
        assert not result.refusals and not result.warnings

        # MEMORY.md is back to the bytes it had before the promotion; A's files are untouched.
        assert memory.read_bytes() == original_memory
        for rel, data in a_files.items():
            assert (workspace / rel).read_bytes() == data
        assert not (workspace / "memory" / "2026-10-31.md").exists()
        assert not (workspace / "memory" / "2026-10-31-please-book-the-lingyin-temple.md").exists()
        for p in workspace.rglob("*.md"):
            assert "Lingyin" not in p.read_text(encoding="utf-8"), p
        # Index, FTS, recall store, preimages, proposals and origins hold nothing of it.
        assert e.search("Lingyin Temple tickets", record=False).results == ()
        assert e.store.scalar("SELECT COUNT(*) FROM memory_index_chunks WHERE text LIKE '%Lingyin%'") == 0
        assert e.store.scalar("SELECT COUNT(*) FROM memory_index_chunks_fts WHERE text LIKE '%Lingyin%'") == 0
        assert not any("Lingyin" in r.snippet for r in recall_rows.all_rows(conn))
        assert e.store.scalar("SELECT COUNT(*) FROM dreaming_preimages WHERE preimage LIKE '%Lingyin%'") == 0
        assert e.store.scalar("SELECT COUNT(*) FROM dreaming_proposals WHERE after_text LIKE '%Lingyin%'") == 0
        assert srows.origins_for_sessions(conn, [B]) == [] and srows.segments_for_sessions(conn, [B]) == []
        assert e.store.scalar("SELECT COUNT(*) FROM memory_index_chunks WHERE path = 'memory/2026-10-30.md'") > 0
        # The transcript is kept and marked; re-import and flushes are refused by the tombstone.
        summary = next(s for s in e.sessions.summaries() if s.session_id == B)
        assert summary.forgotten_at == "2026-11-05T09:00:00.000Z" and summary.note_path is None
        with pytest.raises(ClawmemError, match=f"session {B} was forgotten on 2026-11-05; re-import refused"):
            e.sessions.import_file(LINGYIN)
        with pytest.raises(ClawmemError, match="was forgotten"):
            e.sessions.flush(B, "- more")
        # Dreaming never reserves the forgotten session again.
        again = e.dreaming.run(apply=True)
        assert not srows.origins_for_sessions(conn, [B]) and again is not None


def test_the_dry_run_writes_nothing(home: Path, workspace: Path) -> None:
    from clawmem.program.main import main

    settings = scenario(home, workspace)
    with at(settings, AFTER) as e:
        files, tables = workspace_hashes(workspace), db_dump(e)
        plan = e.forget.plan([B, "agent:main:main", "ghost"], purge_transcripts=True)
        assert plan.artifacts.memory_entries > 0 and plan.artifacts.transcript_events == 11
        assert workspace_hashes(workspace) == files and db_dump(e) == tables
        db_file = settings.db_path
        wal = Path(f"{db_file}-wal")  # kept alive by ``e``: any write by the CLI would land in it
        raw = (db_file.read_bytes(), wal.read_bytes() if wal.exists() else b"")
        code = main(
            ["--home", str(home), "--workspace", str(workspace), "forget", "--session", B, "--dry-run", "--json"]
        )
        assert code == 0
        assert workspace_hashes(workspace) == files and db_dump(e) == tables
        assert (db_file.read_bytes(), wal.read_bytes() if wal.exists() else b"") == raw  # not one byte
        assert srows.tombstone(e.store.conn(), B) is None


# ------------------------------------------------------------------------------------- lineage rules


def test_mixed_lineage_entries_are_removed_whole_and_other_lines_stay(home: Path, workspace: Path) -> None:
    settings = scenario(home, workspace, a_fact_date="2026-10-31")  # both facts in one daily note and chunk
    daily = workspace / "memory" / "2026-10-31.md"
    assert daily.read_text(encoding="utf-8") == f"{B_FACT}\n{A_FACT}\n"
    with at(settings, AFTER) as e:
        conn = e.store.conn()
        mixed = {o.entry_key for o in srows.origins_for_sessions(conn, [A])}
        assert mixed, "the daily chunk carries both sessions"
        plan = e.forget.plan([B])
        assert set(plan.mixed_lineage_entry_keys) == mixed
        assert all(entry.mixed == (entry.entry_key in mixed) for entry in plan.entries)
        result = e.forget.run([B])
        assert result.residual_count == 0
        assert daily.read_text(encoding="utf-8") == f"{A_FACT}\n"  # only B's segment went
        text = (workspace / "MEMORY.md").read_text(encoding="utf-8")
        assert "Hangzhou weekend budget" not in text  # the mixed entry went whole
        assert srows.origins_for_sessions(conn, [A]) == []  # with every origin row of that entry
        prov = e.sessions.provenance("memory/2026-10-31.md")
        assert prov.consistent and [(s.session_id, s.line_start) for s in prov.segments] == [(A, 1)]


def test_selectors_resolve_by_id_key_tombstone_and_unresolved(fts_engine: MemoryEngine, workspace: Path) -> None:
    e = fts_engine
    e.sessions.import_file(HZ)
    e.sessions.import_file(LINGYIN)
    e.sessions.import_file(CRON)
    got = {(r.selector, r.session_id, r.source) for r in e.forget.resolve(["agent:main:main", "nobody"])}
    assert got == {("agent:main:main", A, "live"), ("agent:main:main", B, "live"), ("nobody", "nobody", "unresolved")}
    # A promotion marker without any origin row is listed but cannot be targeted.
    memory = workspace / "MEMORY.md"
    with memory.open("a", encoding="utf-8") as fh:
        fh.write("\n<!-- openclaw-memory-promotion:memory:legacy:1:1:abc -->\n- An old promoted fact.\n")
    files, tables = workspace_hashes(workspace), db_dump(e)
    with pytest.raises(ClawmemError, match=r"^no session matches nobody \(see `clawmem session list`\); nothing was"):
        e.forget.run(["sess-cron-07", "nobody"])  # a typo is refused, with nothing written …
    assert workspace_hashes(workspace) == files and db_dump(e) == tables
    assert srows.tombstone(e.store.conn(), "sess-cron-07") is None
    result = e.forget.run(["sess-cron-07", "nobody"], allow_unresolved=True)  # … unless asked for
    assert result.plan.untargetable_entry_keys == ("memory:legacy:1:1:abc",)
    assert "- An old promoted fact." in memory.read_text(encoding="utf-8")
    assert set(result.tombstoned) == {"sess-cron-07", "nobody"}
    archived = e.forget.resolve(["nobody"])
    assert archived[0].source == "archived"  # known now only by its tombstone
    with pytest.raises(ClawmemError, match="at least one"):
        e.forget.plan(["  "])


def test_preimages_proposals_and_user_md_copies(home: Path, workspace: Path) -> None:
    settings = scenario(home, workspace)
    user = workspace / "USER.md"
    with user.open("a", encoding="utf-8") as fh:
        fh.write(f"{B_FACT}\n")  # USER.md is never edited by forget: a known residual
    with at(settings, AFTER) as e:
        conn = e.store.conn()
        proposal = dreaming_rows.list_proposals(conn)[0]
        with e.store.write() as c:
            dreaming_rows.insert_preimage(
                c,
                PreimageRow(
                    "2026-11-04T00:00:00.000Z:abc", proposal.id, 1, f"# Long-Term Memory\n{B_FACT}\n", "x", "y"
                ),
            )
        plan = e.forget.plan([B])
        kinds = {(s.kind, s.key) for s in plan.state}
        assert ("proposal", proposal.id) in kinds and ("preimage", "2026-11-04T00:00:00.000Z:abc") in kinds
        assert plan.artifacts.backups >= 1 and plan.artifacts.proposals >= 1
        assert any(s.where.startswith("USER.md:") for s in plan.survives)
        result = e.forget.run([B])
        assert dreaming_rows.list_proposals(conn) == [] and dreaming_rows.preimage_keys(conn) == {}
        assert [(h.where, h.location.split(":")[0], h.note) for h in result.residual if h.where == "file"] == [
            ("file", "USER.md", "USER.md is never edited by forget")
        ]
        assert all(h.where in ("file", "chunk", "fts") and "USER.md" in h.location for h in result.residual)
        assert user.read_text(encoding="utf-8").endswith(f"{B_FACT}\n")


def test_a_changed_workspace_since_the_preview_refuses_and_purge_removes_transcripts(
    home: Path, workspace: Path
) -> None:
    settings = make_settings(home, workspace, embedding={"provider": "none"})
    with at(settings, AFTER) as e:
        e.sessions.import_file(LINGYIN, note=True)
        e.sessions.flush(B, B_FACT, date="2026-10-31")
        preview = e.forget.plan([B], purge_transcripts=True)
        with (workspace / "memory" / "2026-10-31.md").open("a", encoding="utf-8") as fh:
            fh.write("- Great, add that to my travel notes.\n")
        with pytest.raises(ClawmemError, match="changed since the preview; nothing was deleted"):
            e.forget.run([B], purge_transcripts=True, expected=preview)
        assert srows.tombstone(e.store.conn(), B) is None
        result = e.forget.run([B], purge_transcripts=True)
        assert result.residual_count == 0
        assert not (workspace / "memory" / "2026-10-31.md").exists()  # the user's copy held B's words
        assert e.store.scalar("SELECT COUNT(*) FROM transcript_events WHERE session_id = ?", (B,)) == 0
        assert e.sessions.search("Lingyin") == ()
        assert srows.tombstone(e.store.conn(), B) is not None
        detail = json.dumps(dataclasses.asdict(result.plan), default=str)
        assert "transcript_events" in detail


def test_line_removal_keeps_every_other_byte() -> None:
    from clawmem.engine.sessions import flush

    data = "\ufeffa line\r\nsecond\r\nthird\r\nlast without newline".encode()
    assert flush.remove_lines(data, {1}) == "\ufeffsecond\r\nthird\r\nlast without newline".encode()
    assert flush.remove_lines(data, {2, 4}) == "\ufeffa line\r\nthird\r\n".encode()
    assert flush.remove_lines(data, set()) == data


def test_session_corpus_lines_go_and_empty_corpus_files_are_deleted(fts_engine: MemoryEngine, workspace: Path) -> None:
    e = fts_engine
    e.sessions.import_file(LINGYIN)
    e.sessions.import_file(HZ)
    corpus = workspace / "memory" / ".dreams" / "session-corpus"
    corpus.mkdir(parents=True)
    (corpus / "2026-10-31.txt").write_text(
        f"[{B}] user: Please book the Lingyin Temple tickets for Saturday morning, two adults.\n"
        f"[{A}] user: Look up the West Lake boat tour prices.\n",
        encoding="utf-8",
    )
    (corpus / "2026-10-30.txt").write_text(f"[{B}] assistant: Noted.\n", encoding="utf-8")
    plan = e.forget.plan([B])
    assert (plan.artifacts.session_corpus_files, plan.artifacts.session_corpus_lines) == (2, 2)
    assert plan.artifacts.memory_files == 0
    assert {(f.path, f.action) for f in plan.files} == {
        ("memory/.dreams/session-corpus/2026-10-31.txt", "rewrite"),
        ("memory/.dreams/session-corpus/2026-10-30.txt", "delete"),
    }
    result = e.forget.run([B])
    assert result.residual_count == 0
    assert (corpus / "2026-10-31.txt").read_text(
        encoding="utf-8"
    ) == f"[{A}] user: Look up the West Lake boat tour prices.\n"
    assert not (corpus / "2026-10-30.txt").exists()
