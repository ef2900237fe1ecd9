"""The `clawmem` command for indexing, status, search and get: output, JSON, exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from clawmem.program.main import main


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
    assert {"files", "chunks", "embedded", "cacheHits", "skipped", "warnings", "durationMs"} <= set(data)
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
    assert status["filesIndexed"] == 12 and status["ftsTokenizer"] == "trigram"


def test_search_prints_score_path_and_snippet(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, _ = run(capsys, *kw, "search", "湖景房")
    assert code == 0
    first = out.splitlines()[0]
    score, where = first.split(" ", 1)
    assert float(score) > 0 and where.startswith(("MEMORY.md:", "memory/"))


def test_search_json_has_the_documented_shape(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    _, out, _ = run(capsys, *kw, "search", "湖景房", "--json", "--no-record")
    data = json.loads(out)
    assert {"results", "nearMisses", "mode", "provider", "model", "warnings", "timingsMs"} <= set(data)
    assert data["keywordProbesSkipped"] == []  # 25 chunks: every term is rarer than the window
    assert data["keywordProbeLimit"] == 64  # … which is the limit on so small an index
    hit = data["results"][0]
    assert set(hit) >= {"path", "startLine", "endLine", "score", "snippet", "source", "breakdown", "provenance"}
    assert set(hit["breakdown"]) == {
        "vectorRaw",
        "vector",
        "keywordRaw",
        "keyword",
        "pathTier",
        "content",
        "ageDays",
        "recency",
        "decay",
        "importance",
        "importanceFactor",
        "projectFactor",
        "preThreshold",
        "qualifying",
        "mmrRank",
        "passedThreshold",
        "line",
        "lineCosine",
        "lineVector",
        "linePending",
        "dateMatch",
    }
    assert hit["breakdown"]["dateMatch"] is None  # the query names no date
    assert hit["breakdown"]["linePending"] is False  # the index is complete: every best line is there
    assert data["dates"] == [] and data["datedDiaries"] == 0
    assert set(hit["provenance"]) == {"originClass", "sessionKind", "observedAt"}


def test_search_explain_prints_the_breakdown(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, _ = run(capsys, *kw, "search", "why did the staging deploy fail", "--explain")
    assert code == 0
    assert "decay" in out and "importance" in out and "near-misses" in out


def test_no_matches(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, _ = run(capsys, *kw, "search", "zebra quantum xylophone")
    assert code == 0 and out.strip() == "No matches."


def one_line_error(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("clawmem: error: "), err
    assert "Traceback" not in err and "usage:" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("command", "flag", "value"),
    [
        ("search", "--max-results", "0"),
        ("search", "--max-results", "201"),
        ("search", "--max-results", "abc"),
        ("search", "--min-score", "2"),
        ("search", "--min-score", "x"),
        ("search", "--min-score", "nan"),
        ("search", "--scoring", "exact"),
        ("search", "--mode", "fuzzy"),
        ("search", "--source", "wiki"),
        ("search", "--project", ""),
        ("search", "--project", "  "),
        ("search", "--project", "bad<key>"),
        ("search", "--project", "two\nlines"),
        ("get", "--lines", "abc"),
        ("get", "--lines", "0"),
        ("get", "--from", "0"),
    ],
)
def test_bad_flag_values_exit_1_with_one_line(
    capsys: pytest.CaptureFixture[str], kw: list[str], command: str, flag: str, value: str
) -> None:
    target = "MEMORY.md" if command == "get" else "budget"
    code, out, err = run(capsys, *kw, command, target, flag, value)
    assert code == 1 and out == ""
    assert one_line_error(err).startswith(f"clawmem: error: {flag} ")


@pytest.mark.parametrize(
    "args",
    [("serch", "x"), ("search",), ("search", "x", "--bogus"), ("get",), ("status", "--deeep")],
)
def test_bad_usage_exits_2_in_two_lines(
    capsys: pytest.CaptureFixture[str], kw: list[str], args: tuple[str, ...]
) -> None:
    code, out, err = run(capsys, *kw, *args)
    assert code == 2 and out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 2 and ": error: " in lines[0] and "--help" in lines[1], err


def test_a_project_key_the_spec_accepts_still_works(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, _, err = run(capsys, *kw, "search", "budget", "--project", "github.com/Acme/billing", "--project", "path:/x")
    assert code == 0, err


def test_get_reads_lines_with_a_continuation_hint(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, _ = run(capsys, *kw, "get", "MEMORY.md", "--from", "4", "--lines", "2", "--json")
    data = json.loads(out)
    assert code == 0 and data["from"] == 4 and data["lines"] == 2 and data["nextFrom"] == 6
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


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("[search]\nmax_results = 'many'\n", "search.max_results"),
        ("[search]\nhalf_life_days = nan\n", "search.half_life_days"),  # nan passed "must be positive"
        ("[search]\nhalf_life_days = inf\n", "search.half_life_days"),  # printed Infinity in --json
        ("[search]\nvector_weight = nan\n", "search.vector_weight"),
        ("[dreaming]\ndeep_min_score = 1" + "0" * 400 + "\n", "dreaming.deep_min_score"),  # was OverflowError
        ("agent_id = '../x'\n", "agent_id"),
        ("[index]\nmax_file_bytes = -1\n", "index.max_file_bytes"),  # skipped every file silently
        ("[search]\nsnippet_max_chars = 0\n", "search.snippet_max_chars"),
        ("[search]\ntext_weight = -0.5\n", "search.text_weight"),
        ("[intents]\ncooldown_hours = inf\n", "intents.cooldown_hours"),
    ],
)
def test_a_bad_config_value_is_one_line_naming_the_file_and_the_key(
    capsys: pytest.CaptureFixture[str], home: Path, workspace: Path, toml: str, key: str
) -> None:
    (home / "config.toml").write_text(toml)
    code, _, err = run(capsys, "--home", str(home), "--workspace", str(workspace), "search", "budget", "--json")
    line = one_line_error(err)
    assert code == 1 and "config.toml" in line and key in line


def test_reset_needs_yes_when_not_interactive(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    run(capsys, *kw, "index")
    code, _, err = run(capsys, *kw, "reset")
    assert code == 1 and "--yes" in err
    code, out, _ = run(capsys, *kw, "reset", "--yes")
    assert code == 0 and "dropped" in out


# ------------------------------------------------------------------ bad home, demo, missing workspace


@pytest.mark.parametrize("command", [("status",), ("search", "budget"), ("index",)])
def test_a_home_that_is_a_file_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: tuple[str, ...]
) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a directory\n")
    code, out, err = run(capsys, "--home", str(home), "--workspace", str(tmp_path), *command)
    assert code == 1 and out == ""
    assert "is not a directory" in one_line_error(err)
    assert home.read_text() == "not a directory\n"  # nothing was written into or beside it


def test_a_home_that_cannot_be_created_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "--home", "/proc/clawmem-nope", "--workspace", str(tmp_path), "status")
    assert code == 1 and "cannot create the clawmem home /proc/clawmem-nope" in one_line_error(err)


def test_demo_refuses_before_writing_anything(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a_file = tmp_path / "demo-file"
    a_file.write_text("x")
    code, _, err = run(capsys, "--demo", str(a_file))
    assert code == 1 and "not a directory" in one_line_error(err) and "internal error" not in err
    assert a_file.read_text() == "x"
    fresh = tmp_path / "new-demo"  # pytest's stdout is not a terminal: refused, and nothing written
    code, _, err = run(capsys, "--demo", str(fresh))
    assert code == 1 and "needs a terminal" in one_line_error(err)
    assert not fresh.exists()


@pytest.mark.parametrize("command", [("status",), ("status", "--json"), ("status", "--deep"), ("reset", "--yes")])
def test_status_and_reset_refuse_a_missing_workspace(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    missing = ["--home", str(home), "--workspace", str(tmp_path / "nope")]
    _, _, index_err = run(capsys, *missing, "index")
    code, out, err = run(capsys, *missing, *command)
    assert code == 1 and out == "" and one_line_error(err) == one_line_error(index_err)


# ------------------------------------------------------------------------------- a locked database


def test_a_locked_database_can_be_read_and_a_write_fails_in_one_line(
    capsys: pytest.CaptureFixture[str], kw: list[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    import apsw
    from clawmem.engine.store import db

    assert run(capsys, *kw, "index")[0] == 0
    database = next(home.glob("agents/*/agent/*.sqlite"))
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 300)  # the CLI's wait for the lock, short for the test
    holder = apsw.Connection(str(database))
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("CREATE TABLE another_process_writes (x)")
    try:
        started = time.monotonic()
        code, out, err = run(capsys, *kw, "status")
        assert code == 0 and "Indexed:" in out, err
        code, out, err = run(capsys, *kw, "search", "湖景房", "--no-record")
        assert code == 0 and "MEMORY.md" in out and "internal error" not in err
        assert time.monotonic() - started < 5  # reading never waits for the writer
        code, _, err = run(
            capsys, *kw, "session", "import", str(Path(__file__).parents[1] / "fixtures/sessions/lingyin-tickets.jsonl")
        )
        assert code == 1
        assert one_line_error(err).endswith("is locked by another clawmem process; try again")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert run(capsys, *kw, "session", "list")[0] == 0


def test_opening_an_up_to_date_database_writes_nothing(
    capsys: pytest.CaptureFixture[str], kw: list[str], home: Path
) -> None:
    import apsw

    assert run(capsys, *kw, "index")[0] == 0
    database = next(home.glob("agents/*/agent/*.sqlite"))
    keeper = apsw.Connection(str(database))  # keeps the WAL file alive between the runs
    try:
        wal = Path(f"{database}-wal")
        before = (database.read_bytes(), wal.read_bytes() if wal.exists() else b"")
        assert run(capsys, *kw, "status")[0] == 0
        assert run(capsys, *kw, "get", "MEMORY.md")[0] == 0
        assert (database.read_bytes(), wal.read_bytes() if wal.exists() else b"") == before
    finally:
        keeper.close()


# --------------------------------------------------------------------------- sessions as a source


LINGYIN = Path(__file__).parents[1] / "fixtures" / "sessions" / "lingyin-tickets.jsonl"
TICKETS = "Lingyin Temple tickets booked Saturday"


def test_an_imported_session_is_found_when_session_indexing_is_on(
    capsys: pytest.CaptureFixture[str], home: Path, workspace: Path
) -> None:
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n[index]\nsources = ["memory", "sessions"]\n')
    kw = ["--home", str(home), "--workspace", str(workspace)]
    assert run(capsys, *kw, "session", "import", str(LINGYIN))[0] == 0
    code, out, err = run(capsys, *kw, "search", TICKETS, "--json", "--no-record")
    assert code == 0, err
    hits = [h for h in json.loads(out)["results"] if h["source"] == "sessions"]
    assert hits and hits[0]["path"] == "sessions/sess-lingyin-02.jsonl" and hits[0]["sessionId"] == "sess-lingyin-02"
    assert hits[0]["startLine"] == 1 and hits[0]["endLine"] == 4 and "Lingyin Temple" in hits[0]["snippet"]
    assert hits[0]["provenance"]["originClass"] == "agent" and hits[0]["provenance"]["sessionKind"] == "interactive"
    code, out, _ = run(capsys, *kw, "search", TICKETS, "--no-record")
    assert "sessions/sess-lingyin-02.jsonl:1-4 [session transcript]" in out
    code, out, _ = run(capsys, *kw, "search", TICKETS, "--source", "memory", "--json", "--no-record")
    assert all(h["source"] == "memory" for h in json.loads(out)["results"])
    code, out, _ = run(capsys, *kw, "search", TICKETS, "--source", "sessions", "--json", "--no-record")
    data = json.loads(out)
    assert data["sources"] == ["sessions"] and data["results"]
    assert all(h["source"] == "sessions" for h in data["results"])
    # Forgotten: its chunks go, and the tombstone keeps them from coming back.
    assert run(capsys, *kw, "forget", "--session", "sess-lingyin-02", "--yes")[0] == 0
    assert run(capsys, *kw, "index", "--force")[0] == 0
    code, out, _ = run(capsys, *kw, "search", TICKETS, "--source", "all", "--json", "--no-record")
    assert not [h for h in json.loads(out)["results"] if h["source"] == "sessions"]


def test_sessions_are_not_searched_when_session_indexing_is_off(
    capsys: pytest.CaptureFixture[str], kw: list[str]
) -> None:
    assert run(capsys, *kw, "session", "import", str(LINGYIN))[0] == 0
    code, out, _ = run(capsys, *kw, "search", TICKETS, "--json", "--no-record")
    assert code == 0 and not [h for h in json.loads(out)["results"] if h["source"] == "sessions"]
    code, _, err = run(capsys, *kw, "search", TICKETS, "--source", "sessions")
    assert code == 1 and "session transcripts are not indexed" in one_line_error(err)
    code, out, err = run(capsys, *kw, "search", TICKETS, "--source", "all", "--json", "--no-record")
    data = json.loads(out)
    assert code == 0 and data["sources"] == ["memory"]
    assert any("not indexed" in w for w in data["warnings"])


def test_the_keyword_rescue_is_announced(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    # keyword-only, the coverage is the content: "outage" is in no note, so nothing reaches 0.99
    code, out, _ = run(capsys, *kw, "search", "staging deploy outage", "--min-score", "0.99", "--no-record")
    assert code == 0
    first, *rest = out.splitlines()
    assert first == "(nothing qualified at the 0.99 threshold; showing the closest memories below it instead)"
    shown = [line.split(" ", 1)[1] for line in rest if line[:1].isdigit() and line[1:2] == "."]
    assert any(where.startswith("memory/2026-08-20.md:") for where in shown)  # the staging deploy incident
    code, out, _ = run(capsys, *kw, "search", "湖景房", "--no-record")  # passes the threshold: no note
    assert code == 0 and "threshold" not in out and out.startswith("1.100 MEMORY.md:5-5")


# ------------------------------------------------------------------------------ get: long lines, past the end


def test_a_line_longer_than_the_budget_is_returned_whole(
    capsys: pytest.CaptureFixture[str], kw: list[str], workspace: Path
) -> None:
    long_line = "- " + "湖景房与预算。" * 2500  # 17,502 characters
    (workspace / "memory" / "long.md").write_text(f"{long_line}\n- after it\n", encoding="utf-8")
    (workspace / "memory" / "one.md").write_text(long_line, encoding="utf-8")
    code, out, err = run(capsys, *kw, "get", "memory/long.md", "--json")
    data = json.loads(out)
    assert code == 0 and data["text"] == long_line and data["charBudgetExceeded"] is True
    assert data["lines"] == 1 and data["nextFrom"] == 2 and data["truncated"] is True
    code, out, _ = run(capsys, *kw, "get", "memory/long.md", "--from", "2", "--json")
    assert json.loads(out)["text"] == "- after it" and json.loads(out)["nextFrom"] is None
    code, out, err = run(capsys, *kw, "get", "memory/one.md")
    assert code == 0 and out == long_line + "\n" and "over the 12,000-character budget" in err


def test_get_past_the_end_says_so(capsys: pytest.CaptureFixture[str], kw: list[str], workspace: Path) -> None:
    total = len((workspace / "MEMORY.md").read_text(encoding="utf-8").splitlines())
    code, out, err = run(capsys, *kw, "get", "MEMORY.md", "--from", "999")
    assert code == 0 and out == ""
    assert err == f"… --from 999 is past the end (MEMORY.md has {total} lines)\n"
    code, out, _ = run(capsys, *kw, "get", "MEMORY.md", "--from", "999", "--json")
    data = json.loads(out)
    assert data["pastEnd"] is True and data["totalLines"] == total and data["text"] == ""
    code, out, _ = run(capsys, *kw, "get", "MEMORY.md", "--json")
    assert json.loads(out)["pastEnd"] is False and json.loads(out)["charBudgetExceeded"] is False


# ------------------------------------------------------------------------------------- status shape


def test_status_json_has_warnings_and_skipped_like_index(
    capsys: pytest.CaptureFixture[str], kw: list[str], workspace: Path
) -> None:
    (workspace / "memory" / "latin1.md").write_bytes(b"caf\xe9 latin-1\n")
    code, out, _ = run(capsys, *kw, "index", "--json")
    assert code == 0
    skipped = json.loads(out)["skipped"]
    assert skipped == [{"path": "memory/latin1.md", "reason": skipped[0]["reason"]}]
    _, out, _ = run(capsys, *kw, "status", "--json")
    status = json.loads(out)[0]["status"]
    assert status["skipped"] == skipped
    assert any("memory/latin1.md" in w for w in status["warnings"]) and "issues" in status


def test_status_reports_the_fallback_search_takes(
    capsys: pytest.CaptureFixture[str], home: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "models-file"
    blocked.write_text("a file where the models folder should be")
    monkeypatch.setenv("CLAWMEM_MODELS_DIR", str(blocked))
    kw = ["--home", str(home), "--workspace", str(workspace)]  # the default (optional) model
    code, out, _ = run(capsys, *kw, "search", "湖景房", "--json", "--no-record")
    assert code == 0 and json.loads(out)["fallback"].startswith("embedding model unavailable: ")
    code, out, _ = run(capsys, *kw, "status")
    fallback = next(line for line in out.splitlines() if line.startswith("Fallback:"))
    assert "embedding model unavailable: cannot create" in fallback and str(blocked) in fallback
    code, out, _ = run(capsys, *kw, "status", "--json")
    status = json.loads(out)[0]["status"]
    assert status["fallback"].startswith("embedding model unavailable: ")
    assert any(w.endswith("; search is keyword-only") for w in status["warnings"])


def test_a_component_that_is_behind_is_migrated_on_open_and_waits_for_the_lock(
    capsys: pytest.CaptureFixture[str], kw: list[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import apsw
    from clawmem.engine.store import db, schema

    assert run(capsys, *kw, "index")[0] == 0
    database = next(home.glob("agents/*/agent/*.sqlite"))
    old = apsw.Connection(str(database))  # as an older clawmem left it: no CJK index yet
    old.execute("DROP TABLE memory_index_chunks_cjk; UPDATE clawmem_schema SET version = 1 WHERE component = 'index'")
    assert schema.pending_components(old) == ["index"]
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 300)
    old.execute("BEGIN IMMEDIATE")
    old.execute("CREATE TABLE another_process_writes (x)")
    code, out, err = run(capsys, *kw, "status")  # the migration needs the lock: refused in one line
    assert code == 1 and out == "" and one_line_error(err).endswith("locked by another clawmem process; try again")
    old.execute("ROLLBACK")
    code, out, err = run(capsys, *kw, "search", "杭州", "--no-record")
    assert code == 0 and "MEMORY.md" in out, err
    assert schema.pending_components(old) == []
    assert old.execute("SELECT COUNT(*) FROM memory_index_chunks_cjk").fetchall()[0][0] > 0
    old.close()


def test_an_internal_error_is_one_line_even_when_the_log_cannot_be_written_in_the_home(
    capsys: pytest.CaptureFixture[str], kw: list[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawmem.cli import index_cmds

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(index_cmds, "build_status", broken)
    (home / "logs").write_text("a file where the logs folder should be")
    code, out, err = run(capsys, *kw, "status")
    line = one_line_error(err)
    assert code == 1 and out == "" and line.startswith("clawmem: error: internal error: RuntimeError: a bug (")
    assert "logs/clawmem.log" not in line  # the fallback log, outside the home


def test_no_matches_names_the_closest_memories(
    capsys: pytest.CaptureFixture[str], home: Path, workspace: Path, default_model_path: Path
) -> None:
    # Nothing qualifies at 0.35 for this cross-lingual paraphrase: the closest memories are shown,
    # marked as below the threshold, so an expected memory is never just "missing".
    flags = ["--home", str(home), "--workspace", str(workspace)]
    code, out, _ = run(capsys, *flags, "search", "which train do we take to Hangzhou", "--no-record")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "(nothing qualified at the 0.35 threshold; showing the closest memories below it instead)"
    shown = [ln for ln in lines[1:] if ln[:2] == "0." and " " in ln]
    assert 1 <= len(shown) <= 6 and all(float(ln.split()[0]) < 0.35 for ln in shown)
    code, out, _ = run(capsys, *flags, "search", "which train do we take to Hangzhou", "--json", "--no-record")
    data = json.loads(out)
    assert data["thresholdRescue"] and all(not h["breakdown"]["passedThreshold"] for h in data["results"])
    assert all(h["breakdown"]["qualifying"] < 0.35 for h in data["results"])


def test_index_embeds_lines_and_explain_names_the_best_line(
    capsys: pytest.CaptureFixture[str], home: Path, workspace: Path, default_model_path: Path
) -> None:
    flags = ["--home", str(home), "--workspace", str(workspace)]
    code, out, err = run(capsys, *flags, "index")
    assert code == 0, err
    assert " lines embedded · " in out  # the diaries' multi-line chunks got line vectors
    code, out, err = run(capsys, *flags, "search", "who upgraded the hotel room", "--json", "--no-record")
    assert code == 0, err
    hit = next(h for h in json.loads(out)["results"] if h["path"] == "memory/2026-11-03-hotel-call.md")
    b = hit["breakdown"]
    assert hit["startLine"] <= b["line"] <= hit["endLine"] and b["line"] > hit["startLine"]  # not the heading
    assert 0 < b["lineCosine"] <= 1 and 0 <= b["lineVector"] <= 1
    code, out, _ = run(capsys, *flags, "search", "who upgraded the hotel room", "--explain", "--no-record")
    assert f"  best line {b['lineVector']:.2f}     line {b['line']} · cosine {b['lineCosine']:.3f}" in out
    assert "· 0.7·chunk + 0.3·best line" in out


@pytest.mark.parametrize("path", ["memory/a\nb.md", "0\x1e", "memory/\x1b[2Jx.md", "memory/" + "x" * 300 + ".md"])
def test_get_echoes_a_bad_path_on_one_line(capsys: pytest.CaptureFixture[str], kw: list[str], path: str) -> None:
    """A path echoed in the error was printed raw: a newline (or \\x1e, a line break to
    splitlines) broke the message over lines; a name too long was an internal error."""
    code, out, err = run(capsys, *kw, "get", "--", path)
    assert code == 1 and out == ""
    line = one_line_error(err)
    assert "internal error" not in line and "\x1b" not in line


def test_search_for_undecodable_bytes_is_a_user_error(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    """``clawmem search $'\\xff'`` reaches Python as a lone surrogate; it was an internal error."""
    code, out, err = run(capsys, *kw, "search", "--json", "hotel \udcff")
    assert code == 1 and out == ""
    assert "not valid text" in one_line_error(err)


@pytest.mark.parametrize(
    "args",
    [
        ("intent", "cancel", "\udcff"),
        ("intent", "create", "--description", "x\udcff", "--keywords", "a", "--channel", "c", "--sender", "s"),
        ("forget", "--session", "\udcff", "--dry-run"),
    ],
)
def test_undecodable_bytes_in_an_argument_are_a_user_error(
    capsys: pytest.CaptureFixture[str], kw: list[str], args: tuple[str, ...]
) -> None:
    """Non-UTF-8 argv bytes arrive as lone surrogates; the commands that stored or hashed them
    failed with an internal error."""
    code, _, err = run(capsys, *kw, *args)
    assert code == 1
    assert "not valid UTF-8 text" in one_line_error(err)
    code, out, _ = run(capsys, *kw, "intent", "list", "--json")
    assert code == 0 and "x\\udcff" not in out
