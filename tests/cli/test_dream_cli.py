"""`clawmem dream …`: run, explain, candidates, review, approve, reject, revert, history, --at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawmem.program.main import main

from tests.dreaming_fixture import DIARY, DREAM_AT, FACT, QUERIES, write_fact


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def kw(home: Path, workspace: Path) -> list[str]:
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    return ["--home", str(home), "--workspace", str(workspace)]


@pytest.fixture
def recalled(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, kw: list[str], workspace: Path
) -> list[str]:
    """The diary fact recalled by three different searches on three days; the clock then sits at DREAM_AT."""
    write_fact(workspace)
    for now, query in QUERIES:
        monkeypatch.setenv("CLAWMEM_NOW", now)
        code, _, err = run(capsys, *kw, "search", query)
        assert code == 0, err
    monkeypatch.setenv("CLAWMEM_NOW", DREAM_AT)
    return kw


def test_dream_writes_a_proposal_and_prints_its_id_and_diff(
    capsys: pytest.CaptureFixture[str], recalled: list[str], workspace: Path
) -> None:
    before = (workspace / "MEMORY.md").read_bytes()
    code, out, err = run(capsys, *recalled, "dream")
    assert code == 0, err
    assert "Proposed 1 candidate(s) for MEMORY.md; awaiting review" in out
    assert f"+- {FACT} Source: {DIARY}#L1-L2" in out and "--- a/MEMORY.md" in out
    assert "approve: clawmem dream approve " in out
    assert (workspace / "MEMORY.md").read_bytes() == before

    code, out, _ = run(capsys, *recalled, "dream", "review", "--json")
    (pending,) = json.loads(out)
    assert code == 0 and pending["status"] == "pending" and pending["mode"] == "rewrite"
    assert pending["operations"][0]["source"] == f"{DIARY}#L1-L2" and pending["diff"].startswith("--- a/MEMORY.md")
    short = pending["shortId"]

    code, out, err = run(capsys, *recalled, "dream", "approve", short)
    assert code == 0, err
    assert f"applied proposal {short}" in out
    assert f"- {FACT} Source: {DIARY}#L1-L2" in (workspace / "MEMORY.md").read_text(encoding="utf-8")

    code, out, _ = run(capsys, *recalled, "dream", "history")
    assert code == 0 and short in out and "preimage kept" in out and "(current MEMORY.md)" in out

    code, out, err = run(capsys, *recalled, "dream", "revert", short)
    assert code == 0, err
    assert "restored byte for byte" in out
    assert (workspace / "MEMORY.md").read_bytes() == before
    code, out, _ = run(capsys, *recalled, "dream", "history", "--json")
    assert json.loads(out)[0]["status"] == "reverted"


def test_stale_approval_and_refused_revert_exit_1_with_one_line(
    capsys: pytest.CaptureFixture[str], recalled: list[str], workspace: Path
) -> None:
    run(capsys, *recalled, "dream")
    _, out, _ = run(capsys, *recalled, "dream", "review", "--json")
    short = json.loads(out)[0]["shortId"]
    memory = workspace / "MEMORY.md"
    with memory.open("a", encoding="utf-8") as fh:
        fh.write("- written by hand\n")
    edited = memory.read_bytes()
    code, out, err = run(capsys, *recalled, "dream", "review")  # the queue already says it is stale
    assert code == 0 and f"proposal {short}  stale" in out and "pending" not in out
    assert "stale: MEMORY.md changed since the proposal was made; run `clawmem dream` to make a new one" in out
    assert "--- a/MEMORY.md (when proposed)" in out and "regenerate: clawmem dream" in out
    assert "approve: clawmem dream approve" not in out
    _, out, _ = run(capsys, *recalled, "dream", "review", "--json")
    assert json.loads(out)[0]["status"] == "stale" and memory.read_bytes() == edited
    code, out, err = run(capsys, *recalled, "dream", "approve", short)
    assert code == 1 and out == "" and memory.read_bytes() == edited
    assert err.count("\n") == 1 and err.startswith("clawmem: error: MEMORY.md changed since the proposal was made")
    assert "Traceback" not in err

    code, out, err = run(capsys, *recalled, "dream", "--apply")
    assert code == 0, err
    memory.write_text(memory.read_text(encoding="utf-8") + "- another hand edit\n", encoding="utf-8")
    _, hist, _ = run(capsys, *recalled, "dream", "history", "--json")
    applied = json.loads(hist)[0]["proposalId"]
    code, out, err = run(capsys, *recalled, "dream", "revert", applied[:8])
    assert code == 1 and err.count("\n") == 1 and "nothing was restored" in err
    assert "===== preimage: MEMORY.md before the rewrite =====" in out
    assert "===== current: MEMORY.md now =====" in out and "- another hand edit" in out


def test_explain_shows_components_gates_and_the_reason(
    capsys: pytest.CaptureFixture[str], recalled: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run(capsys, *recalled, "dream", "explain", f"{DIARY}:1")
    assert code == 0, err
    for label in (
        "frequency",
        "relevance",
        "diversity",
        "recency",
        "consolidation",
        "conceptual",
        "light boost",
        "rem boost",
        "score",
    ):
        assert label in out
    assert "pass  unique-queries   has 3" in out and "=> promotable: passes every gate" in out
    assert f"  promotes    {FACT}\n              from {DIARY}#L1-L2: the chunk is one item\n" in out
    assert "  matched     L1 ×3 (file line × recalling queries whose terms it contains)" in out
    code, out, _ = run(capsys, *recalled, "dream", "explain", f"{DIARY}:1", "--json")
    data = json.loads(out)
    assert data["uniqueQueries"] == 3 and {g["name"] for g in data["gates"]} >= {"signals", "score", "age"}
    code, _, err = run(capsys, *recalled, "dream", "explain", "memory/nothing.md:3")
    assert code == 1 and err.startswith("clawmem: error: no recall entry") and err.count("\n") == 1
    monkeypatch.setenv("CLAWMEM_NOW", "2026-12-30T11:00:00+00:00")
    _, out, _ = run(capsys, *recalled, "dream", "explain", f"{DIARY}:1")
    assert "=> below-gates:" in out and "30 allowed" in out


def test_reject_then_candidates_show_why_it_waits(capsys: pytest.CaptureFixture[str], recalled: list[str]) -> None:
    run(capsys, *recalled, "dream")
    _, out, _ = run(capsys, *recalled, "dream", "review", "--json")
    short = json.loads(out)[0]["shortId"]
    code, out, err = run(capsys, *recalled, "dream", "reject", short, "--reason", "already known")
    assert code == 0, err
    assert f"rejected proposal {short} (already known)" in out
    code, out, _ = run(capsys, *recalled, "dream", "review")
    assert code == 0 and out == "no proposals waiting for review\n"
    code, out, _ = run(capsys, *recalled, "dream", "candidates")
    assert "rejected" in out and "waits for new signals" in out
    code, _, err = run(capsys, *recalled, "dream", "reject", short)
    assert code == 1 and "only pending proposals can be rejected" in err


def test_at_runs_once_per_day_for_cron(
    capsys: pytest.CaptureFixture[str], kw: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWMEM_NOW", "2026-11-05T02:50:00+00:00")
    code, out, _ = run(capsys, *kw, "dream", "--at", "3:00")
    assert code == 0 and out.startswith("nothing to do: not due yet")
    monkeypatch.setenv("CLAWMEM_NOW", "2026-11-05T03:10:00+00:00")
    code, out, err = run(capsys, *kw, "dream", "--at", "03:00")
    assert code == 0, err
    assert out.startswith("dreaming cycle 2026-11-05T03:10:00.000Z")
    code, out, _ = run(capsys, *kw, "dream", "--at", "03:00", "--json")
    assert code == 0 and json.loads(out)["ran"] is False and "already ran today" in json.loads(out)["reason"]


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("dream", "--phase", "dusk"), "--phase"),
        (("dream", "--at", "25:00"), "--at"),
        (("dream", "--at", "noon"), "--at"),
    ],
)
def test_bad_flag_values_are_one_line_user_errors(
    capsys: pytest.CaptureFixture[str], kw: list[str], args: tuple[str, ...], flag: str
) -> None:
    code, _, err = run(capsys, *kw, *args)
    assert code == 1 and err.startswith(f"clawmem: error: {flag}: ") and err.count("\n") == 1


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, _, err = run(capsys, *kw, "dream", "approve")  # the proposal id is missing
    assert code == 2 and "Traceback" not in err


def test_phase_and_json_run(capsys: pytest.CaptureFixture[str], kw: list[str]) -> None:
    code, out, err = run(capsys, *kw, "dream", "--phase", "light", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["phases"] == ["light"] and data["rem"] is None and data["deep"] is None
    assert data["light"]["bodyLines"][0].startswith("- Candidate: ")
    code, _, err = run(capsys, *kw, "dream", "approve", "ffff")
    assert code == 1 and err.startswith("clawmem: error: no proposal")
