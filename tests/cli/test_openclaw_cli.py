"""``clawmem --openclaw HOME …`` on a copy of a real OpenClaw home: status (and --json, --deep),
session list/show beside clawmem's own, one-line refusals, and not one byte of OpenClaw's changed
by any command — also while another process holds a write transaction on the agent database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawmem.program.main import main

from tests.cli.one_line import one_line_error
from tests.openclaw_fixture import CLI, EVENTS, LIN, SAM, agent_db, alter, digest, state
from tests.session_fixture import HZ


@pytest.fixture
def cli(home: Path, openclaw_home: Path):  # type: ignore[no-untyped-def]
    """Runs clawmem with its own home (keyword-only) on the OpenClaw home copy."""
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")

    def run(*args: str, openclaw: Path | None = openclaw_home) -> int:
        prefix = ["--openclaw", str(openclaw)] if openclaw is not None else []
        return main(["--home", str(home), *prefix, *args])

    return run


def test_status_json(cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("status", "--json") == 0
    data = json.loads(capsys.readouterr().out)["openclaw"]
    assert data["workspace"] == str(state(openclaw_home) / "workspace") and data["workspaceExists"]
    agent, state_db = data["databases"]
    assert (agent["role"], agent["schemaVersion"], agent["appVersion"]) == ("agent", 23, "2026.9.6")
    assert (state_db["role"], state_db["schemaVersion"]) == ("global", 18)
    index = data["index"]
    assert index["searchMode"] == "keyword-only" and index["identity"]["ftsTokenizer"] == "trigram"
    assert index["filesIndexed"] == 6 and len(index["files"]) == 6
    assert data["sessions"] == {"sessions": 3, "events": 58}
    assert data["problems"] == []


def test_status_text_and_deep(cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert cli("status") == 0
    out = capsys.readouterr().out
    assert "role agent · schema 23" in out and "role global · schema 18" in out
    assert "keyword-only (no embedding provider)" in out
    assert "`openclaw memory index --agent main --force`" in out
    assert "Files:" not in out
    assert cli("status", "--deep") == 0
    out = capsys.readouterr().out
    assert "up-to-date    memory/2026-12-05.md" in out


def test_status_deep_reports_what_the_index_misses(
    cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path
) -> None:  # type: ignore[no-untyped-def]
    ws = state(openclaw_home) / "workspace"
    with (ws / "memory" / "2026-11-20.md").open("a", encoding="utf-8") as fh:
        fh.write("- 晚上又去了河坊街。\n")
    (ws / "memory" / "2026-11-21.md").unlink()
    (ws / "memory" / "2026-12-06.md").write_text("# 2026-12-06\n", encoding="utf-8")
    assert cli("status", "--deep") == 0
    out = capsys.readouterr().out
    assert "1 file changed since its last index" in out and "— fix: `openclaw memory index --agent main`" in out
    assert "changed       memory/2026-11-20.md" in out
    assert "gone          memory/2026-11-21.md" in out
    assert "never-indexed memory/2026-12-06.md" in out


def test_sessions_beside_clawmem_own(cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert cli("session", "import", str(HZ)) == 0
    capsys.readouterr()
    assert cli("session", "list") == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["SESSION", "KIND", "CHANNEL"] and "sess-hz-01" in out
    assert "OpenClaw sessions (read in place from" in out
    assert "Sam (telegram:1002) (not the owner)" in out and "Lin (telegram:1001) (owner)" in out

    assert cli("session", "list", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["sessionId"] for s in data["sessions"]] == ["sess-hz-01"]
    theirs = {s["sessionKey"]: s for s in data["openclawSessions"]}
    assert {k: s["eventCount"] for k, s in theirs.items()} == EVENTS
    assert all(s["source"] == "openclaw" for s in theirs.values())

    assert cli("session", "show", SAM, "--json") == 0
    sam = json.loads(capsys.readouterr().out)
    fetch = next(e for e in sam["events"] if e["tool"] == "web_fetch")
    assert fetch["compressed"] and fetch["external"] and fetch["originClass"] == "untrusted"
    assert "EXTERNAL_UNTRUSTED_CONTENT" in fetch["text"]

    assert cli("session", "show", LIN) == 0
    out = capsys.readouterr().out
    assert "sender:   Lin (telegram:1001) (owner)" in out
    assert "   1  user      owner      Please remind me whenever I mention the office" in out

    assert cli("session", "show", CLI) == 0
    assert "[zstd]  memory_search:" in capsys.readouterr().out
    assert cli("session", "show", "sess-hz-01") == 0  # clawmem's own still shows
    assert "Session sess-hz-01" in capsys.readouterr().out


def test_no_byte_of_the_home_changes(cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path, home: Path) -> None:  # type: ignore[no-untyped-def]
    before = digest(openclaw_home)
    commands = [
        ("status",),
        ("status", "--deep"),
        ("status", "--json"),
        ("session", "list"),
        ("session", "list", "--json"),
        ("session", "show", LIN),
        ("session", "show", SAM, "--json"),
        ("session", "show", CLI),
        ("index",),  # clawmem's own index of the workspace: written into clawmem's home only
        ("search", "Longjing"),
    ]
    for command in commands:
        assert cli(*command) == 0, command
        assert digest(openclaw_home) == before, command
    capsys.readouterr()
    assert (home / "agents" / "main" / "agent" / "clawmem-agent.sqlite").is_file()


def test_their_sessions_in_session_search(
    cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path, home: Path, openclaw_writer
) -> None:  # type: ignore[no-untyped-def]
    (home / "config.toml").write_text(
        '[embedding]\nprovider = "none"\n[index]\nsources = ["memory", "sessions"]\n', encoding="utf-8"
    )
    with openclaw_writer(agent_db(openclaw_home)):  # the gateway is writing: read through its WAL
        before = digest(openclaw_home)
        assert cli("index") == 0
        capsys.readouterr()
        query = "remind me whenever I mention the office"
        assert cli("search", query, "--source", "sessions", "--json") == 0
        data = json.loads(capsys.readouterr().out)
        assert digest(openclaw_home) == before
    found = data["results"] + data["nearMisses"]
    best = max(found, key=lambda h: h["score"])
    lin = best["sessionId"]
    assert best["path"] == f"sessions/openclaw/{lin}.jsonl" and best["source"] == "sessions"
    assert cli("session", "show", lin, "--json") == 0  # the id a hit names opens the session
    assert json.loads(capsys.readouterr().out)["summary"]["sessionKey"] == LIN
    assert cli("search", query, "--source", "sessions", "--explain") == 0
    out = capsys.readouterr().out
    assert "[OpenClaw session transcript]" in out
    assert f"OpenClaw's {lin} (interactive) · events seq 0-" in out


def test_forget_an_openclaw_session_removes_what_clawmem_derived(
    cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path, home: Path
) -> None:  # type: ignore[no-untyped-def]
    (home / "config.toml").write_text(
        '[embedding]\nprovider = "none"\n[index]\nsources = ["memory", "sessions"]\n', encoding="utf-8"
    )
    before = digest(openclaw_home)
    assert cli("index") == 0
    capsys.readouterr()

    def sam_hits() -> set[str]:
        assert cli("search", "payments API is degraded", "--source", "sessions", "--json") == 0
        data = json.loads(capsys.readouterr().out)
        return {h["sessionId"] for h in data["results"] + data["nearMisses"]}

    assert cli("session", "show", SAM, "--json") == 0
    sam = json.loads(capsys.readouterr().out)["summary"]["sessionId"]
    assert sam in sam_hits()
    assert cli("forget", "--session", SAM, "--dry-run", "--json") == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["sessionResolutions"] == [{"sessionId": sam, "sessionKey": SAM, "source": "openclaw"}]
    assert plan["artifacts"]["indexChunks"] > 0 and plan["artifacts"]["indexSources"] == 1
    assert plan["artifacts"]["memoryLines"] == 0 and plan["entryKeys"] == []  # the workspace is OpenClaw's
    assert {c["path"] for c in plan["details"]["chunks"]} == {f"sessions/openclaw/{sam}.jsonl"}
    assert plan["details"]["openclawCommands"] == [
        f"openclaw memory forget --agent main --session {SAM} --dry-run",
        f"openclaw memory forget --agent main --session {SAM}",
    ]
    assert cli("forget", "--session", SAM, "--dry-run") == 0
    assert "OpenClaw removes its own copy" in capsys.readouterr().out
    assert digest(openclaw_home) == before

    assert cli("forget", "--session", SAM, "--yes") == 0
    out = capsys.readouterr().out
    assert f"tombstoned: {sam}" in out and "0 residual" in out
    assert cli("index", "--force") == 0  # a rebuild reads OpenClaw's sessions again: not this one
    capsys.readouterr()
    assert sam not in sam_hits()
    assert digest(openclaw_home) == before  # OpenClaw still holds it: clawmem never deletes there
    assert cli("session", "show", SAM) == 0


def test_no_byte_changes_while_openclaw_writes(
    cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path, openclaw_writer
) -> None:  # type: ignore[no-untyped-def]
    with openclaw_writer(agent_db(openclaw_home)):
        before = digest(openclaw_home)
        assert any(name.endswith("-wal") for name in before)
        for command in (("status", "--deep"), ("session", "list"), ("session", "show", SAM), ("status", "--json")):
            assert cli(*command) == 0, command
            assert digest(openclaw_home) == before, command
    out = capsys.readouterr().out
    assert "open in OpenClaw: read through its WAL" in out
    assert "changed       memory/2026-11-20.md" in out  # its committed WAL frames were read


def test_newer_schema_one_line_rest_printed(cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path) -> None:  # type: ignore[no-untyped-def]
    alter(agent_db(openclaw_home), "UPDATE schema_meta SET schema_version = 99")
    assert cli("status") == 1
    captured = capsys.readouterr()
    line = one_line_error(captured.err)
    assert "schema_meta.schema_version is 99, newer than any clawmem knows (23)" in line
    assert "role global · schema 18" in captured.out and "Workspace:" in captured.out
    assert cli("session", "list") == 1
    assert "schema_meta.schema_version is 99" in one_line_error(capsys.readouterr().err)
    assert cli("session", "show", SAM) == 1
    assert "schema_meta.schema_version is 99" in one_line_error(capsys.readouterr().err)


def test_dropped_column_one_line_rest_printed(cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path) -> None:  # type: ignore[no-untyped-def]
    alter(agent_db(openclaw_home), "ALTER TABLE memory_index_sources DROP COLUMN hash")
    assert cli("status", "--deep") == 1
    captured = capsys.readouterr()
    assert "table memory_index_sources has no column hash" in one_line_error(captured.err)
    assert "role agent · schema 23" in captured.out and "Sessions:       3 (58 transcript events)" in captured.out
    assert cli("session", "list") == 0  # sessions do not need that column
    capsys.readouterr()

    alter(agent_db(openclaw_home), "ALTER TABLE session_windows DROP COLUMN channel")
    assert cli("session", "list") == 1
    assert "table session_windows has no column channel" in one_line_error(capsys.readouterr().err)


def test_bad_input_is_one_line(
    cli, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    assert cli("status", openclaw=tmp_path / "nowhere") == 1
    assert "does not exist" in one_line_error(capsys.readouterr().err)
    assert cli("--agent", "ops", "status") == 1
    assert "has no agent 'ops'" in one_line_error(capsys.readouterr().err)
    assert cli("session", "show", "no-such-session") == 1
    one_line_error(capsys.readouterr().err)


def test_default_home_and_a_command_right_after_the_flag(
    cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state(openclaw_home)))
    assert main(["--home", str(home), "--openclaw", "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["openclaw"]["stateDir"] == str(state(openclaw_home))
