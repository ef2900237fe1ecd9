"""Chunking per docs/memory-core.md §3 plus clawmem's rules (chunk ids, heading-only merge, marker lines)."""

from __future__ import annotations

from clawmem.engine.index.chunking import (
    chunk_id,
    chunk_markdown,
    chunk_memory_file,
    estimate_units,
    hash_text,
)


def test_cost_units_latin_cjk_and_rare() -> None:
    assert estimate_units("abc") == 3
    assert estimate_units("杭州") == 8  # common CJK costs 4
    assert estimate_units("，") == 4  # full-width punctuation is common CJK
    assert estimate_units("𠀀") == 14  # supplementary ideograph costs more
    assert estimate_units("㐀") == 11  # rare (extension A) ideograph
    assert estimate_units("😀") == 2  # astral non-CJK: two UTF-16 units


def test_lines_are_added_whole_and_overlap_is_carried() -> None:
    lines = [f"line {i:02d} " + "x" * 20 for i in range(10)]  # 28 units + 1 newline each
    chunks = chunk_markdown("\n".join(lines), tokens=16, overlap=8, per_entry=False)  # budget 64, overlap 32
    assert [(c.start_line, c.end_line) for c in chunks][:3] == [(1, 2), (2, 3), (3, 4)]
    for c in chunks:
        assert all(line in lines for line in c.text.split("\n"))  # never a cut line here
    assert chunks[-1].end_line == 10


def test_long_line_split_on_code_points_never_breaks_cjk() -> None:
    text = "杭州西湖" * 200  # 800 chars, 3200 units > 1600 budget
    chunks = chunk_markdown(text, tokens=400, overlap=0, per_entry=False)
    assert len(chunks) == 2
    assert "".join(c.text for c in chunks) == text
    assert all(c.start_line == c.end_line == 1 for c in chunks)


def test_per_entry_chunks_never_cross_entries_and_keep_entry_span() -> None:
    text = "# Title\n- first entry\n  continued\n- second entry\n## Section\n- third"
    chunks = chunk_markdown(text, tokens=400, overlap=80, per_entry=True)
    spans = [(c.start_line, c.end_line) for c in chunks]
    assert spans == [(1, 1), (2, 3), (4, 4), (5, 5), (6, 6)]
    assert chunks[1].entry_start_line == 2 and chunks[1].entry_end_line == 3


def test_per_entry_fragments_inherit_the_whole_entry_span() -> None:
    text = "- " + " ".join(["word"] * 30) + "\n  more text here\n- next"
    chunks = chunk_markdown(text, tokens=8, overlap=0, per_entry=True)
    first_entry = [c for c in chunks if c.entry_start_line == 1]
    assert len(first_entry) > 1
    assert all((c.entry_start_line, c.entry_end_line) == (1, 2) for c in first_entry)


def test_curated_entries_split_like_openclaw_markers_stay_with_the_entry_above() -> None:
    text = (
        "# User\n<!-- observed: 2026-01-01 | status: superseded -->\n- Prefer tea.\n"
        "<!-- observed: 2026-02-01 | status: active -->\n- Prefer coffee."
    )
    chunks = chunk_memory_file(text, "USER.md", tokens=400, overlap=80, curated_root=True)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 2), (3, 4), (5, 5)]  # OpenClaw's ranges


def test_heading_only_chunk_merges_into_following_chunk_in_notes() -> None:
    body = "The irrigation starts at dawn and the pumps run for two hours."
    chunks = chunk_memory_file(f"# Plan\n{body}", "memory/notes.md", tokens=8, overlap=0, curated_root=False)
    assert chunks[0].start_line == 1
    assert chunks[0].text.startswith("# Plan\n")
    assert not any(c.text.strip() == "# Plan" for c in chunks)


def test_final_heading_is_kept_not_dropped() -> None:
    chunks = chunk_memory_file("## Unfinished", "memory/notes.md", tokens=400, overlap=80, curated_root=False)
    assert [c.text for c in chunks] == ["## Unfinished"]


def test_annotation_carriers_are_stripped_and_metadata_read_from_the_entry() -> None:
    text = "- Scoped entry. <!-- project: Alpha.Host/Repo --> <!-- importance: 4 --> <!-- importance: 9 -->\n- Global. <!-- trigger: a, b; c -->"
    chunks = chunk_memory_file(text, "MEMORY.md", tokens=400, overlap=80, curated_root=True)
    assert chunks[0].text == "- Scoped entry."
    assert chunks[0].metadata.project_key == "alpha.host/Repo"
    assert chunks[0].metadata.importance == 9
    assert chunks[1].metadata.triggers == "a; b; c"


def test_blank_chunks_are_dropped_and_ids_are_stable() -> None:
    chunks = chunk_memory_file("\n\n\n", "memory/x.md", tokens=400, overlap=80, curated_root=False)
    assert chunks == []
    h = hash_text("abc")
    assert chunk_id("memory", "a.md", 1, 2, h) == chunk_id("memory", "a.md", 1, 2, h)
    assert len(chunk_id("memory", "a.md", 1, 2, h)) == 16
    assert chunk_id("memory", "a.md", 1, 2, h) != chunk_id("memory", "a.md", 1, 3, h)
