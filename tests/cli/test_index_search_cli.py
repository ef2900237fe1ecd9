"""The `clawmem` command for indexing, status, search and get: output, JSON, exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tui.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def kw(home: Path, workspace: Path) -> list[str]:
    """Global flags for a keyword-only home (fast, no model)."""
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    return ["--home", str(home), "--workspace", str(workspace)]


def test_index_json_reports_the_fields(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, err = run(capsys, *kw, "index", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert {"files", "chunks", "embedded", "cache_hits", "skipped", "warnings", "duration_ms"} <= set(data)
    assert data["files"] == 12 and data["chunks"] > 20


def test_global_flags_also_work_after_the_command(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, _ = run(capsys, "index", *kw, "--json")
    assert code == 0 and json.loads(out)["files"] == 12


def test_status_lists_the_spec_figures(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    run(capsys, *kw, "index")
    code, out, _ = run(capsys, *kw, "status")
    assert code == 0
    for label in (
        "Provider:",
        "Model:",
        "Indexed:",
        "Dirty:",
        "Store:",
        "Workspace:",
        "Dreaming:",
        "FTS:",
        "Embedding cache:",
        "Index identity:",
        "Vector store:",
    ):
        assert label in out
    code, out, _ = run(capsys, *kw, "status", "--json")
    status = json.loads(out)[0]["status"]
    assert status["files_indexed"] == 12 and status["fts_tokenizer"] == "trigram"


def test_search_prints_score_path_and_snippet(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, _ = run(capsys, *kw, "search", "湖景房")
    assert code == 0
    first = out.splitlines()[0]
    score, where = first.split(" ", 1)
    assert float(score) > 0 and where.startswith(("MEMORY.md:", "memory/"))


def test_search_json_has_the_documented_shape(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    _, out, _ = run(capsys, *kw, "search", "湖景房", "--json", "--no-record")
    data = json.loads(out)
    assert {"results", "near_misses", "mode", "provider", "model", "warnings", "timings_ms"} <= set(data)
    hit = data["results"][0]
    assert set(hit) >= {"path", "start_line", "end_line", "score", "snippet", "source", "breakdown", "provenance"}
    assert set(hit["breakdown"]) == {
        "vector_raw",
        "vector",
        "keyword_raw",
        "keyword",
        "path_tier",
        "content",
        "age_days",
        "decay",
        "importance",
        "importance_factor",
        "project_factor",
        "pre_threshold",
        "mmr_rank",
        "passed_threshold",
    }
    assert set(hit["provenance"]) == {"origin_class", "session_kind", "observed_at"}


def test_search_explain_prints_the_breakdown(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, _ = run(capsys, *kw, "search", "why did the staging deploy fail", "--explain")
    assert code == 0
    assert "decay" in out and "importance" in out and "near-misses" in out


def test_no_matches(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, _ = run(capsys, *kw, "search", "zebra quantum xylophone")
    assert code == 0 and out.strip() == "No matches."


@pytest.mark.parametrize(
    ("flag", "value"), [("--max-results", "0"), ("--max-results", "abc"), ("--min-score", "2"), ("--min-score", "x")]
)
def test_bad_flag_values_exit_2(capsys: pytest.CaptureFixture[str], kw: list[str], flag: str, value: str) -> None:
    code, _, err = run(capsys, *kw, "search", "x", flag, value)
    assert code == 2 and "Traceback" not in err


def test_get_reads_lines_with_a_continuation_hint(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, _ = run(capsys, *kw, "get", "MEMORY.md", "--from", "4", "--lines", "2", "--json")
    data = json.loads(out)
    assert code == 0 and data["from"] == 4 and data["lines"] == 2 and data["next_from"] == 6
    assert data["text"].startswith("- 杭州周末行预算上限")


@pytest.mark.parametrize("bad", ["../secret.md", "/etc/passwd", "memory/../../x.md", "notes.txt", "memory/escape.md"])
def test_get_refuses_paths_outside_the_memory(
    capsys: pytest.CaptureFixture[str], kw: list[str], workspace: Path, tmp_path: Path, bad: str
) -> None:
    (tmp_path / "outside.md").write_text("secret")
    os.symlink(tmp_path / "outside.md", workspace / "memory" / "escape.md")
    code, out, err = run(capsys, *kw, "get", bad)
    assert code == 1 and out == ""
    assert err.startswith("clawmem: error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_get_unknown_file_is_a_user_error(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, _, err = run(capsys, *kw, "get", "memory/2020-01-01.md")
    assert code == 1 and "no such memory file" in err


def test_missing_workspace_is_one_line(capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path) -> None:
    code, _, err = run(capsys, "--home", str(home), "--workspace", str(tmp_path / "nope"), "index")
    assert code == 1 and "does not exist" in err and err.count("\n") == 1


def test_bad_config_is_one_line(capsys: pytest.CaptureFixture[str], home: Path, workspace: Path) -> None:
    (home / "config.toml").write_text("[search]\nmax_results = 'many'\n")
    code, _, err = run(capsys, "--home", str(home), "--workspace", str(workspace), "status")
    assert code == 1 and "max_results" in err and "Traceback" not in err


def test_reset_needs_yes_when_not_interactive(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    run(capsys, *kw, "index")
    code, _, err = run(capsys, *kw, "reset")
    assert code == 1 and "--yes" in err
    code, out, _ = run(capsys, *kw, "reset", "--yes")
    assert code == 0 and "dropped" in out
