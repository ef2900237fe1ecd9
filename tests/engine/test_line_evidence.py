"""Line vectors: each content line of a multi-line chunk embedded on its own, its best line shown
and counted in calibrated search (engine/index/line_evidence.py), with the real model."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.index.line_evidence import MIN_LINES, evidence_lines
from clawmem.engine.store import line_vector_rows
from clawmem.engine.store.schema import DERIVED_TABLES

from tests.conftest import STORE_URL, make_settings

# A transcript-like diary: one chunk of nine turns, only one of them about the boat trip.
DIARY = """# Session 3 — 8 May 2026

- [D3:1] Caroline: Morning! Did you finish the quarterly report?
- [D3:2] Melanie: Almost, the charts are still missing.
- [D3:3] Caroline: I baked sourdough bread again, the crust came out great.
- [D3:4] Melanie: We rented a sailing boat on the lake last weekend and capsized twice.
- [D3:5] Caroline: Ha, at least the water was warm?
- [D3:6] Melanie: Not really. Anyway, the printer on floor two is broken again.
- [D3:7] Caroline: I will call the facilities team about the printer.
- [D3:8] Melanie: Thanks. Do not forget the team lunch on Friday.
- [D3:9] Caroline: Booked a table for six at noon.
"""


@pytest.fixture
def diary_engine(tmp_path: Path, default_model_path: Path) -> Iterator[MemoryEngine]:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-05-08.md").write_text(DIARY, encoding="utf-8")
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n- Prefers window seats on trains.\n- Allergic to peanuts.\n- Runs on Tuesdays.\n"
        "- Keeps the spare key with the neighbour.\n- Reads before bed.\n- Uses a paper calendar.\n",
        encoding="utf-8",
    )
    home = tmp_path / "home"
    home.mkdir()
    engine = MemoryEngine(make_settings(home, ws, search={"decay_enabled": False}))
    engine.sync()
    yield engine
    engine.close()


def test_evidence_lines_skip_headings_blanks_and_markers() -> None:
    text = "# Day\n\n- first thing\n<!-- observed: 2026-05-08 -->\n  second thing  \n---\n"
    assert evidence_lines(text) == ((2, "- first thing"), (4, "second thing"))
    assert evidence_lines("# Day\n\n- only one line\n") == ()  # the chunk vector already is that line's
    assert MIN_LINES == 2


def test_pack_round_trip_keeps_cosines_to_a_thousandth() -> None:
    rng = np.random.default_rng(7)
    vs = [v / np.linalg.norm(v) for v in rng.normal(size=(5, 384)).astype(np.float32)]
    back = line_vector_rows.unpack(line_vector_rows.pack(vs), 384)
    assert back.shape == (5, 384)
    assert np.allclose(back @ vs[0], np.stack(vs) @ vs[0], atol=1e-3)
    assert line_vector_rows.unpack(line_vector_rows.pack([]), 384).shape == (0, 384)


def test_the_embedding_pass_gives_every_multi_line_chunk_its_line_vectors(diary_engine: MemoryEngine) -> None:
    conn = diary_engine.store.conn()
    rows = {
        text: blob
        for text, blob in conn.execute(
            "SELECT c.text, l.vectors FROM memory_index_chunks c JOIN memory_index_line_vectors l ON l.hash = c.hash"
        )
    }
    chunks = [t for (t,) in conn.execute("SELECT text FROM memory_index_chunks")]
    assert set(rows) == set(chunks)  # every embedded chunk text was looked at
    for text, blob in rows.items():
        expected = len(evidence_lines(text))
        assert len(line_vector_rows.unpack(blob, 384)) == expected
    diary = next(t for t in chunks if "sailing boat" in t)
    assert len(evidence_lines(diary)) == 9
    assert any(len(evidence_lines(t)) == 0 for t in chunks)  # single-entry MEMORY.md chunks: an empty row


def test_search_names_the_best_line_and_counts_it(diary_engine: MemoryEngine) -> None:
    r = diary_engine.search("who went sailing and fell into the water", record=False, min_score=0.0)
    hit = next(h for h in r.results if h.path == "memory/2026-05-08.md")
    b = hit.breakdown
    assert b.line == 6  # "[D3:4] … sailing boat … capsized twice"
    assert b.line_cosine is not None and b.vector_raw is not None
    assert b.line_cosine > b.vector_raw  # the line alone is closer to the question than the whole chunk
    assert b.line_vector is not None and b.line_vector > 0
    assert "lines" in r.timings_ms
    # the chunk's own calibrated value (the logistic of its deviations) gives 0.7, the line 0.3
    assert b.vector_z is not None
    chunk_alone = 1 / (1 + math.exp(-(b.vector_z - 3.5)))
    assert b.vector == pytest.approx(0.3 * b.line_vector + 0.7 * chunk_alone, abs=2e-3)
    assert b.line_vector > chunk_alone  # … so the line lifted this chunk
    other = diary_engine.search("the printer on floor two is broken", record=False, min_score=0.0)
    hit = next(h for h in other.results if h.path == "memory/2026-05-08.md")
    assert hit.breakdown.line == 8


def test_single_line_chunks_and_openclaw_scoring_have_no_line(diary_engine: MemoryEngine) -> None:
    r = diary_engine.search("peanut allergy", record=False, min_score=0.0)
    top = r.results[0]
    assert top.path == "MEMORY.md" and top.breakdown.line is None
    oc = diary_engine.search("who went sailing and fell into the water", record=False, scoring="openclaw")
    assert all(h.breakdown.line is None and h.breakdown.line_vector is None for h in oc.results)


def test_edited_text_gets_new_line_vectors_and_the_old_ones_are_swept(diary_engine: MemoryEngine) -> None:
    conn = diary_engine.store.conn()
    before = {h for (h,) in conn.execute("SELECT hash FROM memory_index_line_vectors")}
    path = diary_engine.workspace / "memory" / "2026-05-08.md"
    path.write_text(DIARY.replace("capsized twice", "capsized three times"), encoding="utf-8")
    diary_engine.sync()
    after = {h for (h,) in conn.execute("SELECT hash FROM memory_index_line_vectors")}
    chunk_hashes = {h for (h,) in conn.execute("SELECT hash FROM memory_index_chunks")}
    assert after == chunk_hashes  # the new text has its row, the replaced text's row is gone
    assert before - after  # … the old diary chunk's
    r = diary_engine.search("capsized three times", record=False, min_score=0.0)
    assert next(h for h in r.results if h.path == "memory/2026-05-08.md").breakdown.line == 6


def test_editing_or_appending_one_line_embeds_that_line_only(diary_engine: MemoryEngine) -> None:
    """The replaced text's row keeps a key per line until the sweep, so the new text's unchanged
    lines take their vectors from it: one model call for the line that changed, and the same
    vectors (bytes) for the lines that did not."""
    conn = diary_engine.store.conn()
    path = diary_engine.workspace / "memory" / "2026-05-08.md"
    old_blob = next(
        iter(
            conn.execute(
                "SELECT l.vectors FROM memory_index_line_vectors l JOIN memory_index_chunks c "
                "ON c.hash = l.hash WHERE c.path = 'memory/2026-05-08.md'"
            )
        )
    )[0]
    edited = DIARY.replace("capsized twice", "capsized three times")
    path.write_text(edited, encoding="utf-8")
    report = diary_engine.sync()
    assert report.embedded == 1  # the chunk itself is new text
    assert (report.embedded_lines, report.reused_lines) == (1, 8)
    ((text, new_blob),) = conn.execute(
        "SELECT c.text, l.vectors FROM memory_index_line_vectors l JOIN memory_index_chunks c ON c.hash = l.hash "
        "WHERE c.path = 'memory/2026-05-08.md'"
    )
    old = line_vector_rows.unpack(old_blob, 384)
    new = line_vector_rows.unpack(new_blob, 384)
    changed = [i for i, (_, line) in enumerate(evidence_lines(text)) if "three times" in line]
    assert changed == [3]
    for i in range(9):  # unchanged lines: the very same vectors; the edited one: its own
        assert np.array_equal(old[i], new[i]) == (i != 3)
    path.write_text(edited + "- [D3:10] Melanie: See you on Friday then.\n", encoding="utf-8")
    report = diary_engine.sync()
    assert (report.embedded_lines, report.reused_lines) == (1, 9)
    r = diary_engine.search("capsized three times", record=False, min_score=0.0)
    assert next(h for h in r.results if h.path == "memory/2026-05-08.md").breakdown.line == 6
    assert not list(
        conn.execute(  # the replaced texts' rows are swept all the same
            "SELECT 1 FROM memory_index_line_vectors l WHERE NOT EXISTS "
            "(SELECT 1 FROM memory_index_chunks c WHERE c.hash = l.hash)"
        )
    )


def test_a_forced_rebuild_embeds_nothing_it_already_has(diary_engine: MemoryEngine) -> None:
    """The shadow rebuild makes every chunk again: their vectors come from the cache (by text
    hash) and their line vectors stay (keyed by the chunk text's hash), so nothing is embedded."""
    conn = diary_engine.store.conn()
    lines_before = dict(conn.execute("SELECT hash, vectors FROM memory_index_line_vectors"))
    report = diary_engine.sync(force=True)
    assert report.rebuilt and report.cache_hits == report.chunks > 0 and report.embedded == 0
    assert report.embedded_lines == 0
    assert dict(conn.execute("SELECT hash, vectors FROM memory_index_line_vectors")) == lines_before


def test_reset_drops_line_vectors_and_reindexing_restores_them(diary_engine: MemoryEngine) -> None:
    assert "memory_index_line_vectors" in DERIVED_TABLES
    diary_engine.reset()
    conn = diary_engine.store.conn()
    gone = conn.execute("SELECT name FROM sqlite_master WHERE name = 'memory_index_line_vectors'").fetchall()
    count = 0 if not gone else next(iter(conn.execute("SELECT COUNT(*) FROM memory_index_line_vectors")))[0]
    assert count == 0
    diary_engine.sync()
    assert next(iter(conn.execute("SELECT COUNT(*) FROM memory_index_line_vectors")))[0] > 0


def test_an_interrupted_line_pass_resumes(tmp_path: Path, default_model_path: Path) -> None:
    import threading

    from clawmem.engine.index.line_evidence import embed_pending_lines
    from clawmem.engine.index.model_calls import ModelCalls
    from clawmem.engine.index.thread_budget import ThreadBudget

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for day in range(1, 4):
        (ws / "memory" / f"2026-05-0{day}.md").write_text(DIARY.replace("Session 3", f"Session {day}"), "utf-8")
    home = tmp_path / "home"
    home.mkdir()
    engine = MemoryEngine(make_settings(home, ws))
    try:
        engine.sync(embed=False)
        engine.embed_pending(limit=None, cancel=None)  # chunks and lines
        conn = engine.store.conn()
        ident = engine.embedder_identity()
        assert ident is not None
        conn.execute("DELETE FROM memory_index_line_vectors")
        cancel = threading.Event()
        calls: list[int] = []

        def progress(done: int, total: int, seconds_left: float | None) -> None:
            calls.append(done)
            if done >= 1:
                cancel.set()

        provider = engine.provider_choice().provider
        first = embed_pending_lines(
            conn, ModelCalls(provider, ThreadBudget(1, 1), cancel), ident, batch_size=1, progress=progress
        )
        assert first.cancelled and first.pending == 3
        assert len(line_vector_rows.pending(conn, ident.model, ident.provider_key)) == 2  # one text done, committed
        second = embed_pending_lines(conn, ModelCalls(provider, ThreadBudget(1, 1)), ident)
        # The diaries differ only in their headings: their nine lines are embedded once for both.
        assert not second.cancelled and second.pending == 2 and second.embedded_lines == 9
        assert line_vector_rows.pending(conn, ident.model, ident.provider_key) == []
    finally:
        engine.close()


def test_forget_deletes_the_line_vectors_of_the_texts_it_forgets(diary_engine: MemoryEngine) -> None:
    from clawmem.engine.forget.participants import delete_cached_vectors

    conn = diary_engine.store.conn()
    diary = [h for (h,) in conn.execute("SELECT hash FROM memory_index_chunks WHERE path LIKE 'memory/%'")]
    kept = [h for (h,) in conn.execute("SELECT hash FROM memory_index_chunks WHERE path = 'MEMORY.md'")]
    count = "SELECT COUNT(*) FROM memory_index_line_vectors WHERE hash IN ({})"
    assert next(iter(conn.execute(count.format(",".join("?" * len(diary))), diary)))[0] == len(diary)
    with conn:
        delete_cached_vectors(conn, diary)  # what a lineage forget runs for the texts it removes
    assert next(iter(conn.execute(count.format(",".join("?" * len(diary))), diary)))[0] == 0
    assert next(iter(conn.execute(count.format(",".join("?" * len(kept))), kept)))[0] == len(kept)


def test_line_vectors_of_another_model_are_never_read_and_are_swept(diary_engine: MemoryEngine) -> None:
    conn = diary_engine.store.conn()
    ident = diary_engine.embedder_identity()
    assert ident is not None
    (h,) = next(iter(conn.execute("SELECT hash FROM memory_index_chunks WHERE path LIKE 'memory/%'")))
    with conn:  # as if another model (same file name, other weights) had written them, and last
        conn.execute("UPDATE memory_index_line_vectors SET provider_key = 'another-model' WHERE hash = ?", (h,))
        conn.execute("UPDATE memory_index_meta SET value = 'another-model:1' WHERE key = 'line_vectors_done'")
    assert line_vector_rows.for_hashes(conn, [h], ident.provider_key) == {}
    assert [p.hash for p in line_vector_rows.pending(conn, ident.model, ident.provider_key)] == [h]
    diary_engine.embed_pending()
    keys = {k for (k,) in conn.execute("SELECT DISTINCT provider_key FROM memory_index_line_vectors")}
    assert keys == {ident.provider_key}  # recomputed for this model; the other model's rows swept


def test_line_vectors_off_skips_the_pass_and_the_evidence(tmp_path: Path, default_model_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-05-08.md").write_text(DIARY, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    engine = MemoryEngine(make_settings(home, ws, embedding={"line_vectors": False}))
    try:
        report = engine.sync()
        assert report.embedded == 1 and report.embedded_lines == 0
        conn = engine.store.conn()
        assert next(iter(conn.execute("SELECT COUNT(*) FROM memory_index_line_vectors")))[0] == 0
        hit = engine.search("who went sailing and fell into the water", record=False, min_score=0.0).results[0]
        assert hit.breakdown.line is None and hit.breakdown.line_vector is None
        from clawmem.engine.status import build_status
        from clawmem.engine.status_lines import line_vectors_text

        status = build_status(engine.index)
        assert status.line_vectors_waiting == 0 and line_vectors_text(status).startswith("off")
    finally:
        engine.close()


@pytest.mark.skipif(STORE_URL is not None, reason="it edits the local SQLite index behind the engine's back")
def test_a_sync_with_no_index_change_skips_the_line_scan(diary_engine: MemoryEngine) -> None:
    conn = diary_engine.store.conn()
    with conn:  # a row gone behind the pass's back: only a scan would notice
        conn.execute(
            "DELETE FROM memory_index_line_vectors WHERE hash IN (SELECT hash FROM memory_index_chunks LIMIT 1)"
        )
    rows = "SELECT COUNT(*) FROM memory_index_line_vectors"
    before = next(iter(conn.execute(rows)))[0]
    stats = diary_engine.embed_pending()
    assert stats is not None and stats.line_calls == 0
    assert next(iter(conn.execute(rows)))[0] == before  # nothing changed since the last pass: no scan
    (diary_engine.workspace / "memory" / "2026-05-09.md").write_text("- a new day\n- and its second line\n", "utf-8")
    diary_engine.sync()  # the index changed: the scan runs and finds both texts
    assert next(iter(conn.execute(rows)))[0] == before + 2


def test_asked_first_puts_the_asked_texts_in_front_in_the_order_asked() -> None:
    from clawmem.engine.index.line_evidence import asked_first
    from clawmem.engine.store.line_vector_rows import PendingText

    rest = [PendingText(h, h) for h in "abcde"]
    ordered, front = asked_first(rest, ["d", "x", "b"])  # "x": not in this pass, dropped
    assert [p.hash for p in ordered] == ["d", "b", "a", "c", "e"] and front == 2
    assert asked_first(rest, ["x"]) == (rest, 0)


def test_the_newest_ask_is_taken_first_and_a_repeated_ask_becomes_the_newest(tmp_path: Path) -> None:
    """Search-as-you-type asks for the results of every query typed on the way: the last one is
    what is on screen, so the pass takes it first; asks left in the index by another process
    come after this process's own, newest first too."""
    from clawmem.engine.index.line_requests import LineRequests, ask_elsewhere
    from clawmem.engine.store.db import Store
    from clawmem.engine.store.schema import ensure_schema

    store = Store(tmp_path / "index.sqlite")
    conn = store.conn()
    ensure_schema(conn)
    asks = LineRequests()
    asks.ask(["a", "b"])
    asks.ask(["c", "a"])
    ask_elsewhere(conn, ["x", "y"])
    ask_elsewhere(conn, ["z", "x"])
    assert asks.take(conn) == ["a", "c", "b", "x", "z", "y"]
    assert asks.take(conn) == [] and len(asks) == 0


@pytest.mark.skipif(
    STORE_URL is not None,
    reason="it edits the local SQLite index behind the engine's back (the shared index's case: tests/postgres/test_shared_index.py)",
)
def test_a_search_before_the_line_pass_reaches_a_result_asks_for_its_lines_first(
    tmp_path: Path, default_model_path: Path
) -> None:
    """The oldest diary is the line pass's last; a search that returns it before the pass gets
    there says its best line is missing, and the pass embeds that diary's lines first."""
    import threading

    from clawmem.engine.search.explain import LINE_PENDING_WORDS, breakdown_rows, hit_record

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    talk = [
        "Did the plumber come about the kitchen sink?",
        "Yes, he replaced the pipe under it.",
        "The quarterly taxes are due next week.",
        "I moved the dentist appointment to Monday.",
        "Our neighbour lent us a ladder for the gutters.",
        "The library books go back on Saturday.",
        "I signed up for the evening Spanish course.",
        "The cat needs her vaccination in June.",
        "Remember to water the basil while I am away.",
    ]
    for day in range(2, 5):  # newer diaries, nothing about a boat: the pass takes them first
        turns = [f"- [D{day}:{i + 1}] {'Caroline' if i % 2 else 'Melanie'}: {t} ({day})" for i, t in enumerate(talk)]
        (ws / "memory" / f"2026-05-0{day}.md").write_text(f"# Session {day}\n\n" + "\n".join(turns) + "\n", "utf-8")
    (ws / "memory" / "2026-05-01.md").write_text(DIARY, "utf-8")  # the boat trip, oldest
    (ws / "memory" / "projects").mkdir()
    topics = [
        "Billing moves to the new invoice service in June.",
        "The garden shed needs a new roof.",
        "Book club reads a mystery novel this month.",
        "The car is due for its inspection in March.",
        "Piano lessons are on Thursday evenings.",
        "The team offsite is in Porto.",
    ]
    for i, topic in enumerate(topics):  # enough chunks for the workspace background (calibration)
        (ws / "memory" / "projects" / f"note-{i}.md").write_text(f"# Note {i}\n\n{topic}\n", "utf-8")
    home = tmp_path / "home"
    home.mkdir()
    engine = MemoryEngine(make_settings(home, ws, search={"decay_enabled": False}, embedding={"batch_size": 1}))
    question = "who went sailing and fell into the water"
    try:
        engine.sync()
        conn = engine.store.conn()
        with conn:  # every line vector gone: the chunk vectors stay, the line pass has it all to do
            conn.execute("DELETE FROM memory_index_line_vectors")
            conn.execute("DELETE FROM memory_index_meta WHERE key = 'line_vectors_done'")
        everything = engine.search(question, record=False, min_score=0.0, max_results=20)
        assert all(h.breakdown.line_pending == h.path.startswith("memory/2026-") for h in everything.results)
        engine.index.line_requests.take()  # … but ask only for what the next search shows
        before = engine.search(question, record=False, min_score=0.0, max_results=1)
        (boat,) = before.results
        assert boat.path == "memory/2026-05-01.md"
        assert boat.breakdown.line_pending and boat.breakdown.line is None
        assert any("no best line yet" in w and "run `clawmem index`" in w for w in before.warnings)
        pending_row = next(r for r in breakdown_rows(boat, before, 0.0) if r.label == "best line")
        assert pending_row.words == LINE_PENDING_WORDS and pending_row.value is None
        assert hit_record(boat)["breakdown"]["linePending"] is True

        cancel = threading.Event()
        seen: list[tuple[set[str], object]] = []

        def line_progress(done: int, total: int, _left: float | None) -> None:
            if done == 1:  # the first batch is committed: what it held, and a search meanwhile
                paths = {
                    p
                    for (p,) in conn.execute(
                        "SELECT c.path FROM memory_index_chunks c JOIN memory_index_line_vectors l ON l.hash = c.hash"
                    )
                }
                seen.append((paths, engine.search(question, record=False, min_score=0.0)))
                cancel.set()

        stats = engine.embed_pending(line_progress=line_progress, cancel=cancel)
        assert stats is not None and stats.cancelled
        ((paths, during),) = seen
        assert paths == {"memory/2026-05-01.md"}  # asked for: first, though the pass's order puts it last
        boat = next(h for h in during.results if h.path == "memory/2026-05-01.md")
        assert boat.breakdown.line == 6 and not boat.breakdown.line_pending  # "[D3:4] … capsized twice"
        # the other diaries were returned too and are now asked for, with the pass running here
        assert any("the line pass embeds their lines first" in w for w in during.warnings)
        assert len(engine.index.line_requests) > 0
    finally:
        engine.close()


@pytest.mark.skipif(STORE_URL is not None, reason="it edits the local SQLite index behind the engine's back")
def test_a_search_in_another_process_than_the_pass_leaves_its_ask_in_the_index(
    tmp_path: Path, default_model_path: Path
) -> None:
    """`clawmem search` (or `clawmem mcp`) while the app indexes: the search's engine is not the
    one passing, so it leaves its ask in the index's meta table; the pass takes it from there."""
    import threading

    from clawmem.engine.index.line_requests import ELSEWHERE_KEY
    from clawmem.engine.store import index_rows

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for day in range(2, 5):  # newer diaries than the boat trip, each about something else
        text = DIARY.replace("Session 3", f"Session {day}").replace("[D3:", f"[D{day}:")
        text = text.replace("rented a sailing boat on the lake last weekend and capsized twice", f"painted room {day}")
        (ws / "memory" / f"2026-05-0{day}.md").write_text(text, "utf-8")
    (ws / "memory" / "2026-05-01.md").write_text(DIARY, "utf-8")
    (ws / "memory" / "projects").mkdir()
    for i, topic in enumerate(["Billing moves in June.", "The shed needs a roof.", "Book club on Monday.",
                               "Car inspection in March.", "Piano on Thursdays.", "Offsite in Porto."]):  # fmt: skip
        (ws / "memory" / "projects" / f"note-{i}.md").write_text(f"# Note {i}\n\n{topic}\n", "utf-8")
    home = tmp_path / "home"
    home.mkdir()
    settings = make_settings(home, ws, search={"decay_enabled": False}, embedding={"batch_size": 1})
    indexer, searcher = MemoryEngine(settings), MemoryEngine(settings)  # two processes' engines
    try:
        indexer.sync()
        conn = indexer.store.conn()
        with conn:
            conn.execute("DELETE FROM memory_index_line_vectors")
            conn.execute("DELETE FROM memory_index_meta WHERE key = 'line_vectors_done'")
        cancel = threading.Event()
        first_batch: list[set[str]] = []
        warnings: list[str] = []

        def line_progress(done: int, _total: int, _left: float | None) -> None:
            if done == 0:  # the pass has started and holds the embed lock: the other engine asks
                r = searcher.search(
                    "who went sailing and fell into the water", record=False, min_score=0.0, max_results=1
                )
                assert [h.path for h in r.results] == ["memory/2026-05-01.md"]
                warnings.extend(r.warnings)
                assert index_rows.get_meta(conn, ELSEWHERE_KEY)  # left in the index, not in memory
                assert len(indexer.index.line_requests) == 0 and len(searcher.index.line_requests) == 0
            elif done == 1:
                sql = "SELECT c.path FROM memory_index_chunks c JOIN memory_index_line_vectors l ON l.hash = c.hash"
                first_batch.append({p for (p,) in conn.execute(sql)})
                cancel.set()

        indexer.embed_pending(line_progress=line_progress, cancel=cancel)
        assert first_batch == [{"memory/2026-05-01.md"}]  # the pass's last text, taken first
        assert any("the clawmem indexing now embeds its lines first" in w for w in warnings)
        assert index_rows.get_meta(conn, ELSEWHERE_KEY) is None  # taken
    finally:
        searcher.close()
        indexer.close()


def test_the_line_pace_is_measured_on_a_sample_before_the_chunks_and_nothing_is_embedded_twice(
    tmp_path: Path, default_model_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The time left needs the line pace before the line pass (a guess from the chunk pace was
    26–51 % too long, bench/RESULTS.md §3), so a pass with many lines embeds a spread sample of
    them early in its chunk pass; the line pass takes those as done. The sample is shrunk here to fit a
    test workspace (the rule is the same at any size)."""
    from clawmem.engine.index import line_evidence
    from clawmem.engine.index.embedding_pass import embed_pending
    from clawmem.engine.index.model_calls import ModelCalls
    from clawmem.engine.index.thread_budget import ThreadBudget

    monkeypatch.setattr(line_evidence, "PACE_SAMPLE_CHARS", 300)
    monkeypatch.setattr(line_evidence, "PACE_SAMPLE_MIN", 4)
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for day in range(1, 7):  # six diaries of nine turns, every turn its own words
        text = DIARY.replace("Session 3", f"Session {day}").replace("[D3:", f"[D{day}:")
        (ws / "memory" / f"2026-05-0{day}.md").write_text(text, "utf-8")
    home = tmp_path / "home"
    home.mkdir()
    engine = MemoryEngine(make_settings(home, ws))
    try:
        engine.sync(embed=False)
        conn = engine.store.conn()
        ident = engine.embedder_identity()
        provider = engine.provider_choice().provider
        assert ident is not None and provider is not None
        texts = {str(h): str(t) for h, t in conn.execute("SELECT DISTINCT hash, text FROM memory_index_chunks")}
        lines = {line for t in texts.values() for _, line in evidence_lines(t)}
        assert line_evidence.line_chars(list(texts.values())) >= 300 * 4  # enough lines for a sample

        probe = line_evidence.measure_line_pace(
            conn, ModelCalls(provider, ThreadBudget(1, 1)), ident.provider_key, texts
        )
        assert probe is not None and probe.chars >= 300 and probe.seconds > 0
        assert 0 < len(probe.vectors) < len(lines)  # a sample, not all
        some = next(line for line in lines if line_vector_rows.line_key(line) in probe.vectors)
        (alone,) = provider.embed_passages([some])
        assert float(np.dot(probe.vectors[line_vector_rows.line_key(some)], alone)) > 0.9999  # the real vector
        # The line pass counts every line of every text and embeds a repeated one once: a sample
        # of a workspace where each text is there twice stands for twice its characters.
        assert probe.counted == pytest.approx(1.0, abs=0.05)
        twice = {**texts, **{f"{h}-again": t for h, t in texts.items()}}
        doubled = line_evidence.measure_line_pace(
            conn, ModelCalls(provider, ThreadBudget(1, 1)), ident.provider_key, twice
        )
        assert doubled is not None and doubled.counted == pytest.approx(2 * probe.counted, rel=0.01)
        few = dict(list(texts.items())[:1])  # one diary's lines: too few to be worth a sample
        assert (
            line_evidence.measure_line_pace(conn, ModelCalls(provider, ThreadBudget(1, 1)), ident.provider_key, few)
            is None
        )

        # In the pass: the sample is taken once the chunk pace is measured (here at once: a test
        # workspace has no three seconds of chunks), and recorded by wrapping the real function.
        from clawmem.engine.index import embedding_pass, time_left

        monkeypatch.setattr(time_left, "MIN_MEASURED_S", 0.0)
        taken: list[object] = []

        def recorded(*args: object, **kwargs: object) -> object:
            taken.append(line_evidence.measure_line_pace(*args, **kwargs))  # type: ignore[arg-type]
            return taken[-1]

        monkeypatch.setattr(embedding_pass, "measure_line_pace", recorded)
        calls = ModelCalls(provider, ThreadBudget(1, 1))
        stats = embed_pending(conn, calls, ident, engine.clock, vec=engine.store.vec_available)
        (sample,) = taken
        assert isinstance(sample, line_evidence.LinePace) and sample.vectors  # taken, once
        assert stats.model_calls == len(texts) and stats.line_calls == len(lines)  # the sample counted as lines
        assert calls.texts == len(texts) + len(lines)  # and no line embedded twice
        assert line_vector_rows.pending(conn, ident.model, ident.provider_key) == []
        # every text has its lines now: a sample would embed nothing the pass needs, so none is taken
        assert (
            line_evidence.measure_line_pace(conn, ModelCalls(provider, ThreadBudget(1, 1)), ident.provider_key, texts)
            is None
        )
    finally:
        engine.close()
