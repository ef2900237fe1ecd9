"""SQL of the supersede curation action: the markers written (for an exact undo) and the proposals
agents made. Times are epoch milliseconds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import apsw

SUPERSESSION_COLUMNS = (
    "id, path, bullet_text, kind, before_line, after_line, newer_path, newer_line, proposal_id, created_at, undone_at"
)
PROPOSAL_COLUMNS = (
    "id, older_path, older_line, older_text, newer_path, newer_line, newer_text, reason, origin_class, status, "
    "created_at, decided_at, decision_note, supersession_id"
)


@dataclass(frozen=True)
class SupersessionRow:
    id: int
    path: str
    bullet_text: str
    kind: str  # added | replaced | inline
    before_line: str | None
    after_line: str
    newer_path: str
    newer_line: int
    proposal_id: str | None
    created_at: int
    undone_at: int | None


@dataclass(frozen=True)
class ProposalRow:
    id: str
    older_path: str
    older_line: int
    older_text: str
    newer_path: str
    newer_line: int
    newer_text: str
    reason: str
    origin_class: str
    status: str  # pending | accepted | rejected | stale
    created_at: int
    decided_at: int | None
    decision_note: str | None
    supersession_id: int | None


def _supersession(r: tuple) -> SupersessionRow:  # type: ignore[type-arg]
    return SupersessionRow(*r)


def _proposal(r: tuple) -> ProposalRow:  # type: ignore[type-arg]
    return ProposalRow(*r)


# ----------------------------------------------------------------------------- supersessions


def insert_supersession(
    conn: apsw.Connection,
    *,
    path: str,
    bullet_text: str,
    kind: str,
    before_line: str | None,
    after_line: str,
    newer_path: str,
    newer_line: int,
    proposal_id: str | None,
    created_at: int,
) -> int:
    conn.execute(
        "INSERT INTO memory_supersessions (path, bullet_text, kind, before_line, after_line, newer_path, newer_line, "
        "proposal_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (path, bullet_text, kind, before_line, after_line, newer_path, newer_line, proposal_id, created_at),
    )
    return int(conn.last_insert_rowid())


def applied_supersessions(conn: apsw.Connection, path: str, bullet_text: str) -> list[SupersessionRow]:
    """The writes not undone on this bullet of this file, newest first."""
    return [
        _supersession(r)
        for r in conn.execute(
            f"SELECT {SUPERSESSION_COLUMNS} FROM memory_supersessions "
            "WHERE path = ? AND bullet_text = ? AND undone_at IS NULL ORDER BY id DESC",
            (path, bullet_text),
        )
    ]


def mark_undone(conn: apsw.Connection, supersession_id: int, undone_at: int) -> None:
    conn.execute("UPDATE memory_supersessions SET undone_at = ? WHERE id = ?", (undone_at, supersession_id))


# ----------------------------------------------------------------------------- proposals


def insert_proposal(conn: apsw.Connection, row: ProposalRow) -> None:
    conn.execute(
        f"INSERT INTO memory_supersede_proposals ({PROPOSAL_COLUMNS}) VALUES ({', '.join('?' * 14)})",
        (
            row.id,
            row.older_path,
            row.older_line,
            row.older_text,
            row.newer_path,
            row.newer_line,
            row.newer_text,
            row.reason,
            row.origin_class,
            row.status,
            row.created_at,
            row.decided_at,
            row.decision_note,
            row.supersession_id,
        ),
    )


def get_proposal(conn: apsw.Connection, proposal_id: str) -> ProposalRow | None:
    row = next(
        iter(conn.execute(f"SELECT {PROPOSAL_COLUMNS} FROM memory_supersede_proposals WHERE id = ?", (proposal_id,))),
        None,
    )
    return _proposal(row) if row else None


def proposals_by_prefix(conn: apsw.Connection, prefix: str, limit: int = 3) -> list[ProposalRow]:
    return [
        _proposal(r)
        for r in conn.execute(
            f"SELECT {PROPOSAL_COLUMNS} FROM memory_supersede_proposals WHERE substr(id, 1, ?) = ? "
            "ORDER BY created_at, rowid LIMIT ?",
            (len(prefix), prefix, limit),
        )
    ]


def list_proposals(conn: apsw.Connection, statuses: Sequence[str] | None = None) -> list[ProposalRow]:
    """Proposals in these states (all when None), oldest first."""
    rows = [
        _proposal(r)
        for r in conn.execute(
            f"SELECT {PROPOSAL_COLUMNS} FROM memory_supersede_proposals ORDER BY created_at, rowid",
        )
    ]
    return rows if statuses is None else [r for r in rows if r.status in statuses]


def same_pair(
    conn: apsw.Connection, older_path: str, older_text: str, newer_path: str, newer_text: str
) -> list[ProposalRow]:
    """Earlier proposals of the same two entries (by their texts), newest first."""
    return [
        _proposal(r)
        for r in conn.execute(
            f"SELECT {PROPOSAL_COLUMNS} FROM memory_supersede_proposals "
            "WHERE older_path = ? AND older_text = ? AND newer_path = ? AND newer_text = ? "
            "ORDER BY created_at DESC, rowid DESC",
            (older_path, older_text, newer_path, newer_text),
        )
    ]


def decide(
    conn: apsw.Connection,
    proposal_id: str,
    status: str,
    decided_at: int,
    note: str | None,
    supersession_id: int | None = None,
) -> None:
    conn.execute(
        "UPDATE memory_supersede_proposals SET status = ?, decided_at = ?, decision_note = ?, supersession_id = ? "
        "WHERE id = ?",
        (status, decided_at, note, supersession_id, proposal_id),
    )
