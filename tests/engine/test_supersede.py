"""Superseding a changed fact (issue 36): the marker's forms, and the markers every memory file's
entries carry (what search reads)."""

from __future__ import annotations

from pathlib import Path

from clawmem.engine.workspace.annotations import (
    OBSERVED_MARKER,
    StatusMarker,
    entry_status,
    format_status_marker,
    parse_status_marker,
    strip_all_markers,
)
from clawmem.engine.workspace.entries import entry_markers, entry_statuses, parse_entries

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
