"""PostgreSQL full text fed with clawmem's own tokens (the ``simple`` configuration).

The bundled server has no ``pg_trgm``, and PostgreSQL's parsers do not split Chinese or
Japanese. So the text of a chunk is turned into terms here and stored as a ``tsvector`` of the
``simple`` configuration, which keeps each term as given:

- a run of letters and digits outside CJK: the lowercased word (NFC);
- a CJK run: its bigrams in order (one character alone when the run has one), the same bigrams
  as the SQLite CJK index (engine/store/cjk_index.py).

A query term becomes: a word, matched as a prefix (``volunteer:*`` finds "volunteering", where
SQLite's trigram index matched any substring); a CJK term, its bigrams as a phrase (``<->``),
which matches exactly the texts that contain it. Ranking is PostgreSQL's ``ts_rank_cd``, not
SQLite's BM25: scores and order may differ, and the breakdown says which ranked the keyword part.
"""

from __future__ import annotations

import re
import unicodedata

_CJK = "\u3040-\u30ff\u3131-\u3163\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_PIECE = re.compile(f"[{_CJK}]+|[^\\W{_CJK}]+", re.UNICODE)
_CJK_RUN = re.compile(f"[{_CJK}]+")


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def document_terms(text: str) -> str:
    """The terms of a chunk's text, space-separated, for ``to_tsvector('simple', …)``."""
    out: list[str] = []
    for piece in _PIECE.findall(unicodedata.normalize("NFC", text)):
        out.extend(_bigrams(piece) if _CJK_RUN.fullmatch(piece) else [piece.lower()])
    return " ".join(out)


def _lexeme(term: str) -> str:
    return "'" + term.replace("'", "''").replace("\\", "\\\\") + "'"


def term_query(term: str) -> str | None:
    """One search term as a ``to_tsquery('simple', …)`` expression, or None when it has no
    letters or digits (nothing to match)."""
    parts: list[str] = []
    for piece in _PIECE.findall(unicodedata.normalize("NFC", term)):
        if _CJK_RUN.fullmatch(piece):
            parts.append(" <-> ".join(_lexeme(b) for b in _bigrams(piece)))
        else:
            parts.append(_lexeme(piece.lower()) + ":*")
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(" + " <-> ".join(parts) + ")"


def all_terms_query(terms: list[str]) -> str | None:
    """Every term (AND), as one ``tsquery`` text; None when no term can match anything."""
    exprs = [e for e in (term_query(t) for t in terms) if e]
    return " & ".join(exprs) if exprs else None


def any_term_query(terms: list[str]) -> str | None:
    """Any term (OR), as one ``tsquery`` text."""
    exprs = [e for e in (term_query(t) for t in terms) if e]
    return " | ".join(exprs) if exprs else None
