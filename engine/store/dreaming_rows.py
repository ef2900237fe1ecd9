"""SQL of the Dreaming component: runs, proposals (the review queue), preimages, rejections,
the daily-ingestion ledger, and the two index lookups Dreaming needs (file-level origin, origins)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apsw

# ---------------------------------------------------------------------------------------------- runs


def insert_run(conn: apsw.Connection, run_id: str, started_at: int, phases: Sequence[str], trigger: str) -> None:
    conn.execute(
        "INSERT INTO dreaming_runs (id, started_at, phases, trigger) VALUES (?, ?, ?, ?)",
        (run_id, started_at, ",".join(phases), trigger),
    )


def finish_run(
    conn: apsw.Connection,
    run_id: str,
    finished_at: int,
    counts: dict[str, Any],
    proposal_id: str | None,
    report: str,
    *,
    phases_done: Sequence[str] | None = None,
) -> None:
    """Close a run; ``phases_done`` (the phases that actually ran, e.g. after a cancel) replaces the
    requested ones."""
    conn.execute(
        "UPDATE dreaming_runs SET finished_at = ?, counts = ?, proposal_id = ?, report = ?, "
        "phases = COALESCE(?, phases) WHERE id = ?",
        (
            finished_at,
            json.dumps(counts, sort_keys=True),
            proposal_id,
            report,
            ",".join(phases_done) if phases_done is not None else None,
            run_id,
        ),
    )


def last_finished_run_at(
    conn: apsw.Connection, *, trigger: str | None = None, covering: Sequence[str] = ()
) -> int | None:
    """When the newest finished run ended (of ``trigger``, and that ran at least the ``covering``
    phases: a ``--phase light`` run is not a full cycle)."""
    sql = "SELECT finished_at, phases FROM dreaming_runs WHERE finished_at IS NOT NULL"
    args: tuple[str, ...] = ()
    if trigger is not None:
        sql += " AND trigger = ?"
        args = (trigger,)
    wanted = set(covering)
    for finished_at, phases in conn.execute(sql + " ORDER BY finished_at DESC", args):
        if wanted <= set(str(phases).split(",")):
            return int(finished_at)
    return None


@dataclass(frozen=True)
class RunRow:
    id: str
    started_at: int
    finished_at: int | None
    phases: str
    trigger: str
    counts: dict[str, Any]
    proposal_id: str | None
    report: str


def recent_runs(conn: apsw.Connection, limit: int) -> list[RunRow]:
    sql = (
        "SELECT id, started_at, finished_at, phases, trigger, counts, proposal_id, report FROM dreaming_runs "
        "ORDER BY started_at DESC, id DESC LIMIT ?"
    )
    return [RunRow(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], r[7]) for r in conn.execute(sql, (limit,))]


# ----------------------------------------------------------------------------------------- proposals

PROPOSAL_COLUMNS = (
    "id, run_id, created_at, status, mode, base_sha256, before_text, after_text, result_sha256, operations, "
    "counts, highlights, fallback_reason, reason, decided_at, reverted_at"
)


@dataclass(frozen=True)
class ProposalRow:
    id: str
    run_id: str | None
    created_at: int
    status: str
    mode: str
    base_sha256: str
    before_text: str
    after_text: str
    result_sha256: str | None
    operations: list[dict[str, Any]]
    counts: dict[str, int]
    highlights: list[str]
    fallback_reason: str | None
    reason: str | None
    decided_at: int | None
    reverted_at: int | None = None


def _proposal(r: tuple) -> ProposalRow:  # type: ignore[type-arg]
    return ProposalRow(
        r[0],
        r[1],
        int(r[2]),
        r[3],
        r[4],
        r[5],
        r[6],
        r[7],
        r[8],
        json.loads(r[9]),
        json.loads(r[10]),
        json.loads(r[11]),
        r[12],
        r[13],
        r[14],
        r[15],
    )


def insert_proposal(conn: apsw.Connection, p: ProposalRow) -> None:
    conn.execute(
        f"INSERT INTO dreaming_proposals ({PROPOSAL_COLUMNS}) VALUES ({', '.join('?' * 16)})",
        (
            p.id,
            p.run_id,
            p.created_at,
            p.status,
            p.mode,
            p.base_sha256,
            p.before_text,
            p.after_text,
            p.result_sha256,
            json.dumps(p.operations, ensure_ascii=False),
            json.dumps(p.counts),
            json.dumps(p.highlights, ensure_ascii=False),
            p.fallback_reason,
            p.reason,
            p.decided_at,
            p.reverted_at,
        ),
    )


def get_proposal(conn: apsw.Connection, proposal_id: str) -> ProposalRow | None:
    sql = f"SELECT {PROPOSAL_COLUMNS} FROM dreaming_proposals WHERE id = ?"
    row = next(iter(conn.execute(sql, (proposal_id,))), None)
    return _proposal(row) if row else None


def proposal_ids_with_prefix(conn: apsw.Connection, prefix: str) -> list[str]:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    sql = "SELECT id FROM dreaming_proposals WHERE id LIKE ? ESCAPE '\\' ORDER BY created_at"
    return [r[0] for r in conn.execute(sql, (escaped + "%",))]


def list_proposals(conn: apsw.Connection, statuses: Sequence[str] | None = None) -> list[ProposalRow]:
    if statuses:
        marks = ", ".join("?" * len(statuses))
        sql = f"SELECT {PROPOSAL_COLUMNS} FROM dreaming_proposals WHERE status IN ({marks}) ORDER BY created_at, id"
        return [_proposal(r) for r in conn.execute(sql, tuple(statuses))]
    sql = f"SELECT {PROPOSAL_COLUMNS} FROM dreaming_proposals ORDER BY created_at, id"
    return [_proposal(r) for r in conn.execute(sql)]


def set_proposal_status(
    conn: apsw.Connection,
    proposal_id: str,
    status: str,
    *,
    decided_at: int | None = None,
    reason: str | None = None,
    result_sha256: str | None = None,
    reverted_at: int | None = None,
) -> None:
    conn.execute(
        "UPDATE dreaming_proposals SET status = ?, decided_at = COALESCE(?, decided_at), "
        "reason = COALESCE(?, reason), result_sha256 = COALESCE(?, result_sha256), "
        "reverted_at = COALESCE(?, reverted_at) WHERE id = ?",
        (status, decided_at, reason, result_sha256, reverted_at, proposal_id),
    )


def supersede_pending(conn: apsw.Connection, *, except_id: str, at: int) -> int:
    conn.execute(
        "UPDATE dreaming_proposals SET status = 'superseded-by-newer', decided_at = ? "
        "WHERE status IN ('pending', 'stale') AND id != ?",
        (at, except_id),
    )
    return conn.changes()


def stale_pending(conn: apsw.Connection, *, base_sha256_not: str, at: int, reason: str) -> int:
    conn.execute(
        "UPDATE dreaming_proposals SET status = 'stale', decided_at = ?, reason = ? "
        "WHERE status = 'pending' AND base_sha256 != ?",
        (at, reason, base_sha256_not),
    )
    return conn.changes()


# ----------------------------------------------------------------------------------------- preimages


@dataclass(frozen=True)
class PreimageRow:
    key: str
    proposal_id: str
    created_at: int
    preimage: str
    preimage_sha256: str
    result_sha256: str


def insert_preimage(conn: apsw.Connection, p: PreimageRow) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO dreaming_preimages "
        "(key, proposal_id, created_at, preimage, preimage_sha256, result_sha256) VALUES (?, ?, ?, ?, ?, ?)",
        (p.key, p.proposal_id, p.created_at, p.preimage, p.preimage_sha256, p.result_sha256),
    )


def delete_preimage(conn: apsw.Connection, key: str) -> None:
    conn.execute("DELETE FROM dreaming_preimages WHERE key = ?", (key,))


def preimage_for(conn: apsw.Connection, proposal_id: str) -> PreimageRow | None:
    sql = (
        "SELECT key, proposal_id, created_at, preimage, preimage_sha256, result_sha256 FROM dreaming_preimages "
        "WHERE proposal_id = ? ORDER BY created_at DESC LIMIT 1"
    )
    row = next(iter(conn.execute(sql, (proposal_id,))), None)
    return PreimageRow(*row) if row else None


def preimage_keys(conn: apsw.Connection) -> dict[str, str]:
    """proposal id → preimage key, for every stored preimage."""
    return {r[1]: r[0] for r in conn.execute("SELECT key, proposal_id FROM dreaming_preimages ORDER BY created_at")}


def prune_preimages(conn: apsw.Connection, keep: int, protect_proposal: str | None) -> int:
    """Keep the newest ``keep`` preimages, and always the one of ``protect_proposal``."""
    conn.execute(
        "DELETE FROM dreaming_preimages WHERE key NOT IN (SELECT key FROM dreaming_preimages "
        "ORDER BY created_at DESC, key DESC LIMIT ?) AND proposal_id != COALESCE(?, '')",
        (keep, protect_proposal),
    )
    return conn.changes()


# ---------------------------------------------------------------------------------------- rejections


@dataclass(frozen=True)
class RejectionRow:
    candidate_key: str
    proposal_id: str | None
    signal_count: int
    rejected_at: int
    reason: str | None


def upsert_rejection(conn: apsw.Connection, r: RejectionRow) -> None:
    conn.execute(
        "INSERT INTO dreaming_rejections (candidate_key, proposal_id, signal_count, rejected_at, reason) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (candidate_key) DO UPDATE SET proposal_id = excluded.proposal_id, "
        "signal_count = excluded.signal_count, rejected_at = excluded.rejected_at, reason = excluded.reason",
        (r.candidate_key, r.proposal_id, r.signal_count, r.rejected_at, r.reason),
    )


def rejections(conn: apsw.Connection) -> dict[str, RejectionRow]:
    sql = "SELECT candidate_key, proposal_id, signal_count, rejected_at, reason FROM dreaming_rejections"
    return {r[0]: RejectionRow(*r) for r in conn.execute(sql)}


# ------------------------------------------------------------------------------------ daily ingestion


def mark_ingested(conn: apsw.Connection, day: str, path: str, claim_key: str, at: int) -> bool:
    """True the first time this claim of this file is counted on this dreaming day."""
    conn.execute(
        "INSERT OR IGNORE INTO dreaming_daily_ingest (day, path, claim_key, recorded_at) VALUES (?, ?, ?, ?)",
        (day, path, claim_key, at),
    )
    return conn.changes() == 1


def prune_ingested(conn: apsw.Connection, before_day: str) -> None:
    conn.execute("DELETE FROM dreaming_daily_ingest WHERE day < ?", (before_day,))


# -------------------------------------------------------------------------------- index / core lookups


def file_origin_classes(conn: apsw.Connection, path: str) -> set[str]:
    """Origin classes of a file's indexed chunks (promotion uses the file-level, least trusted one)."""
    sql = (
        "SELECT DISTINCT p.origin_class FROM memory_index_chunk_provenance p "
        "JOIN memory_index_chunks c ON c.id = p.chunk_id WHERE c.path = ?"
    )
    try:
        return {r[0] for r in conn.execute(sql, (path,))}
    except apsw.SQLError:  # the derived index was reset and not rebuilt yet
        return set()


def reserve_origin(
    conn: apsw.Connection,
    entry_key: str,
    agent_id: str,
    session_id: str,
    session_key: str | None,
    origin: str,
    observed_at: int,
) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO memory_entry_origins "
        "(entry_key, agent_id, session_id, session_key, origin_class, observed_at) VALUES (?, ?, ?, ?, ?, ?)",
        (entry_key, agent_id, session_id, session_key, origin, observed_at),
    )


def release_origins(conn: apsw.Connection, entry_key: str, agent_id: str) -> None:
    conn.execute("DELETE FROM memory_entry_origins WHERE entry_key = ? AND agent_id = ?", (entry_key, agent_id))


# ---------- what lineage forget reads and deletes in Dreaming's state


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
