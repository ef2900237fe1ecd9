"""``context`` (what a new session loads) and ``context triggers`` (Active Memory lane 1)."""

from __future__ import annotations

import argparse

from clawmem.cli import output
from clawmem.engine.context.budget import describe_ranges
from clawmem.engine.context.service import STARTUP_KINDS, StartupContext, StartupFile, TriggerCandidate, TriggerPreview
from clawmem.shell import flags, messages, values


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parent = flags.global_parent()
    p = sub.add_parser(
        "context",
        parents=[parent],
        help="what a new session loads: files, caps, budgets and every cut line",
        description="Show what a bare /new loads (bootstrap files and startup notes) with caps, budgets and "
        "truncation; `context triggers MESSAGE` shows which trigger entries a message would inject.",
    )
    p.add_argument(
        "--kind",
        type=values.one_of("--kind", STARTUP_KINDS),
        default="private",
        metavar=values.choices_metavar(STARTUP_KINDS),
        help="session kind (default private)",
    )
    p.add_argument("--text", action="store_true", help="also print the injected text of every loaded file")
    p.add_argument("--json", action="store_true", help="print everything as JSON (lines, cuts, injected text)")
    p.set_defaults(handler=cmd_context)
    csub = p.add_subparsers(dest="context_command", metavar="SUBCOMMAND")
    t = csub.add_parser(
        "triggers",
        parents=[parent],
        help="which trigger entries an incoming message would inject (Active Memory lane 1)",
    )
    t.add_argument("message", nargs="+", help="the incoming message (Chinese or English)")
    flags.add_project_option(t)
    t.add_argument("--json", action="store_true", help="print every candidate and score as JSON")
    t.set_defaults(handler=cmd_triggers)


# --------------------------------------------------------------------------- context


def cmd_context(args: argparse.Namespace) -> int:
    with flags.engine_from(args) as engine:
        ctx = engine.context.startup(args.kind)
    if args.json:
        output.print_json(ctx)
        return 0
    print_startup(ctx, show_text=args.text)
    return 0


def _status(f: StartupFile) -> str:
    parts = ["loaded" if f.loaded else "not loaded"]
    if f.loaded and f.truncated:
        where = describe_ranges([(r.start, r.end) for r in f.cut_ranges])
        parts.append(f"{f.chars_cut:,} chars cut" + (f" ({where})" if where else ""))
    if f.omitted:
        runs = [(o.start_line, o.end_line) for o in f.omitted]
        n = len(f.omitted)
        parts.append(f"{n} superseded entr{'y' if n == 1 else 'ies'} omitted ({describe_ranges(runs)})")
    return " · ".join(parts)


def _row(f: StartupFile) -> str:
    order = str(f.order) if f.order else "-"
    cap = f"{f.cap:,}" if f.cap else "—"
    return f"  {order:>2}  {f.path:<28} {f.chars_considered:>7,} {cap:>7} {f.chars_injected:>9,}  {_status(f)}"


def print_startup(ctx: StartupContext, *, show_text: bool = False) -> None:
    print(f"New {ctx.kind} session (bare /new) — {ctx.local_date}, time zone {ctx.timezone}")
    header = f"  {'#':>2}  {'file':<28} {'chars':>7} {'cap':>7} {'injected':>9}  status"
    boot = [f for f in ctx.files if f.loaded and f.kind != "daily"]
    daily = [f for f in ctx.files if f.loaded and f.kind == "daily"]
    b = ctx.bootstrap_budget
    print(f"\nBootstrap files — {b.used:,} of {b.cap:,} chars ({b.name})")
    print(header)
    for f in boot:
        print(_row(f))
    if not boot:
        print("  (none)")
    s = ctx.startup_budget
    scanned = ", ".join(ctx.days_scanned)
    chosen = ", ".join(ctx.days_selected) or "none"
    print(f"\nStartup notes — {s.used:,} of {s.cap:,} chars · days scanned {scanned} · loaded {chosen}")
    print(header)
    for f in daily:
        print(_row(f))
    if not daily:
        print("  (none)")
    missing = [f for f in ctx.files if not f.loaded]
    if missing:
        print("\nNot loaded")
        for f in missing:
            print(f"      {f.path:<28} {f.reason or ''}")
    if ctx.warnings:
        print("\nWarnings")
        for w in ctx.warnings:
            print(f"  ! {w}")
    for n in ctx.notes:
        print(f"  note: {n}")
    if show_text:
        for f in boot:
            print(f"\n===== {f.path} ({f.chars_injected:,} chars) =====")
            print(f.injected_text)
        if ctx.startup_prelude:
            print(f"\n===== startup notes ({s.used:,} chars) =====")
            print(ctx.startup_prelude)


# --------------------------------------------------------------------------- triggers


def cmd_triggers(args: argparse.Namespace) -> int:
    with flags.engine_from(args) as engine:
        engine.require_workspace()
        preview = engine.context.triggers(" ".join(args.message), tuple(args.project))
    if args.json:
        output.print_json(preview)
        return 0
    for w in preview.warnings:
        messages.warn(w)
    print_triggers(preview)
    return 0


def _phrases(c: TriggerCandidate) -> str:
    if not c.phrases:
        return "—"
    out = []
    for p in c.phrases:
        mark = " CJK" if p.cjk_match else ""
        out.append(f"{p.phrase} {p.score:.2f}{mark}")
    return ", ".join(out)


def print_triggers(p: TriggerPreview) -> None:
    projects = ", ".join(p.active_projects) or "none"
    print(f"Message words: {' '.join(p.message_words) or '—'}   · active projects: {projects}")
    print(
        f"Lane 1: strong at ≥ {p.threshold}, top {p.max_injected}, ≤ {p.budget_chars:,} chars · search {p.search_mode}"
    )
    if not p.candidates:
        print("\nNo candidates: no lexical hit and no MEMORY.md/USER.md entry with a trigger.")
    else:
        print(f"\n  {'match':>5} {'openclaw':>8}  {'outcome':<10} {'source':<28} {'found':<7} phrases")
        for c in p.candidates:
            src = f"{c.path}#L{c.start_line}"
            print(
                f"  {c.match_score:5.3f} {c.openclaw_match_score:8.3f}  {c.outcome:<10} {src:<28} {c.found_by:<7} "
                f"{_phrases(c)}"
            )
            print(f"  {'':>5} {'':>8}  └ {c.outcome_reason}")
    if p.block is None:
        print("\nNothing is injected (no strong, eligible hit).")
    else:
        print(f"\nInjected ({len(p.injected)} entr{'y' if len(p.injected) == 1 else 'ies'}):")
        print(p.block)
