"""Publishing this machine's index to the shared PostgreSQL one (``store.url``), and taking the
vectors another machine already made.

Each machine that has the workspace keeps building its index where the files are, in its own
SQLite, with everything that makes that fast and safe (incremental sync by file hash, the shadow
rebuild, the embedding cache, line reuse). After each sync and each embedding pass, the files
whose hash differs between the two indexes are copied to PostgreSQL, with their chunks, origins,
recall metadata, vectors and line vectors, and the files gone from this index are removed there
(a pass publishes once more between its chunk vectors and its line vectors, and the lines a search
asked for as soon as they are stored: ``publish_lines``, engine/index/line_requests.py):

- **one transaction** under the shared index's state row (engine/store/postgres/index_rows.py):
  writers on several machines take turns, a search never sees half a publish, and a killed
  publish is rolled back by the server, so the previous index keeps answering;
- **the first publish** of an empty shared index copies every vector into a new table and builds
  its HNSW index once (far faster than growing it row by row), as a rebuild does;
- **nothing is embedded twice:** before its embedding pass, a machine takes from PostgreSQL the
  vectors of chunks it has not embedded yet whose text another machine embedded with the same
  model, from the published chunks or the shared embedding cache (``seed_vectors``), and each
  publish adds the vectors it made to that cache (``push_cache``).

One schema is one workspace's index: two machines publishing different workspaces to one schema
would each remove the other's files (``store.schema`` names another).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import apsw
import numpy as np
from clawmem.engine.store import index_rows as local_rows
from clawmem.engine.store import line_vector_rows
from clawmem.engine.store.db import immediate
from clawmem.engine.store.postgres import index_rows as pg_rows
from clawmem.engine.store.postgres import vector_rows
from clawmem.engine.store.postgres.schema import ensure_vec_table, vector_dims

IN_BATCH = 500  # ids per IN (…) on the SQLite side
SEED_BATCH = 5_000  # text hashes per ANY(…) asked of PostgreSQL
LINES_LOCK_S = 2.0  # how long asked lines wait for another machine's publish (publish_lines)


@dataclass(frozen=True)
class FileRows:
    """One file of the local index as the shared index stores it."""

    source: pg_rows.SourceRow
    chunks: list[pg_rows.ChunkRow]
    provenance: list[tuple[str, str, str, int, str | None]]  # chunk id, origin, session kind, observed, supersedes
    metadata: list[tuple[str, int | None, str | None, str | None]]  # chunk id, importance, triggers, project
    vectors: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class PublishStats:
    replaced_files: int
    removed_files: int
    vectors: int  # chunk vectors written (of replaced files and of chunks embedded since)
    lines: int  # chunk texts whose line vectors were written
    full: bool  # the whole index was copied (the shared one was empty)
    revision: int  # the shared index's revision now
    seeded: int = 0  # chunks that took their vector from the shared index first (not embedded here)

    def then(self, later: PublishStats) -> PublishStats:
        """This publish and a later one as one (a sync's text phase, then its embedding pass)."""
        return PublishStats(
            self.replaced_files + later.replaced_files,
            self.removed_files + later.removed_files,
            self.vectors + later.vectors,
            self.lines + later.lines,
            self.full or later.full,
            later.revision,
            self.seeded + later.seeded,
        )


def _local_sources(local: apsw.Connection) -> dict[tuple[str, str], pg_rows.SourceRow]:
    return {
        (r[0], r[1]): pg_rows.SourceRow(r[0], r[1], r[2], float(r[3]), int(r[4]))
        for r in local.execute("SELECT path, source, hash, mtime, size FROM memory_index_sources")
    }


def _shared_sources(pg: Any) -> dict[tuple[str, str], str]:
    return {
        (str(r[0]), str(r[1])): str(r[2]) for r in pg.execute("SELECT path, source, hash FROM memory_index_sources")
    }


MANY_VECTORS = 1_000  # more new vectors than this (and a quarter of the chunks): the table is rebuilt


def _many_waiting(pg: Any, local: apsw.Connection, dims: int | None) -> bool:
    """Whether so many shared chunks wait for a vector this machine has that building the HNSW
    index anew beats inserting into it row by row (the first publish after a text-only one)."""
    if dims is None:
        return False
    waiting, total = pg.execute(
        "SELECT count(*) FILTER (WHERE NOT embedded), count(*) FROM memory_index_chunks"
    ).fetchone()
    if waiting <= MANY_VECTORS or waiting * 4 < total:
        return False
    (embedded,) = next(iter(local.execute("SELECT count(*) FROM memory_index_chunks WHERE embedding IS NOT NULL")))
    return int(embedded) - (int(total) - int(waiting)) > MANY_VECTORS


def _identity(pg: Any) -> str | None:
    row = pg.execute("SELECT value FROM memory_index_meta WHERE key = 'identity'").fetchone()
    return str(row[0]) if row else None


def _file_rows(local: apsw.Connection, source: pg_rows.SourceRow) -> FileRows:
    chunks: list[pg_rows.ChunkRow] = []
    provenance: list[tuple[str, str, str, int, str | None]] = []
    metadata: list[tuple[str, int | None, str | None, str | None]] = []
    vectors: dict[str, np.ndarray] = {}
    for r in local.execute(
        "SELECT c.id, c.start_line, c.end_line, c.hash, c.model, c.text, c.updated_at, c.embedding, "
        "p.origin_class, p.session_kind, p.observed_at, p.supersedes_key, m.chunk_id, m.importance, m.triggers, "
        "m.project_key FROM memory_index_chunks c LEFT JOIN memory_index_chunk_provenance p ON p.chunk_id = c.id "
        "LEFT JOIN memory_index_chunk_recall_metadata m ON m.chunk_id = c.id WHERE c.path = ? AND c.source = ? "
        "ORDER BY c.start_line, c.id",
        (source.path, source.source),
    ):
        cid = r[0]
        chunks.append(
            pg_rows.ChunkRow(cid, source.path, source.source, int(r[1]), int(r[2]), r[3], r[4], r[5], float(r[6]))
        )
        if r[7] is not None:
            vectors[cid] = local_rows.blob_to_vec(bytes(r[7]))
        if r[8] is not None:
            provenance.append((cid, r[8], r[9], int(r[10]), r[11]))
        if r[12] is not None:
            metadata.append((cid, r[13], r[14], r[15]))
    return FileRows(source, chunks, provenance, metadata, vectors)


def _local_vectors(local: apsw.Connection, ids: Sequence[str]) -> dict[str, tuple[np.ndarray, str]]:
    """Chunk id -> (its vector, the model that made it) of the given chunks that have one here."""
    out: dict[str, tuple[np.ndarray, str]] = {}
    for start in range(0, len(ids), IN_BATCH):
        batch = list(ids[start : start + IN_BATCH])
        marks = ", ".join("?" for _ in batch)
        for cid, blob, model in local.execute(
            f"SELECT id, embedding, model FROM memory_index_chunks WHERE id IN ({marks}) AND embedding IS NOT NULL",
            batch,
        ):
            out[cid] = (local_rows.blob_to_vec(bytes(blob)), model)
    return out


def _local_line_hashes(local: apsw.Connection, provider_key: str) -> set[str]:
    return {
        str(r[0])
        for r in local.execute("SELECT hash FROM memory_index_line_vectors WHERE provider_key = ?", (provider_key,))
    }


def _write_extras(pg: Any, files: Sequence[FileRows]) -> None:
    """The origins and recall metadata of the chunks of ``files`` (already inserted)."""
    with pg.cursor() as cur:
        cur.executemany(
            "INSERT INTO memory_index_chunk_provenance (chunk_id, origin_class, session_kind, observed_at, "
            "supersedes_key) VALUES (%s, %s, %s, %s, %s)",
            [p for f in files for p in f.provenance],
        )
        cur.executemany(
            "INSERT INTO memory_index_chunk_recall_metadata (chunk_id, importance, triggers, project_key) "
            "VALUES (%s, %s, %s, %s)",
            [m for f in files for m in f.metadata],
        )


def _write_lines(pg: Any, local: apsw.Connection, provider_key: str | None) -> int:
    """The line vectors the shared index lacks, copied in batches (a large index's are gigabytes:
    never all in memory), then a sweep of those no chunk holds."""
    if provider_key is None:
        return 0
    have = {
        str(r[0])
        for r in pg.execute("SELECT hash FROM memory_index_line_vectors WHERE provider_key = %s", (provider_key,))
    }
    held = {str(r[0]) for r in pg.execute("SELECT DISTINCT hash FROM memory_index_chunks")}
    new = sorted((_local_line_hashes(local, provider_key) & held) - have)
    with pg.cursor() as cur:
        for start in range(0, len(new), IN_BATCH):
            batch = new[start : start + IN_BATCH]
            marks = ", ".join("?" for _ in batch)
            cur.executemany(
                "INSERT INTO memory_index_line_vectors (hash, provider_key, vectors, line_keys) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (hash, provider_key) "
                "DO UPDATE SET vectors = excluded.vectors, line_keys = excluded.line_keys",
                [
                    (h, provider_key, bytes(blob), bytes(keys))
                    for h, blob, keys in local.execute(
                        "SELECT hash, vectors, line_keys FROM memory_index_line_vectors "
                        f"WHERE provider_key = ? AND hash IN ({marks})",
                        (provider_key, *batch),
                    )
                ],
            )
    pg.execute(
        "DELETE FROM memory_index_line_vectors l WHERE provider_key != %s "
        "OR NOT EXISTS (SELECT 1 FROM memory_index_chunks c WHERE c.hash = l.hash)",
        (provider_key,),
    )
    return len(new)


def publish_lines(local: apsw.Connection, pg: Any, hashes: Sequence[str], provider_key: str) -> int:
    """The line vectors of these chunk texts, copied now rather than at the pass's end: a search
    asked for them (engine/index/line_requests.py), and a search reads the shared index. Only
    texts the shared index holds; one short transaction under its state row, so a publish on
    another machine is never interleaved. That row is waited for LINES_LOCK_S at most (another
    machine's full publish can hold it for minutes, and the line pass must not stall on it): then
    nothing is written, and the publish at the pass's end carries them. How many texts were written."""
    import psycopg  # only a shared index gets here (clawmem[postgres])

    wanted = sorted(set(hashes))
    if not wanted:
        return 0
    marks = ", ".join("?" for _ in wanted)
    rows = [
        (str(h), bytes(blob), bytes(keys))
        for h, blob, keys in local.execute(
            "SELECT hash, vectors, line_keys FROM memory_index_line_vectors "
            f"WHERE provider_key = ? AND hash IN ({marks})",
            (provider_key, *wanted),
        )
    ]
    try:
        pg.execute(f"SET LOCAL lock_timeout = '{int(LINES_LOCK_S * 1000)}ms'")
        pg_rows.take_state(pg)
        held = {
            str(r[0])
            for r in pg.execute(
                "SELECT DISTINCT hash FROM memory_index_chunks WHERE hash = ANY(%s)", ([h for h, _, _ in rows],)
            )
        }
        rows = [r for r in rows if r[0] in held]
        vector_rows.store_lines(pg, provider_key, rows)  # commits
    except psycopg.errors.LockNotAvailable:
        pg.rollback()
        return 0
    except BaseException:
        pg.rollback()
        raise
    return len(rows)


def publish_changes(
    local: apsw.Connection,
    pg: Any,
    *,
    provider_key: str | None,
    dims: int | None,
    identity: str | None,
    full: bool = False,
    progress: Callable[[int], None] | None = None,
) -> PublishStats:
    """Bring the shared index to this machine's: the files whose hash differs, the files gone,
    the vectors and line vectors made since, and the index's identity (JSON, for ``status``).
    ``provider_key``/``dims``: the embedder's (None: keyword-only, no vectors are copied).
    Everything is copied anew when the shared index is empty, when ``full`` (this index was
    rebuilt: chunk ids change though file hashes do not), or when the identities differ
    (another model or chunking published last)."""
    if dims is not None:
        ensure_vec_table(pg, dims)  # commits: before the publish's own transaction
    mine = _local_sources(local)
    try:
        pg_rows.take_state(pg)
        shared = _shared_sources(pg)
        if mine and (full or not shared or _identity(pg) != identity or _many_waiting(pg, local, dims)):
            return _publish_all(local, pg, mine, provider_key, identity, progress)
        changed = [src for key, src in sorted(mine.items()) if shared.get(key) != src.hash]
        removed = sorted(set(shared) - set(mine))
        for path, source in removed:
            pg.execute("DELETE FROM memory_index_chunks WHERE path = %s AND source = %s", (path, source))
            pg.execute("DELETE FROM memory_index_sources WHERE path = %s AND source = %s", (path, source))
        files = [_file_rows(local, src) for src in changed]
        vectors = 0
        for f in files:
            pg.execute(
                "DELETE FROM memory_index_chunks WHERE path = %s AND source = %s", (f.source.path, f.source.source)
            )
            pg_rows.upsert_source(pg, f.source)
        pg_rows.insert_chunks(pg, [c for f in files for c in f.chunks], progress)
        _write_extras(pg, files)
        if dims is not None:
            fresh = {cid: v for f in files for cid, v in f.vectors.items()}
            waiting = [str(r[0]) for r in pg.execute("SELECT id FROM memory_index_chunks WHERE NOT embedded")]
            since = _local_vectors(local, [cid for cid in waiting if cid not in fresh])
            fresh.update({cid: v for cid, (v, _) in since.items()})
            pg_rows.insert_vectors(pg, fresh)
            with pg.cursor() as cur:  # a chunk published before its vector was published as keyword-only
                cur.executemany(
                    "UPDATE memory_index_chunks SET model = %s WHERE id = %s",
                    [(model, cid) for cid, (_, model) in since.items()],
                )
            vectors = len(fresh)
        n_lines = _write_lines(pg, local, provider_key)
        if identity is not None:
            pg_rows.set_meta(pg, "identity", identity)
        if files or removed:
            pg_rows.bump(pg)
        elif vectors:
            pg_rows.count_vectors(pg)
        (rev,) = pg.execute("SELECT revision FROM memory_index_state WHERE id = 1").fetchone()
    except BaseException:
        pg.rollback()
        raise
    pg.commit()
    if files or removed:
        vacuum(pg)
    return PublishStats(len(files), len(removed), vectors, n_lines, False, int(rev))


def _publish_all(
    local: apsw.Connection,
    pg: Any,
    mine: dict[tuple[str, str], pg_rows.SourceRow],
    provider_key: str | None,
    identity: str | None,
    progress: Callable[[int], None] | None,
) -> PublishStats:
    """Every file anew (the first publish, a rebuild, another identity), in the transaction the
    caller opened and holds the state row in; committed here."""
    files = [_file_rows(local, src) for _, src in sorted(mine.items())]
    vectors = {cid: v for f in files for cid, v in f.vectors.items()}
    pg_rows.fill(
        pg,
        [f.source for f in files],
        [c for f in files for c in f.chunks],
        vectors,
        progress=progress,
    )
    _write_extras(pg, files)
    n_lines = _write_lines(pg, local, provider_key)
    if identity is not None:
        pg_rows.set_meta(pg, "identity", identity)
    pg_rows.bump(pg)
    (rev,) = pg.execute("SELECT revision FROM memory_index_state WHERE id = 1").fetchone()
    pg.commit()
    vacuum(pg)
    return PublishStats(len(files), 0, len(vectors), n_lines, True, int(rev))


def vacuum(pg: Any) -> None:
    """Vacuum and analyze the chunks after a publish changed them (outside any transaction, as
    VACUUM must be), rather than wait for autovacuum: the planner, which picks between the GIN
    index and a walk of the table by how many chunks a term matches, then knows the new rows and
    terms at the first search, and the deleted rows' space is reused. Only the changed pages are
    read again; a machine that does not own the table (it did not create it) is skipped by the
    server with a notice."""
    pg.autocommit = True
    try:
        pg.execute("VACUUM (ANALYZE) memory_index_chunks")
    finally:
        pg.autocommit = False


class Embedder(Protocol):
    """What a vector is keyed by (engine/index/sync.py ``EmbedderIdentity``)."""

    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def provider_key(self) -> str: ...
    @property
    def dims(self) -> int: ...


def seed_vectors(
    local: apsw.Connection, pg: Any, embedder: Embedder, *, lines: bool, vec: bool, now: float
) -> tuple[int, int]:
    """Give this machine's chunks that have no vector yet the vector of the same text (hash)
    and model in the shared index, or else in the shared embedding cache (texts another machine
    embedded that no published chunk holds now: an older or newer version of a file), then, with
    ``lines``, the texts without line vectors the shared index's line vectors of the same text
    and provider key: (chunks given a vector, texts given their lines). ``vec``: whether the
    local index keeps a sqlite-vec table too (``set_chunk_embedding``); ``now`` touches the
    shared cache's hits, so its LRU keeps them."""
    pending = sorted(
        {str(r[0]) for r in local.execute("SELECT DISTINCT hash FROM memory_index_chunks WHERE embedding IS NULL")}
    )
    found: dict[str, bytes] = {}
    try:
        if pending and vector_dims(pg) is not None:
            with pg.cursor(binary=True) as cur:
                for start in range(0, len(pending), SEED_BATCH):
                    cur.execute(
                        "SELECT DISTINCT ON (c.hash) c.hash, v.embedding FROM memory_index_chunks c "
                        "JOIN memory_index_chunks_vec v ON v.id = c.id WHERE c.model = %s AND c.hash = ANY(%s) "
                        "ORDER BY c.hash, c.id",
                        (embedder.model, pending[start : start + SEED_BATCH]),
                    )
                    for h, binary in cur.fetchall():
                        found[str(h)] = pg_rows.vector_blob(bytes(binary))
        rest = [h for h in pending if h not in found]
        for start in range(0, len(rest), SEED_BATCH):
            found.update(
                vector_rows.cache_lookup(
                    pg, embedder.provider, embedder.model, embedder.provider_key, rest[start : start + SEED_BATCH], now
                )
            )
    finally:
        pg.rollback()
    given = 0
    with immediate(local):
        for h, blob in found.items():
            given += len(local_rows.set_chunk_embedding(local, h, blob, embedder.model, vec))
    return given, _seed_lines(local, pg, embedder.model, embedder.provider_key) if lines else 0


PUSHED_KEY = "shared_cache_pushed:"  # + the shared index's key: the last local cache rowid pushed


def push_cache(local: apsw.Connection, pg: Any, index_key: str, cap: int, now: float) -> int:
    """Copy the embedding cache rows made here since the last push into the shared cache
    (committed), then keep the shared cache to ``cap`` rows; how many were copied. The local
    rowid is the watermark (kept in the local index's meta: a reset pushes everything again,
    which changes nothing)."""
    after = int(local_rows.get_meta(local, PUSHED_KEY + index_key) or 0)
    pushed = 0
    while True:
        rows = list(
            local.execute(
                "SELECT rowid, provider, model, provider_key, hash, embedding, dims FROM memory_embedding_cache "
                "WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (after, SEED_BATCH),
            )
        )
        if not rows:
            break
        by_key: dict[tuple[str, str, str, int], dict[str, bytes]] = {}
        for _rowid, provider, model, provider_key, h, blob, dims in rows:
            by_key.setdefault((provider, model, provider_key, int(dims)), {})[h] = bytes(blob)
        for (provider, model, provider_key, dims), vectors in by_key.items():
            vector_rows.cache_store(pg, provider, model, provider_key, vectors, dims, now)
        after = int(rows[-1][0])
        pushed += len(rows)
        with immediate(local):
            local_rows.set_meta(local, PUSHED_KEY + index_key, str(after))
    if pushed:
        vector_rows.cache_evict(pg, cap)
    return pushed


def _seed_lines(local: apsw.Connection, pg: Any, model: str, provider_key: str) -> int:
    waiting = [t.hash for t in line_vector_rows.pending(local, model, provider_key)]
    rows: list[tuple[str, bytes, bytes]] = []
    try:
        for start in range(0, len(waiting), SEED_BATCH):
            rows += [
                (str(h), bytes(blob), bytes(keys))
                for h, blob, keys in pg.execute(
                    "SELECT hash, vectors, line_keys FROM memory_index_line_vectors "
                    "WHERE provider_key = %s AND hash = ANY(%s)",
                    (provider_key, waiting[start : start + SEED_BATCH]),
                ).fetchall()
            ]
    finally:
        pg.rollback()
    with immediate(local):
        for h, blob, keys in rows:
            line_vector_rows.store(local, h, provider_key, blob, keys)
    return len(rows)
