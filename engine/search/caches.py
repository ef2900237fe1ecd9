"""``SearchCaches``: what one open agent's searches keep between them, owned by its
:class:`~clawmem.engine.search.service.SearchService` (never module globals, so two engines in
one process share nothing).

- line vectors per text hash: the same candidates come back search after search (as you type);
- document frequencies per index revision: a count can be a full scan (a 2-letter term);
- the path index per database and sources (the path leg's exact tiers), rebuilt when the
  indexed paths change, and whether every stored vector passes the vector leg's model/source
  filter, checked again when the vectors change;
- the query-embedding thread: the query is embedded, and ranked against the in-memory vectors,
  while the keyword leg runs. llama.cpp, numpy and SQLite all release the GIL, so on two cores
  the embedding (~12 ms) and the 100k-row matrix product (~20 ms) cost little wall time beside
  the keyword leg (10–40 ms). The thread never touches the database connection (apsw allows one
  thread at a time on it; the readers keep that rule). One worker: a query embedding is one model call.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from clawmem.engine.index.line_evidence import evidence_lines
from clawmem.engine.search.keyword import PathIndexes
from clawmem.engine.search.vector import FilterFree
from clawmem.engine.store import line_vector_rows
from clawmem.engine.store.search_reader import SearchReader

# ~5 KB of float16 for a 7-line chunk: at most ~40 MB.
LINE_CACHE_SIZE = 8192
DF_CACHE_SIZE = 4096


class SearchCaches:
    def __init__(self) -> None:
        # (database, provider key, text hash) -> that text's line vectors (float16, as stored),
        # None when it has none. Immutable per key.
        self._lines: OrderedDict[tuple[str, str, str], np.ndarray | None] = OrderedDict()
        self._lines_lock = threading.Lock()
        # (database, index revision, chunk count, tokenizer, term) -> chunks containing the term.
        self._df: OrderedDict[tuple[str, int, int, str, str], int] = OrderedDict()
        self._df_seen: dict[str, int] = {}  # the last revision seen per database
        self._df_lock = threading.Lock()  # searches run on worker threads
        self.path_indexes: PathIndexes = {}  # read and replaced whole, as the module dicts were
        self.filter_free: FilterFree = {}
        self.embedder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clawmem-query-embed")

    def close(self) -> None:
        self.embedder.shutdown(wait=False)

    # ------------------------------------------------------------------ line vectors

    def line_matrices(
        self, reader: SearchReader, hashes: dict[str, str], provider_key: str, dims: int
    ) -> dict[str, np.ndarray]:
        """Text hash -> its line vectors (hashes maps each to its text), read once, then cached."""
        out: dict[str, np.ndarray] = {}
        missing = []
        with self._lines_lock:
            for h in hashes:
                key = (reader.key, provider_key, h)
                if key in self._lines:
                    self._lines.move_to_end(key)
                    if (m := self._lines[key]) is not None:
                        out[h] = m
                else:
                    missing.append(h)
        if not missing:
            return out
        read = reader.line_vectors(missing, provider_key)
        with self._lines_lock:
            for h in missing:
                if h not in read:
                    continue  # not computed yet: ask again next time
                blob, n = read[h], len(evidence_lines(hashes[h]))
                # A blob of another line rule (or none: a one-line text) gives no evidence.
                m = line_vector_rows.unpack(blob, dims) if n and len(blob) == 2 * dims * n else None
                self._lines[(reader.key, provider_key, h)] = m
                if m is not None:
                    out[h] = m
            while len(self._lines) > LINE_CACHE_SIZE:
                self._lines.popitem(last=False)
        return out

    def lines_not_read(self, reader: SearchReader, hashes: Sequence[str], provider_key: str) -> set[str]:
        """Of these text hashes, those :meth:`line_matrices` found no row for (not computed yet;
        a row it found, even of another line rule, is cached)."""
        with self._lines_lock:
            return {h for h in hashes if (reader.key, provider_key, h) not in self._lines}

    # ------------------------------------------------------------------ document frequencies

    def document_frequencies(
        self, reader: SearchReader, terms: Sequence[str], tokenizer: str, total: int
    ) -> dict[str, int]:
        """How many indexed chunks contain each term, cached per index revision."""
        revision = reader.index_state().revision if reader.key else -1
        with self._df_lock:
            if revision < self._df_seen.get(reader.key, 0):  # the index was reset: its counter restarted
                for stale in [k for k in self._df if k[0] == reader.key]:
                    del self._df[stale]
            self._df_seen[reader.key] = revision
        out = {}
        for c in terms:
            key = (reader.key, revision, total, tokenizer, c)
            with self._df_lock:
                df = self._df.get(key) if revision >= 0 else None
                if df is not None:
                    self._df.move_to_end(key)
            if df is None:
                df = reader.document_frequency(c, tokenizer, total)
                if revision >= 0:
                    with self._df_lock:
                        self._df[key] = df
                        if len(self._df) > DF_CACHE_SIZE:
                            self._df.popitem(last=False)
            out[c] = df
        return out

    def term_counter(self, reader: SearchReader, tokenizer: str, total: int) -> Callable[[str], int]:
        """How many of the ``total`` chunks hold a term, from the per-revision cache. ASCII is
        folded as FTS5 folds it, so the full query's "Gina" shares the count of the concept
        "gina"; other scripts keep the term as written (the foldings can differ). Exact under the
        trigram index and in the word index; other counts may be estimates (``document_frequency``)."""

        def count(term: str) -> int:
            key = term.lower() if term.isascii() else term
            return self.document_frequencies(reader, [key], tokenizer, total)[key]

        return count
