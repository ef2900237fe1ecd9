"""The review queue: proposals as stored rows ↔ the frozen :class:`Proposal` the UI sees, and ids.

A proposal carries the before text, the after text, the base hash it was planned on and one
operation per candidate (action, candidate key, snippet, score, components, source
``path#La-Lb``, prior entries). Ids are UUIDs; a unique prefix (the 8-character short id) works
everywhere an id is asked for.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import apsw
from clawmem.engine.dreaming.models import Components, Operation, Proposal
from clawmem.engine.errors import ClawmemError
from clawmem.engine.kinds import PROPOSAL_STATUSES, narrow
from clawmem.engine.store import dreaming_rows
from clawmem.engine.store.dreaming_rows import ProposalRow
from clawmem.engine.times import iso_ms

STATUSES = ("pending", "applied", "rejected", "stale", "reverted", "superseded-by-newer")


def operation_to_json(op: Operation) -> dict[str, Any]:
    data = asdict(op)
    data["prior_entries"] = list(op.prior_entries)
    data["concept_tags"] = list(op.concept_tags)
    data["source"] = op.source
    return data


def operation_from_json(data: dict[str, Any]) -> Operation:
    comps = data.get("components") or {}
    return Operation(
        action=data["action"],
        candidate_key=data["candidate_key"],
        path=data["path"],
        start_line=int(data["start_line"]),
        end_line=int(data["end_line"]),
        snippet=data["snippet"],
        score=float(data["score"]),
        components=Components(**{k: float(comps.get(k, 0.0)) for k in Components.__dataclass_fields__}),
        signal_count=int(data.get("signal_count", 0)),
        recall_count=int(data.get("recall_count", 0)),
        unique_queries=int(data.get("unique_queries", 0)),
        avg_score=float(data.get("avg_score", 0.0)),
        result_entry=data["result_entry"],
        prior_entries=tuple(data.get("prior_entries") or ()),
        lineage_key=data.get("lineage_key"),
        project_key=data.get("project_key"),
        concept_tags=tuple(data.get("concept_tags") or ()),
        chunk_start_line=_opt_int(data.get("chunk_start_line")),
        chunk_end_line=_opt_int(data.get("chunk_end_line")),
        chunk_snippet=data.get("chunk_snippet"),
    )


def _opt_int(value: object) -> int | None:
    return int(value) if isinstance(value, (int, str)) and str(value).lstrip("-").isdigit() else None


def to_proposal(row: ProposalRow) -> Proposal:
    return Proposal(
        id=row.id,
        run_id=row.run_id,
        created_at=iso_ms(row.created_at) or "",
        status=narrow(row.status, PROPOSAL_STATUSES, "proposal status"),
        mode=row.mode,
        base_sha256=row.base_sha256,
        before_text=row.before_text,
        after_text=row.after_text,
        result_sha256=row.result_sha256,
        operations=tuple(operation_from_json(o) for o in row.operations),
        added=int(row.counts.get("added", 0)),
        merged=int(row.counts.get("merged", 0)),
        superseded=int(row.counts.get("superseded", 0)),
        highlights=tuple(row.highlights),
        fallback_reason=row.fallback_reason,
        reason=row.reason,
        decided_at=iso_ms(row.decided_at),
    )


def resolve_id(conn: apsw.Connection, text: str) -> str:
    """A full id or a unique prefix of one; a one-line error otherwise."""
    wanted = text.strip().lower()
    if not wanted:
        raise ClawmemError("give a proposal id (see `clawmem dream review` or `clawmem dream history`)")
    matches = dreaming_rows.proposal_ids_with_prefix(conn, wanted)
    if not matches:
        raise ClawmemError(f"no proposal {text!r}; see `clawmem dream review` or `clawmem dream history`")
    if len(matches) > 1 and wanted not in matches:
        raise ClawmemError(f"{text!r} matches {len(matches)} proposals; give more characters of the id")
    return wanted if wanted in matches else matches[0]


def load(conn: apsw.Connection, text: str) -> ProposalRow:
    row = dreaming_rows.get_proposal(conn, resolve_id(conn, text))
    if row is None:  # pragma: no cover - resolve_id found it
        raise ClawmemError(f"no proposal {text!r}")
    return row
