"""Reading a real OpenClaw home in place (tests/fixtures/openclaw-home, made by OpenClaw 2026.9.6):
discovery, schema_meta, the agent's index against the files, its sessions and their trust, and
read-only access that creates or changes no file of OpenClaw's — even while it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawmem.engine.errors import ClawmemError
from clawmem.engine.openclaw.config import load_config
from clawmem.engine.openclaw.home import OpenClawHome
from clawmem.engine.store.openclaw import readonly
from clawmem.engine.store.openclaw.schema import SchemaRefused

from tests.openclaw_fixture import CLI, EVENTS, INDEXED, LIN, SAM, agent_db, alter, digest, state, state_db


def test_discovery_from_the_home_or_its_state_dir(openclaw_home: Path) -> None:
    for given in (openclaw_home, state(openclaw_home)):
        found = OpenClawHome.open(given).found
        assert found.state_dir == state(openclaw_home)
        # "~/.openclaw/workspace" resolves inside the copy, not to the /home/lin paths stored in the DBs
        assert found.workspace == state(openclaw_home) / "workspace"
        assert found.workspace_from == "agents.defaults.workspace"
        assert found.agent_db == agent_db(openclaw_home)
        assert found.agent_db_from == "the state database's agent_databases"
        assert found.state_db == state_db(openclaw_home)
        assert found.agents == ("main",)
        assert found.notes == ()


def test_config_is_json5(openclaw_home: Path) -> None:
    config = load_config(state(openclaw_home) / "openclaw.json")  # comments, unquoted keys
    assert config.owner_allow_from == ("telegram:1001",)
    assert config.default_workspace == "~/.openclaw/workspace"
    assert config.memory_provider == "none" and config.fts_tokenizer == "trigram"


def test_agent_own_workspace_wins(openclaw_home: Path, tmp_path: Path) -> None:
    cfg = state(openclaw_home) / "openclaw.json"
    text = cfg.read_text(encoding="utf-8").replace(
        "agents: { defaults:", f'agents: {{ list: [{{ id: "main", workspace: "{tmp_path}", }}], defaults:'
    )
    cfg.write_text(text, encoding="utf-8")
    found = OpenClawHome.open(openclaw_home).found
    assert found.workspace == tmp_path and found.workspace_from == "agents.list[main].workspace"


def test_bad_homes_are_one_line_errors(tmp_path: Path, openclaw_home: Path) -> None:
    with pytest.raises(ClawmemError, match="does not exist"):
        OpenClawHome.open(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ClawmemError, match="is not an OpenClaw home"):
        OpenClawHome.open(tmp_path / "empty")
    with pytest.raises(ClawmemError, match=r"has no agent 'ops' \(agents: main\)"):
        OpenClawHome.open(openclaw_home, "ops")


def test_a_broken_config_leaves_the_rest_readable(openclaw_home: Path) -> None:
    (state(openclaw_home) / "openclaw.json").write_text("{ agents: { defaults: ", encoding="utf-8")
    status = OpenClawHome.open(openclaw_home).status()
    assert not status.config_read
    assert len(status.problems) == 1 and "is not valid JSON5" in status.problems[0]
    assert status.workspace_from.startswith("the default") and status.workspace_exists
    assert status.index is not None and status.index.files_indexed == 6


def test_databases_schema_meta(openclaw_home: Path) -> None:
    agent, state_ = OpenClawHome.open(openclaw_home).databases()
    assert (agent.role, agent.schema_version, agent.app_version, agent.agent_id) == ("agent", 23, "2026.9.6", "main")
    assert (state_.role, state_.schema_version, state_.app_version) == ("global", 18, "2026.9.6")
    assert agent.journal_mode == state_.journal_mode == "wal"
    assert agent.read_mode == readonly.IMMUTABLE and agent.problem is None


def test_index_report_on_the_fixture(openclaw_home: Path) -> None:
    report = OpenClawHome.open(openclaw_home).index_report()
    assert report.identity is not None
    assert (report.identity.provider, report.identity.model, report.identity.fts_tokenizer) == (
        "none",
        "fts-only",
        "trigram",
    )
    assert (report.identity.chunk_tokens, report.identity.chunk_overlap, report.identity.chunking_version) == (
        400,
        80,
        5,
    )
    assert report.search_mode == "keyword-only"
    assert report.files_indexed == 6 and report.chunks == 19
    assert tuple(f.path for f in report.files) == INDEXED  # AGENTS.md, SOUL.md … are not memory files
    assert all(f.state == "up-to-date" for f in report.files)
    codes = [f.code for f in report.findings]
    assert codes == ["keyword-only", "up-to-date"]
    assert report.findings[0].message.startswith("keyword-only (no embedding provider)")
    assert "`openclaw memory index --agent main --force`" in (report.findings[0].fix or "")


def test_index_report_changed_gone_never_indexed(openclaw_home: Path) -> None:
    ws = state(openclaw_home) / "workspace"
    with (ws / "memory" / "2026-11-27.md").open("a", encoding="utf-8") as fh:
        fh.write("- Postmortem moved to Monday.\n")
    (ws / "memory" / "2026-11-21.md").unlink()
    (ws / "memory" / "2026-12-06.md").write_text("# 2026-12-06\n\n- New diary.\n", encoding="utf-8")
    report = OpenClawHome.open(openclaw_home).index_report()
    assert report.changed == ("memory/2026-11-27.md",)
    assert report.gone == ("memory/2026-11-21.md",)
    assert report.never_indexed == ("memory/2026-12-06.md",)
    by_code = {f.code: f for f in report.findings}
    assert by_code["changed"].message.startswith("1 file changed since its last index")
    assert by_code["gone"].message.startswith("1 file it still holds is gone")
    assert by_code["never-indexed"].message.startswith("1 file never indexed")
    assert by_code["changed"].fix == "`openclaw memory index --agent main`"
    assert "up-to-date" not in by_code


def test_no_trigram_tokenizer_is_said_plainly(openclaw_home: Path) -> None:
    meta = json.loads(
        json.dumps(
            {
                "model": "fts-only",
                "provider": "none",
                "chunkTokens": 400,
                "chunkOverlap": 80,
                "chunkingVersion": 5,
                "ftsTokenizer": "unicode61",
            }
        )
    )
    alter(
        agent_db(openclaw_home),
        f"UPDATE memory_index_meta SET value = '{json.dumps(meta)}' WHERE key = 'memory_index_meta_v1'",
    )
    (state(openclaw_home) / "openclaw.json").write_text("{ }", encoding="utf-8")
    report = OpenClawHome.open(openclaw_home).index_report()
    finding = next(f for f in report.findings if f.code == "no-trigram")
    assert "no trigram tokenizer" in finding.message and "Chinese queries will find nothing" in finding.message
    assert finding.fix is not None and finding.fix.endswith("`openclaw memory index --agent main --force`")


def test_sessions_and_trust(openclaw_home: Path) -> None:
    home = OpenClawHome.open(openclaw_home)
    sessions = {s.session_key: s for s in home.sessions()}
    assert {k: s.event_count for k, s in sessions.items()} == EVENTS
    assert all(s.source == "openclaw" for s in sessions.values())
    assert sessions[LIN].sender == "Lin (telegram:1001)" and sessions[LIN].sender_is_owner
    assert sessions[SAM].sender == "Sam (telegram:1002)" and not sessions[SAM].sender_is_owner
    assert (sessions[LIN].channel, sessions[LIN].chat_type) == ("telegram", "direct")
    assert sessions[CLI].channel == "cli" and sessions[CLI].sender_is_owner
    assert sessions[SAM].compressed_events == 1 and sessions[CLI].compressed_events == 1

    lin = home.session(LIN)
    assert [e.origin_class for e in lin.events if e.role == "user"] == ["owner"] * 4

    sam = home.session(SAM)
    fetch = next(e for e in sam.events if e.tool == "web_fetch")
    assert fetch.compressed and fetch.origin_class == "untrusted" and fetch.external
    assert "Ignore all previous instructions" in fetch.text  # the zstd row, decoded
    assert [e.origin_class for e in sam.events if e.role == "user"] == ["untrusted", "untrusted"]
    after = [e for e in sam.events if e.seq > fetch.seq and e.turn == fetch.turn and e.type == "message"]
    assert after and all(e.tainted and e.origin_class == "untrusted" for e in after)

    cli = home.session(CLI)
    search = next(e for e in cli.events if e.compressed)
    assert search.tool == "memory_search" and "Sam owns the payments service" in search.text
    assert not search.external and not any(e.tainted for e in cli.events)
    assert [e.origin_class for e in cli.events if e.role == "user"] == ["owner"]
    assert home.session(cli.summary.session_id).summary == cli.summary  # by id too
    with pytest.raises(ClawmemError, match="no OpenClaw session 'nope'"):
        home.session("nope")


def test_no_side_file_is_created(openclaw_home: Path) -> None:
    before = digest(openclaw_home)
    home = OpenClawHome.open(openclaw_home)
    home.status()
    home.sessions()
    home.session(SAM)
    assert digest(openclaw_home) == before


def test_reads_through_a_running_writer_without_touching_its_files(openclaw_home: Path, openclaw_writer) -> None:  # type: ignore[no-untyped-def]
    with openclaw_writer(agent_db(openclaw_home)):
        before = digest(openclaw_home)
        assert readonly.read_mode(agent_db(openclaw_home)) == readonly.READONLY_SHM
        home = OpenClawHome.open(openclaw_home)
        report = home.index_report()
        assert len(home.sessions()) == 3
        assert digest(openclaw_home) == before
    # the committed (not checkpointed) change in the WAL was read; the open transaction was not
    assert report.changed == ("memory/2026-11-20.md",)


def test_newer_schema_is_refused_in_one_line_and_the_rest_opens(openclaw_home: Path) -> None:
    alter(agent_db(openclaw_home), "UPDATE schema_meta SET schema_version = 99")
    home = OpenClawHome.open(openclaw_home)
    status = home.status()
    assert status.index is None and status.sessions is None
    assert len(status.problems) == 1
    assert "schema_meta.schema_version is 99, newer than any clawmem knows (23)" in status.problems[0]
    assert status.databases[1].problem is None and status.databases[1].schema_version == 18
    with pytest.raises(SchemaRefused, match=r"schema_meta\.schema_version is 99"):
        home.sessions()


def test_a_missing_column_refuses_only_what_needs_it(openclaw_home: Path) -> None:
    alter(agent_db(openclaw_home), "ALTER TABLE memory_index_sources DROP COLUMN hash")
    home = OpenClawHome.open(openclaw_home)
    with pytest.raises(SchemaRefused) as caught:
        home.index_report()
    assert "table memory_index_sources has no column hash" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert len(home.sessions()) == 3
    status = home.status()
    assert status.index is None and status.sessions is not None and len(status.problems) == 1
