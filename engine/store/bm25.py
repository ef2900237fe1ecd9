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

``clawmem_bm25_and(fts_table, matched, phrase_0, hits_0, …)`` gives the same value for an AND
(given exact counts) from a statement that matches only its rarest phrase (see below): FTS5
would evaluate every phrase of the AND over the whole index.
"""

from __future__ import annotations

import math
from typing import Any, cast

import apsw

FUNCTION = "clawmem_bm25"
K1 = 1.2
B = 0.75
# Above this many matching rows the per-row Python call costs more than the IDF scans it saves.
PYTHON_RANK_ROWS = 200


def _statement(api: Any, hits: tuple[Any, ...]) -> tuple[float, list[float]]:
    """(average row length, IDF of each phrase): the same for every row of a statement, so
    worked out on its first row and kept in the statement's auxiliary data."""
    kept = api.aux_data
    if kept is not None and kept[0] == hits:
        return kept[1], kept[2]
    rows = api.row_count
    idfs = []
    for n_hit in hits:
        n_hit = min(n_hit, rows)  # an estimated count (the word index's) may overshoot
        idf = math.log((rows - n_hit + 0.5) / (n_hit + 0.5))
        idfs.append(idf if idf > 0.0 else 1e-6)
    avgdl = api.column_total_size(-1) / rows
    api.aux_data = (hits, avgdl, idfs)
    return avgdl, idfs


def _score(idfs: list[float], freqs: list[float], length: int, avgdl: float) -> float:
    score = 0.0
    for idf, freq in zip(idfs, freqs, strict=True):
        score += idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / avgdl)))
    return -1.0 * score


def _rank(api: Any, *hits: Any) -> float:
    avgdl, idfs = _statement(api, hits)
    freqs = [float(sum(len(offsets) for offsets in api.phrase_locations(phrase))) for phrase in range(len(hits))]
    return _score(idfs, freqs, api.column_size(-1), avgdl)


# --- An AND ranked through its rarest phrase ------------------------------------------------
#
# Under the trigram tokenizer (case_sensitive 0, no diacritic removal, one indexed column) a
# phrase of three or more ASCII characters occurs in a row exactly where the row's text, with
# ASCII letters folded, contains it, and its instance count is the number of (overlapping)
# occurrences. So the rows of ``"a" AND "b" AND "c"`` are the rows of the rarest phrase that
# contain the others, and their BM25 follows from those counts. FTS5 evaluates every phrase of
# an AND over the whole index (each common trigram's position lists: 9 ms for six words at 10k
# chunks, against 4 for the rarest alone); this evaluates one.
#
# Only two non-ASCII characters fold onto ASCII letters (KELVIN SIGN → k, LONG S → s: every
# code point checked against SQLite 3.54's trigram tokenizer); a row holding one is "unsure"
# and the caller falls back to the AND statement.

AND_FUNCTION = "clawmem_bm25_and"
UNSURE = "unsure"
_FOLDS_TO_ASCII = ("\u212a".encode(), "\u017f".encode())


def _occurrences(text: bytes, needle: bytes) -> int:
    n = 0
    at = text.find(needle)
    while at >= 0:
        n += 1
        at = text.find(needle, at + 1)
    return n


def _rank_and(api: Any, matched: int, *phrases_and_hits: Any) -> float | str | None:
    """``clawmem_bm25_and(fts, matched, phrase_0, hits_0, phrase_1, hits_1, …)``: the row's
    ``bm25()`` for the AND of the phrases (in that order), None when it lacks one of them.

    The statement MATCHes phrase ``matched`` (its instances come from FTS5); the others are
    counted in the row's text. ASCII phrases only (the caller checks)."""
    text: bytes | None = None
    freqs: list[float] = []
    for i in range(0, len(phrases_and_hits), 2):
        if i // 2 == matched:
            freq = float(sum(len(offsets) for offsets in api.phrase_locations(0)))
        else:
            if text is None:
                raw = api.column_text(0) or b""
                if any(b in raw for b in _FOLDS_TO_ASCII):
                    return UNSURE
                text = raw.lower()
            freq = float(_occurrences(text, phrases_and_hits[i].lower().encode()))
        if not freq:
            return None
        freqs.append(freq)
    avgdl, idfs = _statement(api, phrases_and_hits[1::2])
    return _score(idfs, freqs, api.column_size(-1), avgdl)


def register(conn: apsw.Connection) -> None:
    conn.register_fts5_function(FUNCTION, _rank)
    conn.register_fts5_function(AND_FUNCTION, cast(Any, _rank_and))  # returns text too (UNSURE)
