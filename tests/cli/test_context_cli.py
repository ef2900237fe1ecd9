"""``clawmem context`` and ``clawmem context triggers`` (parser built here: program/main.py is the lead's)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from clawmem.cli import context_cmds
from clawmem.engine.errors import ClawmemError
from clawmem.shell import flags


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="clawmem")
    flags.add_global_options(p)
    context_cmds.register(p.add_subparsers(dest="command", metavar="COMMAND"))
    return p


def run(home: Path, workspace: Path, *argv: str) -> int:
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")  # keyword-only
    args = parser().parse_args(["--home", str(home), "--workspace", str(workspace), *argv])
    return int(args.handler(args) or 0)


def test_context_lists_files_caps_and_omissions(
    home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(home, workspace, "context") == 0
    out = capsys.readouterr().out
    assert "New private session (bare /new) — 2026-11-05, time zone UTC" in out
    assert "Bootstrap files — 900 of 60,000 chars" in out
    user_row = next(line for line in out.splitlines() if " USER.md " in line)
    assert user_row.split()[:5] == ["1", "USER.md", "282", "4,000", "282"]
    assert user_row.endswith("loaded · 1 superseded entry omitted (lines 3–4)")
    assert "days scanned 2026-11-05, 2026-11-04 · loaded 2026-11-04" in out
    assert "memory/2026-11-04.md" in out and "Warnings" not in out


def test_context_json_has_lines_and_injected_text(
    home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(home, workspace, "context", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    files = {f["path"]: f for f in data["files"]}
    assert [f["path"] for f in data["files"] if f["loaded"]] == ["USER.md", "MEMORY.md", "memory/2026-11-04.md"]
    assert [s["status"] for s in files["USER.md"]["lines"]][2:4] == ["omitted", "omitted"]
    assert files["USER.md"]["omitted"][0]["observed"] == "2026-03-02"
    assert "[Untrusted daily memory: memory/2026-11-04.md]" in data["startupPrelude"]
    assert data["bootstrapBudget"] == {"name": "bootstrap.total_max_chars", "cap": 60000, "used": 900}


def test_context_warns_about_an_oversized_memory_md(
    home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["# Memory"] + [f"- fact {i:04d} " + "q" * 50 for i in range(500)]
    (workspace / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert run(home, workspace, "context", "--text") == 0
    out = capsys.readouterr().out
    warning = next(line for line in out.splitlines() if line.startswith("  ! MEMORY.md is "))
    assert "will not be loaded (head+tail, per-file cap 20,000)" in warning
    assert "[...truncated, read MEMORY.md for full content...]" in out  # --text prints the injected copy


def test_context_group_kind_explains_why_memory_is_missing(
    home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(home, workspace, "context", "--kind", "group") == 0
    out = capsys.readouterr().out
    assert "New group session" in out
    assert "MEMORY.md is loaded only in private main sessions (docs/memory-core.md §1)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("context", "--kind", "channel"), "--kind must be one of private, group, cron, subagent (got 'channel')"),
        (("context", "triggers", "hi", "--project", ""), "--project needs a project key"),
        (("context", "triggers", "hi", "--project", "a>b"), "a project key cannot contain a line break, '<' or '>'"),
    ],
)
def test_bad_flag_values_are_one_line_user_errors(
    home: Path, workspace: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    from clawmem.program.main import main

    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    assert main(["--home", str(home), "--workspace", str(workspace), *argv]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and captured.err.startswith("clawmem: error: ")
    assert message in captured.err


def test_missing_workspace_is_one_line_user_error(home: Path, tmp_path: Path) -> None:
    with pytest.raises(ClawmemError) as exc:
        run(home, tmp_path / "nowhere", "context")
    assert "does not exist" in str(exc.value) and "\n" not in str(exc.value)


def test_triggers_shows_candidates_and_the_block(
    home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(home, workspace, "context", "triggers", "周末去杭州的车票订好了吗") == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "MEMORY.md#L4" in line)
    assert row.split()[:4] == ["0.680", "0.000", "injected", "MEMORY.md#L4"]
    assert "杭州 0.85 CJK" in row
    assert out.rstrip().endswith(
        "Context:\n<active_memory_plugin>\n"
        "- - 杭州周末行预算上限 3000 元（两人）。 (Source: MEMORY.md#L4)\n"
        "- - 返程车票尚未确认，需要在周五前订好。 (Source: MEMORY.md#L6)\n"
        "</active_memory_plugin>"
    )


def test_triggers_json_and_project_flag(home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workspace / "MEMORY.md"
    path.write_text(
        path.read_text(encoding="utf-8") + "- Billing review is Thursday. <!-- trigger: billing review --> "
        "<!-- project: github.com/acme/billing -->\n",
        encoding="utf-8",
    )
    assert run(home, workspace, "context", "triggers", "billing", "review", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    entry = next(c for c in data["candidates"] if c["startLine"] == 13)
    assert data["message"] == "billing review"
    assert entry["outcome"] == "ineligible" and data["block"] is None
    assert (
        run(home, workspace, "context", "triggers", "billing review", "--project", "github.com/acme/billing", "--json")
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert [c["startLine"] for c in data["injected"]] == [13]
    assert data["activeProjects"] == ["github.com/acme/billing"]


def test_triggers_nothing_injected(home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(home, workspace, "context", "triggers", "what is the weather like") == 0
    assert "Nothing is injected (no strong, eligible hit)." in capsys.readouterr().out


def test_triggers_empty_message_is_a_user_error(home: Path, workspace: Path) -> None:
    with pytest.raises(ClawmemError, match="the message is empty"):
        run(home, workspace, "context", "triggers", "  ")
