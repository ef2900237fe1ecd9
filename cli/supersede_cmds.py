"""``supersede``: mark a changed fact superseded by its newer version, undo it, and decide what agents
proposed (issue 36).

    clawmem supersede OLDER --by NEWER     # OLDER, NEWER: PATH:LINE of the two entries' bullets
    clawmem supersede OLDER --undo         # put back what the supersede replaced, byte for byte
    clawmem supersede --proposals [--all]  # what agents proposed (MCP ``supersede_propose``)
    clawmem supersede --accept ID          # apply one, with the same write
    clawmem supersede --reject ID [--reason TEXT]

The write is the engine's (engine/curation/service.py): atomic, hash-checked, folder-locked; a bad
PATH:LINE, a line that is not a bullet, a path outside the workspace or a file that changed while
it was written is one line on stderr and exit 1, and nothing is written.
"""

from __future__ import annotations

import argparse
from datetime import tzinfo

from clawmem.cli import output
from clawmem.engine.curation.service import SupersedeProposal, SupersedeResult, UnsupersedeResult
from clawmem.engine.errors import ClawmemError
from clawmem.engine.json_form import json_form
from clawmem.engine.text_clip import clip_flat
from clawmem.engine.times import local_minute
from clawmem.shell import flags, messages, values

HELP = "mark an entry superseded by its newer version (--by), undo it (--undo), or decide agents' proposals"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("supersede", parents=[flags.global_parent()], help=HELP, description=HELP)
    p.add_argument(
        "older",
        nargs="?",
        type=values.entry_ref("the older entry"),
        metavar="PATH:LINE",
        help="the older entry's bullet, e.g. MEMORY.md:7 or memory/2026-03-02.md:4",
    )
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument(
        "--by", type=values.entry_ref("--by"), metavar="PATH:LINE", help="the newer entry that replaces it"
    )
    mode.add_argument("--undo", action="store_true", help="undo the supersede of PATH:LINE")
    mode.add_argument("--proposals", action="store_true", help="list the supersessions agents proposed")
    mode.add_argument("--accept", metavar="ID", help="apply a proposal (its id or first characters)")
    mode.add_argument("--reject", metavar="ID", help="reject a proposal")
    p.add_argument("--all", action="store_true", help="with --proposals: also accepted, rejected and stale ones")
    p.add_argument("--reason", metavar="TEXT", help="with --reject: why (kept with the proposal)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_supersede)


def _check_combination(args: argparse.Namespace) -> None:
    needs_entry = args.by is not None or args.undo
    if needs_entry and args.older is None:
        flag = "--by PATH:LINE" if args.by is not None else "--undo"
        raise ClawmemError(f"give the older entry: clawmem supersede PATH:LINE {flag}")
    if not needs_entry and args.older is not None:
        raise ClawmemError(f"{args.older} is only taken with --by or --undo")
    if args.all and not args.proposals:
        raise ClawmemError("--all is only taken with --proposals")
    if args.reason is not None and args.reject is None:
        raise ClawmemError("--reason is only taken with --reject")


def cmd_supersede(args: argparse.Namespace) -> int:
    _check_combination(args)
    engine = flags.engine_from(args)
    tz = engine.clock.tz
    if args.by is not None:
        result = engine.supersede(args.older, args.by)
        _print_supersede(result, args.json)
    elif args.undo:
        _print_undo(engine.unsupersede(args.older), args.json)
    elif args.proposals:
        _print_proposals(engine.curation.proposals(None if args.all else "pending"), tz, args.json, args.all)
    elif args.accept is not None:
        proposal, result = engine.curation.accept(args.accept)
        if args.json:
            output.print_json({"proposal": json_form(proposal), "supersede": json_form(result)})
        else:
            print(f"accepted proposal {proposal.short_id}")
            _print_supersede(result, False)
    else:
        proposal = engine.curation.reject(args.reject, args.reason)
        if args.json:
            output.print_json({"proposal": json_form(proposal)})
        else:
            note = f" ({proposal.decision_note})" if proposal.decision_note else ""
            print(f"rejected proposal {proposal.short_id}{note}; it is not proposed again")
    return 0


def _print_supersede(r: SupersedeResult, as_json: bool) -> None:
    if as_json:
        output.print_json(r)
        return
    for warning in r.warnings:
        messages.warn(warning)
    print(f"marked {r.path}:{r.line} superseded by {r.newer_path}:{r.newer_line} (observed {r.observed})")
    where = "added above the entry" if r.action == "added" else "replacing its marker"
    if r.action == "inline":
        where = "replacing the marker at the end of its bullet"
    print(f"  line {r.marker_line}: {r.marker}  ({where})")
    print(f"undo: clawmem supersede {r.path}:{r.line} --undo")


UNDO_WORDS = {
    ("removed", True): "removed the marker line clawmem wrote",
    ("restored", True): "put back the line that was there before",
    ("removed", False): "removed the marker (clawmem has no record of writing it)",
    ("reactivated", False): "its marker says status: active again (every USER.md entry keeps one)",
}


def _print_undo(r: UnsupersedeResult, as_json: bool) -> None:
    if as_json:
        output.print_json(r)
        return
    for warning in r.warnings:
        messages.warn(warning)
    print(f"{r.path}:{r.line} is no longer superseded: {UNDO_WORDS.get((r.action, r.exact), r.action)}")
    if r.line_after is not None:
        print(f"  {clip_flat(r.line_after, 160)}")


def _print_proposals(found: list[SupersedeProposal], tz: tzinfo, as_json: bool, every: bool) -> None:
    if as_json:
        output.print_json({"proposals": found})
        return
    if not found:
        print("no supersede proposals" + ("" if every else " waiting"))
        return
    for p in found:
        state = f"  [{p.status}{': ' + p.decision_note if p.decision_note else ''}]" if every else ""
        print(f"{p.short_id}  {p.older_path}:{p.older_line} → {p.newer_path}:{p.newer_line}{state}")
        print(f"    proposed {local_minute(p.created_at, tz, zone=False)} ({p.origin_class}): {p.reason}")
        print(f"    older: {clip_flat(p.older_text, 110)}")
        print(f"    newer: {clip_flat(p.newer_text, 110)}")
    if any(p.status == "pending" for p in found):
        print("accept: clawmem supersede --accept ID    reject: clawmem supersede --reject ID [--reason TEXT]")
