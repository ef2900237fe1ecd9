"""What an OpenClaw agent's Deep phase would promote tonight, read from its own recall store.

OpenClaw keeps Dreaming's short-term recall entries as ``plugin_state_entries`` of plugin
``memory-core``, namespace ``short-term-recall`` (one row per recalled chunk of a workspace), and
the searches behind them as ``memory.recall.recorded`` events in ``memory-host.events``. Each
entry is mapped onto clawmem's :class:`~engine.store.recall_rows.RecallRow` and ranked by
:func:`engine.dreaming.deep.rank` with OpenClaw's default Deep settings (docs/memory-core.md §5: score ≥ 0.75,
≥ 3 signals, ≥ 3 unique queries, age ≤ 30 days), so every component and gate is explained the
way clawmem explains its own. Promoting stays with OpenClaw (:data:`PROMOTE_COMMAND`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from clawmem.engine.config import DreamingSettings
from clawmem.engine.dreaming.deep import rank
from clawmem.engine.dreaming.models import CandidateExplanation
from clawmem.engine.store.openclaw.rows import PluginStateRow
from clawmem.engine.store.recall_rows import RecallRow

PLUGIN = "memory-core"
RECALL = "short-term-recall"
EVENTS = "memory-host.events"
NAMESPACES = (RECALL, EVENTS)
RECALL_RECORDED = "memory.recall.recorded"
PROMOTE_COMMAND = "openclaw memory promote --apply"
EXPLAIN_COMMAND = "openclaw memory promote-explain"
DEFAULTS = DreamingSettings()  # OpenClaw's own Deep defaults (its config is not read for dreaming)


@dataclass(frozen=True)
class RecallEvent:
    """One search that returned the entry (a ``memory.recall.recorded`` event)."""

    at: str  # ISO instant
    query: str
    result_count: int
    score: float  # this entry's score in that search


@dataclass(frozen=True)
class OpenClawCandidate:
    """One of OpenClaw's recall entries with clawmem's Deep explanation and its recall history."""

    explanation: CandidateExplanation
    held_back_by: tuple[str, ...]  # the gates it fails (empty: OpenClaw would promote it)
    history: tuple[RecallEvent, ...]  # recorded events only: not every search writes one
    promote_command: str

    @property
    def key(self) -> str:
        return self.explanation.key


@dataclass(frozen=True)
class OpenClawDreaming:
    """Tonight's Deep ranking of the agent's recall store, best first."""

    candidates: tuple[OpenClawCandidate, ...]
    would_promote: tuple[str, ...]  # keys of the candidates that pass every gate
    other_workspaces: int  # entries of other workspaces in the same store (not shown)
    skipped: tuple[str, ...]  # rows that could not be decoded, one line each
    min_score: float
    min_recall_count: int
    min_unique_queries: int
    max_age_days: float
    promote_command: str


def workspace_key(workspace: Path) -> str:
    """memory-core's workspace key: the sha256 of the absolute workspace path."""
    return hashlib.sha256(str(workspace).encode()).hexdigest()


def _ms(text: object) -> int | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _num(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _belongs(doc: dict[str, Any], workspace: Path, home: Path) -> bool:
    """This workspace's entry: its key is the workspace's, or — a home copied or moved elsewhere
    (a backup, a test fixture) — its stored workspace dir ends as this workspace does under its home."""
    if doc.get("workspaceKey") == workspace_key(workspace):
        return True
    try:
        tail = workspace.relative_to(home).parts
    except ValueError:
        return False
    stored = PurePosixPath(str(doc.get("workspaceDir") or "")).parts
    return bool(tail) and stored[-len(tail) :] == tail


def recall_row(value: dict[str, Any], created_at: int) -> RecallRow:
    """An OpenClaw ``short-term-recall`` value as clawmem's recall entry (raises KeyError/ValueError)."""
    provenance = value.get("provenance")
    if not isinstance(provenance, dict):
        provenance = {}
    last = _ms(value.get("lastRecalledAt"))
    return RecallRow(
        entry_key=str(value["key"]),
        path=str(value["path"]),
        start_line=int(value["startLine"]),
        end_line=int(value["endLine"]),
        snippet=str(value.get("snippet") or ""),
        claim_hash=str(value.get("claimHash") or ""),
        recall_count=int(_num(value.get("recallCount"))),
        daily_count=int(_num(value.get("dailyCount"))),
        grounded_count=int(_num(value.get("groundedCount"))),
        total_score=_num(value.get("totalScore")),
        max_score=_num(value.get("maxScore")),
        query_hashes=_strings(value.get("queryHashes")),
        user_query_hashes=_strings(value.get("userQueryHashes")),
        recall_days=_strings(value.get("recallDays")),
        concept_tags=_strings(value.get("conceptTags")),
        origin_class=str(provenance.get("originClass") or "agent"),
        session_kind=str(provenance.get("sessionKind") or "unknown"),
        project_key=None,
        first_recalled_at=_ms(value.get("firstRecalledAt")),
        last_recalled_at=last,
        last_query_day=None,
        promoted_at=_ms(value.get("promotedAt")),
        light_hits=0,
        rem_hits=0,
        last_light_at=None,
        last_rem_at=None,
        last_rem_considered_at=None,
        updated_at=last or created_at,
    )


def _history(events: Sequence[dict[str, Any]], row: RecallRow) -> tuple[RecallEvent, ...]:
    out = []
    for e in events:
        for r in e.get("results") or ():
            if (
                isinstance(r, dict)
                and r.get("path") == row.path
                and r.get("startLine") == row.start_line
                and r.get("endLine") == row.end_line
            ):
                out.append(
                    RecallEvent(
                        str(e.get("timestamp") or ""),
                        str(e.get("query") or ""),
                        int(_num(e.get("resultCount"))),
                        _num(r.get("score")),
                    )
                )
                break
    return tuple(sorted(out, key=lambda ev: ev.at))


def evaluate(
    rows: Sequence[PluginStateRow], workspace: Path, home: Path, now_ms: int, settings: DreamingSettings = DEFAULTS
) -> OpenClawDreaming:
    """Rank this workspace's recall entries with Deep's gates; events become each one's history."""
    entries: list[RecallRow] = []
    events: list[dict[str, Any]] = []
    skipped: list[str] = []
    others = 0
    for r in rows:
        try:
            doc = json.loads(r.value_json)
            if r.namespace == EVENTS:
                event = doc.get("event") if isinstance(doc, dict) else None
                if isinstance(event, dict) and event.get("type") == RECALL_RECORDED:
                    events.append(event)
                continue
            if not isinstance(doc, dict) or not isinstance(doc.get("value"), dict):
                raise ValueError("no value object")
            if not _belongs(doc, workspace, home):
                others += 1
                continue
            entries.append(recall_row(doc["value"], r.created_at))
        except (ValueError, KeyError, TypeError) as exc:
            skipped.append(f"{r.namespace} {r.entry_key}: not a recall entry clawmem can read ({exc})")
    candidates = tuple(
        OpenClawCandidate(
            explanation=e,
            held_back_by=tuple(g.name for g in e.gates if not g.passed),
            history=_history(events, next(row for row in entries if row.entry_key == e.key)),
            promote_command=PROMOTE_COMMAND,
        )
        for e in rank(entries, settings, now_ms)
    )
    return OpenClawDreaming(
        candidates=candidates,
        would_promote=tuple(c.key for c in candidates if c.explanation.status == "promotable"),
        other_workspaces=others,
        skipped=tuple(skipped),
        min_score=settings.deep_min_score,
        min_recall_count=settings.deep_min_recall_count,
        min_unique_queries=settings.deep_min_unique_queries,
        max_age_days=settings.deep_max_age_days,
        promote_command=PROMOTE_COMMAND,
    )


def find(dreaming: OpenClawDreaming, selector: str) -> OpenClawCandidate | None:
    """A candidate by exact key, by ``path:line`` inside its lines, or by a unique key prefix."""
    text = selector.strip()
    exact = [c for c in dreaming.candidates if c.key == text]
    if exact:
        return exact[0]
    path, _, line = text.rpartition(":")
    if path and line.isdigit():
        hits = [
            c
            for c in dreaming.candidates
            if c.explanation.path == path and c.explanation.start_line <= int(line) <= c.explanation.end_line
        ]
        if len(hits) == 1:
            return hits[0]
    prefixed = [c for c in dreaming.candidates if c.key.startswith(text)] if text else []
    return prefixed[0] if len(prefixed) == 1 else None
