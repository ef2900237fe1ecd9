"""``DreamingService`` (``engine.dreaming``): one Dreaming cycle, the review queue, revert, history.

A cycle: daily-note ingestion → Light → REM → Deep (docs/memory-core.md §5 order), then the DREAMS.md report.
Deep ranks, re-checks trust, re-reads each candidate from its live file and plans the MEMORY.md
change (consolidated rewrite, or the append-only fallback). With ``dreaming.review = "manual"``
(the default) the plan becomes a *proposal* in the review queue; ``"auto"`` (or ``apply=True``)
applies it at once. Applying always re-checks gates and trust, re-reads MEMORY.md and refuses
when its hash changed (the proposal turns ``stale``), keeps the preimage, and replaces the file
atomically. Nothing runs in the background: a cycle runs when ``run`` (``clawmem dream``), the
cron-friendly ``run_scheduled`` (``clawmem dream --at HH:MM``) or a TUI worker calls it.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from clawmem.engine import recall_sharing
from clawmem.engine.config import Clock, DreamingSettings
from clawmem.engine.dreaming import consolidate, lineage, newer, report
from clawmem.engine.dreaming.apply import current_sha256, encode_for, read_memory, restore_preimage, write_rewrite
from clawmem.engine.dreaming.deep import explain_entry, rank
from clawmem.engine.dreaming.eligibility import consolidation_eligible
from clawmem.engine.dreaming.focus import Focus, focus
from clawmem.engine.dreaming.ingest import ingest_daily_notes, ingestion_lookback_days
from clawmem.engine.dreaming.light import display_snippet, run_light
from clawmem.engine.dreaming.models import (
    ApplyResult,
    CandidateExplanation,
    DeepReport,
    DreamRun,
    HistoryItem,
    LightReport,
    NotPromoted,
    Operation,
    Proposal,
    RemReport,
    RevertResult,
    ScheduledRun,
)
from clawmem.engine.dreaming.rehydrate import Rehydrated, RehydrationFailure, rehydrate
from clawmem.engine.dreaming.rem import run_rem
from clawmem.engine.dreaming.review import load, operation_to_json, to_proposal
from clawmem.engine.errors import ClawmemError, ConflictError, PathRefused
from clawmem.engine.paths import resolve_memory_path
from clawmem.engine.recall import concept_tags, is_contaminated
from clawmem.engine.store import dreaming_rows, recall_rows
from clawmem.engine.store.dreaming_rows import PreimageRow, ProposalRow, RejectionRow
from clawmem.engine.store.postgres.connect import StoreUnavailable
from clawmem.engine.store.recall_rows import RecallRow
from clawmem.engine.times import diary_date, iso_ms
from clawmem.engine.workspace.annotations import find_supersedes
from clawmem.engine.workspace.entries import MarkedEntry, marked_entries
from clawmem.engine.workspace.names import MEMORY_FILE
from clawmem.engine.workspace.reading import decode_memory_bytes, sha256_bytes
from clawmem.engine.workspace.writes import MISSING

if TYPE_CHECKING:
    from pathlib import Path

    import apsw
    from clawmem.engine.runtime import Reindexer, Runtime

PHASES = ("light", "rem", "deep")
STALE_BASE = "MEMORY.md changed since the proposal was made; run `clawmem dream` to make a new one"
_FOCUS_SHOWN = 50  # candidates whose promoted text the list computes (each reads its source file)
Progress = Callable[[str], None]
_HELD_BACK_LABELS = {
    "signals": "with too few signals",
    "unique-queries": "with too few unique queries",
    "age": "recalled too long ago",
    "score": "scoring below the threshold",
}


def _supersedes_in(found: Rehydrated, focused: Focus) -> str | None:
    """The ``<!-- supersedes: KEY -->`` of the promoted lines (or of comment lines right above them)."""
    first = focused.start_line - found.start_line
    lines = list(found.span[first : focused.end_line - found.start_line + 1])
    above = first - 1
    while above >= 0 and found.span[above].strip().startswith("<!--") and found.span[above].strip().endswith("-->"):
        lines.insert(0, found.span[above])
        above -= 1
    return find_supersedes("\n".join(lines))


def parse_at(text: str) -> tuple[int, int]:
    """``HH:MM`` (24-hour) → (hour, minute); a one-line error otherwise."""
    parts = text.strip().split(":")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ClawmemError(f"--at needs a time as HH:MM (24-hour), got {text!r}")
    hour, minute = int(parts[0]), int(parts[1])
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise ClawmemError(f"--at needs a time as HH:MM (24-hour), got {text!r}")
    return hour, minute


@dataclass
class _Cycle:
    """What one cycle's phases produced (None: the phase did not run), for DREAMS.md, the run row and the result."""

    ingested: int = 0
    light: LightReport | None = None
    rem: RemReport | None = None
    deep: DeepReport | None = None
    proposal: Proposal | None = None
    applied: ApplyResult | None = None
    held: dict[str, int] = field(default_factory=dict)


def _operations(
    plan: consolidate.Plan, explained: dict[str, CandidateExplanation], chunks: dict[str, tuple[int, int, str]]
) -> tuple[Operation, ...]:
    """The plan's operations as the review queue keeps them: each with its candidate's ranking and the chunk
    it was read from, so applying can re-check that the source did not change."""
    return tuple(
        Operation(
            action=op.action,
            candidate_key=op.candidate.key,
            path=op.candidate.path,
            start_line=op.candidate.start_line,
            end_line=op.candidate.end_line,
            snippet=op.candidate.snippet,
            score=op.candidate.score,
            components=explained[op.candidate.key].components,
            signal_count=op.candidate.signal_count,
            recall_count=op.candidate.recall_count,
            unique_queries=explained[op.candidate.key].unique_queries,
            avg_score=op.candidate.avg_score,
            result_entry=op.result_entry,
            prior_entries=op.prior_entries,
            lineage_key=op.lineage_key,
            project_key=op.candidate.project_key,
            concept_tags=op.candidate.concept_tags,
            chunk_start_line=chunks[op.candidate.key][0],
            chunk_end_line=chunks[op.candidate.key][1],
            chunk_snippet=chunks[op.candidate.key][2],
        )
        for op in plan.operations
    )


class DreamingService:
    def __init__(self, runtime: Runtime, reindexer: Reindexer) -> None:
        self.runtime = runtime
        self.reindexer = reindexer
        self._held = threading.local()

    # ------------------------------------------------------------------------------------- helpers

    @property
    def config(self) -> DreamingSettings:
        return self.runtime.settings.dreaming

    @property
    def budget(self) -> int:
        """MEMORY.md budget: the dreaming limit, lowered by a smaller bootstrap per-file cap."""
        return min(self.config.memory_file_max_chars, self.runtime.settings.bootstrap.max_chars)

    @property
    def clock(self) -> Clock:
        """The engine's clock in Dreaming's zone: ``dreaming.timezone``, else the user's (docs/memory-core.md §5).
        It decides the day a cycle belongs to, the dated section headings, the diary's date line
        and when ``dream --at HH:MM`` is due."""
        zone = self.config.timezone
        return replace(self.runtime.clock, tz=ZoneInfo(zone)) if zone else self.runtime.clock

    def _conn(self) -> apsw.Connection:
        return self.runtime.store.conn()

    def _now_ms(self) -> int:
        return int(self.runtime.clock.timestamp() * 1000)

    def _locked(self) -> _DreamLock:
        return _DreamLock(self)

    def _file_origins(self, paths: Iterable[str]) -> dict[str, str]:
        """File-level origin for promotion: a file with any untrusted chunk or flush segment is
        untrusted (flush quarantine); the rule lives in :func:`engine.sessions.trust.file_promotion_origins`."""
        from clawmem.engine.sessions.trust import file_promotion_origins

        return file_promotion_origins(self._conn(), self.runtime.workspace, paths)

    def _written(self) -> consolidate.Written:
        """The lines Dreaming added to MEMORY.md in rewrites that are still applied: the only
        lines a merge, a supersede or the budget compaction may remove."""
        applied = dreaming_rows.list_proposals(self._conn(), ("applied",))
        return consolidate.Written.from_rewrites((r.before_text, r.after_text) for r in applied)

    def _catch_up(self) -> str | None:
        """With a shared index, replay the other machines' recall observations first
        (engine/recall_sharing.py); the one-line reason when the server cannot be reached."""
        shared = self.runtime.shared
        if shared is None or self.runtime.store.read_only:
            return None
        try:
            recall_sharing.catch_up(self._conn(), shared)
        except StoreUnavailable as exc:
            return f"the other machines' recalls were not read ({exc}); this machine's were used"
        return None

    def _sync_memory(self) -> list[str]:
        try:
            self.reindexer.sync(only={MEMORY_FILE}, embed=False, lock_timeout=5.0)
        except ClawmemError as exc:
            return [f"the index was not refreshed for MEMORY.md ({exc}); the next sync will do it"]
        return []

    # ----------------------------------------------------------------------------------- the cycle

    def run(
        self,
        phases: Sequence[str] = PHASES,
        *,
        apply: bool | None = None,
        trigger: str = "manual",
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
    ) -> DreamRun:
        """Run one Dreaming cycle now. ``apply=None`` follows ``dreaming.review`` (manual → proposal)."""
        wanted = tuple(p for p in PHASES if p in set(phases))
        unknown = set(phases) - set(PHASES)
        if unknown or not wanted:
            raise ClawmemError(f"unknown phase {sorted(unknown)[0] if unknown else ''!r} (light, rem, deep or all)")
        if trigger not in ("manual", "scheduled", "tui"):
            raise ClawmemError(f"unknown trigger {trigger!r}")
        self.runtime.require_workspace()
        self.runtime.store.require_writable()  # before any file is touched
        with self._locked():
            return self._run(wanted, apply, trigger, progress or (lambda _phase: None), cancel)

    def _run(
        self,
        phases: tuple[str, ...],
        apply: bool | None,
        trigger: str,
        progress: Progress,
        cancel: threading.Event | None,
    ) -> DreamRun:
        """One cycle under the lock: ingestion, then each phase asked for unless ``cancel`` is set by then,
        then DREAMS.md and the run row. The phases run in docs/memory-core.md §5 order."""
        conn = self._conn()
        workspace = self.runtime.workspace
        now = self._now_ms()
        run_id = uuid.uuid4().hex
        with self.runtime.store.write() as c:
            dreaming_rows.insert_run(c, run_id, now, phases, trigger)
        warnings: list[str] = []

        def stopped() -> bool:
            return cancel is not None and cancel.is_set()

        cycle = _Cycle()
        unread = self._catch_up()
        if unread:
            warnings.append(unread)
        if ("light" in phases or "rem" in phases) and not stopped():
            progress("ingest")
            cycle.ingested = self._ingest()
        dreams = report.dreams_path(workspace)
        dreams_text = report.read_dreams(dreams)

        rows_now = recall_rows.all_rows(conn)
        origins = self._file_origins({r.path for r in rows_now}) if ("light" in phases or "rem" in phases) else {}
        if "light" in phases and not stopped():
            progress("light")
            cycle.light = self._light(rows_now, origins, now, dreams_text)
        if "rem" in phases and not stopped():
            progress("rem")
            cycle.rem = self._rem(origins, now)
        if "deep" in phases and not stopped():
            progress("deep")
            self._deep_phase(cycle, run_id, now, apply, warnings)

        progress("report")
        diary = self._diary(cycle.light, cycle.rem, cycle.deep, cycle.proposal, cycle.applied, cycle.held)
        self._write_dreams(dreams, now, diary, cycle, warnings)
        finished = self._now_ms()
        self._finish_run(run_id, finished, cycle)
        return DreamRun(
            id=run_id,
            started_at=iso_ms(now) or "",
            finished_at=iso_ms(finished) or "",
            phases=phases,
            trigger=trigger,
            ingested=cycle.ingested,
            light=cycle.light,
            rem=cycle.rem,
            deep=cycle.deep,
            proposal=cycle.proposal,
            applied=cycle.applied,
            diary_entry=diary,
            dreams_path=dreams.name,
            warnings=tuple(warnings),
        )

    def _ingest(self) -> int:
        """Record the recent daily notes' entries as recall signals, so Light and REM see them; returns how many."""
        cfg = self.config
        workspace = self.runtime.workspace
        lookback = ingestion_lookback_days(max(cfg.light_lookback_days, cfg.rem_lookback_days))
        daily = (
            [f"memory/{p.name}" for p in (workspace / "memory").glob("*.md")] if (workspace / "memory").is_dir() else []
        )
        return ingest_daily_notes(
            self._conn(),
            workspace,
            self.clock,
            lookback_days=lookback,
            limit=cfg.light_limit,
            max_file_bytes=self.runtime.settings.index.max_file_bytes,
            file_origin=self._file_origins(daily),
        )

    def _light(self, rows: list[RecallRow], origins: dict[str, str], now: int, dreams_text: str) -> LightReport:
        """Light: stage the recent entries (deduplicated), and record a light hit on each staged one."""
        cfg = self.config
        light = run_light(
            rows,
            workspace=self.runtime.workspace,
            now_ms=now,
            lookback_days=cfg.light_lookback_days,
            limit=cfg.light_limit,
            dedupe_similarity=cfg.light_dedupe,
            diary_entries=report.recent_diary_entries(dreams_text, 4),
            file_origins=origins,
            display=self._display,
        )
        with self.runtime.store.write() as c:
            recall_rows.record_phase_hit(c, [s.key for s in light.staged], "light", now)
        return light

    def _rem(self, origins: dict[str, str], now: int) -> RemReport:
        """REM: find the themes and truths over the recall store as Light left it, and record what it weighed
        and a REM hit on each truth."""
        cfg = self.config
        rem, considered = run_rem(
            recall_rows.all_rows(self._conn()),
            workspace=self.runtime.workspace,
            now_ms=now,
            lookback_days=cfg.rem_lookback_days,
            limit=cfg.rem_limit,
            min_strength=cfg.rem_min_pattern_strength,
            file_origins=origins,
            display=self._display,
        )
        with self.runtime.store.write() as c:
            recall_rows.record_rem_considered(c, considered, now)
            recall_rows.record_phase_hit(c, [t.key for t in rem.truths], "rem", now)
        return rem

    def _deep_phase(self, cycle: _Cycle, run_id: str, now: int, apply: bool | None, warnings: list[str]) -> None:
        """Deep, then the proposal applied at once when asked (or ``dreaming.review = "auto"``), then what is held
        back below the gates and the phase's DREAMS.md lines."""
        deep, proposal = self._deep(run_id, now)
        applied: ApplyResult | None = None
        if proposal is not None and (apply if apply is not None else self.config.review == "auto"):
            applied = self._apply(load(self._conn(), proposal.id), log_history=False)
            proposal = applied.proposal
            warnings.extend(applied.warnings)
        held = self._held_back()
        cycle.deep = replace(deep, body_lines=tuple(self._deep_body(deep, proposal, applied, held)))
        cycle.proposal, cycle.applied, cycle.held = proposal, applied, held

    def _write_dreams(self, dreams: Path, now: int, diary: str, cycle: _Cycle, warnings: list[str]) -> None:
        """DREAMS.md: the diary entry, each phase's block that ran, and Deep's consolidation history.

        A concurrent edit of DREAMS.md is not overwritten: it becomes a warning.
        """
        light, rem, deep = cycle.light, cycle.rem, cycle.deep
        stamp = diary_date(now, self.clock.tz)
        history = self._run_history(deep, cycle.proposal, cycle.applied) if deep is not None else None

        def update(text: str) -> str:
            text = report.append_diary_entry(report.ensure_diary_section(text), stamp, diary)
            for phase, body in (
                ("light", light.body_lines if light else None),
                ("rem", rem.body_lines if rem else None),
                ("deep", deep.body_lines if deep else None),
            ):
                if body is not None:
                    heading, start, end = report.PHASES[phase]
                    text = report.replace_block(text, heading, start, end, "\n".join(body))
            if history is not None:
                added, merged, superseded, notes, lights = history
                text = report.append_history(text, iso_ms(now) or "", added, merged, superseded, lights, notes)
            return text

        try:
            report.update_dreams(dreams, update)
        except ClawmemError as exc:  # edited meanwhile, a full disk: the run's work stands, said once
            warnings.append(f"DREAMS.md was not updated: {exc}")

    def _finish_run(self, run_id: str, finished: int, cycle: _Cycle) -> None:
        """Close the run row: the phases that ran, what each produced, and Deep's report lines."""
        light, rem, deep, applied = cycle.light, cycle.rem, cycle.deep, cycle.applied
        done = tuple(name for name, ran in (("light", light), ("rem", rem), ("deep", deep)) if ran is not None)
        counts = {
            "ingested": cycle.ingested,
            "light_staged": len(light.staged) if light else 0,
            "rem_themes": len(rem.themes) if rem else 0,
            "deep_candidates": len(deep.candidates) if deep else 0,
            "operations": len(deep.operations) if deep else 0,
            "applied": 1 if applied and applied.applied else 0,
        }
        with self.runtime.store.write() as c:
            dreaming_rows.finish_run(
                c,
                run_id,
                finished,
                counts,
                cycle.proposal.id if cycle.proposal else None,
                "\n".join(deep.body_lines) if deep else "",
                phases_done=done,
            )

    def run_scheduled(self, at: str, *, phases: Sequence[str] = PHASES) -> ScheduledRun:
        """What a cron line calls: run once per day, at or after ``HH:MM`` local time.

        Only a run that covered the requested phases (by default the full cycle) counts as
        today's: a ``dream --phase light`` or a cancelled cycle does not skip the scheduled one."""
        hour, minute = parse_at(at)
        local = self.clock.local_now()
        target = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
        tz_name = local.tzname() or "local time"
        if local < target:
            return ScheduledRun(False, f"not due yet: the cycle runs at {at} and it is {local:%H:%M} {tz_name}", None)
        last = dreaming_rows.last_finished_run_at(self._conn(), covering=tuple(phases))  # partial runs don't count
        target_ms = int(target.timestamp() * 1000)
        if last is not None and last >= target_ms:
            when = datetime.fromtimestamp(last / 1000, local.tzinfo)
            return ScheduledRun(False, f"already ran today at {when:%H:%M} {tz_name} (due at {at})", None)
        if not self.config.enabled:
            return ScheduledRun(False, "dreaming is disabled (dreaming.enabled = false in config.toml)", None)
        return ScheduledRun(True, f"due at {at}; ran one cycle", self.run(phases, trigger="scheduled"))

    # ------------------------------------------------------------------------------------------ deep

    def _rank(self, now: int) -> tuple[list[CandidateExplanation], dict[str, RecallRow]]:
        conn = self._conn()
        rows = recall_rows.all_rows(conn)
        ranked = rank(
            rows,
            self.config,
            now,
            rejections=dreaming_rows.rejections(conn),
            file_origins=self._file_origins(r.path for r in rows),
        )
        return ranked, {r.entry_key: r for r in rows}

    def _deep(self, run_id: str, now: int) -> tuple[DeepReport, Proposal | None]:
        """Deep: rank, re-check and re-read each selected candidate, plan the MEMORY.md change, and propose it
        when it changes the file. Entries the plan finds already in MEMORY.md are marked promoted."""
        cfg = self.config
        ranked, by_key = self._rank(now)
        passing = tuple(e for e in ranked if e.status in ("promotable", "beyond-limit"))
        selected = [e for e in ranked if e.status == "promotable"]
        not_promoted = [NotPromoted(e.key, "selection limit", e.reason) for e in ranked if e.status == "beyond-limit"]
        candidates: list[consolidate.Candidate] = []
        explained: dict[str, CandidateExplanation] = {}
        chunks: dict[str, tuple[int, int, str]] = {}
        for e in selected:
            prepared = self._consolidation_candidate(e, by_key[e.key])
            if isinstance(prepared, NotPromoted):
                not_promoted.append(prepared)
                continue
            candidate, chunk = prepared
            explained[e.key] = e
            chunks[e.key] = chunk
            candidates.append(candidate)
        state = read_memory(self.runtime.workspace)
        plan = consolidate.plan(
            state.text,
            [self._with_replaced(c, state.text) for c in candidates],
            day=self.clock.today(),
            budget=self.budget,
            max_loss=cfg.max_prior_entry_loss_fraction,
            max_tokens=cfg.max_promoted_snippet_tokens,
            written=self._written(),
        )
        settled = [s.key for s in plan.skipped if s.category in ("already promoted", "already in MEMORY.md")]
        if settled:
            with self.runtime.store.write() as c:
                for key in settled:
                    recall_rows.set_promoted(c, key, now, now)
        not_promoted += [NotPromoted(s.key, s.category, s.reason) for s in plan.skipped]
        operations = _operations(plan, explained, chunks)
        proposal: Proposal | None = None
        if plan.content is not None and plan.content != state.text and plan.mode is not None:
            proposal = self._propose(run_id, now, state.sha256, state.text, plan, operations)
        deep = DeepReport(
            candidates=passing,
            selected=tuple(e.key for e in selected),
            operations=operations,
            not_promoted=tuple(not_promoted),
            mode=plan.mode if proposal else None,
            fallback_reason=plan.fallback_reason,
            skipped_reason=plan.unchanged_reason,
            body_lines=(),
        )
        return deep, proposal

    def _consolidation_candidate(
        self, e: CandidateExplanation, row: RecallRow
    ) -> tuple[consolidate.Candidate, tuple[int, int, str]] | NotPromoted:
        """One selected entry re-checked and re-read from its live file: what consolidation gets (the focused
        lines) and the chunk they came from, or why it is not promoted after all."""
        if not consolidation_eligible(e.path, e.origin_class, e.session_kind):
            return NotPromoted(e.key, "consolidation origin/session", "consolidation origin/session filter")
        found = rehydrate(self.runtime.workspace, row.path, row.start_line, row.end_line, row.snippet)
        if isinstance(found, RehydrationFailure):
            return NotPromoted(e.key, found.category, found.reason)
        if is_contaminated(found.snippet):
            return NotPromoted(e.key, "contamination", "contamination filter after rehydration")
        focused = self._focus(row, found)
        if focused is None:
            return NotPromoted(e.key, "source rehydration", "the chunk holds only headings or comments")
        own = newer.marker_at(self._markers(row.path), focused.start_line, focused.end_line)
        if own is not None and own.superseded:  # an old fact: its newer version is promoted when it recurs
            by = f"by {own.by}" if own.by else "by a newer entry"
            return NotPromoted(e.key, "superseded", f"its entry is marked superseded {by}: an old fact is not promoted")
        candidate = consolidate.Candidate(
            key=e.key,
            path=row.path,
            start_line=focused.start_line,
            end_line=focused.end_line,
            snippet=focused.text,
            score=e.score,
            signal_count=e.signal_count,
            recall_count=e.recall_count,
            avg_score=e.avg_score,
            concept_tags=concept_tags(focused.text, recall_rows.term_query_counts(self._conn(), e.key))
            or e.concept_tags,
            project_key=found.project_key or row.project_key,
            supersedes_key=_supersedes_in(found, focused),
        )
        return candidate, (found.start_line, found.end_line, found.snippet)

    def _markers(self, rel: str) -> tuple[MarkedEntry, ...]:
        """The entries of a memory file that carry a marker (none for a path outside the workspace)."""
        try:
            path = resolve_memory_path(self.runtime.workspace, rel)
        except PathRefused:
            return ()
        return marked_entries(path, rel)

    def _with_replaced(self, c: consolidate.Candidate, memory_text: str) -> consolidate.Candidate:
        """The candidate with the MEMORY.md entries it replaces by a person's marker (engine/dreaming/newer.py)."""
        found = newer.replaced_entries(memory_text, c.path, c.start_line, c.end_line, self._markers)
        if found is None:
            return c
        return replace(c, replaces=found.entries, supersedes_key=c.supersedes_key or found.lineage_key)

    def _display(self, row: RecallRow) -> str:
        """What DREAMS.md shows for an entry: the text promotion would write (matched lines, no
        heading or markers), else the stored snippet cleaned."""
        found = rehydrate(self.runtime.workspace, row.path, row.start_line, row.end_line, row.snippet)
        focused = None if isinstance(found, RehydrationFailure) else self._focus(row, found)
        return focused.text if focused is not None else display_snippet(row.snippet)

    def _focus(self, row: RecallRow, found: Rehydrated) -> Focus | None:
        """The lines of the rehydrated chunk to promote (see :mod:`engine.dreaming.focus`)."""
        matches = recall_rows.line_query_counts(self._conn(), row.entry_key)
        if found.end_line - found.start_line == row.end_line - row.start_line:
            delta = found.start_line - row.start_line  # the chunk moved in the file: move its matches
            matches = {line + delta: n for line, n in matches.items()}
        else:
            matches = {}  # the chunk changed shape; the recorded lines no longer say which is which
        return focus(found.span, found.start_line, found.snippet, matches)

    def _propose(
        self, run_id: str, now: int, base: str, before: str, plan: consolidate.Plan, operations: tuple[Operation, ...]
    ) -> Proposal:
        conn = self._conn()
        for pending in dreaming_rows.list_proposals(conn, ("pending",)):
            same_ops = [o["candidate_key"] for o in pending.operations] == [o.candidate_key for o in operations]
            if pending.base_sha256 == base and pending.after_text == plan.content and same_ops:
                return to_proposal(pending)  # this cycle found exactly what already waits for review
        row = ProposalRow(
            id=uuid.uuid4().hex,
            run_id=run_id,
            created_at=now,
            status="pending",
            mode=plan.mode or "append",
            base_sha256=base,
            before_text=before,
            after_text=plan.content or "",
            result_sha256=None,
            operations=[operation_to_json(op) for op in operations],
            counts={"added": plan.added, "merged": plan.merged, "superseded": plan.superseded},
            highlights=list(plan.highlights),
            fallback_reason=plan.fallback_reason,
            reason=None,
            decided_at=None,
        )
        with self.runtime.store.write() as c:
            dreaming_rows.insert_proposal(c, row)
            dreaming_rows.supersede_pending(c, except_id=row.id, at=now)
        return to_proposal(row)

    def _deep_body(
        self, deep: DeepReport, proposal: Proposal | None, applied: ApplyResult | None, held: dict[str, int]
    ) -> list[str]:
        lines = [f"- Ranked {len(deep.selected)} candidate(s) for durable promotion."]
        if applied is not None:
            n = len(applied.proposal.operations) if applied.applied else 0
            lines.append(f"- Promoted {n} candidate(s) into MEMORY.md.")
            if not applied.applied:
                lines.append(f"- Rewrite skipped: {applied.message.rstrip('.')}.")
        elif proposal is not None:
            lines.append(
                f"- Proposed {len(proposal.operations)} candidate(s) for MEMORY.md; awaiting review "
                f"(proposal {proposal.short_id}: `clawmem dream review`)."
            )
        else:
            lines.append("- Promoted 0 candidate(s) into MEMORY.md.")
        if deep.not_promoted:
            by_cat = Counter(n.category for n in deep.not_promoted)
            summary = ", ".join(f"{cat}: {count}" for cat, count in sorted(by_cat.items()))
            lines.append(f"- Not promoted: {len(deep.not_promoted)} candidate(s) ({summary}).")
        if proposal is not None and proposal.mode == "append" and deep.fallback_reason:
            lines.append(f"- Consolidated rewrite not used ({deep.fallback_reason}); append-only promotion.")
        if deep.skipped_reason:
            lines.append(f"- MEMORY.md unchanged: {deep.skipped_reason}.")
        if held:
            total = sum(held.values())
            listed = ", ".join(f"{why}: {n}" for why, n in sorted(held.items()))
            lines.append(f"- Held back below the gates: {total} entr{'y' if total == 1 else 'ies'} ({listed}).")
        return lines

    def _held_back(self) -> dict[str, int]:
        ranked, _ = self._rank(self._now_ms())
        held: Counter[str] = Counter()
        for e in ranked:
            if e.status == "below-gates":
                first = next(g for g in e.gates if not g.passed)
                held[first.name] += 1
        return dict(held)

    def _diary(
        self,
        light: LightReport | None,
        rem: RemReport | None,
        deep: DeepReport | None,
        proposal: Proposal | None,
        applied: ApplyResult | None,
        held: dict[str, int],
    ) -> str:
        ops = proposal.operations if proposal else ()
        done = applied is not None and applied.applied
        labelled = {_HELD_BACK_LABELS.get(k, k): v for k, v in held.items()}
        return report.diary_narrative(
            light_staged=len(light.staged) if light else None,
            light_lookback=self.config.light_lookback_days,
            rem_themes=[t.tag for t in rem.themes] if rem else None,
            rem_considered=rem.considered if rem else 0,
            ranked=len(deep.selected) if deep else None,
            held_back=labelled,
            written=[(o.snippet, o.source) for o in ops] if done else [],
            proposed=[(o.snippet, o.source) for o in ops] if proposal and applied is None else [],
            proposal_id=proposal.id if proposal else None,
            unchanged_reason=deep.skipped_reason if deep else None,
            stale_reason=applied.message.rstrip(".") if applied and not applied.applied else None,
        )

    # ---------------------------------------------------------------------------------- explain

    def candidates(self) -> tuple[CandidateExplanation, ...]:
        """Every recall entry, explained: promotable ones first in rank order (the Dreams pane list);
        the first ones that could be promoted also say what text promotion would write."""
        self._catch_up()  # a run catches up once, at its start
        ranked, by_key = self._rank(self._now_ms())
        out: list[CandidateExplanation] = []
        for n, e in enumerate(ranked):
            wanted = n < _FOCUS_SHOWN and e.status not in ("excluded", "promoted")
            out.append(self._with_focus(e, by_key[e.key]) if wanted else e)
        return tuple(out)

    def _with_focus(self, e: CandidateExplanation, row: RecallRow) -> CandidateExplanation:
        """``e`` plus what promoting it would write now: the text, its source lines and why."""
        matches = recall_rows.line_query_counts(self._conn(), row.entry_key)
        e = replace(e, line_matches=tuple(sorted(matches.items())))
        found = rehydrate(self.runtime.workspace, row.path, row.start_line, row.end_line, row.snippet)
        if isinstance(found, RehydrationFailure):
            return replace(e, focus_detail=found.reason)
        focused = self._focus(row, found)
        if focused is None:
            return replace(e, focus_detail="the chunk holds only headings or comments; nothing to promote")
        return replace(
            e,
            promoted_text=consolidate.promoted_text(focused.text, self.config.max_promoted_snippet_tokens),
            promoted_source=f"{row.path}#L{focused.start_line}-L{focused.end_line}",
            focus_detail=focused.detail,
        )

    def explain(self, selector: str) -> CandidateExplanation:
        """One entry by key, unique key prefix, or ``path:line``."""
        text = selector.strip()
        if not text:
            raise ClawmemError("give an entry key, a key prefix or path:line (see `clawmem dream explain --help`)")
        self._catch_up()
        ranked, rows = self._rank(self._now_ms())
        found = self._select(text, ranked)
        return self._with_focus(found, rows[found.key])

    @staticmethod
    def _select(text: str, ranked: Sequence[CandidateExplanation]) -> CandidateExplanation:
        by_key = {e.key: e for e in ranked}
        if text in by_key:
            return by_key[text]
        if text.startswith("memory:"):
            matches = [e for e in ranked if e.key.startswith(text)]
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise ClawmemError(f"{text!r} matches {len(matches)} entries; give more of the key")
        path, sep, line = text.rpartition(":")
        if sep and line.isdigit() and path:
            at = [e for e in ranked if e.path == path and e.start_line <= int(line) <= e.end_line]
            if at:  # the search-recall entry before a daily claim, then the most promotable
                return sorted(at, key=lambda e: e.key.startswith("memory:claim:"))[0]
            raise ClawmemError(f"no recall entry covers {path} line {line}; nothing has recalled it yet")
        raise ClawmemError(f"no recall entry {text!r}; give an entry key, a key prefix or path:line")

    # ---------------------------------------------------------------------------------- review

    def proposals(self, statuses: Sequence[str] | None = None) -> tuple[Proposal, ...]:
        """Proposals as they stand now: a pending one whose base no longer matches MEMORY.md is
        shown ``stale`` with the reason (approving it would refuse; the next cycle regenerates it)."""
        current = current_sha256(self.runtime.workspace / MEMORY_FILE)
        return tuple(self._live(to_proposal(r), current) for r in dreaming_rows.list_proposals(self._conn(), statuses))

    def pending(self) -> tuple[Proposal, ...]:
        """Proposals waiting for review (stale ones included, marked as such)."""
        return self.proposals(("pending",))

    def proposal(self, proposal_id: str) -> Proposal:
        current = current_sha256(self.runtime.workspace / MEMORY_FILE)
        return self._live(to_proposal(load(self._conn(), proposal_id)), current)

    @staticmethod
    def _live(p: Proposal, current_sha: str) -> Proposal:
        if p.status != "pending" or p.base_sha256 == current_sha:
            return p
        return replace(p, status="stale", reason=STALE_BASE)

    def approve(self, proposal_id: str) -> ApplyResult:
        """Apply a pending proposal (hash-checked); a changed MEMORY.md makes it stale instead."""
        self.runtime.require_workspace()
        self.runtime.store.require_writable()  # before any file is touched
        with self._locked():
            row = load(self._conn(), proposal_id)
            return self._finish_interrupted_apply(row) or self._apply(row)

    def reject(self, proposal_id: str, reason: str | None = None) -> Proposal:
        """Refuse a proposal; its candidates wait until they gain new signals."""
        with self._locked():
            conn = self._conn()
            row = load(conn, proposal_id)
            if row.status not in ("pending", "stale"):
                raise ClawmemError(f"proposal {row.id[:8]} is {row.status}; only pending proposals can be rejected")
            now = self._now_ms()
            current = recall_rows.get_many(conn, (o["candidate_key"] for o in row.operations))
            with self.runtime.store.write() as c:
                dreaming_rows.set_proposal_status(
                    c, row.id, "rejected", decided_at=now, reason=(reason or "").strip() or "rejected"
                )
                for op in row.operations:
                    key = op["candidate_key"]
                    signals = current[key].signal_count if key in current else int(op.get("signal_count", 0))
                    dreaming_rows.upsert_rejection(
                        c, RejectionRow(key, row.id, signals, now, (reason or "").strip() or None)
                    )
            return self.proposal(row.id)

    def _recheck(self, row: ProposalRow, now: int) -> str | None:
        """Spec §5 Apply 1 at approval time: trust, gates and the live source of every candidate."""
        conn = self._conn()
        keys = [o["candidate_key"] for o in row.operations]
        current = recall_rows.get_many(conn, keys)
        origins = self._file_origins(r.path for r in current.values())
        for op in row.operations:
            key = op["candidate_key"]
            rec = current.get(key)
            short = f"{op['path']}#L{op['start_line']}-L{op['end_line']}"
            if rec is None:
                return f"the candidate from {short} is no longer in the recall store"
            e = explain_entry(rec, self.config, now, file_origin=origins.get(rec.path))
            if e.status not in ("promotable",):
                return f"the candidate from {short} no longer qualifies: {e.reason}"
            if not consolidation_eligible(e.path, e.origin_class, e.session_kind):
                return f"the candidate from {short} no longer qualifies: origin {e.origin_class}"
            found = rehydrate(self.runtime.workspace, rec.path, rec.start_line, rec.end_line, rec.snippet)
            if isinstance(found, RehydrationFailure):
                return f"the source of {short} changed: {found.reason}"
            chunk = (
                (op["chunk_start_line"], op["chunk_end_line"], op["chunk_snippet"])
                if op.get("chunk_snippet") is not None
                else (op["start_line"], op["end_line"], op["snippet"])
            )
            if (found.start_line, found.end_line, found.snippet) != chunk:
                return f"the source of {short} changed since the proposal was made"
        return None

    def _run_history(
        self, deep: DeepReport, proposal: Proposal | None, applied: ApplyResult | None
    ) -> tuple[int, int, int, tuple[str, ...], tuple[str, ...]]:
        """This Deep run's ``## Memory Consolidation History`` block (docs/memory-core.md §5: every run, applied
        or not): counts of what changed MEMORY.md now, notes, highlights."""
        notes: tuple[str, ...] = ()
        if applied is not None and applied.applied:
            p = applied.proposal
            notes = report.skipped_notes(p.fallback_reason or "no consolidated rewrite") if p.mode == "append" else ()
            return p.added, p.merged, p.superseded, notes, p.highlights
        if applied is not None:
            notes = report.skipped_notes(applied.message, "none; MEMORY.md unchanged")
            return 0, 0, 0, notes, ()
        if proposal is not None:
            if proposal.mode == "append":
                notes = report.skipped_notes(
                    proposal.fallback_reason or "no consolidated rewrite", "append-only promotion (proposed)"
                )
            notes += (
                f"- Proposed: {proposal.added} added, {proposal.merged} merged, {proposal.superseded} superseded "
                f"in proposal {proposal.short_id}, awaiting review (`clawmem dream review`).",
            )
            return 0, 0, 0, notes, ()
        if deep.skipped_reason:
            notes = report.skipped_notes(
                deep.fallback_reason or "the consolidated rewrite did not fit",
                f"none; {deep.skipped_reason}, so MEMORY.md is unchanged and the candidates stay eligible",
            )
            return 0, 0, 0, notes, ()
        if not deep.selected:
            return 0, 0, 0, ("- No change: no candidate passed the promotion gates.",), ()
        by_cat = Counter(n.category for n in deep.not_promoted)
        listed = ", ".join(f"{cat}: {count}" for cat, count in sorted(by_cat.items())) or "nothing to write"
        return 0, 0, 0, (f"- No change: {len(deep.selected)} ranked candidate(s), none written ({listed}).",), ()

    def _apply(self, row: ProposalRow, *, log_history: bool = True) -> ApplyResult:
        short = row.id[:8]
        if row.status == "stale":
            raise ClawmemError(
                f"proposal {short} is stale ({row.reason or 'MEMORY.md changed'}); "
                "run `clawmem dream` to make a new one"
            )
        if row.status != "pending":
            raise ClawmemError(f"proposal {short} is {row.status}; only pending proposals can be approved")
        now = self._now_ms()

        def refuse(reason: str) -> ApplyResult:
            with self.runtime.store.write() as c:
                dreaming_rows.set_proposal_status(c, row.id, "stale", decided_at=now, reason=reason)
            return ApplyResult(
                self.proposal(row.id),
                False,
                f"{reason}; nothing was written and proposal {short} is now stale — run `clawmem dream` "
                "to make a new one",
            )

        problem = self._recheck(row, now)
        if problem:
            return refuse(problem)
        state = read_memory(self.runtime.workspace)
        if state.sha256 != row.base_sha256:
            return refuse("MEMORY.md changed since the proposal was made")
        result_bytes = encode_for(state, row.after_text)
        result_sha = sha256_bytes(result_bytes)
        pre_hash = sha256_bytes(state.raw_text.encode("utf-8"))
        pre_key = f"{iso_ms(now)}:{pre_hash[:12]}"
        agent = self.runtime.settings.agent_id
        with self.runtime.store.write() as c:
            dreaming_rows.insert_preimage(
                c, PreimageRow(pre_key, row.id, now, state.raw_text, state.sha256, result_sha)
            )
            for op in row.operations:
                for s in lineage.candidate_sessions(self.runtime, op["candidate_key"], op["path"]):
                    dreaming_rows.reserve_origin(
                        c, op["candidate_key"], agent, s.session_id, s.session_key, s.origin_class, s.observed_at
                    )
        try:
            write_rewrite(state, row.after_text, row.base_sha256)
        except ConflictError:
            with self.runtime.store.write() as c:
                dreaming_rows.delete_preimage(c, pre_key)
                for op in row.operations:
                    dreaming_rows.release_origins(c, op["candidate_key"], agent)
            return refuse("MEMORY.md changed immediately before the write")
        # DREAMS.md before the database: a run killed between the two leaves the proposal pending
        # with MEMORY.md holding its result, which the next approve finishes (_finish_interrupted_apply)
        warnings = self._history_applied(row, now) if log_history else []
        self._record_applied(row, now, result_sha)
        warnings += self._sync_memory()
        return ApplyResult(
            self.proposal(row.id),
            True,
            f"applied proposal {short}: MEMORY.md rewritten ({len(row.operations)} entr"
            f"{'y' if len(row.operations) == 1 else 'ies'})",
            tuple(warnings),
        )

    def _record_applied(self, row: ProposalRow, now: int, result_sha: str) -> None:
        """The database's part of an apply: the proposal applied, its candidates promoted."""
        with self.runtime.store.write() as c:
            dreaming_rows.set_proposal_status(c, row.id, "applied", decided_at=now, result_sha256=result_sha)
            for op in row.operations:
                recall_rows.set_promoted(c, op["candidate_key"], now, now)
                if op.get("chunk_snippet") is not None:  # the whole chunk, as the recall entry knows it
                    recall_rows.relocate(
                        c, op["candidate_key"], op["chunk_start_line"], op["chunk_end_line"], op["chunk_snippet"], now
                    )
                else:
                    recall_rows.relocate(c, op["candidate_key"], op["start_line"], op["end_line"], op["snippet"], now)
            dreaming_rows.stale_pending(
                c,
                base_sha256_not=result_sha,
                at=now,
                reason=f"MEMORY.md changed when proposal {row.id[:8]} was applied",
            )
            dreaming_rows.prune_preimages(c, max(8, self.config.preimages_keep), row.id)

    def _finish_interrupted_apply(self, row: ProposalRow) -> ApplyResult | None:
        """An apply killed after it wrote MEMORY.md and before the database knew (a crash, kill -9:
        tests/faults): the proposal is pending, its preimage is kept and MEMORY.md holds exactly
        its result. Record it as applied, and write its DREAMS.md entry unless that landed;
        None when the proposal was not left that way."""
        if row.status != "pending":
            return None
        pre = dreaming_rows.preimage_for(self._conn(), row.id)
        state = read_memory(self.runtime.workspace)
        if pre is None or state.sha256 != pre.result_sha256 or state.sha256 == row.base_sha256:
            return None
        now = self._now_ms()
        short = row.id[:8]
        landed = f"- Approved: proposal {short}." in report.read_dreams(report.dreams_path(self.runtime.workspace))
        warnings = [] if landed else self._history_applied(row, now)
        self._record_applied(row, now, pre.result_sha256)
        warnings += self._sync_memory()
        message = f"applied proposal {short}: MEMORY.md already held its rewrite (an interrupted apply), now recorded"
        return ApplyResult(self.proposal(row.id), True, message, tuple(warnings))

    def _history_applied(self, row: ProposalRow, now: int) -> list[str]:
        stamp = iso_ms(now) or ""

        notes: tuple[str, ...] = (f"- Approved: proposal {row.id[:8]}.",)
        if row.mode == "append":
            notes += report.skipped_notes(row.fallback_reason or "no consolidated rewrite was planned")

        def update(text: str) -> str:
            return report.append_history(
                text,
                stamp,
                int(row.counts.get("added", 0)),
                int(row.counts.get("merged", 0)),
                int(row.counts.get("superseded", 0)),
                row.highlights,
                notes,
            )

        try:
            report.update_dreams(report.dreams_path(self.runtime.workspace), update)
        except ClawmemError as exc:  # edited meanwhile, a full disk: MEMORY.md is rewritten all the same
            return [f"DREAMS.md history was not updated: {exc}"]
        return []

    # ---------------------------------------------------------------------------------- revert

    def revert(self, proposal_id: str) -> RevertResult:
        """Restore MEMORY.md to an applied rewrite's preimage, only if it still holds that rewrite."""
        self.runtime.require_workspace()
        self.runtime.store.require_writable()  # before any file is touched
        with self._locked():
            conn = self._conn()
            row = load(conn, proposal_id)
            short = row.id[:8]
            if row.status != "applied":
                raise ClawmemError(f"proposal {short} is {row.status}; only applied rewrites can be reverted")
            pre = dreaming_rows.preimage_for(conn, row.id)
            if pre is None:
                raise ClawmemError(
                    f"the preimage of proposal {short} is no longer kept (only the last "
                    f"{max(8, self.config.preimages_keep)} are); nothing was changed"
                )
            preimage_text = decode_memory_bytes(pre.preimage.encode("utf-8"))[0] if pre.preimage else ""
            state = read_memory(self.runtime.workspace)
            current_text = state.text if state.exists else None

            def refused(message: str) -> RevertResult:
                return RevertResult(row.id, False, message, preimage_text, row.after_text, current_text)

            if state.sha256 == pre.preimage_sha256 != row.result_sha256:
                return self._finish_interrupted_revert(row, pre, preimage_text)
            if state.sha256 != row.result_sha256:
                return refused(
                    f"MEMORY.md changed since proposal {short} was applied; nothing was restored — "
                    "merge the preimage by hand (shown below)"
                )
            try:
                restore_preimage(state.path, pre.preimage, pre.preimage_sha256, row.result_sha256 or MISSING)
            except ConflictError as exc:
                return refused(f"{exc}; merge the preimage by hand (shown below)")
            # DREAMS.md before the database, as in an apply: a revert killed between the restore
            # and the commit is finished by the next revert (_finish_interrupted_revert)
            now = self._now_ms()
            warnings = self._note_reverted(row, pre, now)
            self._record_reverted(row, now)
            warnings += self._sync_memory()
            return RevertResult(
                row.id,
                True,
                f"reverted proposal {short}: MEMORY.md restored byte for byte",
                preimage_text,
                row.after_text,
                preimage_text if pre.preimage_sha256 != MISSING else None,
                tuple(warnings),
            )

    def _finish_interrupted_revert(self, row: ProposalRow, pre: PreimageRow, preimage_text: str) -> RevertResult:
        """A revert killed after it restored MEMORY.md and before the database knew (tests/faults):
        the proposal is still applied while MEMORY.md holds exactly its preimage. Record the
        revert, and write its DREAMS.md entry unless that landed."""
        now = self._now_ms()
        landed = f"- Reverted: proposal {row.id[:8]}." in report.read_dreams(report.dreams_path(self.runtime.workspace))
        warnings = [] if landed else self._note_reverted(row, pre, now)
        self._record_reverted(row, now)
        warnings += self._sync_memory()
        return RevertResult(
            row.id,
            True,
            f"reverted proposal {row.id[:8]}: MEMORY.md already held its preimage "
            "(an interrupted revert), now recorded",
            preimage_text,
            row.after_text,
            preimage_text if pre.preimage_sha256 != MISSING else None,
            tuple(warnings),
        )

    def _note_reverted(self, row: ProposalRow, pre: PreimageRow, now: int) -> list[str]:
        """The revert's DREAMS.md entry; a warning when it cannot be written (the revert stands)."""
        stamp = iso_ms(now) or ""
        try:
            report.update_dreams(
                report.dreams_path(self.runtime.workspace),
                lambda text: report.append_reverted(text, stamp, row.id, pre.key),
            )
        except ClawmemError as exc:  # edited meanwhile, a full disk
            return [f"DREAMS.md history was not updated: {exc}"]
        return []

    def _record_reverted(self, row: ProposalRow, now: int) -> None:
        """The database's part of a revert: the proposal reverted, its candidates eligible again
        only with new signals, and pending proposals on another MEMORY.md stale."""
        conn = self._conn()
        restored_sha = current_sha256(self.runtime.workspace / MEMORY_FILE)
        current = recall_rows.get_many(conn, (o["candidate_key"] for o in row.operations))
        with self.runtime.store.write() as c:
            dreaming_rows.set_proposal_status(c, row.id, "reverted", reverted_at=now)
            for op in row.operations:
                key = op["candidate_key"]
                recall_rows.set_promoted(c, key, None, now)
                signals = current[key].signal_count if key in current else int(op.get("signal_count", 0))
                dreaming_rows.upsert_rejection(c, RejectionRow(key, row.id, signals, now, "reverted"))
                dreaming_rows.release_origins(c, key, self.runtime.settings.agent_id)
            dreaming_rows.stale_pending(
                c,
                base_sha256_not=restored_sha,
                at=now,
                reason=f"MEMORY.md changed when proposal {row.id[:8]} was reverted",
            )

    # --------------------------------------------------------------------------------- history

    def history(self) -> tuple[HistoryItem, ...]:
        conn = self._conn()
        keys = dreaming_rows.preimage_keys(conn)
        current = current_sha256(self.runtime.workspace / MEMORY_FILE)
        out = []
        for r in dreaming_rows.list_proposals(conn, ("applied", "reverted")):
            out.append(
                HistoryItem(
                    proposal_id=r.id,
                    status=r.status,
                    mode=r.mode,
                    applied_at=iso_ms(r.decided_at),
                    reverted_at=iso_ms(r.reverted_at),
                    added=int(r.counts.get("added", 0)),
                    merged=int(r.counts.get("merged", 0)),
                    superseded=int(r.counts.get("superseded", 0)),
                    result_sha256=r.result_sha256,
                    preimage_key=keys.get(r.id),
                    preimage_available=r.id in keys,
                    is_current=r.status == "applied" and r.result_sha256 == current,
                )
            )
        out.sort(key=lambda h: (h.applied_at or "", h.proposal_id), reverse=True)
        return tuple(out)


class _DreamLock:
    """One Dreaming writer per agent across processes; re-entrant within a thread."""

    def __init__(self, service: DreamingService) -> None:
        self.service = service
        self.lock = service.runtime.lock("dreaming", timeout=2.0)
        self.owner = False

    def __enter__(self) -> _DreamLock:
        held = getattr(self.service._held, "depth", 0)
        if held == 0:
            if not self.lock.acquire():
                raise ClawmemError("another Dreaming run or review is in progress for this agent; try again shortly")
            self.owner = True
        self.service._held.depth = held + 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.service._held.depth -= 1
        if self.owner:
            self.lock.release()
