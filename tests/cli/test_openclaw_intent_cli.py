"""``clawmem --openclaw HOME intent …`` and ``job list`` on a copy of the fixture home: OpenClaw's
standing intent and scheduled jobs listed beside clawmem's own, the simulator's deciding gate,
one-line refusals for what stays with OpenClaw, and not one byte of OpenClaw's changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawmem.program.main import main

from tests.cli.one_line import one_line_error
from tests.openclaw_fixture import agent_db, alter, digest, state_db

AFTER_FIRE = "2026-12-05T12:00:00+00:00"  # the intent fired at 07:32 UTC; its cooldown is 24 h
INTENT = "d462cb51-b150-49dd-bff2-951bc8a711cf"
JOBS = ["Memory Dreaming Promotion", "heartbeat-main", "skill-collection-review-main"]


@pytest.fixture
def cli(home: Path, openclaw_home: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    monkeypatch.setenv("CLAWMEM_NOW", AFTER_FIRE)

    def run(*args: str) -> int:
        return main(["--home", str(home), "--openclaw", str(openclaw_home), *args])

    run.home = home  # type: ignore[attr-defined]
    return run


def test_intent_list_marks_openclaw_intents(cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert cli("intent", "list") == 0
    out = capsys.readouterr().out
    assert "◆ OpenClaw's standing intents, read-only" in out
    row = next(line for line in out.splitlines() if line.startswith("◆ d462cb51"))
    assert row.split()[2:7] == ["fired", "1/3", "(2", "left)", "office"]
    assert "1001@telegram" in row and "2026-12-06 07:32" in row
    assert cli("intent", "list", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["intents"] == []
    (theirs,) = data["openclawIntents"]
    assert (theirs["id"], theirs["source"], theirs["status"]) == (INTENT, "openclaw", "fired")
    assert (theirs["fireCount"], theirs["maxFires"], theirs["firesLeft"]) == (1, 3, 2)
    assert (theirs["keywords"], theirs["sender"], theirs["channel"]) == (["office"], "1001", "telegram")
    assert theirs["sourceSessionId"] == "b08e3850-fc5d-4228-946a-cf39c50f235f"
    assert cli("intent", "list", "--status", "armed", "--json") == 0
    assert json.loads(capsys.readouterr().out)["openclawIntents"] == []


def test_intent_show_finds_the_openclaw_intent(cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert cli("intent", "show", "d462cb51") == 0
    out = capsys.readouterr().out
    assert "(◆ OpenClaw's, read-only)" in out and "fires:       1/3 (2 left)" in out
    assert "session:     b08e3850-fc5d-4228-946a-cf39c50f235f" in out
    assert "until 2026-12-06 07:32" in out


def test_match_simulates_and_changes_nothing(cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path) -> None:  # type: ignore[no-untyped-def]
    before = digest(openclaw_home)
    assert cli("intent", "match", "Heading to the office now", "--channel", "telegram", "--sender", "1002") == 0
    out = capsys.readouterr().out
    assert 'sender "1002" ≠ scope "1001"' in out
    assert cli("intent", "match", "office", "--channel", "telegram", "--sender", "1001", "--json") == 0
    (v,) = json.loads(capsys.readouterr().out)["openclaw"]["verdicts"]
    assert (v["id"], v["outcome"], v["fires"]) == (INTENT, "cooldown", False)
    assert v["reason"] == "cooldown until 2026-12-06 07:32 UTC"
    assert cli("intent", "match", "office", "--channel", "telegram", "--sender", "1001", "--apply") == 0
    capsys.readouterr()
    assert cli("intent", "list", "--json") == 0
    assert json.loads(capsys.readouterr().out)["openclawIntents"][0]["fireCount"] == 1
    assert digest(openclaw_home) == before


def test_cancel_and_create_stay_with_openclaw(cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path) -> None:  # type: ignore[no-untyped-def]
    before = digest(openclaw_home)
    assert cli("intent", "cancel", "d462cb51") == 1
    line = one_line_error(capsys.readouterr().err)
    assert "intent d462cb51 is OpenClaw's, read-only here" in line and "`intent` tool" in line
    assert cli("intent", "create", "--description", "x", "--keywords", "y", "--channel", "c", "--sender", "s") == 1
    assert "does not create OpenClaw's standing intents" in one_line_error(capsys.readouterr().err)
    assert digest(openclaw_home) == before


def test_job_list_shows_the_three_cron_jobs(cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert cli("job", "list") == 0
    out = capsys.readouterr().out
    assert "◆ OpenClaw's scheduled jobs, read-only" in out
    rows = [line for line in out.splitlines() if line.startswith("◆ ") and "OpenClaw" not in line]
    assert [r.split("  ")[-1].strip() for r in rows] == JOBS
    assert "cron 0 3 * * *" in rows[0] and "2026-12-06 03:00 UTC" in rows[0] and "never" in rows[0]
    assert "every 30 min" in rows[1] and "every 7 d" in rows[2]
    assert cli("job", "list", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["jobs"] == []
    theirs = data["openclawJobs"]
    assert [j["name"] for j in theirs] == JOBS
    assert all(j["enabled"] and j["lastRunAt"] is None and j["source"] == "openclaw" for j in theirs)
    assert theirs[0]["nextRunAt"] == "2026-12-06T03:00:00+00:00"


def test_job_list_puts_clawmems_jobs_first(cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert (
        cli(
            "job", "add", "--description", "Pack the tea", "--at", "2026-12-06T09:00", "--channel", "t", "--sender", "s"
        )
        == 0
    )
    capsys.readouterr()
    assert cli("job", "list") == 0
    out = capsys.readouterr().out
    assert out.index("Pack the tea") < out.index("◆ OpenClaw's scheduled jobs")
    assert cli("job", "list", "--status", "done", "--json") == 0
    assert json.loads(capsys.readouterr().out)["openclawJobs"] == []


def test_a_refused_table_fails_alone(cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path) -> None:  # type: ignore[no-untyped-def]
    alter(agent_db(openclaw_home), "DROP TABLE standing_intents_fts", "DROP TABLE standing_intents")
    alter(state_db(openclaw_home), "DROP TABLE cron_jobs")
    args = ("--description", "Tea", "--keywords", "office", "--channel", "telegram", "--sender", "1001")
    assert main(["--home", str(cli.home), "intent", "create", *args]) == 0  # clawmem's own, without --openclaw
    capsys.readouterr()
    assert cli("intent", "list") == 1
    out, err = capsys.readouterr()
    assert "Tea" in out and "no table standing_intents" in one_line_error(err)
    assert cli("intent", "match", "office", "--channel", "telegram", "--sender", "1001") == 1
    out, err = capsys.readouterr()
    assert "Tea" in out and "no table standing_intents" in one_line_error(err)
    assert cli("job", "list") == 1
    out, err = capsys.readouterr()
    assert "No jobs." in out and "no table cron_jobs" in one_line_error(err)
