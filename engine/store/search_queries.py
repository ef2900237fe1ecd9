"""SQL behind the search legs (keyword FTS, path FTS, vectors) and chunk metadata reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import apsw

from engine.store.schema import vec_table_dims

FTS = "memory_index_chunks_fts"


@dataclass(frozen=True)
class BodyRow:
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    rank: float | None  # bm25 rank (None for substring-only rows)


def escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _source_clause(sources: Sequence[str], column: str = "source") -> tuple[str, list[str]]:
    if not sources:
        return "", []
    return f" AND {column} IN ({', '.join('?' for _ in sources)})", list(sources)


def body_match(
    conn: apsw.Connection,
    match: str | None,
    substrings: Sequence[str],
    sources: Sequence[str],
    limit: int,
) -> list[BodyRow]:
    """FTS5 MATCH (bm25 ranked) plus AND-ed substring filters; substring-only when no MATCH."""
    like = "".join(" AND text LIKE ? ESCAPE '\\'" for _ in substrings)
    like_params = [f"%{escape_like(t)}%" for t in substrings]
    src, src_params = _source_clause(sources)
    if match:
        sql = (
            f"SELECT id, path, source, start_line, end_line, text, bm25({FTS}) AS rank FROM {FTS} "
            f"WHERE {FTS} MATCH ?{like}{src} ORDER BY rank ASC LIMIT ?"
        )
        params: list[object] = [match, *like_params, *src_params, limit]
        return [BodyRow(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], float(r[6])) for r in conn.execute(sql, params)]
    sql = (
        f"SELECT id, path, source, start_line, end_line, text FROM {FTS} "
        f"WHERE 1 = 1{like}{src} ORDER BY path, CAST(start_line AS INTEGER) LIMIT ?"
    )
    return [
        BodyRow(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], None)
        for r in conn.execute(sql, [*like_params, *src_params, limit])
    ]


@dataclass(frozen=True)
class PathRow:
    path: str
    source: str
    rank: float | None


def all_indexed_paths(conn: apsw.Connection, sources: Sequence[str]) -> list[tuple[str, str]]:
    src, params = _source_clause(sources)
    return [
        (r[0], r[1])
        for r in conn.execute(f"SELECT path, source FROM memory_index_sources WHERE 1 = 1{src} ORDER BY path", params)
    ]


def path_match(conn: apsw.Connection, match: str, sources: Sequence[str], limit: int) -> list[PathRow]:
    src, params = _source_clause(sources)
    sql = (
        "SELECT path, source, bm25(memory_index_paths_fts) AS rank FROM memory_index_paths_fts "
        f"WHERE memory_index_paths_fts MATCH ?{src} ORDER BY rank ASC, path ASC LIMIT ?"
    )
    return [PathRow(*r) for r in conn.execute(sql, [match, *params, limit])]


def first_chunk(conn: apsw.Connection, path: str, source: str) -> BodyRow | None:
    row = next(
        iter(
            conn.execute(
                "SELECT id, path, source, start_line, end_line, text FROM memory_index_chunks "
                "WHERE path = ? AND source = ? ORDER BY start_line, end_line, id LIMIT 1",
                (path, source),
            )
        ),
        None,
    )
    return BodyRow(row[0], row[1], row[2], int(row[3]), int(row[4]), row[5], None) if row else None


@dataclass(frozen=True)
class VectorRow:
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    distance: float


def knn(conn: apsw.Connection, blob: bytes, k: int, model: str, sources: Sequence[str], limit: int) -> list[VectorRow]:
    """sqlite-vec KNN (cosine distance), restricted to chunks embedded by ``model``."""
    if vec_table_dims(conn) is None:
        return []
    src, params = _source_clause(sources, "c.source")
    sql = (
        "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, v.distance "
        "FROM (SELECT id, distance FROM memory_index_chunks_vec WHERE embedding MATCH ? AND k = ?) v "
        f"JOIN memory_index_chunks c ON c.id = v.id WHERE c.model = ?{src} ORDER BY v.distance ASC LIMIT ?"
    )
    return [VectorRow(*r) for r in conn.execute(sql, [blob, k, model, *params, limit])]


def vector_count(conn: apsw.Connection) -> int:
    """Chunks with a vector, counted through indexes (never reads the vectors themselves)."""
    total = int(next(iter(conn.execute("SELECT COUNT(*) FROM memory_index_chunks")))[0])
    return total - int(next(iter(conn.execute("SELECT COUNT(*) FROM memory_index_chunks WHERE embedding IS NULL")))[0])


def embedding_pages(
    conn: apsw.Connection, model: str, sources: Sequence[str], after_rowid: int, size: int
) -> list[tuple[int, str, bytes]]:
    """(rowid, id, blob) pages for the built-in cosine scan when sqlite-vec is unavailable."""
    src, params = _source_clause(sources)
    return [
        (r[0], r[1], bytes(r[2]))
        for r in conn.execute(
            "SELECT rowid, id, embedding FROM memory_index_chunks WHERE embedding IS NOT NULL AND model = ? "
            f"AND rowid > ?{src} ORDER BY rowid LIMIT ?",
            [model, after_rowid, *params, size],
        )
    ]


def embeddings_for(conn: apsw.Connection, ids: Sequence[str], model: str) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for start in range(0, len(ids), 500):
        batch = list(ids[start : start + 500])
        marks = ", ".join("?" for _ in batch)
        for r in conn.execute(
            f"SELECT id, embedding FROM memory_index_chunks WHERE id IN ({marks}) "
            "AND embedding IS NOT NULL AND model = ?",
            [*batch, model],
        ):
            out[r[0]] = bytes(r[1])
    return out


def background_sample(conn: apsw.Connection, model: str, size: int) -> list[tuple[bytes, str]]:
    """A deterministic spread of stored (vector, text) pairs; ids are hashes, so id order is mixed."""
    return [(bytes(r[0]), r[1]) for r in conn.execute(
        "SELECT embedding, text FROM memory_index_chunks WHERE embedding IS NOT NULL AND model = ? "
        "ORDER BY id LIMIT ?",
        (model, size),
    )]


@dataclass(frozen=True)
class ChunkMeta:
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    origin_class: str
    session_kind: str
    observed_at: int | None
    supersedes_key: str | None
    importance: int | None
    triggers: str | None
    project_key: str | None
    has_vector: bool


def chunk_meta(conn: apsw.Connection, ids: Sequence[str]) -> dict[str, ChunkMeta]:
    out: dict[str, ChunkMeta] = {}
    for start in range(0, len(ids), 500):
        batch = list(ids[start : start + 500])
        marks = ", ".join("?" for _ in batch)
        for r in conn.execute(
            "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, "
            "COALESCE(p.origin_class, 'untrusted'), COALESCE(p.session_kind, 'unknown'), p.observed_at, "
            "p.supersedes_key, m.importance, m.triggers, m.project_key, c.embedding IS NOT NULL "
            "FROM memory_index_chunks c "
            "LEFT JOIN memory_index_chunk_provenance p ON p.chunk_id = c.id "
            f"LEFT JOIN memory_index_chunk_recall_metadata m ON m.chunk_id = c.id WHERE c.id IN ({marks})",
            batch,
        ):
            out[r[0]] = ChunkMeta(
                r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], bool(r[13])
            )
    return out


def chunk_count(conn: apsw.Connection) -> int:
    return int(next(iter(conn.execute("SELECT COUNT(*) FROM memory_index_chunks")))[0])


def origins_by_line(conn: apsw.Connection, path: str) -> list[tuple[tuple[int, int], str]]:
    """((start, end), origin class) of every indexed chunk of a file."""
    return [
        ((int(r[0]), int(r[1])), r[2])
        for r in conn.execute(
            "SELECT c.start_line, c.end_line, p.origin_class FROM memory_index_chunks c "
            "JOIN memory_index_chunk_provenance p ON p.chunk_id = c.id WHERE c.path = ? ORDER BY c.start_line",
            (path,),
        )
    ]


def first_chunks(conn: apsw.Connection, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], BodyRow]:
    """The first chunk (lowest start line) of each (path, source), in one query per 400 paths."""
    out: dict[tuple[str, str], BodyRow] = {}
    wanted = list(dict.fromkeys(pairs))
    for start in range(0, len(wanted), 400):
        batch = wanted[start : start + 400]
        marks = ", ".join("(?, ?)" for _ in batch)
        params = [x for pair in batch for x in pair]
        for r in conn.execute(
            f"WITH wanted (path, source) AS (VALUES {marks}) "
            "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text FROM wanted w "
            "JOIN memory_index_chunks c ON c.id = (SELECT f.id FROM memory_index_chunks f "
            "WHERE f.path = w.path AND f.source = w.source ORDER BY f.start_line, f.end_line, f.id LIMIT 1)",
            params,
        ):
            out[(r[1], r[2])] = BodyRow(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], None)
    return out


def index_revision(conn: apsw.Connection) -> int:
    """The derived index's change counter (bumped by every source or chunk insert/delete)."""
    row = next(iter(conn.execute("SELECT revision FROM memory_index_state WHERE id = 1")), None)
    return int(row[0]) if row else 0


def source_count(conn: apsw.Connection, sources: Sequence[str]) -> int:
    src, params = _source_clause(sources)
    return int(next(iter(conn.execute(f"SELECT COUNT(*) FROM memory_index_sources WHERE 1 = 1{src}", params)))[0])


def has_filtered_vectors(conn: apsw.Connection, model: str, sources: Sequence[str]) -> bool:
    """Whether some stored vector belongs to another model or source (a KNN filter would drop it)."""
    if sources:
        marks = ", ".join("?" for _ in sources)
        sql = (
            "SELECT EXISTS (SELECT 1 FROM memory_index_chunks WHERE embedding IS NOT NULL "
            f"AND (model != ? OR source NOT IN ({marks})))"
        )
        params: list[object] = [model, *sources]
    else:
        sql = "SELECT EXISTS (SELECT 1 FROM memory_index_chunks WHERE embedding IS NOT NULL AND model != ?)"
        params = [model]
    return bool(next(iter(conn.execute(sql, params)))[0])


def document_frequency(conn: apsw.Connection, term: str, tokenizer: str) -> int:
    """How many chunks contain ``term`` (a trigram MATCH when possible, else a LIKE scan)."""
    if tokenizer == "trigram" and len(term) >= 3:
        try:
            row = next(
                iter(
                    conn.execute(
                        f"SELECT COUNT(*) FROM {FTS} WHERE {FTS} MATCH ?", ('"' + term.replace('"', "") + '"',)
                    )
                )
            )
            return int(row[0])
        except apsw.SQLError:
            pass
    row = next(
        iter(conn.execute(f"SELECT COUNT(*) FROM {FTS} WHERE text LIKE ? ESCAPE '\\'", (f"%{escape_like(term)}%",)))
    )
    return int(row[0])
