"""SQL of the shadow rebuild: the temp database, seeding its cache, publishing it atomically."""

from __future__ import annotations

from pathlib import Path

import apsw
from clawmem.engine.errors import ClawmemError
from clawmem.engine.store import cjk_index, word_index
from clawmem.engine.store import index_rows as rows
from clawmem.engine.store.db import open_connection
from clawmem.engine.store.schema import ensure_chunks_fts, ensure_schema, ensure_vec_table, fts_tokenizer_in_use


class RebuildRaced(ClawmemError):
    """The live index changed while the shadow was built; nothing was replaced."""


def open_shadow(path: Path, *, tokenizer: str, dims: int | None) -> tuple[apsw.Connection, str | None]:
    """A scratch database with the derived tables (no WAL: it is thrown away or published)."""
    temp, vec_error = open_connection(path, load_vec=dims is not None)
    temp.execute("PRAGMA journal_mode=DELETE")
    temp.execute("PRAGMA synchronous=OFF")
    ensure_schema(temp, components=["index"])
    ensure_chunks_fts(temp, tokenizer)
    if dims is not None and vec_error is None:
        ensure_vec_table(temp, dims)
    return temp, vec_error


def seed_cache(temp: apsw.Connection, live_path: Path) -> None:
    if not live_path.exists():
        return
    temp.execute("ATTACH DATABASE ? AS live", (str(live_path),))
    try:
        if rows.table_exists(temp, "memory_embedding_cache", "live"):
            with temp:
                temp.execute(
                    "INSERT OR IGNORE INTO main.memory_embedding_cache SELECT provider, model, provider_key, "
                    "hash, embedding, dims, updated_at FROM live.memory_embedding_cache"
                )
    finally:
        temp.execute("DETACH DATABASE live")


# rowid is copied too: the FTS row of a chunk shares the chunk's rowid (see index_rows).
_CHUNK_COLS = (
    "rowid",
    "id",
    "path",
    "source",
    "start_line",
    "end_line",
    "hash",
    "model",
    "text",
    "embedding",
    "updated_at",
)
_FTS_COLS = ("rowid", "text", "id", "path", "source", "model", "start_line", "end_line")


def publish(live: apsw.Connection, temp_path: Path, expected_revision: int, tokenizer: str, dims: int | None) -> None:
    live.execute("ATTACH DATABASE ? AS shadow", (str(temp_path),))
    try:
        live.execute("BEGIN IMMEDIATE")
        try:
            if rows.revision(live) != expected_revision:
                raise RebuildRaced(
                    "the index changed while it was being rebuilt; the previous index is unchanged — run it again"
                )
            live.execute("DELETE FROM main.memory_index_chunk_provenance")
            live.execute("DELETE FROM main.memory_index_chunk_recall_metadata")
            if rows.table_exists(live, "memory_index_chunks_vec"):
                live.execute("DROP TABLE main.memory_index_chunks_vec")
            if fts_tokenizer_in_use(live) not in (None, tokenizer):
                live.execute("DROP TABLE main.memory_index_chunks_fts")
            ensure_chunks_fts(live, tokenizer)
            live.execute("DELETE FROM main.memory_index_chunks_fts")
            live.execute("DELETE FROM main.memory_index_chunks")
            live.execute("DELETE FROM main.memory_index_sources")
            live.execute("DELETE FROM main.memory_index_meta")
            live.execute("DELETE FROM main.memory_index_skipped")
            rows.copy_rows(live, "memory_index_sources", ("id", "path", "source", "hash", "mtime", "size"))
            rows.copy_rows(live, "memory_index_chunks", _CHUNK_COLS)
            rows.copy_rows(
                live,
                "memory_index_chunk_provenance",
                ("chunk_id", "origin_class", "session_kind", "observed_at", "supersedes_key"),
            )
            rows.copy_rows(
                live, "memory_index_chunk_recall_metadata", ("chunk_id", "importance", "triggers", "project_key")
            )
            rows.copy_rows(live, "memory_index_chunks_fts", _FTS_COLS)
            cjk_index.rebuild_from_fts(live)
            word_index.rebuild_from_fts(live)
            rows.copy_rows(live, "memory_index_meta", ("key", "value"))
            rows.copy_rows(live, "memory_index_skipped", ("path", "reason", "size", "seen_at"))
            live.execute(
                "INSERT OR IGNORE INTO main.memory_embedding_cache SELECT provider, model, provider_key, hash, "
                "embedding, dims, updated_at FROM shadow.memory_embedding_cache"
            )
            if dims is not None:
                ensure_vec_table(live, dims)
                live.execute(
                    "INSERT INTO main.memory_index_chunks_vec (id, embedding) "
                    "SELECT id, embedding FROM shadow.memory_index_chunks WHERE embedding IS NOT NULL"
                )
        except BaseException:
            live.execute("ROLLBACK")
            raise
        live.execute("COMMIT")
    finally:
        live.execute("DETACH DATABASE shadow")
