"""A word index beside the trigram FTS table, for the calibrated scoring's keyword probes.

A keyword probe (one word extracted from a question: "volunteering", "research") ranks every
chunk that holds it. Under the trigram tokenizer that word is a chain of trigrams, and common
trigrams ("ing", "end", "ent") have doclists as long as the index: at 10k chunks a probe cost
3–8 ms, five probes most of a search. Here a word is one doclist (0.2–2 ms), and Porter
stemming makes "volunteering" find "volunteer" and "volunteers" as the trigram substring did.

The table is contentless (rowids are the trigram FTS table's, which holds the text) and is
filled for every chunk. Only ASCII words use it (:func:`handles`); CJK terms keep the trigram
and bigram indexes, and ``--scoring openclaw`` never uses it (OpenClaw matches substrings).
"""

from __future__ import annotations

import re

import apsw

TABLE = "memory_index_chunks_words"
TOKENIZE = "porter unicode61 remove_diacritics 2"
_WORD = re.compile(r"[A-Za-z0-9]+")


def create_sql() -> str:
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5("
        f"text, content='', contentless_delete=1, tokenize='{TOKENIZE}')"
    )


def handles(term: str) -> bool:
    """Whether ``term`` is one ASCII word of letters and digits (one token of this index)."""
    return _WORD.fullmatch(term) is not None


def phrase(term: str) -> str:
    return '"' + term + '"'


def add(conn: apsw.Connection, fts_rowid: int, text: str) -> None:
    conn.execute(f"INSERT INTO {TABLE} (rowid, text) VALUES (?, ?)", (fts_rowid, text))


def remove(conn: apsw.Connection, fts_rowid: int) -> None:
    conn.execute(f"DELETE FROM {TABLE} WHERE rowid = ?", (fts_rowid,))


def rebuild_from_fts(conn: apsw.Connection, schema: str = "main") -> None:
    """Fill the index from the FTS rows (migration of an older index, shadow publish)."""
    conn.execute(f"DELETE FROM {schema}.{TABLE}")
    conn.execute(f"INSERT INTO {schema}.{TABLE} (rowid, text) SELECT rowid, text FROM {schema}.memory_index_chunks_fts")
