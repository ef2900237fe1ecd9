"""FTS5's own BM25, computed from document frequencies the caller already knows.

SQLite's ``bm25()`` works out each phrase's IDF on the first row of every statement by
scanning that phrase's whole document list (``xQueryPhrase``). Under the trigram tokenizer a
phrase is a chain of trigrams, so for a six-word AND that matches 19 of 10,000 chunks the IDF
scans cost three times the match itself (18 ms against 5). The search already counts every
query word's chunks (cached per index revision) to weigh concept coverage, so it can hand
those counts to this function instead.

``clawmem_bm25(fts_table, hits_0, hits_1, …)`` — one hit count per MATCH phrase, in the
phrase order of the query — returns exactly what ``bm25(fts_table)`` returns (k1 1.2, b 0.75,
every column weight 1, the same IDF floor, the same order of operations; a test compares the
two). It runs in Python once per matching row (≈ 7 µs), so callers use it only while the rows
are few (:data:`PYTHON_RANK_ROWS`) and leave larger match sets to SQLite's C function.
"""

from __future__ import annotations

import math
from typing import Any

import apsw

FUNCTION = "clawmem_bm25"
K1 = 1.2
B = 0.75
# Above this many matching rows the per-row Python call costs more than the IDF scans it saves.
PYTHON_RANK_ROWS = 200


def _rank(api: Any, *hits: Any) -> float:
    rows = api.row_count
    avgdl = api.column_total_size(-1) / rows
    length = api.column_size(-1)
    score = 0.0
    for phrase, n_hit in enumerate(hits):
        idf = math.log((rows - n_hit + 0.5) / (n_hit + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        freq = float(sum(len(offsets) for offsets in api.phrase_locations(phrase)))
        score += idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / avgdl)))
    return -1.0 * score


def register(conn: apsw.Connection) -> None:
    conn.register_fts5_function(FUNCTION, _rank)
