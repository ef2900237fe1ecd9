"""``clawmem --openclaw HOME dream candidates|explain`` on a copy of a real OpenClaw home: the
agent's recall entries beside clawmem's own, marked ◆, every gate with its numbers; approving one
is refused with the OpenClaw command; a state database without the recall store is refused in one
line; and not one byte of the home changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawmem.program.main import main

from tests.cli.one_line import one_line_error
from tests.openclaw_fixture import alter, digest, state_db

KEYS = ("memory:memory/2026-11-27.md:1:6", "memory:memory/2026-11-21.md:1:5", "memory:memory/2026-11-20.md:1:6")


@pytest.fixture
def cli(home: Path, openclaw_home: Path):  # type: ignore[no-untyped-def]
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")

    def run(*args: str) -> int:
        return main(["--home", str(home), "--openclaw", str(openclaw_home), *args])

    return run


def test_candidates_json_has_openclaws_beside_clawmems(
    cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path
) -> None:  # type: ignore[no-untyped-def]
    before = digest(openclaw_home)
    assert cli("dream", "candidates", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["candidates"] == []  # clawmem's own: no searches recorded yet
    theirs = data["openclaw"]
    assert [c["explanation"]["key"] for c in theirs["candidates"]] == list(KEYS)
    assert [c["explanation"]["recallCount"] for c in theirs["candidates"]] == [3, 1, 1]
    assert [c["heldBackBy"] for c in theirs["candidates"]] == [
        ["score"],
        ["signals", "unique-queries", "score"],
        ["signals", "unique-queries", "score"],
    ]
    assert theirs["wouldPromote"] == [] and theirs["promoteCommand"] == "openclaw memory promote --apply"
    assert digest(openclaw_home) == before


def test_candidates_text_marks_openclaws(cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert cli("dream", "candidates") == 0
    out = capsys.readouterr().out
    assert "◆ OpenClaw's: what your agent would promote tonight" in out
    assert "memory/2026-11-27.md#L1-L6 recalls 3  held back by score" in out
    assert "nothing would be promoted tonight" in out
    assert "`openclaw memory promote --apply`" in out


@pytest.mark.parametrize("key", KEYS)
def test_explain_json_names_the_failing_gate(
    cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path, key: str
) -> None:  # type: ignore[no-untyped-def]
    before = digest(openclaw_home)
    assert cli("dream", "explain", key, "--json") == 0
    c = json.loads(capsys.readouterr().out)["openclaw"]
    e = c["explanation"]
    assert e["key"] == key and e["status"] == "below-gates"
    failing = [g["name"] for g in e["gates"] if not g["passed"]]
    assert failing == c["heldBackBy"] and "score" in failing
    assert set(e["components"]) == {"frequency", "relevance", "diversity", "recency", "consolidation", "conceptual"}
    assert digest(openclaw_home) == before


def test_explain_text_shows_gates_and_history(cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert cli("dream", "explain", "memory/2026-11-27.md:3") == 0
    out = capsys.readouterr().out
    assert out.startswith("◆ OpenClaw's recall entry")
    assert "pass  signals" in out and "pass  unique-queries" in out and "FAIL  score" in out
    assert "recall history (2 recorded event(s) of 3 recalls)" in out and "支付 故障 复盘" in out


def test_approving_openclaws_entry_is_refused_with_its_command(
    cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path
) -> None:  # type: ignore[no-untyped-def]
    before = digest(openclaw_home)
    for command in ("approve", "reject"):
        assert cli("dream", command, KEYS[0]) == 1
        line = one_line_error(capsys.readouterr().err)
        assert "OpenClaw's recall entry" in line and "`openclaw memory promote --apply`" in line
    assert digest(openclaw_home) == before


def test_a_state_db_without_the_store_refuses_dream_commands_only(
    cli, capsys: pytest.CaptureFixture[str], openclaw_home: Path
) -> None:  # type: ignore[no-untyped-def]
    alter(state_db(openclaw_home), "ALTER TABLE plugin_state_entries DROP COLUMN value_json")
    before = digest(openclaw_home)
    for args in (("dream", "candidates"), ("dream", "explain", KEYS[0], "--json")):
        assert cli(*args) == 1
        line = one_line_error(capsys.readouterr().err)
        assert "table plugin_state_entries has no column value_json" in line
    assert cli("session", "list", "--json") == 0  # the rest still works
    assert len(json.loads(capsys.readouterr().out)["openclawSessions"]) == 3
    assert digest(openclaw_home) == before
