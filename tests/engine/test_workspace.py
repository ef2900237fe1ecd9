"""Discovering, classifying, reading and writing memory files, and parsing entries."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clawmem.engine.errors import ConflictError, PathRefused
from clawmem.engine.paths import resolve_memory_path
from clawmem.engine.workspace import files
from clawmem.engine.workspace.entries import parse_entries
from clawmem.engine.workspace.files import discover, is_short_term_path
from clawmem.engine.workspace.reading import FileText, Skipped, read_memory_text, sha256_bytes
from clawmem.engine.workspace.writes import MISSING, append_text, replace_file


def test_discover_classifies_every_kind(workspace: Path) -> None:
    kinds = {f.rel: f.kind for f in discover(workspace)}
    assert kinds["USER.md"] == "user"
    assert kinds["MEMORY.md"] == "curated"
    assert kinds["DREAMS.md"] == "dreams"
    assert kinds["memory/2026-11-01.md"] == "diary"
    assert kinds["memory/2026-11-03-hotel-call.md"] == "slug"
    assert kinds["memory/dreaming/light/2026-11-04.md"] == "dream-report"
    assert kinds["memory/projects/billing.md"] == "note"
    files = {f.rel: f for f in discover(workspace)}
    assert files["memory/2026-11-01.md"].decays
    assert not files["memory/2026-11-03-hotel-call.md"].decays  # slug notes are evergreen
    assert files["memory/2026-11-03-hotel-call.md"].short_term  # … but short-term for Dreaming
    assert files["memory/dreaming/light/2026-11-04.md"].path_origin == "system"
    assert files["MEMORY.md"].path_origin == "agent"
    assert not files["DREAMS.md"].indexed


def test_symlinks_and_outside_paths_are_skipped(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("- secret\n")
    os.symlink(outside, workspace / "memory" / "link.md")
    os.symlink(tmp_path, workspace / "memory" / "linkdir")
    rels = {f.rel for f in discover(workspace)}
    assert "memory/link.md" not in rels
    assert not any(r.startswith("memory/linkdir") for r in rels)


def test_an_extra_path_file_deleted_during_discovery_is_skipped(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # was a FileNotFoundError (an internal error in `status`) when a file vanished mid-walk
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "kept.md").write_text("- kept\n")
    walk = files._walk_markdown
    monkeypatch.setattr(files, "_walk_markdown", lambda base: [*walk(base), base / "gone.md"])
    rels = {f.rel for f in discover(workspace, [str(notes)])}
    assert str(notes / "kept.md") in rels and str(notes / "gone.md") not in rels


def test_short_term_paths() -> None:
    assert is_short_term_path("memory/2026-01-02.md")
    assert is_short_term_path("memory/warm/2026-01-02.md")
    assert is_short_term_path("memory/2026-01-02-call.md")
    assert not is_short_term_path("memory/dreaming/light/2026-01-02.md")
    assert not is_short_term_path("MEMORY.md")
    assert not is_short_term_path("memory/projects/billing.md")


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"\x00\x01binary", "binary"), (b"caf\xe9 latin-1", "not UTF-8")],
)
def test_unreadable_files_are_skipped_with_a_reason(tmp_path: Path, data: bytes, reason: str) -> None:
    path = tmp_path / "x.md"
    path.write_bytes(data)
    result = read_memory_text(path, "memory/x.md", 1024)
    assert isinstance(result, Skipped) and reason in result.reason


def test_large_files_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_text("a" * 2000)
    result = read_memory_text(path, "memory/big.md", 1000)
    assert isinstance(result, Skipped) and "larger than" in result.reason


def test_bom_and_crlf_are_normalised_for_reading(tmp_path: Path) -> None:
    path = tmp_path / "x.md"
    path.write_bytes("\ufeff- 杭州\r\n- two\r\n".encode())
    result = read_memory_text(path, "x.md", 1024)
    assert isinstance(result, FileText)
    assert result.text == "- 杭州\n- two\n" and result.had_bom and result.newline == "\r\n"


def test_replace_refuses_when_the_file_changed_since_it_was_read(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("- original\n")
    seen = sha256_bytes(path.read_bytes())
    path.write_text("- edited elsewhere\n")
    with pytest.raises(ConflictError):
        replace_file(path, b"- mine\n", expected_sha256=seen)
    assert path.read_text() == "- edited elsewhere\n"  # nothing lost
    with pytest.raises(ConflictError):
        replace_file(path, b"- new\n", expected_sha256=MISSING)
    result = replace_file(path, b"- mine\n", expected_sha256=sha256_bytes(path.read_bytes()))
    assert path.read_bytes() == b"- mine\n" and result.sha256 == sha256_bytes(b"- mine\n")
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]  # no temp file left behind


def test_append_keeps_every_existing_byte(tmp_path: Path) -> None:
    path = tmp_path / "2026-11-05.md"
    path.write_bytes(b"- first\r\n- no newline at end")
    old = path.read_bytes()
    append_text(path, "- appended\n", expected_sha256=sha256_bytes(old))
    data = path.read_bytes()
    assert data.startswith(old)
    assert data.endswith(b"\r\n- appended\r\n")


def test_resolve_memory_path_rules(workspace: Path, tmp_path: Path) -> None:
    assert resolve_memory_path(workspace, "MEMORY.md") == (workspace / "MEMORY.md").resolve()
    assert resolve_memory_path(workspace, "./memory/2026-11-01.md").name == "2026-11-01.md"
    for bad in ("../x.md", "/etc/passwd", "memory/../../x.md", "notes.md", "memory/x.txt", "C:\\x.md", ""):
        with pytest.raises(PathRefused):
            resolve_memory_path(workspace, bad)
    (tmp_path / "out.md").write_text("x")
    os.symlink(tmp_path / "out.md", workspace / "memory" / "escape.md")
    with pytest.raises(PathRefused):
        resolve_memory_path(workspace, "memory/escape.md")


def test_entries_of_user_md_carry_status_and_observed(workspace: Path) -> None:
    text = (workspace / "USER.md").read_text()
    entries = parse_entries("USER.md", text, curated_root=True)
    assert [e.status for e in entries] == ["superseded", "active", "active", "active"]
    assert entries[0].observed == "2026-03-02" and entries[0].display == "Prefer 坐高铁出行，不坐飞机。"
    assert entries[1].supersedes == "travel-mode"
    assert entries[0].marker_line == 3 and entries[0].start_line == 4


def test_entries_of_text_with_cr_only_line_ends_are_parsed_not_crashed() -> None:
    # markdown-it reads a lone CR as a line end; the entry lines must be split the same way
    text = "- a <!-- observed: 2026-03-02 | status: superseded -->\r- b\r\n\n- c"
    entries = parse_entries("MEMORY.md", text, curated_root=True)
    assert [(e.display, e.start_line) for e in entries] == [("a", 1), ("b", 2), ("c", 4)]
    assert entries[0].superseded


def test_entries_of_memory_md_carry_annotations_and_flags(workspace: Path) -> None:
    entries = parse_entries("MEMORY.md", (workspace / "MEMORY.md").read_text(), curated_root=True)
    by_text = {e.display: e for e in entries}
    hotel = by_text["最后选择西湖边的酒店，没有订湖景房，因为超出预算。"]
    assert hotel.triggers == ("湖景房", "酒店") and hotel.importance == 7 and hotel.section == "旅行"
    pg = by_text["The team chose PostgreSQL for the billing service."]
    assert pg.project_keys == ("github.com/acme/billing",)
    bad = by_text["Staging credentials rotate monthly; ask Priya."]
    assert bad.flags == ("!invalid-project-annotation",)


def test_odd_markdown_never_crashes_and_keeps_content() -> None:
    text = "---\nnot: front matter?\nprose here\n---\n\n```\n- not an entry\n```\n- - doubled bullet....\n<!-- importance: 99 -->\n"
    entries = parse_entries("memory/x.md", text, curated_root=False)
    joined = "\n".join(e.text for e in entries)
    assert "prose here" in joined and "- not an entry" in joined and "doubled bullet" in joined


def test_memory_get_never_cuts_a_line_and_says_when_from_is_past_the_end(tmp_path: Path) -> None:
    from clawmem.engine.memory_get import MAX_CHARS, read_lines

    (tmp_path / "memory").mkdir()
    long_line = "x" * (MAX_CHARS + 500)
    (tmp_path / "memory" / "a.md").write_text(f"short\n{long_line}\ntail\n", encoding="utf-8")
    first = read_lines(tmp_path, "memory/a.md")
    assert first.text == "short" and first.next_from == 2 and not first.char_budget_exceeded  # stops before it
    second = read_lines(tmp_path, "memory/a.md", from_line=2)
    assert second.text == long_line and second.lines == 1 and second.char_budget_exceeded
    assert second.next_from == 3 and second.truncated and second.total_lines == 3
    third = read_lines(tmp_path, "memory/a.md", from_line=3)
    assert third.text == "tail" and third.next_from is None and not third.truncated
    beyond = read_lines(tmp_path, "memory/a.md", from_line=9)
    assert beyond.past_end and beyond.text == "" and beyond.next_from is None and beyond.total_lines == 3
    (tmp_path / "memory" / "empty.md").write_text("", encoding="utf-8")
    empty = read_lines(tmp_path, "memory/empty.md")
    assert empty.total_lines == 0 and not empty.past_end and empty.text == ""


@pytest.mark.parametrize(
    "name",
    ["memory/" + "x" * 300 + ".md", "memory/" + "a/" * 3000 + "x.md", "memory/\ud800.md"],
    ids=["name-too-long", "path-too-long", "lone-surrogate"],
)
def test_a_path_the_file_system_refuses_is_refused_in_one_short_line(workspace: Path, name: str) -> None:
    """The file system's own refusals (ENAMETOOLONG, an unencodable name) were internal errors."""
    with pytest.raises(PathRefused) as refused:
        resolve_memory_path(workspace, name)
    message = str(refused.value)
    assert "\n" not in message and len(message) < 200
