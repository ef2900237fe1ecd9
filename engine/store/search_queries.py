"""SQL behind the search legs (keyword FTS, path FTS, vectors) and chunk metadata reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import apsw
from clawmem.engine.store import bm25, cjk_index, index_rows, word_index
from clawmem.engine.store.schema import vec_table_dims

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


def _ranked_by_known_counts(
    conn: apsw.Connection,
    match: str,
    filters: str,
    params: Sequence[object],
    limit: int,
    phrase_hits: Sequence[int] | None,
) -> list[tuple[int, float | None]] | None:
    """The best ``limit`` (rowid, rank) of a match of at most ``PYTHON_RANK_ROWS`` rows, ranked
    from the given phrase counts; None when there are more rows (or no counts) — use ``bm25()``.

    Exact counts give ``bm25()``'s own values; estimates (the word index's, for calibrated
    scoring) give BM25 with those IDFs. Either way the first ``PYTHON_RANK_ROWS + 1`` rows decide
    whether the match is small enough.
    """
    if not phrase_hits:
        return None
    cap = bm25.PYTHON_RANK_ROWS
    bounded = min(phrase_hits) <= cap
    if not bounded and len(phrase_hits) == 1 and not filters:
        return None  # a lone phrase matches about its count (exactly, when the count is exact)
    marks = ", ".join("?" for _ in phrase_hits)
    # LIMIT: the counts may be estimates (the word index's), so the bound is checked, not assumed.
    sql = f"SELECT rowid, {bm25.FUNCTION}({FTS}, {marks}) FROM {FTS} WHERE {FTS} MATCH ?{filters} LIMIT ?"
    args: list[object] = [*phrase_hits, match, *params, cap + 1]
    rows = [(int(r[0]), float(r[1])) for r in conn.execute(sql, args)]
    if len(rows) > cap:
        return None
    rows.sort(key=lambda r: (r[1], r[0]))
    return [(rowid, rank) for rowid, rank in rows[:limit]]


def _ranked_through_rarest(
    conn: apsw.Connection,
    phrases: Sequence[str],
    phrase_hits: Sequence[int],
    filters: str,
    params: Sequence[object],
    limit: int,
) -> list[tuple[int, float]] | None:
    """The best ``limit`` (rowid, rank) of the AND of ``phrases``, from one statement over the
    rows of its rarest phrase (:data:`bm25.AND_FUNCTION`: with exact counts, the same ranks as
    ``bm25()`` on the AND; with estimates, BM25 with their IDFs); None when it does not apply
    (a non-ASCII phrase, a rarest phrase in more than ``PYTHON_RANK_ROWS`` rows, a row whose
    folding is unsure) — rank the AND itself then."""
    if len(phrases) < 2 or not all(p.isascii() for p in phrases) or min(phrase_hits) > bm25.PYTHON_RANK_ROWS:
        return None
    rarest = min(range(len(phrases)), key=lambda i: (phrase_hits[i], i))
    pairs: list[object] = [x for p, n in zip(phrases, phrase_hits, strict=True) for x in (p.replace('"', ""), n)]
    marks = ", ".join("?" for _ in pairs)
    single = '"' + phrases[rarest].replace('"', "") + '"'
    sql = f"SELECT rowid, {bm25.AND_FUNCTION}({FTS}, ?, {marks}) FROM {FTS} WHERE {FTS} MATCH ?{filters} LIMIT ?"
    both: list[tuple[int, float]] = []
    cap = bm25.PYTHON_RANK_ROWS
    rows = conn.execute(sql, [rarest, *pairs, single, *params, cap + 1])
    for seen, (rowid, and_rank) in enumerate(rows, 1):
        if and_rank == bm25.UNSURE or seen > cap:  # unsure folding; more rows than estimated
            return None
        if and_rank is not None:
            both.append((int(rowid), float(and_rank)))
    both.sort(key=lambda r: (r[1], r[0]))
    return both[:limit]


def body_match(
    conn: apsw.Connection,
    match: str | None,
    substrings: Sequence[str],
    sources: Sequence[str],
    limit: int,
    phrase_hits: Sequence[int] | None = None,
    *,
    phrases: Sequence[str] = (),
) -> list[BodyRow]:
    """FTS5 MATCH (bm25 ranked) AND-ed with substring terms; substring-only when no MATCH.

    Two steps, so only the rows returned are read from the FTS content: first rowids and ranks
    (a common trigram matches tens of thousands of chunks at 100k), then the columns of the best
    ``limit``. Two-character CJK substrings go through the bigram index; other short terms
    (rare: "UK", "DB") stay ``LIKE`` filters.

    ``phrase_hits`` — how many chunks hold each MATCH phrase, in order — lets a match of a few
    rows be ranked by :mod:`engine.store.bm25` (the same values, without SQLite's per-statement
    IDF scans); more rows than :data:`bm25.PYTHON_RANK_ROWS` go to ``bm25()``. With
    ``phrases`` (the MATCH's phrases, in order) an AND is ranked through its rarest phrase.
    """
    cjk = [t for t in substrings if cjk_index.is_cjk_term(t) and len(t) == 2]
    # Filters on the FTS row: the LIKE terms, then the sources.
    filters = ""
    params: list[object] = []
    for term in (t for t in substrings if t not in cjk):
        filters += f" AND {FTS}.text LIKE ? ESCAPE '\\'"
        params.append(f"%{escape_like(term)}%")
    if sources and _has_other_sources(conn, sources):
        # Reading the source column costs a content lookup per match: only when it can matter.
        src, src_params = _source_clause(sources, f"{FTS}.source")
        filters += src
        params.extend(src_params)
    ranked: list[tuple[int, float | None]]
    if match:
        bigrams: list[object] = []
        if cjk:
            bigram_rows = f"SELECT rowid FROM {cjk_index.TABLE} WHERE {cjk_index.TABLE} MATCH ?"
            filters = f" AND {FTS}.rowid IN ({bigram_rows})" + filters
            bigrams.append(cjk_index.match_expression(cjk))
        args = [*bigrams, *params]
        known: Sequence[tuple[int, float | None]] | None = None
        if phrase_hits and phrases and not substrings:
            known = _ranked_through_rarest(conn, phrases, phrase_hits, filters, args, limit)
        if known is None:
            known = _ranked_by_known_counts(conn, match, filters, args, limit, phrase_hits)
        if known is not None:
            ranked = list(known)
        else:
            sql = f"SELECT rowid, bm25({FTS}) AS rank FROM {FTS} WHERE {FTS} MATCH ?{filters} ORDER BY rank ASC LIMIT ?"
            ranked = [(int(r[0]), float(r[1])) for r in conn.execute(sql, [match, *bigrams, *params, limit])]
    elif cjk:
        # Driven by the bigram index: a ``rowid IN (…)`` filter on the FTS table reads every row.
        cjk_t = cjk_index.TABLE
        join = f" JOIN {FTS} ON {FTS}.rowid = {cjk_t}.rowid" if filters else ""
        sql = f"SELECT {cjk_t}.rowid FROM {cjk_t}{join} WHERE {cjk_t} MATCH ?{filters} ORDER BY {cjk_t}.rowid LIMIT ?"
        ranked = [(int(r[0]), None) for r in conn.execute(sql, [cjk_index.match_expression(cjk), *params, limit])]
    elif filters:
        sql = f"SELECT rowid FROM {FTS} WHERE 1 = 1{filters} ORDER BY rowid LIMIT ?"
        ranked = [(int(r[0]), None) for r in conn.execute(sql, [*params, limit])]
    else:
        return []
    return _rows_of(conn, ranked, limit)


def _rows_of(conn: apsw.Connection, ranked: Sequence[tuple[int, float | None]], limit: int) -> list[BodyRow]:
    """The FTS content of ranked (rowid, rank) pairs, in their order."""
    if not ranked:
        return []
    marks = ", ".join("?" for _ in ranked)
    rows = {
        int(r[0]): r
        for r in conn.execute(
            f"SELECT rowid, id, path, source, start_line, end_line, text FROM {FTS} WHERE rowid IN ({marks})",
            [rowid for rowid, _ in ranked],
        )
    }
    out = []
    for rowid, rank in ranked:
        r = rows.get(rowid)
        if r is not None:
            out.append(BodyRow(r[1], r[2], r[3], int(r[4]), int(r[5]), r[6], rank))
    return out[:limit]


def word_match(conn: apsw.Connection, term: str, sources: Sequence[str], limit: int) -> list[BodyRow]:
    """The best ``limit`` chunks holding one word (:mod:`engine.store.word_index`), by bm25
    over the word index; the text and lines come from the trigram FTS row of the same rowid."""
    words = word_index.TABLE
    src = ""
    params: list[str] = []
    if sources and _has_other_sources(conn, sources):
        src, params = _source_clause(sources, f"{FTS}.source")
        src = f" AND EXISTS (SELECT 1 FROM {FTS} WHERE {FTS}.rowid = {words}.rowid{src})"
    sql = (
        f"SELECT {words}.rowid, bm25({words}) AS rank FROM {words} WHERE {words} MATCH ?{src} ORDER BY rank ASC LIMIT ?"
    )
    ranked = [(int(r[0]), float(r[1])) for r in conn.execute(sql, [word_index.phrase(term), *params, limit])]
    return _rows_of(conn, ranked, limit)


def _has_other_sources(conn: apsw.Connection, sources: Sequence[str]) -> bool:
    """Whether some indexed file belongs to a source outside ``sources``.

    A row outside the set sorts below its first value, between two neighbours or above its last:
    one seek each on the source index (``NOT IN`` would read every file row).
    """
    ordered = sorted(set(sources))
    gaps: list[tuple[str, list[str]]] = [("source < ?", [ordered[0]])]
    gaps += [("source > ? AND source < ?", [lo, hi]) for lo, hi in pairwise(ordered)]
    gaps.append(("source > ?", [ordered[-1]]))
    return any(
        next(iter(conn.execute(f"SELECT 1 FROM memory_index_sources WHERE {cond} LIMIT 1", params)), None) is not None
        for cond, params in gaps
    )


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
    """Chunks with a vector (never reads the vectors themselves)."""
    return index_rows.count_chunks(conn)[1]


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
    return [
        (bytes(r[0]), r[1])
        for r in conn.execute(
            "SELECT embedding, text FROM memory_index_chunks WHERE embedding IS NOT NULL AND model = ? "
            "ORDER BY id LIMIT ?",
            (model, size),
        )
    ]


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
    hash: str  # of the text: what line vectors are keyed by


def chunk_meta(conn: apsw.Connection, ids: Sequence[str]) -> dict[str, ChunkMeta]:
    out: dict[str, ChunkMeta] = {}
    for start in range(0, len(ids), 500):
        batch = list(ids[start : start + 500])
        marks = ", ".join("?" for _ in batch)
        for r in conn.execute(
            "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, "
            "COALESCE(p.origin_class, 'untrusted'), COALESCE(p.session_kind, 'unknown'), p.observed_at, "
            "p.supersedes_key, m.importance, m.triggers, m.project_key, c.embedding IS NOT NULL, c.hash "
            "FROM memory_index_chunks c "
            "LEFT JOIN memory_index_chunk_provenance p ON p.chunk_id = c.id "
            f"LEFT JOIN memory_index_chunk_recall_metadata m ON m.chunk_id = c.id WHERE c.id IN ({marks})",
            batch,
        ):
            out[r[0]] = ChunkMeta(
                r[0],
                r[1],
                r[2],
                int(r[3]),
                int(r[4]),
                r[5],
                r[6],
                r[7],
                r[8],
                r[9],
                r[10],
                r[11],
                r[12],
                bool(r[13]),
                r[14],
            )
    return out


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
    return index_rows.revision(conn)


def index_state(conn: apsw.Connection) -> index_rows.IndexState:
    """The revision with the chunk and file counts: a stamp for caches of the indexed paths."""
    return index_rows.state(conn)


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


WORDS = "words"  # ``document_frequency``'s tokenizer for a word in the word index (and its stems)
WORD_PREFIXES = "word-prefixes"  # … for the words of the word index that start with a term
LIKE_SAMPLE = 5_000  # chunks read to estimate a document frequency no index can answer


def document_frequency(conn: apsw.Connection, term: str, tokenizer: str, total: int | None = None) -> int:
    """How many chunks contain ``term`` (a trigram MATCH or the CJK bigram index when possible,
    else a LIKE scan, estimated from a sample when ``total``, the chunk count, is large).
    ``tokenizer`` :data:`WORDS` / :data:`WORD_PREFIXES`: the chunks the word index finds for one
    word (and its stems) / for the words that start with it."""
    if tokenizer in (WORDS, WORD_PREFIXES):
        sql = f"SELECT COUNT(*) FROM {word_index.TABLE} WHERE {word_index.TABLE} MATCH ?"
        match = word_index.phrase(term) + ("*" if tokenizer == WORD_PREFIXES else "")
        return int(next(iter(conn.execute(sql, (match,))))[0])
    if len(term) == 2 and cjk_index.is_cjk_term(term):
        row = next(
            iter(
                conn.execute(
                    f"SELECT COUNT(*) FROM {cjk_index.TABLE} WHERE {cjk_index.TABLE} MATCH ?",
                    (cjk_index.match_expression([term]),),
                )
            )
        )
        return int(row[0])
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
    # No index can answer it (a two-letter Latin word under trigrams): a LIKE scan, which reads
    # every chunk (100 ms at 100k). Past LIKE_SAMPLE chunks the count is estimated from the first
    # LIKE_SAMPLE by rowid (deterministic); a document frequency only weights a query concept.
    like = f"%{escape_like(term)}%"
    if total is None or total <= LIKE_SAMPLE:
        row = next(iter(conn.execute(f"SELECT COUNT(*) FROM {FTS} WHERE text LIKE ? ESCAPE '\\'", (like,))))
        return int(row[0])
    row = next(
        iter(
            conn.execute(
                f"SELECT COUNT(*) FROM (SELECT text FROM {FTS} ORDER BY rowid LIMIT ?) WHERE text LIKE ? ESCAPE '\\'",
                (LIKE_SAMPLE, like),
            )
        )
    )
    return round(int(row[0]) * total / LIKE_SAMPLE)


def all_vectors(conn: apsw.Connection, model: str, after_rowid: int, size: int) -> list[tuple[int, str, str, bytes]]:
    """(rowid, id, source, blob) pages of every vector of ``model``, for the in-memory matrix."""
    return [
        (int(r[0]), r[1], r[2], bytes(r[3]))
        for r in conn.execute(
            "SELECT rowid, id, source, embedding FROM memory_index_chunks WHERE embedding IS NOT NULL AND model = ? "
            "AND rowid > ? ORDER BY rowid LIMIT ?",
            (model, after_rowid, size),
        )
    ]


_DIARY_GLOB = "memory/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].md"


def diary_chunk_counts(conn: apsw.Connection, first: str, last: str) -> dict[str, int]:
    """Chunks of each daily diary ``memory/<first>.md`` … ``memory/<last>.md`` (ISO dates), read
    through the path index without the chunks' text."""
    return {
        path: int(n)
        for path, n in conn.execute(
            "SELECT path, count(*) FROM memory_index_chunks WHERE source = 'memory' AND path BETWEEN ? AND ? "
            "AND path GLOB ? GROUP BY path",
            (f"memory/{first}.md", f"memory/{last}.md", _DIARY_GLOB),
        )
    }


def chunks_of_paths(conn: apsw.Connection, paths: Sequence[str]) -> list[BodyRow]:
    """Every chunk of the given memory paths, in file order."""
    out: list[BodyRow] = []
    for start in range(0, len(paths), 400):
        batch = list(paths[start : start + 400])
        marks = ", ".join("?" for _ in batch)
        out.extend(
            BodyRow(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], None)
            for r in conn.execute(
                "SELECT id, path, source, start_line, end_line, text FROM memory_index_chunks "
                f"WHERE source = 'memory' AND path IN ({marks}) ORDER BY path, start_line, id",
                batch,
            )
        )
    return out
