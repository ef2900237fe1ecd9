"""One memory for several machines (issue 39): ``store.url`` publishes this machine's index to
PostgreSQL after every sync and searches it there; a machine without the files searches it too.

Real PostgreSQL with pgvector (tests/postgres/conftest.py), real SQLite, the real model where a
test needs vectors.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from clawmem.engine.errors import ClawmemError, ConfigError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.search.explain import keyword_note
from clawmem.engine.status_lines import status_lines
from clawmem.engine.store import index_rows, line_vector_rows, recall_rows
from clawmem.engine.store.postgres.connect import StoreUnavailable
from clawmem.engine.store.postgres.locks import FileLockTimeout, lock_key

from tests.conftest import FIXTURES, make_settings


def shared_engine(home: Path, workspace: Path, url: str, schema: str, *, model: bool = True) -> MemoryEngine:
    home.mkdir(parents=True, exist_ok=True)
    extra: dict[str, Any] = {"store": {"url": url, "schema": schema}}
    if not model:
        extra["embedding"] = {"provider": "none"}
    return MemoryEngine(make_settings(home, workspace, **extra))


def pg_counts(pg_conn: Any, schema: str) -> tuple[int, int, int, int]:
    """(files, chunks, chunks with a vector, texts with line vectors) of the shared index."""
    pg_conn.execute(f'SET search_path TO "{schema}", public')
    files = pg_conn.execute("SELECT count(*) FROM memory_index_sources").fetchone()[0]
    chunks, embedded = pg_conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE embedded) FROM memory_index_chunks"
    ).fetchone()
    lines = pg_conn.execute("SELECT count(*) FROM memory_index_line_vectors WHERE length(vectors) > 0").fetchone()[0]
    pg_conn.rollback()
    return int(files), int(chunks), int(embedded), int(lines)


def test_a_sync_publishes_everything_and_a_machine_without_the_files_searches_it(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, pg_conn: Any, default_model_path: Path
) -> None:
    a = shared_engine(tmp_path / "a", workspace, pg_url, pg_schema)
    report = a.sync()
    assert report.shared is not None and report.shared.full  # the first publish copies all
    conn = a.store.conn()
    files = len(index_rows.sources(conn)) + len(index_rows.sources(conn, "sessions"))
    total, embedded = index_rows.count_chunks(conn)
    texts, _, _ = line_vector_rows.summary(conn)
    assert embedded == total > 0 and texts > 0
    assert pg_counts(pg_conn, pg_schema) == (files, total, embedded, texts)

    # A laptop: its own home, no copy of the workspace, the same shared index.
    laptop = shared_engine(tmp_path / "laptop", tmp_path / "no-such-folder", pg_url, pg_schema)
    local = MemoryEngine(make_settings(tmp_path / "local", workspace))  # the same files, SQLite only
    for query in ("返程车票", "lake view hotel budget"):
        shared_r = laptop.search(query, record=False)
        local_r = local.search(query, record=False)
        assert shared_r.results, query
        assert shared_r.mode == "hybrid" and shared_r.keyword_ranking == "PostgreSQL ts_rank_cd"
        assert local_r.keyword_ranking == "SQLite FTS5 BM25"
        assert shared_r.results[0].path == local_r.results[0].path  # the same answer first
        # line evidence came along: the same best line for every chunk both returned
        shared_lines = {h.chunk_id: h.breakdown.line for h in shared_r.results}
        local_lines = {h.chunk_id: h.breakdown.line for h in local_r.results}
        common = shared_lines.keys() & local_lines.keys()
        assert common and {c: shared_lines[c] for c in common} == {c: local_lines[c] for c in common}
        assert any(line is not None for line in shared_lines.values())
        ranked = [h for h in shared_r.results if h.breakdown.keyword_raw is not None]
        assert ranked and "ts_rank_cd" in keyword_note(ranked[0], shared_r.scoring, shared_r.keyword_ranking)
    for e in (a, laptop, local):
        e.close()


def test_an_edit_replaces_that_file_only_and_a_deleted_file_leaves(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str
) -> None:
    a = shared_engine(tmp_path / "a", workspace, pg_url, pg_schema, model=False)
    a.sync()
    diary = sorted((workspace / "memory").glob("*.md"))[0]
    diary.write_text(diary.read_text(encoding="utf-8") + "\n- The kayak club meets at Quarry Bay.\n", encoding="utf-8")
    edited = a.sync()
    assert edited.shared is not None and (edited.shared.replaced_files, edited.shared.removed_files) == (1, 0)
    assert not edited.shared.full
    laptop = shared_engine(tmp_path / "laptop", tmp_path / "none", pg_url, pg_schema, model=False)
    found = laptop.search("kayak club", record=False)
    assert [h.path for h in found.results][:1] == [f"memory/{diary.name}"]
    # the path leg reads the shared index's paths too: a part of a file name finds that file
    # (the whole stem is an exact tier; the month and day alone go through the paths' terms)
    for part in (diary.stem, diary.stem[5:]):
        by_path = laptop.search(part, legs="keyword", record=False)
        assert any(h.path == f"memory/{diary.name}" and "path" in h.legs for h in by_path.results), part

    diary.unlink()
    gone = a.sync()
    assert gone.shared is not None and gone.shared.removed_files == 1
    assert not any(h.path == f"memory/{diary.name}" for h in laptop.search("kayak club", record=False).results)
    assert gone.shared.revision > edited.shared.revision
    nothing = a.sync()
    assert nothing.shared is not None and (nothing.shared.replaced_files, nothing.shared.removed_files) == (0, 0)
    assert nothing.shared.revision == gone.shared.revision  # nothing changed: no new revision
    a.close()
    laptop.close()


def test_a_second_machine_embeds_nothing_the_first_one_embedded(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, default_model_path: Path
) -> None:
    a = shared_engine(tmp_path / "a", workspace, pg_url, pg_schema)
    first = a.sync()
    assert first.embedded > 0 and first.embedded_lines > 0
    a.close()
    # The same files on another machine (a copy: its own paths, its own database).
    copy = shutil.copytree(workspace, tmp_path / "copy")
    b = shared_engine(tmp_path / "b", copy, pg_url, pg_schema)
    second = b.sync()
    assert second.embedded == 0 and second.embedded_lines == 0  # every vector came from PostgreSQL
    assert second.cache_hits >= first.embedded
    total, embedded = index_rows.count_chunks(b.store.conn())
    assert embedded == total
    r = b.search("返程车票", record=False)
    assert r.results and any(h.breakdown.line is not None for h in r.results)
    b.close()


def test_a_machine_at_an_older_version_of_a_file_takes_its_vectors_from_the_shared_cache(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, pg_conn: Any, default_model_path: Path
) -> None:
    older = shutil.copytree(workspace, tmp_path / "older")  # another machine, its copy not yet updated
    a = shared_engine(tmp_path / "a", workspace, pg_url, pg_schema)
    first = a.sync()
    assert first.embedded > 0
    diary = sorted((workspace / "memory").glob("*.md"))[0]
    diary.write_text("# A new day\n\n- The kayak club meets at Quarry Bay on Thursdays.\n", encoding="utf-8")
    assert a.sync().embedded > 0  # the new text, embedded once, here
    a.close()
    pg_conn.execute(f'SET search_path TO "{pg_schema}", public')
    (cached,) = pg_conn.execute("SELECT count(*) FROM memory_embedding_cache").fetchone()
    pg_conn.rollback()
    assert cached >= first.embedded  # every vector either version needed
    b = shared_engine(tmp_path / "b", older, pg_url, pg_schema)
    second = b.sync()
    # the diary's old chunks are in no published chunk now, but in the shared cache
    assert second.embedded == 0 and second.cache_hits >= first.embedded
    b.close()


def test_an_unreachable_server_is_one_line_and_nothing_is_written(tmp_path: Path, workspace: Path) -> None:
    url = "postgresql://clawmem:secret@127.0.0.1:9/memory"  # port 9 (discard): nothing listens
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    engine = shared_engine(tmp_path / "a", workspace, url, "clawmem", model=False)
    with pytest.raises(StoreUnavailable) as err:
        engine.sync()
    message = str(err.value)
    assert message.startswith("cannot reach PostgreSQL at clawmem@127.0.0.1:9/memory")
    assert "\n" not in message and "secret" not in message
    assert engine.stored_identity() is None and index_rows.count_chunks(engine.store.conn()) == (0, 0)
    with pytest.raises(StoreUnavailable):
        engine.search("anything", record=False)
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before
    engine.close()


def test_the_setting_comes_from_config_env_or_flag_and_must_be_postgresql(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "h"
    home.mkdir()
    assert make_settings(home, workspace).store.url is None  # nothing set: SQLite only
    monkeypatch.setenv("CLAWMEM_STORE_URL", "postgresql://me@db.local/memory")
    monkeypatch.setenv("CLAWMEM_STORE_SCHEMA", "team_memory")
    s = make_settings(home, workspace)
    assert (s.store.url, s.store.schema) == ("postgresql://me@db.local/memory", "team_memory")
    monkeypatch.setenv("CLAWMEM_STORE_URL", "mysql://me:pw@db.local/memory")
    with pytest.raises(ConfigError) as err:
        make_settings(home, workspace)
    assert "store.url must be a PostgreSQL URL" in str(err.value) and "pw" not in str(err.value)
    monkeypatch.delenv("CLAWMEM_STORE_URL")
    monkeypatch.setenv("CLAWMEM_STORE_SCHEMA", "Robert'); DROP")
    with pytest.raises(ConfigError, match=r"store\.schema must be a lower-case name"):
        make_settings(home, workspace)


def test_status_names_the_shared_index_and_what_stays_on_this_machine(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str
) -> None:
    engine = shared_engine(tmp_path / "a", workspace, pg_url, pg_schema, model=False)
    engine.sync()
    lines = dict(status_lines(engine.status()))
    assert lines["Shared index"].startswith("PostgreSQL 1")
    assert f"schema {pg_schema} · revision " in lines["Shared index"] and "searched there" in lines["Shared index"]
    assert "sessions, intents and Dreaming state" in lines["On this machine"]
    assert lines["Shared recalls"].startswith("0 observation(s) from 0 machine(s) in the shared journal")
    engine.search("预算 酒店 hotel budget")
    entries = len(recall_rows.all_rows(engine.store.conn()))  # one query: one observation per entry
    assert entries > 0
    lines = dict(status_lines(engine.status()))
    assert lines["Shared recalls"].startswith(f"{entries} observation(s) from 1 machine(s) in the shared journal")
    engine.close()
    unreachable = shared_engine(tmp_path / "b", workspace, "postgresql://x@127.0.0.1:9/y", "clawmem", model=False)
    assert dict(status_lines(unreachable.status()))["Shared index"].startswith("unavailable: cannot reach PostgreSQL")
    unreachable.close()


def test_a_machine_without_the_files_cannot_append_but_says_why(
    tmp_path: Path, pg_url: str, pg_schema: str, workspace: Path
) -> None:
    laptop = shared_engine(tmp_path / "laptop", tmp_path / "none", pg_url, pg_schema, model=False)
    with pytest.raises(ClawmemError, match="does not exist"):
        laptop.sync()
    laptop.close()


def test_a_write_waits_for_another_machines_lock_on_the_file_then_writes_or_says_why(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, pg_conn: Any
) -> None:
    engine = shared_engine(tmp_path / "a", workspace, pg_url, pg_schema, model=False)
    assert engine.runtime.shared is not None
    engine.runtime.shared.lock_timeout = 0.5
    rel = "memory/2026-11-04.md"
    snapshot = engine.snapshot(rel)
    before = (workspace / rel).read_bytes()
    # Another machine is writing this file: it holds the file's lock in an open transaction.
    pg_conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(pg_schema, rel),))
    with pytest.raises(FileLockTimeout) as err:
        engine.save_file(snapshot, snapshot.text + "- written from the second machine\n")
    assert str(err.value).startswith(f"{rel} is being written by another clawmem on the shared store")
    assert (workspace / rel).read_bytes() == before  # nothing was written
    other = "memory/2026-11-02.md"  # another file is not held up
    engine.save_file(engine.snapshot(other), engine.snapshot(other).text + "- another file\n")
    pg_conn.rollback()  # the other machine is done
    engine.save_file(snapshot, snapshot.text + "- written from the second machine\n")
    assert (workspace / rel).read_text(encoding="utf-8").endswith("- written from the second machine\n")
    engine.close()


def test_two_machines_publishing_at_once_leave_one_whole_index(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, pg_conn: Any
) -> None:
    # Two machines with the same files (copies), each editing a different diary, sync at the same
    # moment: their publishes take turns on the shared index's state row, and both edits are there.
    copies = [shutil.copytree(workspace, tmp_path / f"ws{i}") for i in range(2)]
    engines = [shared_engine(tmp_path / f"m{i}", ws, pg_url, pg_schema, model=False) for i, ws in enumerate(copies)]
    engines[0].sync()
    diaries = sorted(p.name for p in (workspace / "memory").glob("2026-*.md"))[:2]
    for ws in copies:  # both copies get both edits, as a shared volume would show them
        for name, word in zip(diaries, ("heron", "osprey"), strict=True):
            path = ws / "memory" / name
            path.write_text(path.read_text(encoding="utf-8") + f"\n- A {word} nests by the pier.\n", encoding="utf-8")
    errors: list[BaseException] = []

    def sync(e: MemoryEngine) -> None:
        try:
            e.sync()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=sync, args=(e,)) for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    laptop = shared_engine(tmp_path / "laptop", tmp_path / "none", pg_url, pg_schema, model=False)
    for name, word in zip(diaries, ("heron", "osprey"), strict=True):
        assert [h.path for h in laptop.search(f"{word} nests", record=False).results][:1] == [f"memory/{name}"]
    conn = engines[0].store.conn()
    files = len(index_rows.sources(conn)) + len(index_rows.sources(conn, "sessions"))
    assert pg_counts(pg_conn, pg_schema)[:2] == (files, index_rows.count_chunks(conn)[0])
    for e in (*engines, laptop):
        e.close()


def test_a_common_terms_count_is_exact_up_to_a_cap_then_estimated_from_a_sample(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawmem.engine.store.postgres import search_reader as psr

    engine = shared_engine(tmp_path / "a", workspace, pg_url, pg_schema, model=False)
    engine.sync()
    shared = engine.runtime.shared
    assert shared is not None
    with shared.connection() as pg:
        reader = psr.PostgresSearchReader(pg, shared.key)
        total = reader.index_state().chunks
        pg.execute(f'SET search_path TO "{pg_schema}", public')
        holders = [
            int(r[0])
            for r in pg.execute(
                "SELECT seq FROM memory_index_chunks WHERE terms @@ to_tsquery('simple', 'the:*') ORDER BY seq"
            ).fetchall()
        ]
        seqs = [int(r[0]) for r in pg.execute("SELECT seq FROM memory_index_chunks ORDER BY seq").fetchall()]
        pg.rollback()
        exact = len(holders)
        assert 3 < exact < total
        assert reader.document_frequency("the", "words") == exact  # under the cap: counted
        monkeypatch.setattr(psr, "DF_EXACT", 2)
        assert reader.document_frequency("the", "words") == exact  # the sample is every chunk: still exact
        monkeypatch.setattr(psr, "DF_SAMPLE", 6)
        in_sample = sum(1 for s in holders if s in set(seqs[:6]))
        assert reader.document_frequency("the", "words") == max(3, round(in_sample * total / 6))
    engine.close()


def test_every_publish_leaves_the_chunks_vacuumed_and_analyzed(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str
) -> None:
    engine = shared_engine(tmp_path / "a", workspace, pg_url, pg_schema, model=False)

    def all_visible(pg: Any) -> bool:
        """Every page of the chunks counted (analyzed) and marked all-visible (vacuumed)."""
        pages, visible = pg.execute(
            "SELECT relpages, relallvisible FROM pg_class WHERE oid = 'memory_index_chunks'::regclass"
        ).fetchone()
        pg.rollback()
        return int(pages) > 0 and visible == pages

    engine.sync()
    shared = engine.runtime.shared
    assert shared is not None
    with shared.connection() as pg:
        assert all_visible(pg)  # the first publish
    diary = sorted((workspace / "memory").glob("*.md"))[0]
    diary.write_text(diary.read_text(encoding="utf-8") + "\n- The kayak club meets at Quarry Bay.\n", encoding="utf-8")
    engine.sync()
    with shared.connection() as pg:
        assert all_visible(pg)  # an incremental one
    engine.close()


def test_the_fixtures_forty_queries_get_the_same_answers_from_the_shared_index(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, default_model_path: Path
) -> None:
    # bench/pg_vs_sqlite.py measured it: with the product's defaults the keyword engine decides
    # only which candidates come in, so both stores return the same top 5 for every fixture query.
    queries = json.loads((FIXTURES / "queries.json").read_text(encoding="utf-8"))["queries"]
    publisher = shared_engine(tmp_path / "a", workspace, pg_url, pg_schema)
    publisher.sync()
    publisher.close()
    local = MemoryEngine(make_settings(tmp_path / "a", workspace))  # the same index, read from SQLite
    laptop = shared_engine(tmp_path / "laptop", tmp_path / "none", pg_url, pg_schema)
    for q in queries:
        on_sqlite = [(h.chunk_id, h.breakdown.line) for h in local.search(q["query"], record=False, sync=False).results]
        on_pg = [(h.chunk_id, h.breakdown.line) for h in laptop.search(q["query"], record=False).results]
        assert on_pg[:5] == on_sqlite[:5], q["query"]
    local.close()
    laptop.close()


def _line_pass_workspace(root: Path) -> Path:
    """Three newer diaries about chores, the oldest about a capsized sailing boat (the line
    pass's last, diaries going newest first), and six short notes for the calibration."""
    ws = root / "ws"
    (ws / "memory" / "projects").mkdir(parents=True)
    chores = ["Did the plumber come about the sink?", "Yes, he replaced the pipe.", "Taxes are due next week.",
              "The dentist moved to Monday.", "The neighbour lent us a ladder.", "Library books go back Saturday."]  # fmt: skip
    for day in range(2, 5):
        turns = [f"- [D{day}:{i + 1}] {'Caroline' if i % 2 else 'Melanie'}: {t} ({day})" for i, t in enumerate(chores)]
        (ws / "memory" / f"2026-05-0{day}.md").write_text(f"# Session {day}\n\n" + "\n".join(turns) + "\n", "utf-8")
    boat = ["Morning! Did you finish the report?", "Almost, the charts are missing.",
            "We rented a sailing boat on the lake and capsized twice.", "Ha, at least the water was warm?",
            "Not really. The printer is broken again.", "I will call the facilities team."]  # fmt: skip
    turns = [f"- [D1:{i + 1}] {'Caroline' if i % 2 else 'Melanie'}: {t}" for i, t in enumerate(boat)]
    (ws / "memory" / "2026-05-01.md").write_text("# Session 1\n\n" + "\n".join(turns) + "\n", "utf-8")
    for i, topic in enumerate(["Billing moves in June.", "The shed needs a roof.", "Book club on Monday.",
                               "Car inspection in March.", "Piano on Thursdays.", "Offsite in Porto."]):  # fmt: skip
        (ws / "memory" / "projects" / f"note-{i}.md").write_text(f"# Note {i}\n\n{topic}\n", "utf-8")
    return ws


def test_a_pass_publishes_chunk_vectors_before_its_lines_and_asked_lines_at_once(
    tmp_path: Path, pg_url: str, pg_schema: str, pg_conn: Any, default_model_path: Path
) -> None:
    """Searches read the shared index, so a pass that published only at its end left another
    machine keyword-only, then without best lines, for the whole pass. Now the chunk vectors
    are there when the line pass starts; a laptop's search leaves its ask on the server; the
    pass takes it first and publishes those lines as soon as their batch is stored."""
    from clawmem.engine.index.line_requests import ELSEWHERE_KEY

    ws = _line_pass_workspace(tmp_path)
    extra: dict[str, Any] = {"store": {"url": pg_url, "schema": pg_schema}, "search": {"decay_enabled": False}}
    desk = MemoryEngine(make_settings(tmp_path / "desk", ws, embedding={"batch_size": 1}, **extra))
    laptop = MemoryEngine(make_settings(tmp_path / "laptop", tmp_path / "no-files", **extra))
    question = "who went sailing and fell into the water"
    cancel = threading.Event()
    seen: dict[int, Any] = {}
    try:
        desk.sync(embed=False)  # text only: the shared index is keyword-only

        def line_progress(done: int, _total: int, _left: float | None) -> None:
            if done == 0:  # the line pass starts: the chunk vectors must be on the server already
                seen[0] = (
                    laptop.search(question, record=False, min_score=0.0, max_results=1),
                    pg_counts(pg_conn, pg_schema),
                )
                pg_conn.execute(f'SET search_path TO "{pg_schema}", public')
                seen["ask"] = pg_conn.execute(
                    "SELECT value FROM memory_index_meta WHERE key = %s", (ELSEWHERE_KEY,)
                ).fetchone()
                pg_conn.rollback()
            elif done == 1:  # the first batch: the laptop's ask, published before the pass goes on
                seen[1] = (
                    laptop.search(question, record=False, min_score=0.0, max_results=1),
                    pg_counts(pg_conn, pg_schema),
                )
                cancel.set()

        stats = desk.embed_pending(line_progress=line_progress, cancel=cancel)
        assert stats is not None and stats.cancelled

        before, (_, chunks, embedded, lines) = seen[0]
        assert embedded == chunks > 0 and lines == 0  # every chunk vector, no line yet
        assert before.mode == "hybrid"
        (boat,) = before.results
        assert boat.path == "memory/2026-05-01.md" and boat.breakdown.vector is not None
        assert boat.breakdown.line_pending and boat.breakdown.line is None
        assert any(
            "the next line pass publishing to the shared index embeds its lines first" in w for w in before.warnings
        )
        (boat_hash,) = [
            str(h)
            for (h,) in desk.store.conn().execute("SELECT hash FROM memory_index_chunks WHERE path = ?", (boat.path,))
        ]
        assert seen["ask"] is not None and seen["ask"][0].split() == [boat_hash]  # left on the server

        during, (_, _, _, lines_during) = seen[1]
        (boat,) = during.results
        assert boat.path == "memory/2026-05-01.md"
        assert boat.breakdown.line == 5 and not boat.breakdown.line_pending  # "[D1:3] … capsized twice"
        assert lines_during == 1  # that text only: the pass's own order waits for its end
    finally:
        desk.close()
        laptop.close()


def test_asked_lines_never_wait_long_for_another_machines_publish(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, pg_conn: Any, default_model_path: Path
) -> None:
    """Another machine's full publish holds the state row for as long as it copies; the line pass
    publishing asked lines gives up after LINES_LOCK_S (the pass's end carries them), and
    writes them when the row is free."""
    import time

    from clawmem.engine.store.postgres import mirror

    a = shared_engine(tmp_path / "a", workspace, pg_url, pg_schema)
    a.sync()
    local = a.store.conn()
    h, key = next(
        iter(local.execute("SELECT hash, provider_key FROM memory_index_line_vectors WHERE length(vectors) > 0"))
    )
    pg_conn.execute(f'SET search_path TO "{pg_schema}", public')
    pg_conn.execute("DELETE FROM memory_index_line_vectors WHERE hash = %s", (h,))
    pg_conn.commit()
    pg_conn.execute("SELECT revision FROM memory_index_state WHERE id = 1 FOR UPDATE")  # "another machine" publishing
    assert a.runtime.shared is not None
    with a.runtime.shared.connection() as pg:
        t = time.perf_counter()
        assert mirror.publish_lines(local, pg, [h], key) == 0
        waited = time.perf_counter() - t
    assert mirror.LINES_LOCK_S <= waited < mirror.LINES_LOCK_S + 5  # gave up, did not wait for the publish
    pg_conn.rollback()  # that publish is done
    with a.runtime.shared.connection() as pg:
        assert mirror.publish_lines(local, pg, [h, "not-a-held-text"], key) == 1  # a text it does not hold: skipped
    assert pg_conn.execute("SELECT count(*) FROM memory_index_line_vectors WHERE hash = %s", (h,)).fetchone()[0] == 1
    pg_conn.rollback()
    a.close()
