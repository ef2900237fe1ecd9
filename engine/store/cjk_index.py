"""A CJK bigram index beside the trigram FTS table, so 2-character Chinese terms use an index.

FTS5's trigram tokenizer cannot match a term shorter than three characters, and Chinese is full
of two-character words (杭州, 返程, 车票). Without this index each such term is a full ``LIKE``
scan of every chunk (~180 ms at 100k chunks); with it, a lookup (< 1 ms). The table is
contentless — it only answers "which FTS rows contain this bigram" — and holds rows only for
chunks that contain CJK text. Its tokenizer is Python (apsw), registered on every connection.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, cast

import apsw
import apsw.fts5

TOKENIZER = "clawmem_cjk_bigram"
TABLE = "memory_index_chunks_cjk"
_CJK_RUN = re.compile("[\u3040-\u30ff\u3131-\u3163\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


def is_cjk_term(term: str) -> bool:
    return _CJK_RUN.fullmatch(term) is not None


@apsw.fts5.StringTokenizer  # type: ignore[arg-type]  # the stub types the inner text as bytes; it is str
def _bigrams(con: apsw.Connection, args: list[str]) -> Callable[[str, int, str | None], Iterator[Any]]:
    def tokenize(text: str, flags: int, locale: str | None) -> Iterator[tuple[int, int, str]]:
        for m in _CJK_RUN.finditer(text):
            run, base = m.group(), m.start()
            if len(run) == 1:
                yield base, base + 1, run
            for i in range(len(run) - 1):
                yield base + i, base + i + 2, run[i : i + 2]

    return tokenize


def register(conn: apsw.Connection) -> None:
    """Make the tokenizer (and a helper SQL function) known to this connection."""
    conn.register_fts5_tokenizer(TOKENIZER, cast(Any, _bigrams))
    conn.create_scalar_function("clawmem_has_cjk", cast(Any, _has_cjk_sql), 1, deterministic=True)


def _has_cjk_sql(text: object) -> int:
    return 1 if isinstance(text, str) and has_cjk(text) else 0


def create_sql() -> str:
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5("
        f"text, content='', contentless_delete=1, tokenize='{TOKENIZER}')"
    )


def match_expression(terms: list[str]) -> str:
    """An AND of quoted bigram phrases (a 2-character term is exactly one bigram token)."""
    return " AND ".join('"' + t.replace('"', "") + '"' for t in terms)


def add(conn: apsw.Connection, fts_rowid: int, text: str) -> None:
    if has_cjk(text):
        conn.execute(f"INSERT INTO {TABLE} (rowid, text) VALUES (?, ?)", (fts_rowid, text))


def remove(conn: apsw.Connection, fts_rowid: int) -> None:
    conn.execute(f"DELETE FROM {TABLE} WHERE rowid = ?", (fts_rowid,))


def rebuild_from_fts(conn: apsw.Connection, schema: str = "main") -> None:
    """Fill the index from the FTS rows (migration of an older index, shadow publish)."""
    conn.execute(f"DELETE FROM {schema}.{TABLE}")
    conn.execute(
        f"INSERT INTO {schema}.{TABLE} (rowid, text) SELECT rowid, text FROM {schema}.memory_index_chunks_fts "
        "WHERE clawmem_has_cjk(text)"
    )
