"""The PostgreSQL store's ground floor on a real server: connecting, the one-line refusals,
the index schema with its HNSW index, and the per-file advisory lock (issue 39)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from clawmem.engine.errors import ClawmemError
from clawmem.engine.store.postgres import locks
from clawmem.engine.store.postgres.connect import StoreUnavailable, connect, describe, server_version
from clawmem.engine.store.postgres.schema import (
    DERIVED_TABLES,
    MIGRATIONS,
    ensure_schema,
    ensure_vec_table,
    tables,
    use_schema,
)


def test_connect_reports_postgres_and_pgvector(pg_conn: Any) -> None:
    pg, vec = server_version(pg_conn)
    assert int(pg.split(".")[0]) >= 14
    assert vec  # pgvector is there and enabled


def test_describe_never_shows_the_password() -> None:
    assert describe("postgresql://ana:s3cret@db.example:6543/memory") == "ana@db.example:6543/memory"
    assert "s3cret" not in describe("postgresql://ana:s3cret@/memory?host=/run/pg")
    assert describe("postgresql://ana:s3cret@/memory?host=/run/pg") == "ana@/run/pg:5432/memory"


def _one_line(exc: pytest.ExceptionInfo[StoreUnavailable]) -> str:
    text = str(exc.value)
    assert "\n" not in text and text
    return text


def test_no_server_behind_a_socket_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable) as exc:
        connect(f"postgresql://ana:s3cret@/memory?host={tmp_path}")
    text = _one_line(exc)
    assert text.startswith("cannot reach PostgreSQL at ana@") and "s3cret" not in text


def test_nothing_listening_on_a_port_is_one_line() -> None:
    with pytest.raises(StoreUnavailable) as exc:
        connect("postgresql://ana:s3cret@127.0.0.1:9/memory")
    text = _one_line(exc)
    assert "ana@127.0.0.1:9/memory" in text and "s3cret" not in text


def test_an_unknown_role_is_refused_credentials(pg_url: str) -> None:
    url = pg_url.replace("postgresql://postgres:", "postgresql://no_such_role:pw")
    with pytest.raises(StoreUnavailable) as exc:
        connect(url)
    text = _one_line(exc)
    assert "refused the credentials" in text and 'role "no_such_role" does not exist' in text
    assert ":pw" not in text


def test_an_unknown_database_says_so(pg_url: str) -> None:
    with pytest.raises(StoreUnavailable) as exc:
        connect(pg_url.replace("/postgres?", "/no_such_db?"))
    assert 'database "no_such_db" does not exist' in _one_line(exc)


def test_a_database_where_pgvector_cannot_be_enabled_is_refused_and_left_alone(pg_url: str) -> None:
    """A role that may not create the extension, in a database that does not have it yet:
    one line, and nothing created there."""
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS novec")
        admin.execute("DROP ROLE IF EXISTS plain_user")
        admin.execute("CREATE ROLE plain_user LOGIN")
        admin.execute("CREATE DATABASE novec OWNER postgres")
        admin.execute("GRANT CONNECT ON DATABASE novec TO plain_user")
    url = pg_url.replace("postgresql://postgres:", "postgresql://plain_user:").replace("/postgres?", "/novec?")
    try:
        with pytest.raises(StoreUnavailable) as exc:
            connect(url)
        assert "not enabled in this database" in _one_line(exc)
        with psycopg.connect(pg_url.replace("/postgres?", "/novec?")) as check:
            assert check.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'").fetchone() == (0,)
            assert check.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'clawmem'").fetchone() == (0,)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("DROP DATABASE IF EXISTS novec")
            admin.execute("DROP ROLE IF EXISTS plain_user")


def test_not_a_postgres_url() -> None:
    with pytest.raises(StoreUnavailable, match="must start with postgresql://"):
        connect("mysql://somewhere/db")


def test_the_schema_has_every_derived_table_and_is_idempotent(pg_conn: Any, pg_schema: str) -> None:
    have = set(tables(pg_conn))
    assert set(DERIVED_TABLES) - {"memory_index_chunks_vec"} <= have
    assert {"memory_recall_journal", "clawmem_schema"} <= have
    assert not have & {"memory_short_term_recall", "memory_short_term_recall_events"}  # V1's, never filled: V4 drops
    assert ensure_schema(pg_conn, pg_schema) == len(MIGRATIONS)  # again: nothing to do, nothing lost
    assert set(tables(pg_conn)) == have


def test_a_newer_schema_is_refused(pg_conn: Any, pg_schema: str) -> None:
    pg_conn.execute("UPDATE clawmem_schema SET version = 99 WHERE component = 'index'")
    pg_conn.commit()
    with pytest.raises(ClawmemError, match="made by a newer clawmem"):
        ensure_schema(pg_conn, pg_schema)


def test_a_bad_schema_name_is_refused(pg_conn: Any) -> None:
    with pytest.raises(ClawmemError, match=r"store\.schema"):
        use_schema(pg_conn, 'x"; DROP TABLE y; --')


def _chunk(conn: Any, cid: str, text: str) -> None:
    conn.execute(
        "INSERT INTO memory_index_chunks (id, path, start_line, end_line, hash, model, text, terms, updated_at) "
        "VALUES (%s, 'MEMORY.md', 1, 1, %s, 'm', %s, to_tsvector('simple', %s), 0)",
        (cid, cid, text, text),
    )


def test_the_vector_table_uses_hnsw_cosine_and_follows_the_model(pg_conn: Any) -> None:
    ensure_vec_table(pg_conn, 3)
    _chunk(pg_conn, "a", "window seats")
    _chunk(pg_conn, "b", "peanuts")
    pg_conn.execute("INSERT INTO memory_index_chunks_vec VALUES ('a', '[1,0,0]'), ('b', '[0,1,0]')")
    pg_conn.commit()
    (indexdef,) = pg_conn.execute(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'memory_index_chunks_vec' "
        "AND indexname LIKE '%hnsw'"
    ).fetchone()
    assert "hnsw" in indexdef and "vector_cosine_ops" in indexdef
    nearest = pg_conn.execute(
        "SELECT id FROM memory_index_chunks_vec ORDER BY embedding <=> '[0.9,0.1,0]' LIMIT 1"
    ).fetchone()
    assert nearest == ("a",)
    ensure_vec_table(pg_conn, 3)  # same model: kept
    assert pg_conn.execute("SELECT count(*) FROM memory_index_chunks_vec").fetchone() == (2,)
    ensure_vec_table(pg_conn, 4)  # another model: its vectors cannot be compared, so they go
    assert pg_conn.execute("SELECT count(*) FROM memory_index_chunks_vec").fetchone() == (0,)
    pg_conn.rollback()
    with pytest.raises(ClawmemError, match="2,000 dimensions"):
        ensure_vec_table(pg_conn, 4096)


def test_a_deleted_chunk_takes_its_vector_with_it(pg_conn: Any) -> None:
    ensure_vec_table(pg_conn, 3)
    _chunk(pg_conn, "a", "x")
    pg_conn.execute("INSERT INTO memory_index_chunks_vec VALUES ('a', '[1,0,0]')")
    pg_conn.execute("DELETE FROM memory_index_chunks WHERE id = 'a'")
    pg_conn.commit()
    assert pg_conn.execute("SELECT count(*) FROM memory_index_chunks_vec").fetchone() == (0,)


def test_simple_full_text_finds_clawmem_tokens(pg_conn: Any) -> None:
    """The 'simple' configuration keeps every token as given: the CJK bigrams clawmem makes are
    found as they are (the bundled server has no pg_trgm)."""
    _chunk(pg_conn, "zh", "杭州 州西 西湖")
    _chunk(pg_conn, "en", "window seats on trains")
    pg_conn.commit()
    hits = pg_conn.execute(
        "SELECT id FROM memory_index_chunks WHERE terms @@ to_tsquery('simple', %s)", ("杭州",)
    ).fetchall()
    assert hits == [("zh",)]


def test_two_machines_writing_one_file_wait_for_each_other(pg_url: str, pg_schema: str) -> None:
    first, second = connect(pg_url), connect(pg_url)
    try:
        with locks.file_lock(first, pg_schema, "MEMORY.md"):
            with (
                pytest.raises(locks.FileLockTimeout) as exc,
                locks.file_lock(second, pg_schema, "MEMORY.md", timeout=0.2),
            ):
                pytest.fail("the second writer got the lock the first holds")
            assert "\n" not in str(exc.value) and "nothing was written" in str(exc.value)
            with locks.file_lock(second, pg_schema, "memory/2026-11-05.md", timeout=0.2):
                pass  # another file: no wait
        got = threading.Event()

        def wait_then_take() -> None:
            with locks.file_lock(second, pg_schema, "MEMORY.md", timeout=10):
                got.set()

        with locks.file_lock(first, pg_schema, "MEMORY.md"):
            waiter = threading.Thread(target=wait_then_take)
            waiter.start()
            time.sleep(0.3)
            assert not got.is_set()  # still held
        waiter.join(10)
        assert got.is_set()  # released at the first one's commit
    finally:
        first.close()
        second.close()


def test_a_writer_that_dies_releases_its_lock(pg_url: str, pg_schema: str) -> None:
    holder, other = connect(pg_url), connect(pg_url)
    try:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (locks.lock_key(pg_schema, "MEMORY.md"),))
        holder.close()  # the connection drops as it would with a killed process
        with locks.file_lock(other, pg_schema, "MEMORY.md", timeout=2):
            pass
    finally:
        other.close()


def test_lock_keys_are_per_index_and_per_file() -> None:
    keys = {locks.lock_key(s, p) for s in ("a", "b") for p in ("MEMORY.md", "USER.md")}
    assert len(keys) == 4 and all(-(2**63) <= k < 2**63 for k in keys)
