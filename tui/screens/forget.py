"""Forget pane: pick sessions, see exactly what forgetting them deletes, confirm, then see the proof.

The dry-run plan (``engine.forget.plan``, which writes nothing) is grouped by artifact type — memory
entries and lines, index chunks and their FTS, vector and embedding-cache rows, recall entries,
preimages, proposals, origin rows … — with counts, and the selected group's actual items: file:line
and text, chunk ids, recall keys and snippets. What survives, and why, is a group too. ``x`` (or
Enter on a group) asks first, then runs the forget against that very plan (nothing is deleted if
the memory changed since the preview) and shows the residual check: every place a forgotten
snippet is still found, or a big green 0.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

from clawmem.engine.forget.service import ForgetPlan, ForgetResult, plan_lines_by_reason
from clawmem.engine.sessions.service import SessionSummary
from clawmem.tui.screens.pane import Pane
from clawmem.tui.screens.sessions import origin_text
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Digits, Input, Label, SelectionList, Static, Switch
from textual.widgets.selection_list import Selection

DEBOUNCE_S = 0.4
NARROW = 130
RESIDUAL_PLACES = (
    "files",
    "index chunks",
    "FTS",
    "embedding cache",
    "recall store",
    "preimages",
    "proposals",
    "run reports",
    "origin rows",
    "flush segments",
)


# ------------------------------------------------------------------------------------------ groups


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _short(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _one_line(text: str, style: str = "") -> Text:
    return Text(_short(text), style=style, no_wrap=True, overflow="ellipsis")


def _grid(*widths: int | None) -> Table:
    """A borderless table: fixed columns, then one that takes the rest (one line per item)."""
    grid = Table.grid(padding=(0, 1), expand=True)
    for width in widths:
        if width is None:
            grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        else:
            grid.add_column(no_wrap=True, width=width)
    return grid


def _title(title: str, explain: str) -> list[RenderableType]:
    return [Text(title, style="bold"), Text(explain, style="dim")]


def _nothing(what: str) -> Text:
    return Text(f"  none — no {what}", style="dim")


def _entries(plan: ForgetPlan) -> list[RenderableType]:
    out = _title(
        f"Memory entries — {_n(len(plan.entries), 'entry', 'entries')} removed whole",
        "Promoted entries whose origin rows point at a selected session, with their promotion markers "
        "(mixed-lineage entries too).",
    )
    for e in plan.entries:
        head = Text.assemble((f"{e.path}:{e.start_line}-{e.end_line}", "bold"), ("  ", ""), (e.entry_key, "cyan"))
        if e.mixed:
            head.append("  mixed lineage: removed whole", style="yellow")
        out += [Text(""), head, Text(f"  from {', '.join(e.sessions)}", style="dim")]
        for line in e.text.split("\n"):
            out.append(Text.assemble(("- ", "bold red"), (_short(line, 600), "red")))
    if plan.untargetable_entry_keys:
        out += [
            Text(""),
            Text(
                "Kept: promotion markers without origin rows (legacy): " + ", ".join(plan.untargetable_entry_keys),
                style="yellow",
            ),
        ]
    if not plan.entries:
        out.append(_nothing("promoted entry derives from these sessions"))
    return out


def _lines(plan: ForgetPlan, *, corpus: bool) -> list[RenderableType]:
    files = {f.path: f for f in plan.files}
    items = [item for item in plan.lines if files.get(item.path) is not None and files[item.path].corpus == corpus]
    if corpus:
        out = _title(
            f"Session corpus — {_n(len(items), 'line')}",
            "Lines of memory/.dreams/session-corpus/ that carry the session's text or id; a corpus file "
            "left empty is deleted.",
        )
    else:
        reasons = Counter(item.reason for item in items)
        by_reason = plan_lines_by_reason(plan)
        why = " · ".join(f"{reason} {reasons[reason]}" for reason in by_reason if reasons[reason])
        n_files = len({item.path for item in items})
        out = _title(
            f"Memory lines — {_n(len(items), 'line')} in {_n(n_files, 'file')}",
            "Whole lines only, hash-checked; each file is then re-indexed from its new text.",
        )
        if why:
            out.append(Text(f"by reason: {why}", style="dim"))
    current = None
    grid = _grid(1, 5, 8, None)
    for item in items:
        if item.path != current:
            if current is not None:
                out.append(grid)
                grid = _grid(1, 5, 8, None)
            current = item.path
            f = files[item.path]
            action = "the file is deleted (nothing else left)" if f.action == "delete" else "lines removed"
            out += [Text(""), Text.assemble((item.path, "bold"), (f"  ·  {action}", "dim"))]
        grid.add_row(
            Text("-", style="bold red"),
            Text(f"{item.line:>5}", style="dim"),
            Text(item.reason, style="dim"),
            _one_line(item.text, "red"),
        )
    if current is not None:
        out.append(grid)
    if not items:
        out.append(_nothing("line of a memory file holds it" if not corpus else "corpus line holds it"))
    return out


def _files(plan: ForgetPlan) -> list[RenderableType]:
    out = _title(
        f"Memory files — {_n(len(plan.files), 'file')} change",
        "Written atomically and hash-checked: a file edited since the preview is refused, not overwritten.",
    )
    grid = _grid(10, 10, None)
    for f in plan.files:
        action = Text("delete", style="bold red") if f.action == "delete" else Text("rewrite", style="yellow")
        grid.add_row(
            action,
            Text(_n(f.lines_removed, "line"), style="dim"),
            Text(f.path + ("  (session corpus)" if f.corpus else "")),
        )
    out.append(grid if plan.files else _nothing("memory file changes"))
    return out


def _chunks(plan: ForgetPlan, which: str) -> list[RenderableType]:
    chunks = [c for c in plan.chunks if which != "vectors" or c.has_vector]
    if which == "chunks":
        out = _title(
            f"Index chunks — {len(chunks)}",
            "Every chunk of a changed file (rebuilt from the new text right after), stale chunks holding "
            "the text, and the sessions' transcript chunks. ✗ marks the chunks that hold forgotten text.",
        )
    elif which == "fts":
        out = _title(f"FTS rows — {len(chunks)}", "One full-text row per deleted chunk, same ids.")
    else:
        out = _title(f"Vector rows — {len(chunks)}", "The embeddings stored for the deleted chunks.")
    grid = _grid(16, 2, None)
    for c in chunks:
        mark = Text("✗", style="bold red") if c.holds_text else Text("↻", style="dim")
        where = Text(f"{c.path}:{c.start_line}-{c.end_line}" + ("" if c.source == "memory" else f"  ({c.source})"))
        grid.add_row(Text(c.chunk_id, style="cyan"), mark, where)
    out.append(grid if chunks else _nothing("index rows"))
    if which == "chunks" and chunks:
        out.append(Text("✗ holds forgotten text · ↻ only re-indexed (its file changes)", style="dim"))
    return out


def _cache(plan: ForgetPlan) -> list[RenderableType]:
    out = _title(
        f"Embedding cache — {_n(len(plan.cache_rows), 'row')}",
        "Cached vectors computed from text that held a forgotten snippet (no other chunk uses them).",
    )
    grid = _grid(18, None)
    for c in plan.cache_rows:
        grid.add_row(Text(c.hash[:16], style="cyan"), Text(f"{c.provider} / {c.model}", style="dim"))
    out.append(grid if plan.cache_rows else _nothing("cached vectors"))
    return out


def _sources(plan: ForgetPlan) -> list[RenderableType]:
    out = _title(
        f"Index sources — {len(plan.index_sources)}",
        "Whole sources are dropped; the files that remain are indexed again from their new text.",
    )
    deleted = {f.path for f in plan.files if f.action == "delete"}
    grid = _grid(None, 22)
    for path, source in plan.index_sources:
        what = Text("file deleted", style="red") if path in deleted else Text("re-indexed", style="dim")
        grid.add_row(Text(path + ("" if source == "memory" else f"  ({source})")), what)
    out.append(grid if plan.index_sources else _nothing("index sources"))
    return out


def _recall(plan: ForgetPlan) -> list[RenderableType]:
    out = _title(
        f"Recall entries — {len(plan.recall_entries)}",
        "Short-term recall signals Dreaming would promote from (with their rejections).",
    )
    for r in plan.recall_entries:
        out.append(
            Text.assemble(
                (r.entry_key, "cyan"),
                (f"  {r.path}:{r.start_line}-{r.end_line}", ""),
                (f"  by {r.why}", "dim"),
                no_wrap=True,
                overflow="ellipsis",
            )
        )
        out.append(
            Text.assemble(
                ("  ", ""), ("- ", "bold red"), (_short(r.snippet, 300), "red"), no_wrap=True, overflow="ellipsis"
            )
        )
    if not plan.recall_entries:
        out.append(_nothing("recall entries"))
    return out


def _ledger(plan: ForgetPlan) -> list[RenderableType]:
    out = _title(
        f"Seen-hash scopes — {len(plan.seen_hash_scopes)}",
        "Daily-ingestion ledger rows, so a forgotten line is not re-ingested as already seen.",
    )
    grid = _grid(10, None, 24)
    for s in plan.seen_hash_scopes:
        grid.add_row(Text(s.day, style="dim"), Text(s.path), Text(s.claim_key, style="cyan"))
    out.append(grid if plan.seen_hash_scopes else _nothing("ledger rows"))
    return out


def _state(plan: ForgetPlan, kind: str) -> list[RenderableType]:
    items = [s for s in plan.state if s.kind == kind]
    if kind == "preimage":
        out = _title(
            f"Preimages — {len(items)}",
            "Saved MEMORY.md texts (for revert) that hold the forgotten text: a rewrite whose preimage is "
            "gone can no longer be reverted.",
        )
    else:
        out = _title(f"Proposals — {len(items)}", "Review-queue proposals that hold the text or a removed entry key.")
    grid = _grid(None, 20)
    for s in items:
        extra = f"proposal {s.proposal_id[:8]}" if kind == "preimage" else (s.status or "")
        grid.add_row(Text(s.key if kind == "preimage" else s.key[:8], style="cyan"), Text(extra, style="dim"))
    out.append(grid if items else _nothing(f"{kind}s hold it"))
    return out


def _origins(plan: ForgetPlan) -> list[RenderableType]:
    out = _title(f"Origin rows — {plan.artifacts.origin_rows}", "Lineage records (entry → session), deleted last.")
    grid = _grid(None, 18, 9)
    for o in plan.origin_rows:
        grid.add_row(Text(o.entry_key, style="cyan"), Text(o.session_id), origin_text(o.origin_class))
    out.append(grid if plan.origin_rows else _nothing("origin rows"))
    return out


def _segments(plan: ForgetPlan) -> list[RenderableType]:
    out = _title(f"Flush segments — {len(plan.segments)}", "Provenance records of what the sessions wrote.")
    grid = _grid(None, 6, 18)
    for s in plan.segments:
        where = f"{s.path}:{s.line_start}-{s.line_end}" if s.line_start is not None else f"{s.path} (no longer located)"
        grid.add_row(Text(where), Text(s.kind, style="dim"), Text(s.session_id, style="dim"))
    out.append(grid if plan.segments else _nothing("flush segments"))
    return out


def _transcripts(plan: ForgetPlan) -> list[RenderableType]:
    live = [r for r in plan.resolutions if r.source == "live"]
    if plan.purge_transcripts:
        out = _title(
            f"Transcripts — {_n(plan.artifacts.transcript_events, 'event')} deleted",
            "Purge is on: the imported transcripts go too.",
        )
        out += [Text(f"- {r.session_id}: {_n(r.event_count, 'event')}", style="red") for r in live]
        return out
    return [
        *_title(
            "Transcripts — kept",
            "As in OpenClaw, transcripts are kept; the tombstone blocks re-import and re-indexing. "
            "Turn on 'purge transcripts too' (t) to delete them.",
        ),
        *[Text(f"  {r.session_id}: {_n(r.event_count, 'event')} kept", style="dim") for r in live],
    ]


def _survives(plan: ForgetPlan) -> list[RenderableType]:
    out = _title(f"Survives — {len(plan.survives)}", "What a forget keeps, and why.")
    for s in plan.survives:
        out += [
            Text.assemble(("✓ ", "green"), (s.what, "bold"), (f"  ({s.where})", "dim")),
            Text(f"  {s.reason}", style="dim"),
        ]
    return out


def _refusals(refusals: tuple[Any, ...]) -> list[RenderableType]:
    out = _title(f"Refusals — {len(refusals)}", "What forget will not (or could not) change.")
    for r in refusals:
        out += [Text.assemble(("✗ ", "bold red"), (r.what, "bold")), Text(f"  {r.reason}", style="yellow")]
    if not refusals:
        out.append(_nothing("refusals"))
    return out


def _residual(result: ForgetResult) -> list[RenderableType]:
    hits = result.residual
    snippets = len(result.plan.snippets)
    deleted = [
        Text(""),
        Text("Deleted", style="bold"),
        Text(deleted_summary(result.plan) + ".", style="dim"),
        Text("Select a group for its items.", style="dim"),
    ]
    if not hits:
        return [
            Text.assemble(
                ("✓ 0 residual", "bold green"),
                (f" — none of the {_n(snippets, 'forgotten snippet')} is found anywhere", "green"),
            ),
            Text(
                "Searched: "
                + ", ".join(RESIDUAL_PLACES)
                + (", transcripts" if result.plan.purge_transcripts else "")
                + ".",
                style="dim",
            ),
            *deleted,
        ]
    out: list[RenderableType] = [
        Text(f"✗ {result.residual_count} residual — forgotten text is still found here:", style="bold red")
    ]
    for h in hits:
        head = Text.assemble(
            ("✗ ", "bold red"),
            (h.where, "bold red"),
            ("  ", ""),
            (h.location, "red"),
            no_wrap=True,
            overflow="ellipsis",
        )
        if h.note:
            head.append(f"  ({h.note})", style="yellow")
        out += [head, Text.assemble(("    ", ""), (h.excerpt, "red"), no_wrap=True, overflow="ellipsis")]
    return [*out, *deleted]


# (key, label, count, renderer) for the plan's groups, in the order of the spec's artifacts.
GroupDef = tuple[str, str, Callable[[ForgetPlan], int | str], Callable[[ForgetPlan], list[RenderableType]]]
GROUPS: tuple[GroupDef, ...] = (
    ("entries", "memory entries", lambda p: p.artifacts.memory_entries, _entries),
    ("lines", "memory lines", lambda p: p.artifacts.memory_lines, lambda p: _lines(p, corpus=False)),
    ("files", "memory files", lambda p: len(p.files), _files),
    ("corpus", "corpus lines", lambda p: p.artifacts.session_corpus_lines, lambda p: _lines(p, corpus=True)),
    ("chunks", "index chunks", lambda p: p.artifacts.index_chunks, lambda p: _chunks(p, "chunks")),
    ("fts", "FTS rows", lambda p: p.artifacts.fts_rows, lambda p: _chunks(p, "fts")),
    ("vectors", "vector rows", lambda p: p.artifacts.vector_rows, lambda p: _chunks(p, "vectors")),
    ("cache", "embedding cache", lambda p: p.artifacts.embedding_cache_rows, _cache),
    ("sources", "index sources", lambda p: p.artifacts.index_sources, _sources),
    ("recall", "recall entries", lambda p: p.artifacts.short_term_entries, _recall),
    ("ledger", "seen-hash scopes", lambda p: p.artifacts.seen_hash_scopes, _ledger),
    ("preimages", "preimages", lambda p: p.artifacts.backups, lambda p: _state(p, "preimage")),
    ("proposals", "proposals", lambda p: p.artifacts.proposals, lambda p: _state(p, "proposal")),
    ("origins", "origin rows", lambda p: p.artifacts.origin_rows, _origins),
    ("segments", "flush segments", lambda p: p.artifacts.flush_segments, _segments),
    (
        "transcripts",
        "transcripts",
        lambda p: p.artifacts.transcript_events if p.purge_transcripts else "kept",
        _transcripts,
    ),
    ("survives", "survives", lambda p: len(p.survives), _survives),
    ("refusals", "refusals", lambda p: len(p.refusals), lambda p: _refusals(p.refusals)),
)


def group_rows(plan: ForgetPlan, result: ForgetResult | None = None) -> list[tuple[str, tuple[Text, Text]]]:
    """(key, (label, count)) per group; after a run the residual check comes first."""
    rows: list[tuple[str, tuple[Text, Text]]] = []
    if result is not None:
        n = result.residual_count
        rows.append(
            (
                "residual",
                (
                    Text("residual check", style="bold"),
                    Text(str(n), style="bold green" if n == 0 else "bold red", justify="right"),
                ),
            )
        )
    for key, label, count, _ in GROUPS:
        value = count(plan)
        if key == "refusals" and result is not None:
            value = len(result.refusals)
        if isinstance(value, str):
            cell = Text(value, style="dim", justify="right")
        elif key == "refusals":
            cell = Text(str(value), style="bold red" if value else "dim", justify="right")
        elif key == "survives":
            cell = Text(str(value), style="green", justify="right")
        else:
            cell = Text(str(value), style="bold" if value else "dim", justify="right")
        rows.append((key, (Text(label, style="" if value else "dim"), cell)))
    return rows


def render_group(key: str, plan: ForgetPlan, result: ForgetResult | None = None) -> RenderableType:
    if key == "residual" and result is not None:
        return Group(*_residual(result))
    if key == "refusals" and result is not None:
        return Group(*_refusals(result.refusals))
    for gkey, _, _, render in GROUPS:
        if gkey == key:
            return Group(*render(plan))
    return Text("")


def render_plan_header(plan: ForgetPlan) -> Text:
    head = Text.assemble(("Dry run", "bold yellow"), (" — nothing is deleted until you confirm (x)", "dim"))
    head.append("\n")
    for i, r in enumerate(plan.resolutions):
        if i:
            head.append("  ·  ", style="dim")
        if r.source == "unresolved":
            head.append(f"{r.session_id}: no such session (only a tombstone would be recorded)", style="yellow")
            continue
        head.append(r.session_id, style="bold")
        extra = [r.session_key or "no key", r.source]
        if r.source == "live":
            extra += [r.kind or "", _n(r.event_count, "event")]
        head.append(f" ({' · '.join(e for e in extra if e)})", style="dim")
    return head


def render_result_header(result: ForgetResult) -> Text:
    plan = result.plan
    ids = ", ".join(plan.session_ids)
    head = Text.assemble(
        ("✓ Forgot ", "bold green"), (_n(len(plan.session_ids), "session"), "bold green"), (f": {ids}", "bold")
    )
    tomb = ", ".join(result.tombstoned) or "already tombstoned"
    rewritten = sum(1 for f in plan.files if f.action == "rewrite")
    deleted = sum(1 for f in plan.files if f.action == "delete")
    head.append(
        f"\ntombstoned: {tomb} (re-import refused)  ·  {_n(rewritten, 'file')} rewritten and re-indexed"
        f"  ·  {_n(deleted, 'file')} deleted",
        style="dim",
    )
    for warning in result.warnings:
        head.append(f"\n⚠ {warning}", style="yellow")
    return head


def deleted_summary(plan: ForgetPlan) -> str:
    """What a forget deletes, in words (for the confirmation and the result)."""
    a = plan.artifacts
    parts = [
        _n(a.memory_entries, "memory entry", "memory entries"),
        f"{_n(a.memory_lines, 'line')} in {_n(a.memory_files, 'memory file')}",
        _n(a.index_chunks, "index chunk"),
        _n(a.short_term_entries, "recall entry", "recall entries"),
        _n(a.backups, "preimage"),
        _n(a.proposals, "proposal"),
        _n(a.origin_rows, "origin row"),
    ]
    if a.session_corpus_lines:
        parts.insert(2, _n(a.session_corpus_lines, "session-corpus line"))
    if plan.purge_transcripts:
        parts.append(_n(a.transcript_events, "transcript event"))
    return ", ".join(parts)


def confirm_body(plan: ForgetPlan) -> str:
    which = "they are" if len(plan.session_ids) > 1 else "it is"
    kept = "" if plan.purge_transcripts else " The transcripts are kept."
    return (
        f"{deleted_summary(plan)} — and records a tombstone so {which} never imported again.{kept} It cannot be undone."
    )


def session_prompt(s: SessionSummary) -> Text:
    prompt = Text.assemble(
        (s.session_id, "dim strike" if s.forgotten_at else "bold"),
        (f"  {s.kind} · {_n(s.event_count, 'event')} · {s.session_key}", "dim"),
    )
    if s.forgotten_at:
        prompt.append(f"  ⊘ forgotten {s.forgotten_at[:10]}", style="red")
    return prompt


# --------------------------------------------------------------------------------------------- pane


class GroupsTable(DataTable[Any]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="forget.groups.down"),
        Binding("k", "cursor_up", "Up", show=False, id="forget.groups.up"),
        Binding("g", "scroll_top", "Top", show=False, id="forget.groups.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="forget.groups.bottom"),
    ]


class SessionPicker(SelectionList[str]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="forget.sessions.down"),
        Binding("k", "cursor_up", "Up", show=False, id="forget.sessions.up"),
        Binding("g", "first", "Top", show=False, id="forget.sessions.top"),
        Binding("G", "last", "Bottom", show=False, id="forget.sessions.bottom"),
    ]


class ForgetPane(Pane):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "p",
            "plan",
            "Preview",
            id="forget.plan",
            tooltip="Compute the dry-run plan for the picked sessions again (it writes nothing).",
        ),
        Binding(
            "x",
            "run",
            "Forget…",
            id="forget.run",
            tooltip="Forget the picked sessions as previewed (asks first; refused if the memory changed).",
        ),
        Binding(
            "t",
            "toggle_purge",
            "Purge transcripts",
            id="forget.purge",
            tooltip="Also delete the imported transcripts (kept by default, as in OpenClaw).",
        ),
        Binding(
            "ctrl+l",
            "focus_selector",
            "Ids/keys",
            id="forget.focus-selector",
            tooltip="Type session ids or keys to forget (comma-separated).",
        ),
        Binding("escape", "leave_input", "Groups", show=False, id="forget.leave-input"),
    ]
    HELP = "forget"
    NOTIFY_TITLE = "forget"
    PALETTE: ClassVar = [
        ("forget: Preview a forget", "The dry-run plan for the picked sessions", "plan"),
        ("forget: Forget the picked sessions", "Delete what the plan lists, then run the residual check", "run"),
        ("forget: Toggle purge transcripts", "Also delete the imported transcripts", "toggle_purge"),
    ]

    def __init__(self) -> None:
        super().__init__(id="forget-pane")
        self.sessions: tuple[SessionSummary, ...] = ()
        self.chosen: list[str] = []
        self.plan: ForgetPlan | None = None
        self.result: ForgetResult | None = None
        self.group: str | None = None
        self.running = False
        self._generation = 0
        self._timer: Timer | None = None
        self._note: Text | None = None
        self._sticky = False  # the note is an error that stays until the user acts again
        self._binding_state: tuple[bool | None, ...] | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="forget-pick"):
            picker = SessionPicker(id="forget-sessions")
            picker.border_title = "Sessions to forget (space picks)"
            yield picker
            with Vertical(id="forget-controls"):
                yield Input(placeholder="or type ids / keys (ctrl+l)", id="forget-selector")
                with Horizontal(id="forget-purge-row"):
                    yield Switch(False, id="forget-purge")
                    yield Label("purge transcripts too (t)", id="forget-purge-label")
        yield Static("", id="forget-header")
        with Horizontal(id="forget-banner"):
            yield Digits("0", id="forget-residual-digits")
            yield Static("", id="forget-residual-text")
        with Horizontal(id="forget-body"):
            groups = GroupsTable(id="forget-groups", cursor_type="row", zebra_stripes=True)
            groups.add_column("Artifact", key="label", width=18)
            groups.add_column("Count", key="count", width=5)
            yield groups
            with VerticalScroll(id="forget-items-scroll"):
                yield Static("", id="forget-items")
        yield Static("", id="forget-status")

    def on_mount(self) -> None:
        if not self.engine.settings.tui.cursor_blink:
            self.query_one("#forget-selector", Input).cursor_blink = False
        self.query_one("#forget-banner").display = False
        self._show_empty()
        self.refresh_from_engine(frozenset())

    def on_resize(self) -> None:
        self.set_class(self.size.width < NARROW, "narrow")

    # ------------------------------------------------------------------------------------ sessions

    def refresh_from_engine(self, paths: frozenset[str]) -> None:
        self._load_sessions()
        if self.plan is not None and self.result is None and not self.running:
            self.compute_plan()  # the memory may have changed under the preview

    def _load_sessions(self) -> None:
        self.run_engine(
            lambda: self.engine.sessions.summaries(),
            self._show_sessions,
            group="forget-sessions",
            failure="sessions could not be read",
        )

    def _show_sessions(self, sessions: tuple[SessionSummary, ...]) -> None:
        self.sessions = sessions
        picker: SelectionList[str] = self.query_one("#forget-sessions", SelectionList)
        highlighted = picker.highlighted
        with picker.prevent(SelectionList.SelectedChanged, SelectionList.SelectionToggled):
            picker.clear_options()
            picker.add_options(
                [Selection(session_prompt(s), s.session_id, s.session_id in self.chosen) for s in sessions]
            )
        if picker.option_count:
            picker.highlighted = min(highlighted or 0, picker.option_count - 1)
        if self.plan is None and self.result is None:
            self._show_empty()

    def preselect(self, session_ids: tuple[str, ...]) -> None:
        """Pick exactly these sessions (from the Sessions pane) and preview their forget at once."""
        self.chosen = list(session_ids)
        self.result = None
        self._set_note(None)
        field = self.query_one("#forget-selector", Input)
        with field.prevent(Input.Changed):
            field.value = ""
        self._show_sessions(self.sessions)
        self.compute_plan()
        self.call_after_refresh(self.action_leave_input)  # the plan is what to look at now

    def selectors(self) -> tuple[str, ...]:
        typed = [t for t in re.split(r"[,\s]+", self.query_one("#forget-selector", Input).value) if t]
        return tuple(dict.fromkeys([*self.chosen, *typed]))

    # ------------------------------------------------------------------------------------ plan

    def compute_plan(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.running:
            return  # the result of the run comes first; pick again afterwards
        selectors = self.selectors()
        self._generation += 1
        if not selectors:
            self.plan = None
            self._show_empty()
            return
        purge = self.query_one("#forget-purge", Switch).value
        if not self._sticky:
            self._set_note(Text("Computing the dry-run plan…", style="italic"))
        self._compute(self._generation, selectors, purge)

    def _schedule_plan(self) -> None:
        self.result = None
        self._set_note(None)
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_S, self.compute_plan)

    def _compute(self, generation: int, selectors: tuple[str, ...], purge: bool) -> None:
        self.run_engine(
            lambda: self.engine.forget.plan(selectors, purge_transcripts=purge),
            lambda plan: self._show_plan(generation, plan),
            group="forget-plan",
            failure="the forget plan failed",
            on_error=lambda exc: self._plan_failed(generation, str(exc)),
            notify=False,  # the pane shows why there is no plan
        )

    def _plan_failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self.plan = None
            self._show_empty()
            self._set_note(Text(f"✗ {message}", style="bold red"), sticky=True)

    def _show_plan(self, generation: int, plan: ForgetPlan) -> None:
        if generation != self._generation or self.result is not None:
            return  # a newer preview is on its way, or a run finished meanwhile
        self.plan = plan
        if not self._sticky:
            self._note = None
        self.query_one("#forget-banner").display = False
        self.query_one("#forget-header", Static).update(render_plan_header(plan))
        self._fill_groups(group_rows(plan), keep=self.group if self.group != "residual" else None)
        self._update_status()
        self._sync_bindings()

    def _fill_groups(self, rows: list[tuple[str, tuple[Text, Text]]], keep: str | None) -> None:
        table = self.query_one("#forget-groups", GroupsTable)
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key)
        keys = [k for k, _ in rows]
        self.group = keep if keep in keys else (keys[0] if keys else None)
        if self.group is not None:
            table.move_cursor(row=keys.index(self.group), animate=False, scroll=True)
        self._show_group()

    def _show_group(self) -> None:
        widget = self.query_one("#forget-items", Static)
        if self.plan is None or self.group is None:
            return
        plan = self.result.plan if self.result is not None else self.plan
        widget.update(render_group(self.group, plan, self.result))
        self.query_one("#forget-items-scroll", VerticalScroll).scroll_home(animate=False)

    def _show_empty(self) -> None:
        self.query_one("#forget-header", Static).update("")
        self.query_one("#forget-groups", GroupsTable).clear()
        self.query_one("#forget-banner").display = False
        self.group = None
        if not self.sessions:
            text = Text.assemble(
                ("No sessions to forget.\n\n", "bold"),
                ("Import a transcript in the Sessions pane (8, then i) or with ", "dim"),
                ("clawmem session import FILE.jsonl", "bold"),
                (
                    ". You can also type ids or keys above: a session "
                    "known only from its lineage can still be forgotten.",
                    "dim",
                ),
            )
        else:
            text = Text.assemble(
                ("Pick the sessions to forget ", "bold"),
                ("(space in the list, or type ids / keys).\n\n", "dim"),
                (
                    "The dry-run plan appears here: every memory entry, line, index row, recall signal, preimage and "
                    "origin row the forget would delete, grouped by artifact, and what survives. Nothing is deleted "
                    "until you press x and confirm; a residual check then proves nothing is left.",
                    "dim",
                ),
            )
        self.query_one("#forget-items", Static).update(text)
        self._update_status()
        self._sync_bindings()

    # ------------------------------------------------------------------------------------ status

    def _update_status(self) -> None:
        status = self.query_one("#forget-status", Static)
        if self.running:
            status.update(
                Text(
                    "Forgetting… (tombstones, index and plugin state, memory files, origins, re-index, residual check)",
                    style="bold yellow",
                )
            )
            return
        if self._note is not None:
            status.update(self._note)
            return
        if self.result is not None:
            n = self.result.residual_count
            status.update(
                Text.assemble(
                    (f"{'✓' if n == 0 else '✗'} {n} residual", "bold green" if n == 0 else "bold red"),
                    ("  ·  pick other sessions to preview another forget", "dim"),
                    no_wrap=True,
                    overflow="ellipsis",
                )
            )
            return
        if self.plan is None:
            status.update(Text("Nothing picked  ·  space picks a session  ·  ctrl+l types ids or keys", style="dim"))
            return
        a = self.plan.artifacts
        status.update(
            Text.assemble(
                (
                    f"{_n(a.memory_entries, 'entry', 'entries')} · {_n(a.memory_lines, 'line')} in "
                    f"{_n(a.memory_files, 'file')} · {_n(a.index_chunks, 'chunk')} · "
                    f"{_n(a.short_term_entries, 'recall entry', 'recall entries')}",
                    "bold",
                ),
                ("  ·  x forgets (asks first)  ·  p previews again", "dim"),
                no_wrap=True,
                overflow="ellipsis",
            )
        )

    def _set_note(self, note: Text | None, *, sticky: bool = False) -> None:
        self._note = note
        self._sticky = sticky and note is not None
        self._update_status()

    # ------------------------------------------------------------------------------------ events

    @on(SelectionList.SelectedChanged, "#forget-sessions")
    def _picked(self, event: SelectionList.SelectedChanged[str]) -> None:
        event.stop()
        self.chosen = list(event.selection_list.selected)
        self._schedule_plan()

    @on(Input.Changed, "#forget-selector")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        self._schedule_plan()

    @on(Input.Submitted, "#forget-selector")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.result = None
        self.compute_plan()
        self.query_one("#forget-groups", GroupsTable).focus()

    @on(Switch.Changed, "#forget-purge")
    def _purge_changed(self, event: Switch.Changed) -> None:
        event.stop()
        if self.plan is not None or self.selectors():
            self.result = None
            self._set_note(None)
            self.compute_plan()

    @on(DataTable.RowHighlighted, "#forget-groups")
    def _group_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = str(event.row_key.value) if event.row_key is not None else None
        if key is not None and key != self.group:
            self.group = key
            self._show_group()

    @on(DataTable.RowSelected, "#forget-groups")
    def _group_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_run()

    # ------------------------------------------------------------------------------------ actions

    def _sync_bindings(self) -> None:
        """Refresh the footer only when a key's availability changed (the footer is rebuilt each time)."""
        state = tuple(self.check_action(a, ()) for a in ("run", "plan"))
        if state != self._binding_state:
            self._binding_state = state
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run":
            return True if self.plan is not None and self.result is None and not self.running else None
        if action == "plan":
            return None if self.running else True
        return True

    def action_plan(self) -> None:
        self.result = None
        self._set_note(None)
        self.compute_plan()

    def action_toggle_purge(self) -> None:
        switch = self.query_one("#forget-purge", Switch)
        switch.value = not switch.value

    def action_focus_selector(self) -> None:
        self.query_one("#forget-selector", Input).focus()

    def action_leave_input(self) -> None:
        self.query_one("#forget-groups", GroupsTable).focus()

    def action_run(self) -> None:
        from clawmem.tui.modals.confirm import ConfirmModal

        plan = self.plan
        if self.running:
            return
        if self.result is not None:
            self.notify("Done: this forget has run. Pick sessions (or press p) to preview another.", severity="warning")
            return
        if plan is None:
            self.notify("Pick sessions and wait for their preview first.", severity="warning")
            return
        n = len(plan.session_ids)
        title = f"Forget {_n(n, 'session')}? ({', '.join(plan.session_ids)})"
        body = f"This deletes {confirm_body(plan)}"

        def done(yes: bool | None) -> None:
            if yes and self.plan is plan:
                self.running = True
                self._set_note(None)
                self._sync_bindings()
                self._run(plan)

        self.app.push_screen(ConfirmModal(title, body, yes="Forget", no="Keep"), done)

    def _run(self, plan: ForgetPlan) -> None:
        self.run_engine(
            lambda: self.engine.forget.run(plan.selectors, purge_transcripts=plan.purge_transcripts, expected=plan),
            self._finished,
            group="forget-run",
            failure="forget failed",
            on_error=lambda exc: self._run_failed(str(exc)),
            notify=False,  # the pane shows why nothing was forgotten
        )

    def _run_failed(self, message: str) -> None:
        self.running = False
        self.result = None
        self._set_note(Text(f"✗ {message}", style="bold red"), sticky=True)
        self.compute_plan()  # show what is there now
        self._sync_bindings()

    def _finished(self, result: ForgetResult) -> None:
        self.running = False
        self.result = result
        self._set_note(None)
        n = result.residual_count
        banner = self.query_one("#forget-banner")
        banner.display = True
        banner.set_class(n > 0, "bad")
        self.query_one("#forget-residual-digits", Digits).update(str(n))
        if n == 0:
            text = Text.assemble(
                ("residual", "bold green"),
                (
                    "\n✓ nothing of it is left: files, index, recall store, review state and origins were searched",
                    "green",
                ),
            )
        else:
            text = Text.assemble(
                ("residual", "bold red"),
                (f"\n✗ {_n(n, 'place')} still hold forgotten text — see the residual check below", "red"),
            )
        self.query_one("#forget-residual-text", Static).update(text)
        self.query_one("#forget-header", Static).update(render_result_header(result))
        self._fill_groups(group_rows(result.plan, result), keep="residual")
        self._update_status()
        self._sync_bindings()
        confirmed = self.plan.refusals if self.plan is not None else ()
        for refusal in (r for r in result.refusals if r not in confirmed):  # files that changed during the run
            self.notify(f"{refusal.what}: {refusal.reason}", title="forget", severity="warning")
        self.clawmem_app.panes["sessions"].refresh_from_engine(frozenset())
        self._load_sessions()
        # forget.run re-indexed the changed files' text; embed their new chunks in the background.
        changed = frozenset(f.path for f in result.plan.files if f.action == "rewrite" and not f.corpus)
        if changed:
            self.clawmem_app.start_indexing(only=changed)
