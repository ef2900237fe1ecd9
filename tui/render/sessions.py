"""The Sessions pane's renderers: a session's row, its header and transcript (origin classes as
coloured names, [network] and [tainted] as markers), the same for OpenClaw's own sessions read in
place (marked ◆), and the empty state — engine dataclasses in,
Rich renderables out. ``origin_text`` is shared with the Forget pane."""

from __future__ import annotations

from clawmem.engine.openclaw.sessions import OpenClawSession, OpenClawSessionDetail
from clawmem.engine.sessions.service import SessionDetail, SessionSummary, TranscriptTurn, TrustCounts
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

ORIGIN_STYLE = {"owner": "bold green", "agent": "cyan", "system": "magenta", "untrusted": "bold red"}
IMPORT_HINT = "clawmem session import FILE.jsonl"


def origin_text(origin: str) -> Text:
    """An origin class as its name in its colour (the name carries it without colour)."""
    return Text(origin, style=ORIGIN_STYLE.get(origin, "bold red"))


def trust_counts(t: TrustCounts) -> Text:
    out = Text()
    for name in ("owner", "agent", "system", "untrusted"):
        n = getattr(t, name)
        if n:
            if out:
                out.append(" · ", style="dim")
            out.append(f"{name} {n}", style=ORIGIN_STYLE[name])
    return out or Text("no events", style="dim")


def _when(iso: str) -> str:
    """``2026-11-03T08:00:00.000Z`` → ``2026-11-03 08:00``."""
    return iso[:16].replace("T", " ") if iso else "—"


def session_cells(s: SessionSummary, *, wide: bool) -> tuple[Text, ...]:
    forgotten = Text(f"⊘ {(s.forgotten_at or '')[:10]}", style="bold red") if s.forgotten_at else Text("—", style="dim")
    cells = (
        Text(s.session_id, style="dim strike" if s.forgotten_at else "bold"),
        Text(s.kind, style="" if s.kind == "interactive" else "magenta"),
        Text(s.channel),
        Text("✓ yes", style="green") if s.channel_trusted else Text("✗ no", style="yellow"),
        Text(str(s.event_count), justify="right"),
        origin_text(s.lowest_origin),
        Text(str(s.tainted_turns), justify="right", style="bold red" if s.tainted_turns else "dim"),
        forgotten,
    )
    if not wide:
        return cells
    return (*cells, Text(s.session_key), Text(s.note_path or "—", style="" if s.note_path else "dim"))


def render_header(detail: SessionDetail) -> Text:
    """Three lines about the selected session: who and where, what its turns are, where its words went."""
    s = detail.summary
    head = Text.assemble(
        (s.session_id, "bold"),
        ("  ·  ", "dim"),
        (s.session_key, ""),
        ("  ·  ", "dim"),
        (s.kind, ""),
        ("  ·  ", "dim"),
        (s.channel, ""),
        (" ✓ trusted", "green") if s.channel_trusted else (" ✗ untrusted channel", "yellow"),
        ("  ·  ", "dim"),
        (f"{_when(s.started_at)}–{_when(s.ended_at)[11:]} UTC", "dim"),
        no_wrap=True,
        overflow="ellipsis",
    )
    head.append(f"\n{s.event_count} events: ")
    head.append_text(trust_counts(s.trust))
    head.append(
        f"  ·  {s.network_results} network result{'s' if s.network_results != 1 else ''}",
        style="bold red" if s.network_results else "dim",
    )
    head.append(f"  ·  {s.tainted_turns} tainted", style="bold red" if s.tainted_turns else "dim")
    head.append("\nnote ", style="dim")
    head.append(s.note_path or "none", style="" if s.note_path else "dim")
    entries = len(detail.entry_keys)
    head.append(
        f"  ·  {s.flush_segments} flush segment{'s' if s.flush_segments != 1 else ''}  ·  {entries} "
        f"MEMORY.md entr{'y' if entries == 1 else 'ies'}",
        style="dim",
    )
    if s.forgotten_at:
        head.append(
            f"\n⊘ forgotten on {s.forgotten_at[:10]}: its memory was removed; the transcript is kept and "
            "re-import is refused",
            style="bold red",
        )
    return head


def turn_marks(t: TranscriptTurn) -> Text:
    marks = Text()
    if t.network:
        marks.append("[network] ", style="bold red")
    if t.tainted:
        marks.append("[tainted] ", style="red")
    return marks


def render_transcript(detail: SessionDetail) -> RenderableType:
    """One row per turn (seq, role, origin label, markers and the text, wrapped), then where the
    session's words went: its flush segments and the MEMORY.md entries derived from it."""
    legend = Text(
        "[network] a tool result fetched from the web · [tainted] after one in the same turn (untrusted)", style="dim"
    )
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(justify="right", no_wrap=True, width=3)
    grid.add_column(no_wrap=True, width=9)
    grid.add_column(no_wrap=True, width=9)
    grid.add_column(ratio=1, overflow="fold")
    for t in detail.turns:
        body = turn_marks(t)
        body.append(t.text.rstrip(), style="red" if t.origin_class == "untrusted" else "")
        grid.add_row(
            Text(str(t.seq), style="dim"),
            Text(t.role, style="bold" if t.role == "user" else ""),
            origin_text(t.origin_class),
            body,
        )
    parts: list[RenderableType] = [legend, grid]
    if not detail.turns:
        parts.append(Text("No events (purged with the forget that removed this session).", style="dim"))
    if detail.segments:
        parts += [Text(""), Text("Flush provenance — lines this session wrote into memory files", style="bold")]
        seg_grid = Table.grid(padding=(0, 2))
        for seg in detail.segments:
            where = (
                f"{seg.path}:{seg.line_start}-{seg.line_end}"
                if seg.line_start is not None
                else f"{seg.path} (no longer in the file)"
            )
            seg_grid.add_row(Text(where), Text(seg.kind, style="dim"), origin_text(seg.effective_class))
        parts.append(seg_grid)
    if detail.entry_keys:
        parts += [Text(""), Text("MEMORY.md entries derived from it (origin rows)", style="bold")]
        parts += [Text(f"  {key}", style="cyan", no_wrap=True, overflow="ellipsis") for key in detail.entry_keys]
    return Group(*parts)


def empty_state() -> Text:
    return Text.assemble(
        ("No sessions imported yet.\n\n", "bold"),
        ("Press ", ""),
        ("i", "bold cyan"),
        (" to import a JSONL transcript, or run\n\n    ", ""),
        (IMPORT_HINT, "bold"),
        (
            "\n\nOne JSON object per line: session_id, session_key, kind (interactive, cron, heartbeat, subagent), "
            "channel, sender, role (user, assistant, tool), text, network, ts. Each turn gets an origin class from "
            "where it came from — owner, agent, system or untrusted, never from what it says; tool results fetched "
            "from the web are marked [network] and the assistant turns after them [tainted].",
            "dim",
        ),
    )


# ---------------------------------------------------------------------------- OpenClaw's sessions

OPENCLAW_MARK = "◆ "  # a shape, not only a colour: the row is OpenClaw's, read in place


def openclaw_session_cells(s: OpenClawSession, *, wide: bool) -> tuple[Text, ...]:
    """A row of the same table as clawmem's sessions: ◆ and the sender's standing instead of a
    channel's trust, and "OpenClaw's" where a clawmem session says whether it was forgotten."""
    channel = s.channel + (f" ({s.chat_type})" if s.chat_type else "")
    cells = (
        Text.assemble((OPENCLAW_MARK, "bold cyan"), (s.session_id, "bold")),
        Text(s.kind, style="" if s.kind == "interactive" else "magenta"),
        Text(channel),
        Text("✓ owner", style="green") if s.sender_is_owner else Text("✗ no", style="yellow"),
        Text(str(s.event_count), justify="right"),
        origin_text(s.lowest_origin),
        Text(str(s.tainted_turns), justify="right", style="bold red" if s.tainted_turns else "dim"),
        Text("OpenClaw's", style="cyan"),
    )
    if not wide:
        return cells
    return (*cells, Text(s.session_key), Text("—", style="dim"))


def render_openclaw_header(detail: OpenClawSessionDetail) -> Text:
    """Who and where, what its events are, and that clawmem only reads it."""
    s = detail.summary
    channel = s.channel + (f" ({s.chat_type})" if s.chat_type else "")
    head = Text.assemble(
        (OPENCLAW_MARK, "bold cyan"),
        (s.session_id, "bold"),
        ("  ·  ", "dim"),
        (s.session_key, ""),
        ("  ·  ", "dim"),
        (channel, ""),
        ("  ·  ", "dim"),
        (s.sender, ""),
        (" ✓ owner", "green") if s.sender_is_owner else (" ✗ not the owner", "yellow"),
        ("  ·  ", "dim"),
        (f"{_when(s.started_at)}–{_when(s.ended_at)[11:]} UTC", "dim"),
        no_wrap=True,
        overflow="ellipsis",
    )
    head.append(f"\n{s.event_count} events ({s.messages} messages): ")
    head.append_text(trust_counts(s.trust))
    head.append(
        f"  ·  {s.external_results} external result{'s' if s.external_results != 1 else ''}",
        style="bold red" if s.external_results else "dim",
    )
    head.append(f"  ·  {s.tainted_turns} tainted", style="bold red" if s.tainted_turns else "dim")
    if s.compressed_events:
        head.append(f"  ·  {s.compressed_events} zstd", style="dim")
    head.append(
        "\nOpenClaw's own session, read in place from its agent database: clawmem never writes it"
        + (f"  ·  model {s.model}" if s.model else ""),
        style="dim",
    )
    if s.unreadable_events:
        head.append(f"\n{s.unreadable_events} event(s) could not be decoded (shown with why)", style="bold yellow")
    return head


def render_openclaw_transcript(detail: OpenClawSessionDetail) -> RenderableType:
    """One row per message event (seq, role, origin label, [external]/[tainted] and the text);
    OpenClaw's bookkeeping events (session header, model change …) as one dim line each."""
    legend = Text(
        "[external] a tool result wrapped as external untrusted content · [tainted] after one in the same turn",
        style="dim",
    )
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(justify="right", no_wrap=True, width=3)
    grid.add_column(no_wrap=True, width=9)
    grid.add_column(no_wrap=True, width=9)
    grid.add_column(ratio=1, overflow="fold")
    for e in detail.events:
        body = Text()
        if e.external:
            body.append("[external] ", style="bold red")
        if e.tainted:
            body.append("[tainted] ", style="red")
        if e.problem:
            body.append(f"(not decoded: {e.problem})", style="bold yellow")
        elif e.role == "event":
            body.append(e.type, style="dim")
        else:
            if e.tool:
                body.append(f"{e.tool}: ", style="dim")
            body.append(e.text.rstrip(), style="red" if e.origin_class == "untrusted" and e.role != "user" else "")
        grid.add_row(
            Text(str(e.seq), style="dim"),
            Text(e.role, style="bold" if e.role == "user" else ("dim" if e.role == "event" else "")),
            origin_text(e.origin_class),
            body,
        )
    return Group(legend, grid)
