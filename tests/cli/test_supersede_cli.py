"""``clawmem supersede`` in-process: mark, undo, decide agents' proposals; ``--json``; one-line errors
with exit 1 and not a byte changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawmem.engine.facade import MemoryEngine
from clawmem.program.main import main

from tests.cli.one_line import one_line_error
from tests.conftest import make_settings


@pytest.fixture
def run(home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")

    def call(*argv: str) -> tuple[int, str, str]:
        code = main(["--home", str(home), "--workspace", str(workspace), *argv])
        out, err = capsys.readouterr()
        return code, out, err

    return call


def files(workspace: Path) -> dict[str, bytes]:
    return {p.relative_to(workspace).as_posix(): p.read_bytes() for p in sorted(workspace.rglob("*")) if p.is_file()}


def test_supersede_and_undo(run, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    before = files(workspace)
    code, out, err = run("supersede", "MEMORY.md:10", "--by", "MEMORY.md:12")
    assert code == 0, err
    assert out.splitlines() == [
        "marked MEMORY.md:11 superseded by MEMORY.md:13 (observed 2026-11-05)",
        "  line 10: <!-- observed: 2026-11-05 | status: superseded | by: MEMORY.md#13 -->  (added above the entry)",
        "undo: clawmem supersede MEMORY.md:11 --undo",
    ]
    assert (workspace / "MEMORY.md").read_text().split("\n")[9].startswith("<!-- observed: 2026-11-05")
    code, out, err = run("supersede", "MEMORY.md:11", "--undo")
    assert code == 0, err
    assert out == "MEMORY.md:10 is no longer superseded: removed the marker line clawmem wrote\n"
    assert files(workspace) == before


def test_json_output(run, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run("supersede", "USER.md#L8", "--by", "USER.md:10", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["path"], data["line"], data["markerLine"], data["action"]) == ("USER.md", 8, 7, "replaced")
    assert data["marker"] == "<!-- observed: 2026-09-01 | status: superseded | by: USER.md#10 -->"
    assert {"newerPath", "newerLine", "sha256", "previousSha256", "supersessionId", "warnings"} <= set(data)
    code, out, err = run("supersede", "USER.md:8", "--undo", "--json")
    assert code == 0, err
    undo = json.loads(out)
    assert (undo["action"], undo["exact"], undo["lineAfter"]) == (
        "restored",
        True,
        "<!-- observed: 2026-09-01 | status: active -->",
    )


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["MEMORY.md", "--by", "MEMORY.md:4"], "the older entry 'MEMORY.md' is not PATH:LINE"),
        (["MEMORY.md:4", "--by", "4"], "--by '4' is not PATH:LINE"),
        (["MEMORY.md:1", "--by", "MEMORY.md:4"], "MEMORY.md:1 is a heading, not a bullet entry"),
        (["MEMORY.md:4", "--by", "MEMORY.md:4"], "cannot supersede itself"),
        (["../x.md:1", "--by", "MEMORY.md:4"], "'..' is refused"),
        (["MEMORY.md:40", "--by", "MEMORY.md:4"], "is past the end"),
        (["MEMORY.md:4", "--undo"], "MEMORY.md:4 is not marked superseded; nothing was changed"),
        (["--by", "MEMORY.md:4"], "give the older entry"),
        (["MEMORY.md:4", "--proposals"], "is only taken with --by or --undo"),
        (["--proposals", "--reason", "x"], "--reason is only taken with --reject"),
        (["--accept", "abcdef"], "no supersede proposal with id 'abcdef'"),
    ],
)
def test_bad_input_is_one_line_exit_1_and_nothing_changes(run, workspace: Path, argv: list[str], says: str) -> None:  # type: ignore[no-untyped-def]
    before = files(workspace)
    code, out, err = run("supersede", *argv)
    assert code == 1 and out == ""
    assert says in one_line_error(err)
    assert files(workspace) == before


def test_no_mode_is_a_usage_error(run, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exited:
        run("supersede", "MEMORY.md:4")
    assert exited.value.code == 2
    assert "one of the arguments --by --undo --proposals --accept --reject is required" in capsys.readouterr().err


def test_proposals_accept_and_reject(run, home: Path, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    with MemoryEngine(make_settings(home, workspace, embedding={"provider": "none"})) as engine:
        first = engine.curation.propose("MEMORY.md:10", "memory/2026-11-04.md:4", "the review moved")
        second = engine.curation.propose("USER.md:8", "USER.md:10", "not needed")
    code, out, _ = run("supersede", "--proposals")
    assert code == 0
    assert out.splitlines()[0] == f"{first.short_id}  MEMORY.md:10 → memory/2026-11-04.md:4"
    assert "    proposed 2026-11-05 09:00 (agent): the review moved" in out
    assert out.rstrip().endswith("reject: clawmem supersede --reject ID [--reason TEXT]")
    code, out, err = run("supersede", "--accept", first.short_id)
    assert code == 0, err
    assert out.splitlines()[:2] == [
        f"accepted proposal {first.short_id}",
        "marked MEMORY.md:11 superseded by memory/2026-11-04.md:4 (observed 2026-11-05)",
    ]
    assert "by: memory/2026-11-04.md#4" in (workspace / "MEMORY.md").read_text()
    before = files(workspace)
    code, out, _ = run("supersede", "--reject", second.id, "--reason", "I still mean it", "--json")
    assert code == 0 and json.loads(out)["proposal"]["status"] == "rejected"
    assert files(workspace) == before
    code, out, _ = run("supersede", "--proposals", "--json")
    assert json.loads(out) == {"proposals": []}
    code, out, _ = run("supersede", "--proposals", "--all")
    assert "[accepted]" in out and "[rejected: I still mean it]" in out
    code, _, err = run("supersede", "--accept", first.short_id)
    assert code == 1 and "is accepted already" in one_line_error(err)


def test_search_after_a_supersede_shows_the_mark(run, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    # MEMORY.md:10 (deploys) marked superseded by MEMORY.md:12 (the on-call rotation): search says so
    assert run("supersede", "MEMORY.md:10", "--by", "MEMORY.md:12")[0] == 0
    code, out, err = run("search", "deploys", "--min-score", "0", "--json")
    assert code == 0, err
    hits = [h for h in json.loads(out)["results"] if h["path"] == "MEMORY.md"]
    old = next(h for h in hits if h["status"] == "superseded")
    assert old["supersededBy"] == "MEMORY.md#13"
    # the on-call line is not a result for "deploys": the mark is shown, nothing is moved
    assert old["newerVersion"] is None and all(h["startLine"] != 13 for h in hits)
    code, out, err = run("search", "deploys", "--min-score", "0")
    assert code == 0, err
    assert "[marked superseded by MEMORY.md#13]" in out


def test_status_says_when_proposals_wait(run, home: Path, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run("status")
    assert code == 0 and "Proposals:       none waiting" in out
    with MemoryEngine(make_settings(home, workspace, embedding={"provider": "none"})) as engine:
        engine.curation.propose("MEMORY.md:10", "MEMORY.md:12", "the agent heard the schedule changed")
    code, out, _ = run("status")
    assert code == 0
    assert "1 supersession(s) proposed by agents wait for you (clawmem supersede --proposals)" in out
    code, out, _ = run("status", "--json")
    assert json.loads(out)[0]["status"]["supersedeProposals"] == 1
