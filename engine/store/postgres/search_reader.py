"""A search's reads from the shared PostgreSQL index (the :class:`~engine.store.search_reader.SearchReader`
of store.url), so the search pipeline, its scoring, breakdown, decay, MMR and threshold run on it
unchanged.

What differs from SQLite, on purpose and named in the breakdown (``keyword_ranking``):

- the keyword part is PostgreSQL full text over clawmem's own terms (engine/store/postgres/fulltext.py):
  a word matches as a prefix where SQLite's trigram index matched any substring, a two-character
  CJK term as a bigram; it is ranked by ``ts_rank_cd``, turned into the same 0–1 score SQLite's
  BM25 ranks get (``-rank`` is handed up as the rank, as BM25's are negative);
- paths match by each query token occurring in the path, ranked by the share of the path they
  cover, where SQLite ranks a paths FTS table by BM25;
- the vector leg reads pgvector's HNSW index (``ef_search`` 400: 0.928 of the exact top 10 at 100k
  chunks, bench/RESULTS.md §3b); a process that searches more than once ranks the in-memory matrix
  instead, exactly, as on SQLite.

Every read ends its transaction, so a search never holds a snapshot (or a lock) between statements.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from clawmem.engine.store import index_rows
from clawmem.engine.store import search_queries as q
from clawmem.engine.store.postgres import vector_rows
from clawmem.engine.store.postgres.fulltext import all_terms_query, term_query
from clawmem.engine.store.postgres.index_rows import vector_blob, vector_text

DF_EXACT = 5_000  # chunks counted exactly for a term's document frequency …
DF_SAMPLE = 2_000  # … and past that, the first chunks the estimate is taken from
EF_SEARCH = 400  # HNSW candidate list (bench/pg_scale.py: recall@10 0.928 at 100k, 0.687 at 100)
_QUOTED = re.compile(r'"([^"]*)"')
_DIARY = r"^memory/[0-9]{4}-[0-9]{2}-[0-9]{2}\.md$"


def _like(term: str) -> str:
    return "%" + q.escape_like(term) + "%"


def _sources(sources: Sequence[str], column: str, params: list[Any]) -> str:
    if not sources:
        return ""
    params.append(list(sources))
    return f" AND {column} = ANY(%s)"


class PostgresSearchReader:
    """Reads of one search from the index in ``schema`` on an open psycopg connection (its
    ``search_path`` already on that schema). ``key`` names the index in the search caches."""

    keyword_ranking = "PostgreSQL ts_rank_cd"

    def __init__(self, conn: Any, key: str) -> None:
        self.conn = conn
        self._key = key
        self._seen: tuple[index_rows.IndexState, int] | None = None

    @property
    def key(self) -> str:
        return self._key

    def _rows(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> list[tuple[Any, ...]]:
        try:
            with self.conn.cursor(binary=binary) as cur:
                cur.execute(sql, params)
                return [tuple(r) for r in cur.fetchall()]
        finally:
            self.conn.rollback()

    # ------------------------------------------------------------------ keyword and path

    def body_match(
        self,
        match: str | None,
        substrings: Sequence[str],
        sources: Sequence[str],
        limit: int,
        phrase_hits: Sequence[int] | None = None,
        *,
        phrases: Sequence[str] = (),
    ) -> list[q.BodyRow]:
        """Chunks holding every MATCH term (full text) and every substring (``ILIKE``; a CJK one
        through its bigrams), best ``ts_rank_cd`` of the MATCH terms first. As on SQLite, the
        substrings only filter: rows found by them alone have no rank (OpenClaw's scoring gives
        them its boost only). ``phrase_hits`` is SQLite's shortcut and not needed here."""
        ranked = all_terms_query(list(phrases)) if match else None
        if match and ranked is None and not substrings:
            return []
        cjk = [s for s in substrings if not s.isascii() and term_query(s)]
        likes = [s for s in substrings if s not in cjk]
        return self._match(ranked, all_terms_query(cjk) if cjk else None, likes, sources, limit)

    def _match(
        self, ranked: str | None, required: str | None, likes: Sequence[str], sources: Sequence[str], limit: int
    ) -> list[q.BodyRow]:
        """Chunks matching ``ranked`` and ``required`` (tsquery texts) and holding every ``likes``
        substring, by ``ts_rank_cd`` of ``ranked`` (rank None without it)."""
        if ranked is None and required is None and not likes:
            return []
        params: list[Any] = []
        where = ["TRUE"]
        for tsquery in (t for t in (ranked, required) if t is not None):
            where.append("terms @@ to_tsquery('simple', %s)")
            params.append(tsquery)
        for s in likes:
            where.append("text ILIKE %s")
            params.append(_like(s))
        sql_where = " AND ".join(where) + _sources(sources, "source", params)
        rank = "ts_rank_cd(terms, to_tsquery('simple', %s))" if ranked is not None else "NULL::real"
        order = "rank DESC, id" if ranked is not None else "id"
        if ranked is None and required is not None:
            # By id through the GIN index, never by walking the primary key until ``limit`` rows
            # match: the planner cannot tell a CJK pair no chunk holds from a common one, and the
            # walk read every chunk for it at 1M chunks (8–11 s a query; bench/RESULTS.md §3b).
            self.conn.execute("SET LOCAL enable_indexscan = off")
        rows = self._rows(
            f"SELECT id, path, source, start_line, end_line, text, {rank} AS rank FROM memory_index_chunks "
            f"WHERE {sql_where} ORDER BY {order} LIMIT %s",
            [*([ranked] if ranked is not None else []), *params, limit],
        )
        return [
            q.BodyRow(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], -float(r[6]) if r[6] is not None else None)
            for r in rows
        ]

    def word_match(self, term: str, sources: Sequence[str], limit: int) -> list[q.BodyRow]:
        """One English word's chunks, as SQLite's word index finds them (the word and the words of
        its stem, engine/store/word_index.py): the chunks holding a word that starts with the
        word's Snowball stem (PostgreSQL's ``english_stem``: "volunteering" → volunt: volunteers,
        volunteered), ranked by ``ts_rank_cd``."""
        rows = self._rows("SELECT (ts_lexize('english_stem', lower(%s)))[1]", [term])
        stem = str(rows[0][0]) if rows and rows[0][0] else term
        return self._match(term_query(stem), None, (), sources, limit)

    def path_match(self, match: str, sources: Sequence[str], limit: int) -> list[q.PathRow]:
        """Files whose path holds every quoted token of ``match`` (its terms through the GIN index,
        a word as a prefix as in the body; then each token as a substring of the path), ranked by
        the share of the path the tokens cover (then the path)."""
        tokens = [t.lower() for t in _QUOTED.findall(match) if t.strip()]
        tsquery = all_terms_query(tokens)
        if not tokens or tsquery is None:
            return []
        params: list[Any] = [sum(len(t) for t in tokens), tsquery]
        likes = "".join(" AND lower(path) LIKE %s" for _ in tokens)
        params.extend(_like(t) for t in tokens)
        src = _sources(sources, "source", params)
        rows = self._rows(
            "SELECT path, source, %s::real / greatest(length(path), 1) AS share FROM memory_index_sources "
            f"WHERE terms @@ to_tsquery('simple', %s){likes}{src} ORDER BY share DESC, path LIMIT %s",
            [*params, limit],
        )
        return [q.PathRow(r[0], r[1], -float(r[2])) for r in rows]

    def all_indexed_paths(self, sources: Sequence[str]) -> list[tuple[str, str]]:
        params: list[Any] = []
        src = _sources(sources, "source", params)
        return [
            (r[0], r[1])
            for r in self._rows(f"SELECT path, source FROM memory_index_sources WHERE TRUE{src} ORDER BY path", params)
        ]

    def first_chunks(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], q.BodyRow]:
        wanted = list(dict.fromkeys(pairs))
        if not wanted:
            return {}
        rows = self._rows(
            "SELECT DISTINCT ON (c.path, c.source) c.id, c.path, c.source, c.start_line, c.end_line, c.text "
            "FROM unnest(%s::text[], %s::text[]) AS w (path, source) "
            "JOIN memory_index_chunks c ON c.path = w.path AND c.source = w.source "
            "ORDER BY c.path, c.source, c.start_line, c.end_line, c.id",
            [[p for p, _ in wanted], [s for _, s in wanted]],
        )
        return {(r[1], r[2]): q.BodyRow(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], None) for r in rows}

    def chunk_meta(self, ids: Sequence[str]) -> dict[str, q.ChunkMeta]:
        if not ids:
            return {}
        rows = self._rows(
            "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, "
            "COALESCE(p.origin_class, 'untrusted'), COALESCE(p.session_kind, 'unknown'), p.observed_at, "
            "p.supersedes_key, m.importance, m.triggers, m.project_key, c.embedded, c.hash "
            "FROM memory_index_chunks c "
            "LEFT JOIN memory_index_chunk_provenance p ON p.chunk_id = c.id "
            "LEFT JOIN memory_index_chunk_recall_metadata m ON m.chunk_id = c.id WHERE c.id = ANY(%s)",
            [list(ids)],
        )
        return {
            r[0]: q.ChunkMeta(
                r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], r[6], r[7],
                int(r[8]) if r[8] is not None else None, r[9], r[10], r[11], r[12], bool(r[13]), r[14],
            )
            for r in rows
        }  # fmt: skip

    # ------------------------------------------------------------------ vectors

    def _has_vectors(self) -> bool:
        """Whether any chunk has a vector (then the vector table exists): the state row's count."""
        return self.vector_count() > 0

    def knn(self, vector: bytes, k: int, model: str, sources: Sequence[str], limit: int) -> list[q.VectorRow]:
        """The nearest ``k`` vectors through the HNSW index, then the model and source filter."""
        if not self._has_vectors():
            return []
        literal = vector_text(index_rows.blob_to_vec(vector))
        params: list[Any] = [literal, literal, k, model]
        src = _sources(sources, "c.source", params)
        params.append(limit)
        try:
            self.conn.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, int(k))}")
            rows = self.conn.execute(
                "SELECT c.id, c.path, c.source, c.start_line, c.end_line, c.text, v.distance FROM "
                "(SELECT id, embedding <=> %s::vector AS distance FROM memory_index_chunks_vec "
                "ORDER BY embedding <=> %s::vector LIMIT %s) v JOIN memory_index_chunks c ON c.id = v.id "
                f"WHERE c.model = %s{src} ORDER BY v.distance, c.id LIMIT %s",
                params,
            ).fetchall()
        finally:
            self.conn.rollback()
        return [q.VectorRow(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], float(r[6])) for r in rows]

    def vector_count(self) -> int:
        """Chunks with a vector, as the state row keeps them (one search reads one state)."""
        return self._state()[1]

    def has_filtered_vectors(self, model: str, sources: Sequence[str]) -> bool:
        params: list[Any] = [model]
        cond = "model != %s"
        if sources:
            cond += " OR NOT (source = ANY(%s))"
            params.append(list(sources))
        (found,) = self._rows(f"SELECT EXISTS (SELECT 1 FROM memory_index_chunks WHERE embedded AND ({cond}))", params)[
            0
        ]
        return bool(found)

    def _vectors(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Rows whose last column is a vector, read in binary and turned into float32 blobs."""
        if not self._has_vectors():
            return []
        return [(*r[:-1], vector_blob(bytes(r[-1]))) for r in self._rows(sql, params, binary=True)]

    def embedding_pages(
        self, model: str, sources: Sequence[str], after: int, size: int
    ) -> list[tuple[int, str, bytes]]:
        params: list[Any] = [model, after]
        src = _sources(sources, "c.source", params)
        params.append(size)
        return [
            (int(r[0]), str(r[1]), r[2])
            for r in self._vectors(
                "SELECT c.seq, c.id, v.embedding FROM memory_index_chunks c "
                "JOIN memory_index_chunks_vec v ON v.id = c.id "
                f"WHERE c.model = %s AND c.seq > %s{src} ORDER BY c.seq LIMIT %s",
                params,
            )
        ]

    def embeddings_for(self, ids: Sequence[str], model: str) -> dict[str, bytes]:
        if not ids:
            return {}
        rows = self._vectors(
            "SELECT c.id, v.embedding FROM memory_index_chunks c JOIN memory_index_chunks_vec v ON v.id = c.id "
            "WHERE c.id = ANY(%s) AND c.model = %s",
            [list(ids), model],
        )
        return {str(r[0]): r[1] for r in rows}

    def all_vectors(self, model: str, after: int, size: int) -> list[tuple[int, str, str, bytes]]:
        return [
            (int(r[0]), str(r[1]), str(r[2]), r[3])
            for r in self._vectors(
                "SELECT c.seq, c.id, c.source, v.embedding FROM memory_index_chunks c "
                "JOIN memory_index_chunks_vec v ON v.id = c.id WHERE c.model = %s AND c.seq > %s "
                "ORDER BY c.seq LIMIT %s",
                [model, after, size],
            )
        ]

    def background_sample(self, model: str, size: int) -> list[tuple[bytes, str]]:
        """The same spread as SQLite's: the first ``size`` vectors by chunk id (ids are hashes)."""
        rows = self._vectors(
            "SELECT c.text, v.embedding FROM memory_index_chunks c JOIN memory_index_chunks_vec v ON v.id = c.id "
            "WHERE c.model = %s ORDER BY c.id LIMIT %s",
            [model, size],
        )
        return [(r[1], str(r[0])) for r in rows]

    # ------------------------------------------------------------------ counts, dates, lines, state

    def document_frequency(self, term: str, tokenizer: str, total: int | None = None) -> int:
        """Chunks whose terms hold ``term`` as the keyword leg matches it (a word as a prefix, a
        CJK term as its bigrams), whatever SQLite index the tokenizer names: exact up to
        DF_EXACT chunks; past that estimated from the first DF_SAMPLE chunks (by sequence,
        deterministic), as SQLite estimates a count no index answers (search_queries.py). A
        common prefix ("go" → going, good, Google …) held by half of 100k chunks took 0.43 s to
        count exactly; a document frequency only weights a query concept."""
        expr = term_query(term)
        if expr is None:
            return 0
        (n,) = self._rows(
            "SELECT count(*) FROM (SELECT 1 FROM memory_index_chunks WHERE terms @@ to_tsquery('simple', %s) "
            "LIMIT %s) x",
            [expr, DF_EXACT + 1],
        )[0]
        if n <= DF_EXACT:
            return int(n)
        chunks = total if total is not None else self.index_state().chunks
        (sampled,) = self._rows(
            "SELECT count(*) FROM (SELECT terms FROM memory_index_chunks ORDER BY seq LIMIT %s) s "
            "WHERE terms @@ to_tsquery('simple', %s)",
            [DF_SAMPLE, expr],
        )[0]
        return max(DF_EXACT + 1, round(int(sampled) * chunks / min(DF_SAMPLE, max(chunks, 1))))

    def diary_chunk_counts(self, first: str, last: str) -> dict[str, int]:
        rows = self._rows(
            "SELECT path, count(*) FROM memory_index_chunks WHERE source = 'memory' AND path BETWEEN %s AND %s "
            "AND path ~ %s GROUP BY path",
            [f"memory/{first}.md", f"memory/{last}.md", _DIARY],
        )
        return {str(p): int(n) for p, n in rows}

    def chunks_of_paths(self, paths: Sequence[str]) -> list[q.BodyRow]:
        if not paths:
            return []
        rows = self._rows(
            "SELECT id, path, source, start_line, end_line, text FROM memory_index_chunks "
            "WHERE source = 'memory' AND path = ANY(%s) ORDER BY path, start_line, id",
            [list(paths)],
        )
        return [q.BodyRow(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], None) for r in rows]

    def line_vectors(self, hashes: Sequence[str], provider_key: str) -> dict[str, bytes]:
        return vector_rows.lines_for_hashes(self.conn, hashes, provider_key)

    def index_state(self) -> index_rows.IndexState:
        return self._state()[0]

    def _state(self) -> tuple[index_rows.IndexState, int]:
        """The state row (revision, counts, vectors), read once per reader: a reader serves one
        search, which asks for it a dozen times and should see one index state throughout."""
        if self._seen is None:
            rows = self._rows("SELECT revision, chunks, sources, vectors FROM memory_index_state WHERE id = 1")
            r = [int(x) for x in rows[0]] if rows else [0, 0, 0, 0]
            self._seen = (index_rows.IndexState(r[0], r[1], r[2]), r[3])
        return self._seen
