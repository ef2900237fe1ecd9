"""What a search reads from an index, behind one interface, so the search pipeline
(engine/search/) runs the same over either store: this machine's SQLite (:class:`SqliteSearchReader`,
over :mod:`engine.store.search_queries`) or a shared PostgreSQL index
(engine/store/postgres/search_reader.py). Scoring, the breakdown, decay, MMR and the threshold stay
in Python above it; only the reads differ, and the keyword ranking, which each backend names
(``keyword_ranking``) so the breakdown can say who ranked the keyword part.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import apsw
from clawmem.engine.store import index_rows, line_vector_rows
from clawmem.engine.store import search_queries as q


class MatchRefused(Exception):
    """The text engine refused a query's match expression (the keyword leg then falls back to
    substring filters on every token)."""


class SearchReader(Protocol):
    """The reads of one search, all answered from one index."""

    @property
    def key(self) -> str:
        """What names this index in the search caches ('' : an index not worth caching for)."""
        ...

    @property
    def keyword_ranking(self) -> str:
        """Who ranked the keyword part, for the breakdown ("SQLite FTS5 BM25", …)."""
        ...

    def body_match(
        self,
        match: str | None,
        substrings: Sequence[str],
        sources: Sequence[str],
        limit: int,
        phrase_hits: Sequence[int] | None = None,
        *,
        phrases: Sequence[str] = (),
    ) -> list[q.BodyRow]: ...
    def word_match(self, term: str, sources: Sequence[str], limit: int) -> list[q.BodyRow]: ...
    def path_match(self, match: str, sources: Sequence[str], limit: int) -> list[q.PathRow]: ...
    def all_indexed_paths(self, sources: Sequence[str]) -> list[tuple[str, str]]: ...
    def first_chunks(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], q.BodyRow]: ...
    def chunk_meta(self, ids: Sequence[str]) -> dict[str, q.ChunkMeta]: ...
    def knn(self, vector: bytes, k: int, model: str, sources: Sequence[str], limit: int) -> list[q.VectorRow]: ...
    def vector_count(self) -> int: ...
    def has_filtered_vectors(self, model: str, sources: Sequence[str]) -> bool: ...
    def embedding_pages(
        self, model: str, sources: Sequence[str], after: int, size: int
    ) -> list[tuple[int, str, bytes]]: ...
    def embeddings_for(self, ids: Sequence[str], model: str) -> dict[str, bytes]: ...
    def all_vectors(self, model: str, after: int, size: int) -> list[tuple[int, str, str, bytes]]: ...
    def background_sample(self, model: str, size: int) -> list[tuple[bytes, str]]: ...
    def document_frequency(self, term: str, tokenizer: str, total: int | None = None) -> int: ...
    def diary_chunk_counts(self, first: str, last: str) -> dict[str, int]: ...
    def chunks_of_paths(self, paths: Sequence[str]) -> list[q.BodyRow]: ...
    def line_vectors(self, hashes: Sequence[str], provider_key: str) -> dict[str, bytes]: ...
    def index_state(self) -> index_rows.IndexState: ...


class SqliteSearchReader:
    """A search's reads from this machine's SQLite index (one apsw connection, one thread at a time)."""

    keyword_ranking = "SQLite FTS5 BM25"

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    @property
    def key(self) -> str:
        return str(self.conn.filename)  # '' for an in-memory database: nothing cached

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
        try:
            return q.body_match(self.conn, match, substrings, sources, limit, phrase_hits, phrases=phrases)
        except apsw.SQLError as exc:
            raise MatchRefused(str(exc)) from None

    def word_match(self, term: str, sources: Sequence[str], limit: int) -> list[q.BodyRow]:
        return q.word_match(self.conn, term, sources, limit)

    def path_match(self, match: str, sources: Sequence[str], limit: int) -> list[q.PathRow]:
        try:
            return q.path_match(self.conn, match, sources, limit)
        except apsw.SQLError as exc:
            raise MatchRefused(str(exc)) from None

    def all_indexed_paths(self, sources: Sequence[str]) -> list[tuple[str, str]]:
        return q.all_indexed_paths(self.conn, sources)

    def first_chunks(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], q.BodyRow]:
        return q.first_chunks(self.conn, pairs)

    def chunk_meta(self, ids: Sequence[str]) -> dict[str, q.ChunkMeta]:
        return q.chunk_meta(self.conn, ids)

    def knn(self, vector: bytes, k: int, model: str, sources: Sequence[str], limit: int) -> list[q.VectorRow]:
        return q.knn(self.conn, vector, k, model, sources, limit)

    def vector_count(self) -> int:
        return q.vector_count(self.conn)

    def has_filtered_vectors(self, model: str, sources: Sequence[str]) -> bool:
        return q.has_filtered_vectors(self.conn, model, sources)

    def embedding_pages(
        self, model: str, sources: Sequence[str], after: int, size: int
    ) -> list[tuple[int, str, bytes]]:
        return q.embedding_pages(self.conn, model, sources, after, size)

    def embeddings_for(self, ids: Sequence[str], model: str) -> dict[str, bytes]:
        return q.embeddings_for(self.conn, ids, model)

    def all_vectors(self, model: str, after: int, size: int) -> list[tuple[int, str, str, bytes]]:
        return q.all_vectors(self.conn, model, after, size)

    def background_sample(self, model: str, size: int) -> list[tuple[bytes, str]]:
        return q.background_sample(self.conn, model, size)

    def document_frequency(self, term: str, tokenizer: str, total: int | None = None) -> int:
        return q.document_frequency(self.conn, term, tokenizer, total)

    def diary_chunk_counts(self, first: str, last: str) -> dict[str, int]:
        return q.diary_chunk_counts(self.conn, first, last)

    def chunks_of_paths(self, paths: Sequence[str]) -> list[q.BodyRow]:
        return q.chunks_of_paths(self.conn, paths)

    def line_vectors(self, hashes: Sequence[str], provider_key: str) -> dict[str, bytes]:
        return line_vector_rows.for_hashes(self.conn, hashes, provider_key)

    def index_state(self) -> index_rows.IndexState:
        return q.index_state(self.conn)
