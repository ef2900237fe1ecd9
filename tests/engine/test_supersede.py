"""Superseding a changed fact (issue 36): the marker's forms, the write and its exact undo, the
refusals that write nothing, and the proposals an agent makes for the person to decide.

Real files in a copy of the fixture workspace, a real SQLite database, keyword-only engines (no
model: what is checked is files, markers and rows, not ranking)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawmem.engine.curation import service as curation_service
from clawmem.engine.curation.refs import EntryRef, parse_entry_ref
from clawmem.engine.errors import ClawmemError, ConflictError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.workspace.annotations import (
    OBSERVED_MARKER,
    StatusMarker,
    entry_status,
    format_status_marker,
    parse_status_marker,
    strip_all_markers,
)
from clawmem.engine.workspace.entries import entry_markers, entry_statuses, parse_entries

from tests.conftest import make_settings

GYM = "memory/2026-03-02.md"
POOL = "memory/2026-10-20.md"


@pytest.fixture
def eng(home: Path, workspace: Path) -> Iterator[MemoryEngine]:
    (workspace / GYM).write_text("# 2026-03-02\n\n- I work out at the gym at 7am before work.\n- Lunch with Priya.\n")
    (workspace / POOL).write_text("# 2026-10-20\n\n- Switched from the gym to the pool: I swim at 7am now.\n")
    engine = MemoryEngine(make_settings(home, workspace, embedding={"provider": "none"}))
    engine.sync()
    yield engine
    engine.close()


def files(workspace: Path) -> dict[str, bytes]:
    return {p.relative_to(workspace).as_posix(): p.read_bytes() for p in sorted(workspace.rglob("*")) if p.is_file()}


def rows(engine: MemoryEngine) -> int:
    return int(engine.store.scalar("SELECT count(*) FROM memory_supersessions"))


# ----------------------------------------------------------------------------- the marker


def test_marker_forms_parse() -> None:
    assert parse_status_marker("<!-- observed: 2026-03-02 | status: active -->") == StatusMarker("2026-03-02", "active")
    m = parse_status_marker("<!-- observed: 2026-03-02 | status: superseded | by: memory/2026-10-20.md#3 -->")
    assert m == StatusMarker("2026-03-02", "superseded", "memory/2026-10-20.md", 3)
    assert m.superseded and m.by == "memory/2026-10-20.md#3"
    spaced = parse_status_marker("<!--observed:2026-03-02|status:SUPERSEDED|by:USER.md#L12-->")
    assert spaced == StatusMarker("2026-03-02", "superseded", "USER.md", 12)
    assert parse_status_marker("<!-- observed: 2026-03-02 | status: superseded | by: MEMORY.md -->") == StatusMarker(
        "2026-03-02", "superseded", "MEMORY.md", None
    )
    inline = parse_status_marker("- Prefer tea. <!-- observed: 2026-01-01 | status: superseded | by: USER.md#9 -->")
    assert inline == StatusMarker("2026-01-01", "superseded", "USER.md", 9)
    for not_one in (
        "- Prefer tea.",
        "<!-- observed: 2026-01-01 | status: gone -->",
        "<!-- observed: soon | status: active -->",
    ):
        assert parse_status_marker(not_one) is None
    # the form clawmem writes, read back the same
    for marker in (
        StatusMarker("2026-03-02", "superseded", "memory/2026-10-20.md", 3),
        StatusMarker("2026-03-02", "active"),
    ):
        assert parse_status_marker(format_status_marker(marker)) == marker
    assert format_status_marker(m) == "<!-- observed: 2026-03-02 | status: superseded | by: memory/2026-10-20.md#3 -->"
    # USER.md's form still parses with the old groups, and is stripped from display text with a pointer too
    plain = OBSERVED_MARKER.search("<!-- observed: 2026-08-12 | status: active -->")
    assert plain is not None and plain.group(1, 2) == ("2026-08-12", "active")
    assert strip_all_markers("- x <!-- observed: 2026-08-12 | status: superseded | by: USER.md#4 -->") == "- x"


def test_entry_status_finds_the_marker_above_or_at_the_end_of_the_bullet() -> None:
    lines = [
        "# Notes",  # 0
        "<!-- observed: 2026-01-01 | status: superseded | by: MEMORY.md#7 -->",  # 1
        "- old fact",  # 2
        "<!-- observed: 2026-02-01 | status: superseded -->",  # 3
        "<!-- openclaw-memory-lineage:abc -->",  # 4
        "- fact under a lineage marker",  # 5
        "- inline <!-- observed: 2026-03-01 | status: superseded | by: MEMORY.md#2 --> <!-- importance: 8 -->",  # 6
        "- mid-line <!-- observed: 2026-03-01 | status: superseded --> and more text",  # 7
        "<!-- observed: 2026-04-01 | status: superseded -->",  # 8
        "",  # 9
        "- after a blank line",  # 10
        "- no marker",  # 11
    ]
    assert entry_status(lines, 2) == StatusMarker("2026-01-01", "superseded", "MEMORY.md", 7)
    assert entry_status(lines, 5) == StatusMarker("2026-02-01", "superseded")
    assert entry_status(lines, 6) == StatusMarker("2026-03-01", "superseded", "MEMORY.md", 2)
    assert entry_status(lines, 7) is None  # the marker must end the bullet line
    assert entry_status(lines, 10) is None  # "directly above": not across a blank line
    assert entry_status(lines, 11) is None


def test_entry_markers_read_every_kind_of_memory_file(workspace: Path) -> None:
    (workspace / "memory" / "2026-10-01.md").write_text(
        "# 2026-10-01\n\n<!-- observed: 2026-10-01 | status: superseded | by: memory/2026-11-04.md#4 -->\n"
        "- The migration review is on Wednesday.\n- Unmarked.\n"
    )
    (workspace / "memory" / "notes.md").write_text("- a note <!-- observed: 2026-05-05 | status: active -->\n")
    (workspace / "MEMORY.md").write_text(
        "# Memory\n\n- Gym at 7am. <!-- observed: 2026-03-02 | status: superseded | by: MEMORY.md#4 -->\n- Pool at 7am.\n"
    )
    diary = entry_markers(workspace / "memory" / "2026-10-01.md", "memory/2026-10-01.md")
    assert diary == {4: StatusMarker("2026-10-01", "superseded", "memory/2026-11-04.md", 4)}
    assert entry_markers(workspace / "memory" / "notes.md", "memory/notes.md") == {
        1: StatusMarker("2026-05-05", "active")
    }
    assert entry_markers(workspace / "MEMORY.md", "MEMORY.md") == {
        3: StatusMarker("2026-03-02", "superseded", "MEMORY.md", 4)
    }
    user = entry_markers(workspace / "USER.md", "USER.md")
    assert user[4] == StatusMarker("2026-03-02", "superseded") and user[6].status == "active"
    # the old per-entry status map keeps working, for every entry, in any memory file
    assert entry_statuses(workspace / "USER.md", "USER.md") == {4: "superseded", 6: "active", 8: "active", 10: "active"}
    assert entry_statuses(workspace / "memory" / "2026-10-01.md", "memory/2026-10-01.md") == {
        4: "superseded",
        5: "active",
    }
    assert entry_markers(workspace / "memory" / "missing.md", "memory/missing.md") == {}
    entries = parse_entries(
        "memory/2026-10-01.md", (workspace / "memory" / "2026-10-01.md").read_text(), curated_root=False
    )
    assert entries[0].superseded and entries[0].superseded_by == "memory/2026-11-04.md#4"


def test_entry_refs_take_path_line_and_citations() -> None:
    assert parse_entry_ref("MEMORY.md:7") == EntryRef("MEMORY.md", 7)
    assert parse_entry_ref(" memory/2026-11-02.md#L4-L5 ") == EntryRef("memory/2026-11-02.md", 4)
    assert parse_entry_ref("USER.md#6") == EntryRef("USER.md", 6)
    for bad in ("MEMORY.md", "MEMORY.md:", "MEMORY.md:x", ":4", "MEMORY.md:0", ""):
        with pytest.raises(ClawmemError):
            parse_entry_ref(bad)


# ----------------------------------------------------------------------------- supersede and undo


def test_supersede_adds_a_marker_line_and_undo_removes_it_byte_for_byte(eng: MemoryEngine, workspace: Path) -> None:
    before = files(workspace)
    r = eng.supersede(f"{GYM}:3", f"{POOL}:3")
    assert (r.path, r.line, r.marker_line, r.action, r.observed) == (GYM, 4, 3, "added", "2026-03-02")
    assert r.marker == f"<!-- observed: 2026-03-02 | status: superseded | by: {POOL}#3 -->"
    lines = (workspace / GYM).read_text().split("\n")
    assert lines[2] == r.marker and lines[3] == "- I work out at the gym at 7am before work."
    assert files(workspace) | {GYM: before[GYM]} == before  # only the older entry's file changed
    # the entry reads as superseded everywhere: its file's entries, the markers search uses, the index
    entry = next(v.entry for v in eng.entries(GYM) if v.entry.start_line == 4)
    assert entry.superseded and entry.superseded_by == f"{POOL}#3"
    assert entry_markers(workspace / GYM, GYM)[4].by_path == POOL
    indexed = eng.store.query("SELECT text FROM memory_index_chunks WHERE path = ?", (GYM,))
    assert any(r.marker in text for (text,) in indexed)  # the writer re-indexed the file

    u = eng.unsupersede(f"{GYM}:4")
    assert (u.action, u.exact, u.line, u.line_after) == ("removed", True, 3, None)
    assert files(workspace) == before
    assert eng.store.scalar("SELECT count(*) FROM memory_supersessions WHERE undone_at IS NULL") == 0


def test_supersede_turns_a_user_md_active_marker_superseded_and_undo_restores_it(
    eng: MemoryEngine, workspace: Path
) -> None:
    before = files(workspace)
    r = eng.supersede("USER.md:8", "USER.md:10")
    assert (r.action, r.line, r.marker_line, r.observed) == ("replaced", 8, 7, "2026-09-01")
    text = (workspace / "USER.md").read_text().split("\n")
    assert text[6] == "<!-- observed: 2026-09-01 | status: superseded | by: USER.md#10 -->"
    assert len(text) == before["USER.md"].decode().count("\n") + 1  # no line added
    u = eng.unsupersede("USER.md:8")
    assert (u.action, u.exact, u.line_after) == ("restored", True, "<!-- observed: 2026-09-01 | status: active -->")
    assert files(workspace) == before


def test_pointer_names_the_newer_bullet_in_the_file_as_written(eng: MemoryEngine, workspace: Path) -> None:
    before = (workspace / "MEMORY.md").read_bytes()
    r = eng.supersede("MEMORY.md:10", "MEMORY.md:12")  # the newer is below: it moves down one line
    lines = (workspace / "MEMORY.md").read_text().split("\n")
    assert r.newer_line == 13 and lines[12] == "- The on-call rotation changes every Monday at noon."
    # a second supersede above both moves the first pointer with its entry
    r2 = eng.supersede("MEMORY.md:4", "MEMORY.md:6")
    lines = (workspace / "MEMORY.md").read_text().split("\n")
    first = entry_markers(workspace / "MEMORY.md", "MEMORY.md")[12]
    assert first.by_line == 14 and lines[13] == "- The on-call rotation changes every Monday at noon."
    assert (
        r2.newer_line == 7
        and lines[6] == "- 返程车票尚未确认，需要在周五前订好。 <!-- trigger: 返程, 车票 --> <!-- importance: 9 -->"
    )
    # search marks a hit of a superseded curated entry
    hit = next(h for h in eng.search("Deploys happen on Tuesdays", min_score=0.0).results if h.path == "MEMORY.md")
    assert hit.start_line == 12 and hit.status == "superseded"
    # undone in any order, the file is as it was
    eng.unsupersede("MEMORY.md:12")
    eng.unsupersede("MEMORY.md:5")
    assert (workspace / "MEMORY.md").read_bytes() == before


def test_crlf_bom_and_inline_markers_survive_byte_for_byte(eng: MemoryEngine, workspace: Path) -> None:
    rel = "memory/2026-07-01.md"
    data = "\ufeff# 2026-07-01\r\n\r\n- Tea in the morning. <!-- observed: 2026-06-30 | status: active -->\r\n- Coffee now.".encode()
    (workspace / rel).write_bytes(data)
    r = eng.supersede(f"{rel}:3", f"{rel}:4")
    assert (r.action, r.observed, r.marker_line, r.line) == ("inline", "2026-06-30", 3, 3)
    now = (workspace / rel).read_bytes()
    assert now.startswith(
        b"\xef\xbb\xbf# 2026-07-01\r\n\r\n- Tea in the morning. <!-- observed: 2026-06-30 | status: superseded"
    )
    assert now.endswith(b"by: memory/2026-07-01.md#4 -->\r\n- Coffee now.")
    eng.unsupersede(f"{rel}:3")
    assert (workspace / rel).read_bytes() == data
    # an added line takes the file's line ends
    plain = "\ufeff# 2026-07-01\r\n\r\n- Tea.\r\n- Coffee.\r\n".encode()
    (workspace / rel).write_bytes(plain)
    eng.supersede(f"{rel}:3", f"{rel}:4")
    assert (workspace / rel).read_bytes() == (
        "\ufeff# 2026-07-01\r\n\r\n<!-- observed: 2026-07-01 | status: superseded | by: memory/2026-07-01.md#5 -->"
        "\r\n- Tea.\r\n- Coffee.\r\n"
    ).encode()
    eng.unsupersede(f"{rel}:4")
    assert (workspace / rel).read_bytes() == plain


def test_observed_is_the_marker_date_the_diary_date_or_today(eng: MemoryEngine, workspace: Path) -> None:
    assert eng.supersede("MEMORY.md:9", "MEMORY.md:12").observed == "2026-11-05"  # no date: today (CLAWMEM_NOW)
    assert eng.supersede("memory/2026-11-03-hotel-call.md:3", "memory/2026-11-04.md:3").observed == "2026-11-03"
    assert eng.supersede("USER.md:10", "USER.md:8").observed == "2026-08-12"


def test_repointing_and_undoing_step_by_step(eng: MemoryEngine, workspace: Path) -> None:
    before = files(workspace)
    eng.supersede(f"{GYM}:3", f"{POOL}:3")
    after_first = files(workspace)
    r = eng.supersede(f"{GYM}:4", "MEMORY.md:12")  # superseded by another entry: the marker is re-pointed
    assert r.action == "replaced" and r.marker.endswith("by: MEMORY.md#12 -->")
    eng.unsupersede(f"{GYM}:4")
    assert files(workspace) == after_first
    eng.unsupersede(f"{GYM}:4")
    assert files(workspace) == before


def test_undo_of_a_marker_clawmem_did_not_write_follows_the_file_convention(eng: MemoryEngine, workspace: Path) -> None:
    u = eng.unsupersede("USER.md:4")  # the fixture's own superseded entry: USER.md keeps a marker
    assert (u.action, u.exact) == ("reactivated", False)
    assert (workspace / "USER.md").read_text().split("\n")[2] == "<!-- observed: 2026-03-02 | status: active -->"
    rel = "memory/2026-07-02.md"
    (workspace / rel).write_text(
        "- Old. <!-- observed: 2026-07-02 | status: superseded -->\n<!-- observed: 2026-07-02 | status: superseded | by: x.md#1 -->\n- Older.\n"
    )
    assert eng.unsupersede(f"{rel}:1").line_after == "- Old."
    assert eng.unsupersede(f"{rel}:3").action == "removed"
    assert (workspace / rel).read_text() == "- Old.\n- Older.\n"


# ----------------------------------------------------------------------------- refusals: nothing written


@pytest.mark.parametrize(
    ("older", "newer", "says"),
    [
        ("MEMORY.md", "MEMORY.md:4", "is not PATH:LINE"),
        ("MEMORY.md:4", "MEMORY.md:x", "is not PATH:LINE"),
        ("MEMORY.md:1", "MEMORY.md:4", "is a heading, not a bullet entry"),
        ("MEMORY.md:2", "MEMORY.md:4", "is a blank line, not a bullet entry"),
        ("USER.md:3", "USER.md:6", "is a marker line of the entry at line 4"),
        ("MEMORY.md:99", "MEMORY.md:4", "is past the end (MEMORY.md has 12 lines)"),
        ("MEMORY.md:4", "MEMORY.md:4", "cannot supersede itself"),
        ("../outside.md:1", "MEMORY.md:4", "'..' is refused"),
        ("/etc/hosts.md:1", "MEMORY.md:4", "absolute paths are refused"),
        ("memory/escape.md:1", "MEMORY.md:4", "symbolic links are refused"),
        ("notes.md:1", "MEMORY.md:4", "not a memory path"),
        ("DREAMS.md:3", "MEMORY.md:4", "is Dreaming's, not curated memory"),
        ("memory/nope.md:1", "MEMORY.md:4", "memory/nope.md does not exist"),
        ("MEMORY.md:9", "USER.md:4", "is itself superseded"),
        ("memory/para.md:1", "MEMORY.md:4", "is a paragraph, not a bullet entry"),
        ("memory/para.md:4", "MEMORY.md:4", "is inside the entry that starts at line 3"),
    ],
)
def test_refusals_write_nothing(
    eng: MemoryEngine, workspace: Path, tmp_path: Path, older: str, newer: str, says: str
) -> None:
    (tmp_path / "outside.md").write_text("- outside\n")
    os.symlink(tmp_path / "outside.md", workspace / "memory" / "escape.md")
    (workspace / "memory" / "para.md").write_text("A paragraph.\n\n- a bullet\n  that goes on\n")
    before = files(workspace)
    with pytest.raises(ClawmemError) as err:
        eng.supersede(older, newer)
    assert says in str(err.value) and "\n" not in str(err.value)
    assert files(workspace) == before and rows(eng) == 0


def test_already_superseded_by_the_same_entry_is_refused(eng: MemoryEngine, workspace: Path) -> None:
    eng.supersede(f"{GYM}:3", f"{POOL}:3")
    before = files(workspace)
    with pytest.raises(
        ClawmemError, match=re.escape("already superseded by memory/2026-10-20.md:3; nothing was changed")
    ):
        eng.supersede(f"{GYM}:4", f"{POOL}:3")
    with pytest.raises(ClawmemError, match="is not marked superseded"):
        eng.unsupersede(f"{POOL}:3")
    assert files(workspace) == before and rows(eng) == 1


def test_a_file_changed_between_read_and_write_is_refused(
    eng: MemoryEngine, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = curation_service.read_raw

    def read_then_someone_edits(rel: str, path: Path, what: str) -> object:
        raw = real(rel, path, what)
        if rel == GYM:
            with path.open("a", encoding="utf-8") as fh:  # another editor saves meanwhile
                fh.write("- Written by someone else.\n")
        return raw

    monkeypatch.setattr(curation_service, "read_raw", read_then_someone_edits)
    with pytest.raises(ConflictError, match="changed on disk since it was read; nothing was written"):
        eng.supersede(f"{GYM}:3", f"{POOL}:3")
    assert (workspace / GYM).read_text().endswith("- Lunch with Priya.\n- Written by someone else.\n")
    assert "observed" not in (workspace / GYM).read_text() and rows(eng) == 0
    assert not [p for p in (workspace / "memory").iterdir() if p.name.startswith(".")]  # no temp file left


# ----------------------------------------------------------------------------- proposals


def test_a_proposal_waits_and_accepting_writes_the_same_marker(eng: MemoryEngine, workspace: Path) -> None:
    before = files(workspace)
    p = eng.curation.propose(f"{GYM}#L3", f"{POOL}#L3", "switched from the gym to the pool")
    assert (p.status, p.older_line, p.newer_path, p.origin_class) == ("pending", 3, POOL, "agent")
    assert files(workspace) == before  # proposing writes no file
    again = eng.curation.propose(f"{GYM}:3", f"{POOL}:3", "the same, asked twice")
    assert again.duplicate and again.id == p.id and len(eng.curation.proposals()) == 1
    # lines above it moved since: the entry is found again by its text
    text = (workspace / GYM).read_text()
    (workspace / GYM).write_text(text.replace("# 2026-03-02\n", "# 2026-03-02\n\nA note added later.\n"))
    accepted, result = eng.curation.accept(p.short_id)
    assert accepted.status == "accepted" and accepted.supersession_id == result.supersession_id
    assert (result.line, result.proposal_id) == (6, p.id)
    assert (workspace / GYM).read_text().split("\n")[
        4
    ] == f"<!-- observed: 2026-03-02 | status: superseded | by: {POOL}#3 -->"
    with pytest.raises(ClawmemError, match="is accepted already"):
        eng.curation.accept(p.id)
    assert eng.curation.proposals() == [] and len(eng.curation.proposals(None)) == 1


def test_rejected_and_stale_proposals_write_nothing(eng: MemoryEngine, workspace: Path) -> None:
    p = eng.curation.propose(f"{GYM}:3", f"{POOL}:3", "switched")
    rejected = eng.curation.reject(p.id[:6], "still go to the gym on Sundays")
    assert rejected.status == "rejected" and rejected.decision_note == "still go to the gym on Sundays"
    with pytest.raises(ClawmemError, match="rejected this supersession on 2026-11-05"):
        eng.curation.propose(f"{GYM}:3", f"{POOL}:3", "again")
    q = eng.curation.propose("USER.md:8", "USER.md:10", "the newer rule")
    (workspace / "USER.md").write_text((workspace / "USER.md").read_text().replace("再给细节", "再给例子"))
    before = files(workspace)
    with pytest.raises(
        ClawmemError, match=re.escape("is stale: the older entry USER.md:8 changed since it was proposed")
    ):
        eng.curation.accept(q.id)
    assert files(workspace) == before and rows(eng) == 0
    assert [x.status for x in eng.curation.proposals(None)] == ["rejected", "stale"]
    for bad in ("", "zz", "ffffffff"):
        with pytest.raises(ClawmemError):
            eng.curation.accept(bad)


def test_proposals_are_checked_like_a_supersede(eng: MemoryEngine, workspace: Path) -> None:
    with pytest.raises(ClawmemError, match="is a heading"):
        eng.curation.propose("MEMORY.md:1", "MEMORY.md:4", "why")
    with pytest.raises(ClawmemError, match="reason is empty"):
        eng.curation.propose("MEMORY.md:4", "MEMORY.md:5", "  ")
    with pytest.raises(ClawmemError, match="at most 1,000"):
        eng.curation.propose("MEMORY.md:4", "MEMORY.md:5", "x" * 1001)
    assert eng.curation.proposals(None) == []
