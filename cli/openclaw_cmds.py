"""``clawmem --openclaw [HOME] [--agent ID] …``: an OpenClaw home, read in place.

``status [--deep] [--json]`` says what was found (config, workspace, each database's
``schema_meta``), how the agent's own index stands against the workspace files (``--deep``: file
by file) and what could not be read — each such problem one line on stderr, the rest still
printed, exit 1. ``session list`` and ``session show`` show OpenClaw's sessions beside clawmem's
own (see :mod:`clawmem.cli.session_cmds`). Any other command works on the home's workspace
with clawmem's own index, kept in clawmem's home.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from clawmem.cli import output
from clawmem.engine.openclaw import report_lines
from clawmem.engine.openclaw.home import OpenClawHome
from clawmem.engine.openclaw.sessions import OpenClawSession, OpenClawSessionDetail
from clawmem.engine.text_clip import clip
from clawmem.shell import messages

SHOW_CHARS = 200  # a long tool result is cut in the text view (--json has it whole)


def print_lines(lines: Sequence[tuple[str, str]]) -> None:
    width = max(len(label) for label, _ in lines)
    for label, value in lines:
        print(f"{label + ':' if label else '':<{width + 2}}{value}")


def cmd_status(args: argparse.Namespace, home: OpenClawHome) -> int:
    status = home.status()
    if args.json:
        output.print_json({"openclaw": status})
    else:
        print_lines(report_lines.status_lines(status, deep=args.deep))
    for problem in status.problems:
        messages.fail(problem)
    return 1 if status.problems else 0


def print_sessions(sessions: Sequence[OpenClawSession], where: str) -> None:
    print(f"OpenClaw sessions (read in place from {where}):")
    if not sessions:
        print("  none")
        return
    rows = [("SESSION", "KEY", "CHANNEL", "SENDER", "EVENTS", "LOWEST", "TAINTED", "ENDED")]
    for s in sessions:
        rows.append(
            (
                s.session_id,
                s.session_key,
                s.channel + (f" ({s.chat_type})" if s.chat_type else ""),
                report_lines.sender_text(s),
                str(s.event_count),
                s.lowest_origin,
                str(s.tainted_turns),
                s.ended_at[:16].replace("T", " "),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())


def print_session(detail: OpenClawSessionDetail, owners: Sequence[str]) -> None:
    s = detail.summary
    owner_note = "" if s.sender_is_owner or s.sender == "-" else f" — owners: {', '.join(owners) or 'none named'}"
    external = f"{s.external_results} external result" + ("" if s.external_results == 1 else "s")
    extras = [external, f"{s.tainted_turns} tainted"]
    if s.compressed_events:
        extras.append(f"{s.compressed_events} stored compressed")
    if s.unreadable_events:
        extras.append(f"{s.unreadable_events} unreadable")
    lines = [
        f"OpenClaw session {s.session_id}  (read in place from OpenClaw's agent database)",
        f"  key:      {s.session_key}",
        f"  kind:     {s.kind}",
        f"  channel:  {s.channel}" + (f" ({s.chat_type}, account {s.account_id or '-'})" if s.chat_type else ""),
        f"  sender:   {report_lines.sender_text(s)}{owner_note}",
        f"  time:     {s.started_at} → {s.ended_at}" + (f"  ({s.status})" if s.status else ""),
        f"  events:   {s.event_count} ({report_lines.trust_text(s.trust)}; {', '.join(extras)})",
    ]
    for line in lines:
        print(line)
    print()
    for e in detail.events:
        marks = " [external]" if e.external else ""
        marks += " [tainted]" if e.tainted else ""
        marks += " [zstd]" if e.compressed else ""
        text = " ".join(e.text.split())
        if e.tool:
            text = f"{e.tool}: {text}"
        if e.problem:
            text = f"(unreadable: {e.problem})"
        text = clip(text, SHOW_CHARS)
        print(f"{e.seq:>4}  {e.role:<9} {e.origin_class:<9}{marks}  {text}".rstrip())
