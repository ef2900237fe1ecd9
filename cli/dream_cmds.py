"""``dream`` (one Dreaming cycle now, or ``--at HH:MM`` from cron) and ``dream explain|candidates|review|
approve|reject|revert|history``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from clawmem.cli import output
from clawmem.engine.dreaming.models import (
    ApplyResult,
    CandidateExplanation,
    DreamRun,
    HistoryItem,
    Proposal,
    RevertResult,
    unified_diff,
)
from clawmem.engine.dreaming.service import PHASES
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.json_form import json_form
from clawmem.engine.openclaw.dreaming import OpenClawCandidate, OpenClawDreaming
from clawmem.engine.text_clip import clip_flat
from clawmem.shell import flags, messages


def _phase(text: str) -> str:
    value = text.strip().lower()
    if value not in (*PHASES, "all"):
        raise ClawmemError(f"--phase: unknown phase {text!r} (light, rem, deep or all)")
    return value


def _hhmm(text: str) -> str:
    parts = text.strip().split(":")
    if (
        len(parts) != 2
        or not all(p.isdigit() for p in parts)
        or not (0 <= int(parts[0]) <= 23)
        or not (0 <= int(parts[1]) <= 59)
    ):
        raise ClawmemError(f"--at: not a time: {text!r} (use HH:MM, 24-hour)")
    return f"{int(parts[0]):02d}:{int(parts[1]):02d}"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parent = flags.global_parent()
    p = sub.add_parser(
        "dream",
        parents=[parent],
        help="run Dreaming now (Light → REM → Deep) and review its MEMORY.md proposals",
        description=(
            "Without a subcommand: run one Dreaming cycle now. In review mode (the default) Deep writes a "
            "proposal for MEMORY.md that you approve or reject; --apply applies it at once."
        ),
    )
    p.add_argument(
        "--phase", type=_phase, action="append", metavar="PHASE", help="light, rem, deep or all (default all)"
    )
    p.add_argument("--apply", action="store_true", help="apply Deep's rewrite now instead of queueing it for review")
    p.add_argument(
        "--at",
        type=_hhmm,
        metavar="HH:MM",
        help="for cron: run only if it is HH:MM or later (local time) and no cycle has finished since",
    )
    p.add_argument("--json", action="store_true", help="print the run as JSON")
    p.set_defaults(handler=cmd_dream)
    dsub = p.add_subparsers(dest="dream_command", metavar="SUBCOMMAND")

    q = dsub.add_parser("explain", parents=[parent], help="every component and gate of one recall entry")
    q.add_argument("selector", help="an entry key, a unique key prefix, or path:line (memory/2026-11-03.md:4)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(handler=cmd_explain)

    q = dsub.add_parser("candidates", parents=[parent], help="every recall entry with its score and why (not) promoted")
    q.add_argument("--all", action="store_true", help="include excluded and already promoted entries")
    q.add_argument("--json", action="store_true")
    q.set_defaults(handler=cmd_candidates)

    q = dsub.add_parser("review", parents=[parent], help="list proposals waiting for review, with their diffs")
    q.add_argument("--json", action="store_true")
    q.set_defaults(handler=cmd_review)

    q = dsub.add_parser("approve", parents=[parent], help="apply a proposal (refused if MEMORY.md changed since)")
    q.add_argument("id", help="proposal id or its 8-character short id")
    q.add_argument("--json", action="store_true")
    q.set_defaults(handler=cmd_approve)

    q = dsub.add_parser("reject", parents=[parent], help="reject a proposal; its candidates wait for new signals")
    q.add_argument("id", help="proposal id or its 8-character short id")
    q.add_argument("--reason", metavar="TEXT", help="why (kept in the review history)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(handler=cmd_reject)

    q = dsub.add_parser("revert", parents=[parent], help="restore MEMORY.md to the preimage of an applied rewrite")
    q.add_argument("id", help="proposal id or its 8-character short id")
    q.add_argument("--json", action="store_true")
    q.set_defaults(handler=cmd_revert)

    q = dsub.add_parser("history", parents=[parent], help="applied and reverted rewrites, with preimage availability")
    q.add_argument("--json", action="store_true")
    q.set_defaults(handler=cmd_history)


# ------------------------------------------------------------------------------------------- output


def _proposal_json(p: Proposal) -> dict[str, Any]:
    data: dict[str, Any] = json_form(p)
    data["shortId"] = p.short_id
    data["diff"] = p.diff()
    for op_data, op in zip(data["operations"], p.operations, strict=True):
        op_data["source"] = op.source
    return data


def _print_proposal(p: Proposal, *, diff: bool = True) -> None:
    print(
        f"proposal {p.short_id}  {p.status}  {p.mode}  created {p.created_at}  "
        f"+{p.added} added, {p.merged} merged, {p.superseded} superseded"
    )
    if p.fallback_reason and p.mode == "append":
        print(f"  append-only fallback: {p.fallback_reason}")
    if p.status == "stale":
        print(f"  stale: {p.reason or 'MEMORY.md changed since the proposal was made'}")
    elif p.reason:
        print(f"  note: {p.reason}")
    for op in p.operations:
        print(
            f"  {op.action:<10} {op.source}  score {op.score:.3f}  signals {op.signal_count}  "
            f"{clip_flat(op.snippet, 70)}"
        )
        for prior in op.prior_entries:
            print(f"  {'':<10} replaces: {clip_flat(prior, 90)}")
    if diff:
        if p.status == "stale":
            print("  the diff below is against MEMORY.md as it was when proposed, not as it is now")
            text = unified_diff(p.before_text, p.after_text, a="MEMORY.md (when proposed)", b="MEMORY.md (proposed)")
        else:
            text = p.diff()
        sys.stdout.write(text if text else "  (no textual change)\n")


def _print_run(run: DreamRun) -> None:
    print(f"dreaming cycle {run.finished_at} ({', '.join(run.phases)})")
    if run.light is not None or run.rem is not None:
        print(f"  ingested  {run.ingested} daily claim(s) counted now")
    if run.light is not None:
        print(f"  light     staged {len(run.light.staged)} of {run.light.considered} recent entr(y/ies)")
    if run.rem is not None:
        themes = ", ".join(t.tag for t in run.rem.themes) or "none"
        print(f"  rem       themes: {themes}; {len(run.rem.truths)} possible lasting truth(s)")
    if run.deep is not None:
        for line in run.deep.body_lines:
            print(f"  deep      {line.removeprefix('- ')}")
        for n in run.deep.not_promoted:
            print(f"            not promoted ({n.category}): {n.reason}")
    for warning in run.warnings:
        messages.warn(warning)
    if run.applied is not None:
        if run.applied.applied:
            print(
                f"applied proposal {run.applied.proposal.short_id}; undo with `clawmem dream revert "
                f"{run.applied.proposal.short_id}`"
            )
            _print_proposal(run.applied.proposal)
    elif run.proposal is not None:
        _print_proposal(run.proposal)
        print(
            f"approve: clawmem dream approve {run.proposal.short_id}    "
            f"reject: clawmem dream reject {run.proposal.short_id} --reason TEXT"
        )
    elif run.deep is not None:
        print("MEMORY.md unchanged; see why with `clawmem dream candidates`")
    print(f"report written to {run.dreams_path}")


# ------------------------------------------------------------------------------------------ commands


def cmd_dream(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    phases = PHASES if not args.phase or "all" in args.phase else tuple(args.phase)
    if args.at:
        if args.apply:
            raise ClawmemError("--at follows dreaming.review from config.toml; drop --apply")
        scheduled = engine.dreaming.run_scheduled(args.at, phases=phases)
        if args.json:
            output.print_json(scheduled)
            return 0 if scheduled.run is None or not _refused(scheduled.run) else 1
        if scheduled.run is None:
            print(f"nothing to do: {scheduled.reason}")
            return 0
        _print_run(scheduled.run)
        return _finish(scheduled.run)
    run = engine.dreaming.run(phases, apply=True if args.apply else None)
    if args.json:
        output.print_json(run)
        return 1 if _refused(run) else 0
    _print_run(run)
    return _finish(run)


def _refused(run: DreamRun) -> bool:
    return run.applied is not None and not run.applied.applied


def _finish(run: DreamRun) -> int:
    if run.applied is not None and not run.applied.applied:
        messages.fail(run.applied.message)
        return 1
    return 0


def _print_explanation(e: CandidateExplanation) -> None:
    print(e.key)
    print(f"  source      {e.source}    origin {e.origin_class}, session {e.session_kind}")
    print(f"  snippet     {clip_flat(e.snippet, 100)}")
    print(
        f"  signals     {e.signal_count} = recalls {e.recall_count} + daily {e.daily_count} + grounded "
        f"{e.grounded_count}; unique queries {e.unique_queries}"
    )
    print(f"  recall days {', '.join(e.recall_days) or '-'}; last recalled {e.last_recalled_at or '-'}")
    print(f"  concepts    {', '.join(e.concept_tags) or '-'}")
    if e.promoted_text is not None:
        print(f"  promotes    {clip_flat(e.promoted_text, 100)}")
        print(f"              from {e.promoted_source}: {clip_flat(e.focus_detail or '', 90)}")
    elif e.focus_detail:
        print(f"  promotes    nothing now: {clip_flat(e.focus_detail, 90)}")
    if e.line_matches:
        listed = ", ".join(f"L{line} ×{n}" for line, n in e.line_matches)
        print(f"  matched     {listed} (file line × recalling queries whose terms it contains)")
    print(f"  {'component':<14}{'value':>8}{'weight':>8}{'weighted':>10}")
    for name in (f.name for f in fields(e.weights)):
        value, weight, weighted = (getattr(c, name) for c in (e.components, e.weights, e.weighted))
        print(f"  {name:<14}{value:>8.3f}{weight:>8.2f}{weighted:>10.3f}")
    print(f"  {'light boost':<14}{'hits ' + str(e.light_hits):>16}{e.light_boost:>10.3f}")
    print(f"  {'rem boost':<14}{'hits ' + str(e.rem_hits):>16}{e.rem_boost:>10.3f}")
    print(f"  {'score':<14}{'':>16}{e.score:>10.3f}")
    print("  gates")
    for g in e.gates:
        mark = "pass" if g.passed else "FAIL"
        print(f"    {mark}  {g.name:<16} has {clip_flat(g.actual, 40):<22} needs {g.needed}")
    print(f"  => {e.status}: {e.reason}")


def cmd_explain(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    if engine.openclaw is not None:
        theirs = engine.openclaw.dream_candidate(args.selector, engine.clock)
        if theirs is not None:
            return _explain_openclaw(theirs, as_json=args.json)
    e = engine.dreaming.explain(args.selector)
    if args.json:
        output.print_json(e)
        return 0
    _print_explanation(e)
    return 0


def cmd_candidates(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    items = engine.dreaming.candidates()
    if not args.all:
        items = tuple(e for e in items if e.status not in ("excluded", "promoted"))
    if engine.openclaw is not None:
        return _candidates_with_openclaw(items, engine.openclaw.dreaming(engine.clock), as_json=args.json)
    if args.json:
        output.print_json(list(items))
        return 0
    if not items:
        print("no recall entries yet: searches (and daily-note ingestion) record them")
        return 0
    for e in items:
        print(f"{e.score:.3f}  {e.status:<12} {e.source:<34} {clip_flat(e.reason, 90)}")
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    pending = engine.dreaming.pending()
    if args.json:
        output.print_json([_proposal_json(p) for p in pending])
        return 0
    if not pending:
        print("no proposals waiting for review")
        return 0
    for p in pending:
        _print_proposal(p)
        if p.status == "stale":
            print(f"regenerate: clawmem dream    discard: clawmem dream reject {p.short_id} --reason TEXT")
        else:
            print(
                f"approve: clawmem dream approve {p.short_id}    "
                f"reject: clawmem dream reject {p.short_id} --reason TEXT"
            )
    return 0


def _apply_json(r: ApplyResult) -> dict[str, Any]:
    return {
        "applied": r.applied,
        "message": r.message,
        "warnings": list(r.warnings),
        "proposal": _proposal_json(r.proposal),
    }


def cmd_approve(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    _refuse_openclaw_entry(engine, args.id)
    result = engine.dreaming.approve(args.id)
    if args.json:
        output.print_json(_apply_json(result))
        return 0 if result.applied else 1
    if not result.applied:
        raise ClawmemError(result.message)
    for warning in result.warnings:
        messages.warn(warning)
    print(f"{result.message}; undo with `clawmem dream revert {result.proposal.short_id}`")
    return 0


def cmd_reject(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    _refuse_openclaw_entry(engine, args.id)
    p = engine.dreaming.reject(args.id, args.reason)
    if args.json:
        output.print_json(_proposal_json(p))
        return 0
    print(
        f"rejected proposal {p.short_id}"
        + (f" ({args.reason.strip()})" if args.reason and args.reason.strip() else "")
        + f"; its {len(p.operations)} candidate(s) wait for new signals"
    )
    return 0


def _print_revert_texts(r: RevertResult) -> None:
    sections = (
        ("preimage: MEMORY.md before the rewrite", r.preimage_text),
        ("rewrite: what the rewrite wrote", r.rewrite_text),
        ("current: MEMORY.md now", r.current_text if r.current_text is not None else "(MEMORY.md is missing)\n"),
    )
    for title, text in sections:
        print(f"===== {title} =====")
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")


def cmd_revert(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    result = engine.dreaming.revert(args.id)
    if args.json:
        output.print_json(result)
        return 0 if result.reverted else 1
    if not result.reverted:
        _print_revert_texts(result)
        messages.fail(result.message)
        return 1
    for warning in result.warnings:
        messages.warn(warning)
    print(result.message)
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    items: tuple[HistoryItem, ...] = engine.dreaming.history()
    if args.json:
        output.print_json(list(items))
        return 0
    if not items:
        print("no MEMORY.md rewrites yet")
        return 0
    for h in items:
        pre = "preimage kept" if h.preimage_available else "preimage pruned"
        current = "  (current MEMORY.md)" if h.is_current else ""
        reverted = f"  reverted {h.reverted_at}" if h.reverted_at else ""
        print(
            f"{h.proposal_id[:8]}  {h.status:<8} {h.mode:<8} applied {h.applied_at}  "
            f"+{h.added} ~{h.merged} >{h.superseded}  {pre}{reverted}{current}"
        )
    return 0


# ------------------------------------------------------------------ OpenClaw's recall entries (--openclaw)


def _candidates_with_openclaw(items: Sequence[CandidateExplanation], theirs: OpenClawDreaming, *, as_json: bool) -> int:
    """clawmem's own candidates, then OpenClaw's (◆): what the agent's Deep would promote tonight."""
    if as_json:
        output.print_json({"candidates": list(items), "openclaw": theirs})
        return 0
    for e in items:
        print(f"{e.score:.3f}  {e.status:<12} {e.source:<34} {clip_flat(e.reason, 90)}")
    if items:
        print()
    print(
        f"◆ OpenClaw's: what your agent would promote tonight (its defaults: score ≥ {theirs.min_score:g}, "
        f"≥ {theirs.min_recall_count} recalls, ≥ {theirs.min_unique_queries} unique queries)"
    )
    for c in theirs.candidates:
        e = c.explanation
        held = f"held back by {', '.join(c.held_back_by)}" if c.held_back_by else "would be promoted"
        print(
            f"◆ {e.score:.3f}  {e.status:<12} {e.source:<26} recalls {e.recall_count}  {held}: "
            f"{clip_flat(e.reason, 80)}"
        )
    if not theirs.candidates:
        print("  no recall entries for this workspace yet")
    elif not theirs.would_promote:
        print("  nothing would be promoted tonight: no entry passes every gate")
    for line in theirs.skipped:
        messages.warn(line)
    print(f"promoting stays with OpenClaw: `{theirs.promote_command}`")
    return 0


def _explain_openclaw(c: OpenClawCandidate, *, as_json: bool) -> int:
    if as_json:
        output.print_json({"openclaw": c})
        return 0
    print("◆ OpenClaw's recall entry (read in place; scored with OpenClaw's Deep defaults)")
    _print_explanation(c.explanation)
    print(f"  recall history ({len(c.history)} recorded event(s) of {c.explanation.recall_count} recalls)")
    for ev in c.history:
        print(f"    {ev.at[:19].replace('T', ' ')}  score {ev.score:.3f}  {clip_flat(ev.query, 60)}")
    print(f"promoting stays with OpenClaw: `{c.promote_command}`")
    return 0


def _refuse_openclaw_entry(engine: MemoryEngine, selector: str) -> None:
    """Approving or rejecting one of OpenClaw's recall entries is OpenClaw's to do: one line."""
    if engine.openclaw is None:
        return
    try:
        theirs = engine.openclaw.dream_candidate(selector, engine.clock)
    except ClawmemError:
        return
    if theirs is not None:
        raise ClawmemError(
            f"{theirs.key} is OpenClaw's recall entry; clawmem never promotes it — OpenClaw does: "
            f"`{theirs.promote_command}`"
        )
