"""The derived index's rows on a real PostgreSQL: the publish is one transaction (a search
never sees half an index; a killed rebuild leaves the old one answering), one file's sync, and
both search legs, full text in Chinese and English and nearest vectors (issue 39)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
from clawmem.engine.store.postgres import index_rows as pg
from clawmem.engine.store.postgres.connect import connect
from clawmem.engine.store.postgres.fulltext import all_terms_query, document_terms, term_query
from clawmem.engine.store.postgres.schema import ensure_schema, ensure_vec_table


def _unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def _index(n: int, tag: str) -> tuple[list[pg.SourceRow], list[pg.ChunkRow], dict[str, np.ndarray]]:
    sources = [pg.SourceRow(f"memory/{tag}-{i}.md", "memory", f"h{i}", 0.0, 10) for i in range(n)]
    chunks = [
        pg.ChunkRow(f"{tag}-{i}", f"memory/{tag}-{i}.md", "memory", 1, 1, f"{tag}{i}", "m", f"{tag} note {i}", 0.0)
        for i in range(n)
    ]
    vectors = {c.id: _unit(1.0, i / n, 0.0) for i, c in enumerate(chunks)}
    return sources, chunks, vectors


def test_document_terms_split_words_and_cjk_bigrams() -> None:
    assert document_terms("Window seats, 杭州西湖 trip") == "window seats 杭州 州西 西湖 trip"
    assert document_terms("返") == "返"
    assert term_query("杭州西") == "'杭州' <-> '州西'"
    assert term_query("Volunteering") == "'volunteering':*"
    assert term_query("!!") is None
    assert all_terms_query(["it's", "西湖"]) == "('it':* <-> 's':*) & '西湖'"


def test_keyword_leg_finds_chinese_and_english(pg_conn: Any) -> None:
    ensure_vec_table(pg_conn, 3)
    texts = {
        "zh": "最后选择西湖边的酒店，没有订湖景房，因为超出预算。",
        "zh2": "返程车票尚未确认。",
        "en": "The team chose PostgreSQL for the billing service.",
    }
    chunks = [pg.ChunkRow(k, f"{k}.md", "memory", 1, 1, k, "m", t, 0.0) for k, t in texts.items()]
    sources = [pg.SourceRow(f"{k}.md", "memory", k, 0.0, 1) for k in texts]
    pg.publish(pg_conn, sources, chunks, {})
    assert [cid for cid, _ in pg.keyword_hits(pg_conn, ["西湖"], 5)] == ["zh"]
    assert [cid for cid, _ in pg.keyword_hits(pg_conn, ["返程"], 5)] == ["zh2"]
    assert [cid for cid, _ in pg.keyword_hits(pg_conn, ["湖景房"], 5)] == ["zh"]  # a phrase of bigrams
    assert pg.keyword_hits(pg_conn, ["景湖"], 5) == []  # the bigrams, but not in that order
    assert [cid for cid, _ in pg.keyword_hits(pg_conn, ["postgres", "billing"], 5)] == ["en"]  # prefix
    assert pg.keyword_hits(pg_conn, ["postgres", "西湖"], 5) == []  # AND
    assert {cid for cid, _ in pg.keyword_hits(pg_conn, ["postgres", "西湖"], 5, match_all=False)} == {"en", "zh"}


def test_vector_leg_returns_nearest_by_cosine(pg_conn: Any) -> None:
    ensure_vec_table(pg_conn, 3)
    sources, chunks, vectors = _index(50, "a")
    pg.publish(pg_conn, sources, chunks, vectors)
    hits = pg.vector_hits(pg_conn, _unit(1.0, 0.0, 0.0), 3)
    assert [cid for cid, _ in hits] == ["a-0", "a-1", "a-2"]
    assert abs(hits[0][1] - 1.0) < 1e-5 and hits[0][1] >= hits[1][1] >= hits[2][1]
    # A second publish builds the next vector table and its HNSW index, then swaps it in.
    sources, chunks, vectors = _index(30, "b")
    pg.publish(pg_conn, sources, chunks, vectors)
    assert [cid for cid, _ in pg.vector_hits(pg_conn, _unit(1.0, 0.0, 0.0), 1)] == ["b-0"]
    indexes = {
        r[0]
        for r in pg_conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'memory_index_chunks_vec'"
        ).fetchall()
    }
    assert indexes == {"memory_index_chunks_vec_hnsw", "memory_index_chunks_vec_pkey"}
    assert pg_conn.execute("SELECT count(*) FROM memory_index_chunks WHERE embedded").fetchone() == (30,)
    pg_conn.rollback()


def test_replace_file_swaps_one_files_chunks(pg_conn: Any) -> None:
    ensure_vec_table(pg_conn, 3)
    sources, chunks, vectors = _index(3, "a")
    before = pg.publish(pg_conn, sources, chunks, vectors)
    new = pg.ChunkRow("a-1b", "memory/a-1.md", "memory", 1, 2, "new", "m", "rewritten sailing note", 0.0)
    pg.replace_file(pg_conn, pg.SourceRow("memory/a-1.md", "memory", "h1b", 1.0, 20), [new], {})
    assert pg.revision(pg_conn) > before
    ids = {r[0] for r in pg_conn.execute("SELECT id FROM memory_index_chunks").fetchall()}
    assert ids == {"a-0", "a-1b", "a-2"}
    assert pg_conn.execute("SELECT count(*) FROM memory_index_chunks_vec").fetchone() == (2,)  # a-1's went with it
    assert pg_conn.execute("SELECT hash FROM memory_index_sources WHERE path = 'memory/a-1.md'").fetchone() == ("h1b",)
    pg_conn.rollback()
    assert [c for c, _ in pg.keyword_hits(pg_conn, ["sailing"], 5)] == ["a-1b"]


_REBUILDER = """
import os, sys, time
from clawmem.engine.store.postgres import index_rows as pg
from clawmem.engine.store.postgres.connect import connect
from clawmem.engine.store.postgres.schema import use_schema
import numpy as np
conn = connect(sys.argv[1]); use_schema(conn, sys.argv[2])
n = 3000
sources = [pg.SourceRow(f"memory/b-{i}.md", "memory", "x", 0.0, 1) for i in range(n)]
chunks = [pg.ChunkRow(f"b-{i}", f"memory/b-{i}.md", "memory", 1, 1, "x", "m", "rebuilt text", 0.0) for i in range(n)]
def progress(done):
    if done >= 1000:
        print("half", flush=True)
        time.sleep(60)
pg.publish(conn, sources, chunks, {}, progress=progress)
"""


def test_a_search_never_sees_half_a_rebuild_and_a_killed_one_leaves_the_old_index(
    pg_conn: Any, pg_url: str, pg_schema: str
) -> None:
    ensure_vec_table(pg_conn, 3)
    sources, chunks, vectors = _index(20, "a")
    rev = pg.publish(pg_conn, sources, chunks, vectors)
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_REBUILDER), pg_url, pg_schema],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "half"
        # the rebuild has deleted everything and written 1,000 new chunks, uncommitted:
        assert pg_conn.execute("SELECT count(*) FROM memory_index_chunks").fetchone() == (20,)
        pg_conn.rollback()
        assert [c for c, _ in pg.keyword_hits(pg_conn, ["note"], 50)] != []
        assert pg.keyword_hits(pg_conn, ["rebuilt"], 5) == []
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    other = connect(pg_url)  # a new process's view, after the server rolled the rebuild back
    try:
        ensure_schema(other, pg_schema)
        assert other.execute("SELECT count(*) FROM memory_index_chunks").fetchone() == (20,)
        other.rollback()
        assert pg.revision(other) == rev
        assert [c for c, _ in pg.vector_hits(other, _unit(1.0, 0.0, 0.0), 1)] == ["a-0"]
        assert pg.keyword_hits(other, ["rebuilt"], 5) == []
    finally:
        other.close()


def test_two_indexers_at_once_lose_nothing(pg_url: str, pg_schema: str, pg_conn: Any) -> None:
    """Two processes syncing different files into one index at the same time: every file's
    chunks are there afterwards, and the counts agree."""
    ensure_vec_table(pg_conn, 3)
    script = textwrap.dedent(
        """
        import sys
        from clawmem.engine.store.postgres import index_rows as pg
        from clawmem.engine.store.postgres.connect import connect
        from clawmem.engine.store.postgres.schema import use_schema
        conn = connect(sys.argv[1]); use_schema(conn, sys.argv[2]); tag = sys.argv[3]
        for i in range(40):
            path = f"memory/{tag}-{i}.md"
            pg.replace_file(conn, pg.SourceRow(path, "memory", "h", 0.0, 1),
                            [pg.ChunkRow(f"{tag}-{i}", path, "memory", 1, 1, "h", "m", f"{tag} line {i}", 0.0)], {})
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, pg_url, pg_schema, tag]) for tag in ("left", "right")]
    assert [p.wait(120) for p in procs] == [0, 0]
    (chunks,) = pg_conn.execute("SELECT count(*) FROM memory_index_chunks").fetchone()
    (sources, state_chunks, state_sources) = pg_conn.execute(
        "SELECT (SELECT count(*) FROM memory_index_sources), chunks, sources FROM memory_index_state"
    ).fetchone()
    assert chunks == sources == 80
    assert (state_chunks, state_sources) == (80, 80)


def test_any_term_candidates_come_from_the_rare_terms(pg_conn: Any, monkeypatch: Any) -> None:
    """A common word alone brings no candidates (it would rank most of the index); the chunks
    holding a rare word are ranked by the whole query, so holding the common word too ranks first."""
    monkeypatch.setattr(pg, "COMMON_ROWS", 2)
    texts = {
        "a": "the meeting about the budget",
        "b": "the meeting was long",
        "c": "meeting notes on sailing and the budget",
        "d": "sailing on the lake",
    }
    chunks = [pg.ChunkRow(k, f"{k}.md", "memory", 1, 1, k, "m", t, 0.0) for k, t in texts.items()]
    pg.publish(pg_conn, [pg.SourceRow(f"{k}.md", "memory", k, 0.0, 1) for k in texts], chunks, {})
    hits = [cid for cid, _ in pg.keyword_hits(pg_conn, ["meeting", "sailing"], 10, match_all=False)]
    assert hits == ["c", "d"]  # "meeting" (3 chunks) is common here; c holds both words
    # no rare term at all: the chunks holding every term
    both = {cid for cid, _ in pg.keyword_hits(pg_conn, ["meeting", "the"], 10, match_all=False)}
    assert both == {"a", "b", "c"}
