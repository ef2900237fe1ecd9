"""``session import|list|show|flush`` and ``forget --session …`` (lineage forget with a residual check).

Unlike OpenClaw's ``memory forget``, a real forget asks for confirmation on a terminal (it deletes
what the user's memory holds) and needs ``--yes`` when not run on one; ``--dry-run`` never asks.
A selector that names no known session (OpenClaw reports it as ``unresolved`` and tombstones it
anyway) is refused with exit 1 — dry run included, so a typo is caught at the preview — unless
``--allow-unresolved`` is given to tombstone an id that has not been imported yet.

``session flush`` never lets the caller raise the origin class the program derives from the
session's turns: ``--origin untrusted`` lowers it; ``--origin agent`` on a session whose current
turn is tainted is refused (exit 1, nothing written).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from clawmem.cli import openclaw_cmds, output
from clawmem.engine.errors import ClawmemError
from clawmem.engine.forget.service import ForgetPlan, ForgetResult, refuse_unresolved
from clawmem.engine.json_form import json_form
from clawmem.engine.openclaw.home import OpenClawHome
from clawmem.engine.openclaw.sessions import OpenClawSession
from clawmem.engine.sessions.service import ImportResult, SessionDetail, SessionSummary, TrustCounts
from clawmem.shell import flags, messages, values


def _group(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help_text: str
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    group = sub.add_parser(name, parents=[flags.global_parent()], help=help_text, description=help_text)

    def show_help(_args: argparse.Namespace) -> int:
        group.print_help()
        return 2

    group.set_defaults(handler=show_help)
    return group.add_subparsers(dest=f"{name}_action", metavar="ACTION")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parent = flags.global_parent()
    ssub = _group(sub, "session", "session transcripts: import, list, show, flush")

    p = ssub.add_parser("import", parents=[parent], help="import a JSONL transcript (all lines or none)")
    p.add_argument("file", help="one JSON object per line (session_id, session_key, kind, channel, sender, role, …)")
    p.add_argument("--note", action="store_true", help="also write the session-memory note memory/YYYY-MM-DD-<slug>.md")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_import)

    p = ssub.add_parser("list", parents=[parent], help="imported sessions with kind, channel, trust and counts")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_list)

    p = ssub.add_parser("show", parents=[parent], help="a session's transcript with each turn's origin class")
    p.add_argument("id", help="a session id (or a key that only one session has)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_show)

    p = ssub.add_parser("flush", parents=[parent], help="append text to memory/<date>.md with the session's provenance")
    p.add_argument("id", help="the session the text comes from")
    p.add_argument("--text", required=True, help="the lines to append")
    p.add_argument(
        "--date", type=values.iso_date("--date"), metavar="YYYY-MM-DD", help="which daily note (default today)"
    )
    p.add_argument(
        "--origin",
        type=values.one_of("--origin", ("agent", "untrusted")),
        metavar="{agent,untrusted}",
        help="lower the class the program derives from the session's turns (untrusted); it can never "
        "be raised: agent is refused when the session's current turn is tainted",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_flush)

    p = sub.add_parser(
        "forget",
        parents=[parent],
        help="forget sessions: their entries, lines, index rows and recall signals (preview with --dry-run)",
        description="Forget what the selected sessions put into memory, then prove nothing is left.",
    )
    p.add_argument(
        "--session",
        action="append",
        required=True,
        type=values.non_empty("--session", "a session id or key"),
        metavar="ID|KEY",
        help="a session id, or a key (every session with it); repeatable",
    )
    p.add_argument(
        "--allow-unresolved",
        action="store_true",
        help="tombstone ids that match no session yet (a transcript that will arrive later) instead of refusing",
    )
    p.add_argument("--dry-run", action="store_true", help="show what would be deleted and kept; change nothing")
    p.add_argument("--purge-transcript", action="store_true", help="also delete the transcripts (kept by default)")
    p.add_argument("--yes", action="store_true", help="do not ask (required when not on a terminal)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_forget)


# ------------------------------------------------------------------------------------- sessions


def _trust_text(t: TrustCounts) -> str:
    parts = [
        f"{name} {n}"
        for name, n in (("owner", t.owner), ("agent", t.agent), ("system", t.system), ("untrusted", t.untrusted))
        if n
    ]
    return " · ".join(parts) or "no events"


def cmd_import(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    result: ImportResult = engine.sessions.import_file(args.file, note=args.note)
    if args.json:
        output.print_json(result)
        return 0
    new = sum(1 for s in result.sessions if s.status == "imported")
    print(f"imported {new} session{'s' if new != 1 else ''} ({result.events} events) from {result.source_file}")
    for s in result.sessions:
        status = "" if s.status == "imported" else " (already imported, unchanged)"
        tainted = f" ({s.tainted_turns} tainted)" if s.tainted_turns else ""
        print(
            f"  {s.session_id}  {s.kind}  {s.channel}  {s.event_count} events  {_trust_text(s.trust)}{tainted}{status}"
        )
        if s.note is not None:
            n = s.note.turns_left_out
            left = f" ({n} untrusted turn{'s' if n != 1 else ''} left out)" if n else ""
            print(f"    note: {s.note.path}{left}")
        elif s.note_skipped:
            print(f"    no note: {s.note_skipped}")
    for w in result.warnings:
        messages.warn(w)
    return 0


def _openclaw_sessions(openclaw: OpenClawHome | None) -> tuple[tuple[OpenClawSession, ...], str | None]:
    """OpenClaw's sessions (read in place), or the one line saying why they cannot be read."""
    if openclaw is None:
        return (), None
    try:
        return openclaw.sessions(), None
    except ClawmemError as exc:
        return (), str(exc)


def cmd_list(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    sessions = engine.sessions.summaries()
    theirs, problem = _openclaw_sessions(engine.openclaw)
    if args.json:
        extra = {"openclawSessions": theirs} if engine.openclaw is not None else {}
        output.print_json({"sessions": sessions, **extra})
    elif engine.openclaw is not None:
        if sessions:
            _print_list(sessions)
            print()
        if problem is None:
            openclaw_cmds.print_sessions(theirs, str(engine.openclaw.found.agent_db))
    elif not sessions:
        print("No sessions. Import one with `clawmem session import FILE.jsonl`.")
    else:
        _print_list(sessions)
    if problem is not None:
        messages.fail(problem)
        return 1
    return 0


def _print_list(sessions: tuple[SessionSummary, ...]) -> None:
    rows = [("SESSION", "KIND", "CHANNEL", "EVENTS", "LOWEST", "TAINTED", "ENDED", "NOTE")]
    for s in sessions:
        rows.append(
            (
                s.session_id + ("  (forgotten " + (s.forgotten_at or "")[:10] + ")" if s.forgotten_at else ""),
                s.kind,
                s.channel + ("" if s.channel_trusted or s.kind != "interactive" else " (untrusted)"),
                str(s.event_count),
                s.lowest_origin,
                str(s.tainted_turns),
                s.ended_at[:16].replace("T", " "),
                s.note_path or "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())


def _summary_lines(s: SessionSummary) -> list[str]:
    lines = [
        f"Session {s.session_id}" + (f"  (forgotten on {(s.forgotten_at or '')[:10]})" if s.forgotten_at else ""),
        f"  key:      {s.session_key}",
        f"  kind:     {s.kind}",
        f"  channel:  {s.channel} ({'trusted' if s.channel_trusted else 'not trusted: user turns are untrusted'})",
        f"  sender:   {s.sender}",
        f"  time:     {s.started_at} → {s.ended_at}",
        f"  events:   {s.event_count} ({_trust_text(s.trust)}; {s.network_results} network results, "
        f"{s.tainted_turns} tainted)",
        f"  note:     {s.note_path or '-'}",
    ]
    return lines


def cmd_show(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    theirs = engine.openclaw.find_session(args.id) if engine.openclaw is not None and args.id.strip() else None
    if theirs is not None and engine.openclaw is not None:
        if args.json:
            output.print_json(theirs)
        else:
            config = engine.openclaw.found.config
            openclaw_cmds.print_session(theirs, config.owner_allow_from if config else ())
        return 0
    detail: SessionDetail = engine.sessions.show(args.id)
    if args.json:
        output.print_json(detail)
        return 0
    for line in _summary_lines(detail.summary):
        print(line)
    print()
    for t in detail.turns:
        marks = " [network]" if t.network else ""
        marks += " [tainted]" if t.tainted else ""
        print(f"{t.seq:>4}  {t.role:<9} {t.origin_class:<9}{marks}  {' '.join(t.text.split())}")
    if detail.segments:
        print()
        print("Flush provenance:")
        for seg in detail.segments:
            where = f"L{seg.line_start}-L{seg.line_end}" if seg.line_start is not None else "(no longer in the file)"
            print(f"  {seg.path} {where}  {seg.kind}  {seg.effective_class}")
    if detail.entry_keys:
        print()
        print("MEMORY.md entries derived from it:")
        for key in detail.entry_keys:
            print(f"  {key}")
    return 0


def cmd_flush(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    result = engine.sessions.flush(args.id, args.text, date=args.date, origin=args.origin)
    if args.json:
        output.print_json(result)
        return 0
    how = "derived from the session's turns" if result.origin_derived else "lowered by --origin untrusted"
    why = f": {result.origin_reason}" if result.origin_reason and result.origin_derived else ""
    print(f"appended {result.path} L{result.line_start}-L{result.line_end} as {result.origin_class} ({how}{why})")
    if result.effective_class != result.origin_class:
        print(f"  indexed as {result.effective_class}: the session is not interactive, so it never becomes a candidate")
    if result.untrusted_regions:
        messages.warn(f"{result.path} was changed outside an append since the last flush; that region is now untrusted")
    return 0


# --------------------------------------------------------------------------------------- forget


def _print_plan(plan: ForgetPlan) -> None:
    a = plan.artifacts
    print(f"Forget plan for agent {plan.agent_id}" + (" (dry run: nothing is changed)" if plan.dry_run else ""))
    print()
    print("Sessions:")
    for r in plan.resolutions:
        extra = f" ({r.kind}, {r.event_count} events)" if r.source in ("live", "openclaw") else ""
        source = "OpenClaw's (read in place)" if r.source == "openclaw" else r.source
        print(f"  {r.session_id}  key {r.session_key or '-'}  {source}{extra}")
    print()
    print(f"Entries ({a.memory_entries}):")
    for e in plan.entries:
        mixed = "  (mixed lineage: removed whole)" if e.mixed else ""
        print(f"  {e.path}:{e.start_line}-{e.end_line}  {e.entry_key}{mixed}")
    if plan.untargetable_entry_keys:
        print(f"  untargetable (no origin rows, kept): {', '.join(plan.untargetable_entry_keys)}")
    print()
    print(
        f"Memory lines ({a.memory_lines} in {a.memory_files} files; corpus {a.session_corpus_lines} in "
        f"{a.session_corpus_files}):"
    )
    by_path: dict[str, list[Any]] = {}
    for item in plan.lines:
        by_path.setdefault(item.path, []).append(item)
    actions = {f.path: f.action for f in plan.files}
    for path, items in by_path.items():
        print(f"  {path}  ({'delete the file' if actions.get(path) == 'delete' else 'remove lines'})")
        for item in items:
            text = " ".join(item.text.split())
            print(f"    {item.line:>5}  {item.reason:<8} {text[:110] + ('…' if len(text) > 110 else '')}")
    print()
    print(
        f"Index: {a.index_chunks} chunks, {a.fts_rows} FTS rows, {a.vector_rows} vectors, "
        f"{a.embedding_cache_rows} embedding-cache rows, {a.index_sources} sources (changed files are re-indexed)"
    )
    why = Counter(r.why for r in plan.recall_entries)
    detail = ", ".join(f"{n} by {k}" for k, n in sorted(why.items()))
    print(
        f"Recall store: {a.short_term_entries} entries"
        + (f" ({detail})" if detail else "")
        + f", {a.seen_hash_scopes} seen-hash scopes"
    )
    print(f"Review state: {a.backups} preimages, {a.proposals} proposals")
    print(
        f"Origins: {a.origin_rows} rows; flush segments: {a.flush_segments}"
        + (f"; transcript events: {a.transcript_events}" if plan.purge_transcripts else "")
    )
    print()
    print("Survives:")
    for s in plan.survives:
        print(f"  - {s.what} ({s.where}): {s.reason}")
    if plan.refusals:
        print()
        print("Refusals:")
        for refusal in plan.refusals:
            print(f"  - {refusal.what}: {refusal.reason}")
    if plan.openclaw_commands:
        print()
        print("OpenClaw removes its own copy (clawmem never deletes from its databases); preview, then run:")
        for command in plan.openclaw_commands:
            print(f"  {command}")


def cmd_forget(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    plan = engine.forget.plan(args.session, purge_transcripts=args.purge_transcript)
    if not args.allow_unresolved:
        refuse_unresolved(plan, "pass --allow-unresolved to tombstone an id that will be imported later")
    if args.dry_run:
        if args.json:
            output.print_json({**plan.report(), "details": plan.details()})
        else:
            _print_plan(plan)
        return 0
    if not args.yes:
        if args.json or not sys.stdin.isatty():
            messages.fail("forget deletes memory: pass --yes to confirm (or --dry-run to preview)")
            return 1
        _print_plan(plan)
        print()
        answer = input(f"Forget {len(plan.session_ids)} session(s) as shown above? This cannot be undone. [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing changed")
            return 0
    result: ForgetResult = engine.forget.run(
        args.session, purge_transcripts=args.purge_transcript, expected=plan, allow_unresolved=args.allow_unresolved
    )
    if args.json:
        out = {
            **result.plan.report(),
            "details": result.plan.details(),
            "tombstoned": list(result.tombstoned),
            "warnings": list(result.warnings),
            "residualHits": json_form(result.residual),
            "residual": result.residual_count,
        }
        output.print_json(out)
        return 0
    if args.yes:
        _print_plan(result.plan)
        print()
    print(f"forgot {len(result.plan.session_ids)} session(s); tombstoned: {', '.join(result.tombstoned) or 'already'}")
    for w in result.warnings:
        messages.warn(w)
    for r in result.refusals:
        messages.warn(f"{r.what}: {r.reason}")
    if not result.residual:
        print("0 residual")
        return 0
    print(f"{result.residual_count} residual:")
    for hit in result.residual:
        note = f"  ({hit.note})" if hit.note else ""
        print(f"  {hit.where}  {hit.location}  {hit.excerpt}{note}")
    return 0
