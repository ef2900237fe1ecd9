"""SQL of lineage forget: what a forget finds in the index and plugin state, and what it deletes.

Reads cover every place forgotten text can sit (chunks, their FTS rows, vectors, the embedding
cache, the recall store and its ledgers, preimages, proposals, run reports, origin rows);
deletes remove exactly the rows a plan lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import apsw
from clawmem.engine.store import index_rows, line_vector_rows
from clawmem.engine.store.schema import vec_table_dims


def _table_exists(conn: apsw.Connection, name: str) -> bool:
    return next(iter(conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,))), None) is not None


# ------------------------------------------------------------------------------------- index rows


@dataclass(frozen=True)
class ChunkText:
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    hash: str
    text: str


def chunk_texts(conn: apsw.Connection) -> Iterator[ChunkText]:
    if not _table_exists(conn, "memory_index_chunks"):
        return
    sql = (
        "SELECT id, path, source, start_line, end_line, hash, text FROM memory_index_chunks "
        "ORDER BY path, start_line, id"
    )
    for r in conn.execute(sql):
        yield ChunkText(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5], r[6])


def fts_texts(conn: apsw.Connection) -> Iterator[tuple[str, str, str]]:
    """(chunk id, path, text) of every keyword-index row."""
    if not _table_exists(conn, "memory_index_chunks_fts"):
        return
    for r in conn.execute("SELECT id, path, text FROM memory_index_chunks_fts"):
        yield str(r[0]), str(r[1]), str(r[2])


def vector_ids(conn: apsw.Connection, ids: Sequence[str]) -> set[str]:
    if vec_table_dims(conn) is None:
        return set()
    found: set[str] = set()
    for chunk_id in ids:
        if next(iter(conn.execute("SELECT 1 FROM memory_index_chunks_vec WHERE id = ?", (chunk_id,))), None):
            found.add(chunk_id)
    return found


def source_exists(conn: apsw.Connection, path: str, source: str) -> bool:
    if not _table_exists(conn, "memory_index_sources"):
        return False
    sql = "SELECT 1 FROM memory_index_sources WHERE path = ? AND source = ?"
    return next(iter(conn.execute(sql, (path, source))), None) is not None


def delete_sources(conn: apsw.Connection, pairs: Iterable[tuple[str, str]]) -> None:
    """Delete sources with every chunk, FTS and vector row (a later sync re-indexes the file)."""
    if not _table_exists(conn, "memory_index_chunks"):
        return
    for path, source in pairs:
        index_rows.delete_source(conn, path, source)


def delete_chunk_ids(conn: apsw.Connection, ids: Sequence[str]) -> None:
    if _table_exists(conn, "memory_index_chunks"):
        index_rows.delete_chunks(conn, ids)


@dataclass(frozen=True)
class CacheRow:
    provider: str
    model: str
    provider_key: str
    hash: str


def cache_rows(conn: apsw.Connection, hashes: Iterable[str]) -> list[CacheRow]:
    if not _table_exists(conn, "memory_embedding_cache"):
        return []
    out: list[CacheRow] = []
    sql = (
        "SELECT provider, model, provider_key, hash FROM memory_embedding_cache WHERE hash = ? ORDER BY provider, model"
    )
    for h in dict.fromkeys(hashes):
        out.extend(CacheRow(*r) for r in conn.execute(sql, (h,)))
    return out


def delete_cache_hashes(conn: apsw.Connection, hashes: Iterable[str]) -> None:
    """The cached vectors of the forgotten texts, and the line vectors made from them."""
    wanted = list(dict.fromkeys(hashes))
    if _table_exists(conn, line_vector_rows.TABLE):
        line_vector_rows.delete_hashes(conn, wanted)
    if not _table_exists(conn, "memory_embedding_cache"):
        return
    for h in wanted:
        conn.execute("DELETE FROM memory_embedding_cache WHERE hash = ?", (h,))


# ------------------------------------------------------------------------------------ plugin state


def delete_recall(conn: apsw.Connection, keys: Iterable[str]) -> None:
    for key in dict.fromkeys(keys):
        conn.execute("DELETE FROM memory_short_term_recall_events WHERE entry_key = ?", (key,))
        conn.execute("DELETE FROM memory_short_term_recall WHERE entry_key = ?", (key,))


@dataclass(frozen=True)
class LedgerRow:
    day: str
    path: str
    claim_key: str


def ledger_rows(conn: apsw.Connection) -> list[LedgerRow]:
    sql = "SELECT day, path, claim_key FROM dreaming_daily_ingest ORDER BY day, path, claim_key"
    return [LedgerRow(*r) for r in conn.execute(sql)]


def delete_ledger(conn: apsw.Connection, items: Iterable[LedgerRow]) -> None:
    for r in items:
        conn.execute(
            "DELETE FROM dreaming_daily_ingest WHERE day = ? AND path = ? AND claim_key = ?",
            (r.day, r.path, r.claim_key),
        )


def delete_rejections(conn: apsw.Connection, keys: Iterable[str]) -> None:
    for key in dict.fromkeys(keys):
        conn.execute("DELETE FROM dreaming_rejections WHERE candidate_key = ?", (key,))


@dataclass(frozen=True)
class PreimageText:
    key: str
    proposal_id: str
    text: str


def preimages(conn: apsw.Connection) -> list[PreimageText]:
    sql = "SELECT key, proposal_id, preimage FROM dreaming_preimages ORDER BY created_at, key"
    return [PreimageText(*r) for r in conn.execute(sql)]


def delete_preimages(conn: apsw.Connection, keys: Iterable[str]) -> None:
    for key in dict.fromkeys(keys):
        conn.execute("DELETE FROM dreaming_preimages WHERE key = ?", (key,))


@dataclass(frozen=True)
class ProposalText:
    id: str
    status: str
    texts: tuple[str, ...]  # before, after, every string inside operations and highlights


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def proposals(conn: apsw.Connection) -> list[ProposalText]:
    sql = (
        "SELECT id, status, before_text, after_text, operations, highlights FROM dreaming_proposals ORDER BY created_at"
    )
    out = []
    for r in conn.execute(sql):
        texts = [r[2], r[3], *_strings(json.loads(r[4])), *_strings(json.loads(r[5]))]
        out.append(ProposalText(r[0], r[1], tuple(texts)))
    return out


def delete_proposals(conn: apsw.Connection, ids: Iterable[str]) -> None:
    for pid in dict.fromkeys(ids):
        conn.execute("DELETE FROM dreaming_preimages WHERE proposal_id = ?", (pid,))
        conn.execute("UPDATE dreaming_runs SET proposal_id = NULL WHERE proposal_id = ?", (pid,))
        conn.execute("DELETE FROM dreaming_proposals WHERE id = ?", (pid,))


def run_reports(conn: apsw.Connection) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in conn.execute("SELECT id, report FROM dreaming_runs ORDER BY started_at")]


# ------------------------------------------------------------------------------------------ origins


def delete_origins_for_entries(conn: apsw.Connection, keys: Iterable[str], agent_id: str) -> None:
    for key in dict.fromkeys(keys):
        conn.execute("DELETE FROM memory_entry_origins WHERE entry_key = ? AND agent_id = ?", (key, agent_id))


def delete_origins_for_sessions(conn: apsw.Connection, session_ids: Iterable[str], agent_id: str) -> None:
    for sid in dict.fromkeys(session_ids):
        conn.execute("DELETE FROM memory_entry_origins WHERE session_id = ? AND agent_id = ?", (sid, agent_id))


def origin_row_count(conn: apsw.Connection, *, keys: Sequence[str], session_ids: Sequence[str], agent_id: str) -> int:
    total = 0
    seen: set[tuple[str, str]] = set()
    for key in keys:
        sql = "SELECT entry_key, session_id FROM memory_entry_origins WHERE entry_key = ? AND agent_id = ?"
        seen.update((r[0], r[1]) for r in conn.execute(sql, (key, agent_id)))
    for sid in session_ids:
        sql = "SELECT entry_key, session_id FROM memory_entry_origins WHERE session_id = ? AND agent_id = ?"
        seen.update((r[0], r[1]) for r in conn.execute(sql, (sid, agent_id)))
    total = len(seen)
    return total


def other_agent_origin_count(conn: apsw.Connection, session_ids: Sequence[str], agent_id: str) -> int:
    total = 0
    for sid in session_ids:
        sql = "SELECT COUNT(*) FROM memory_entry_origins WHERE session_id = ? AND agent_id != ?"
        total += int(next(iter(conn.execute(sql, (sid, agent_id))))[0])
    return total
