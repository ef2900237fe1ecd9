"""The Forget pane's renderers: the dry-run plan by artifact group (with each group's items), what
survives, the refusals, the residual check after a run, and the words of the confirmation —
engine dataclasses in, Rich renderables out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from clawmem.engine.forget.service import ForgetPlan, ForgetResult, plan_lines_by_reason
from clawmem.engine.openclaw.sessions import OpenClawSession
from clawmem.engine.sessions.service import SessionSummary
from clawmem.engine.text_clip import clip_flat
from clawmem.tui.render.sessions import origin_text
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

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


def counted(count: int, word: str, plural: str | None = None) -> str:
    """``3 files``, ``1 file``: a count and its noun."""
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _one_line(text: str, style: str = "") -> Text:
    return Text(clip_flat(text, 400), style=style, no_wrap=True, overflow="ellipsis")


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
        f"Memory entries — {counted(len(plan.entries), 'entry', 'entries')} removed whole",
        "Promoted entries whose origin rows point at a selected session, with their promotion markers "
        "(mixed-lineage entries too).",
    )
    for e in plan.entries:
        head = Text.assemble((f"{e.path}:{e.start_line}-{e.end_line}", "bold"), ("  ", ""), (e.entry_key, "cyan"))
        if e.mixed:
            head.append("  mixed lineage: removed whole", style="yellow")
        out += [Text(""), head, Text(f"  from {', '.join(e.sessions)}", style="dim")]
        for line in e.text.split("\n"):
            out.append(Text.assemble(("- ", "bold red"), (clip_flat(line, 600), "red")))
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
            f"Session corpus — {counted(len(items), 'line')}",
            "Lines of memory/.dreams/session-corpus/ that carry the session's text or id; a corpus file "
            "left empty is deleted.",
        )
    else:
        reasons = Counter(item.reason for item in items)
        by_reason = plan_lines_by_reason(plan)
        why = " · ".join(f"{reason} {reasons[reason]}" for reason in by_reason if reasons[reason])
        n_files = len({item.path for item in items})
        out = _title(
            f"Memory lines — {counted(len(items), 'line')} in {counted(n_files, 'file')}",
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
        f"Memory files — {counted(len(plan.files), 'file')} change",
        "Written atomically and hash-checked: a file edited since the preview is refused, not overwritten.",
    )
    grid = _grid(10, 10, None)
    for f in plan.files:
        action = Text("delete", style="bold red") if f.action == "delete" else Text("rewrite", style="yellow")
        grid.add_row(
            action,
            Text(counted(f.lines_removed, "line"), style="dim"),
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
        f"Embedding cache — {counted(len(plan.cache_rows), 'row')}",
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
                ("  ", ""), ("- ", "bold red"), (clip_flat(r.snippet, 300), "red"), no_wrap=True, overflow="ellipsis"
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
            f"Transcripts — {counted(plan.artifacts.transcript_events, 'event')} deleted",
            "Purge is on: the imported transcripts go too.",
        )
        out += [Text(f"- {r.session_id}: {counted(r.event_count, 'event')}", style="red") for r in live]
        return out
    return [
        *_title(
            "Transcripts — kept",
            "As in OpenClaw, transcripts are kept; the tombstone blocks re-import and re-indexing. "
            "Turn on 'purge transcripts too' (t) to delete them.",
        ),
        *[Text(f"  {r.session_id}: {counted(r.event_count, 'event')} kept", style="dim") for r in live],
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
                (f" — none of the {counted(snippets, 'forgotten snippet')} is found anywhere", "green"),
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
        if r.source == "openclaw":
            head.append("◆ ", style="magenta")
        head.append(r.session_id, style="bold")
        extra = [r.session_key or "no key", "OpenClaw's, read in place" if r.source == "openclaw" else r.source]
        if r.source in ("live", "openclaw"):
            extra += [r.kind or "", counted(r.event_count, "event")]
        head.append(f" ({' · '.join(e for e in extra if e)})", style="dim")
    if plan.openclaw_commands:
        head.append("\n")
        head.append("OpenClaw's own copy stays; remove it there: ", style="yellow")
        head.append(plan.openclaw_commands[0], style="bold")
        head.append(", then without --dry-run", style="dim")
    return head


def render_result_header(result: ForgetResult) -> Text:
    plan = result.plan
    ids = ", ".join(plan.session_ids)
    head = Text.assemble(
        ("✓ Forgot ", "bold green"), (counted(len(plan.session_ids), "session"), "bold green"), (f": {ids}", "bold")
    )
    tomb = ", ".join(result.tombstoned) or "already tombstoned"
    rewritten = sum(1 for f in plan.files if f.action == "rewrite")
    deleted = sum(1 for f in plan.files if f.action == "delete")
    head.append(
        f"\ntombstoned: {tomb} (re-import refused)  ·  {counted(rewritten, 'file')} rewritten and re-indexed"
        f"  ·  {counted(deleted, 'file')} deleted",
        style="dim",
    )
    for warning in result.warnings:
        head.append(f"\n⚠ {warning}", style="yellow")
    return head


def deleted_summary(plan: ForgetPlan) -> str:
    """What a forget deletes, in words (for the confirmation and the result)."""
    a = plan.artifacts
    parts = [
        counted(a.memory_entries, "memory entry", "memory entries"),
        f"{counted(a.memory_lines, 'line')} in {counted(a.memory_files, 'memory file')}",
        counted(a.index_chunks, "index chunk"),
        counted(a.short_term_entries, "recall entry", "recall entries"),
        counted(a.backups, "preimage"),
        counted(a.proposals, "proposal"),
        counted(a.origin_rows, "origin row"),
    ]
    if a.session_corpus_lines:
        parts.insert(2, counted(a.session_corpus_lines, "session-corpus line"))
    if plan.purge_transcripts:
        parts.append(counted(a.transcript_events, "transcript event"))
    return ", ".join(parts)


def confirm_body(plan: ForgetPlan) -> str:
    which = "they are" if len(plan.session_ids) > 1 else "it is"
    kept = "" if plan.purge_transcripts else " The transcripts are kept."
    return (
        f"{deleted_summary(plan)} — and records a tombstone so {which} never imported again.{kept} It cannot be undone."
    )


def openclaw_session_prompt(s: OpenClawSession) -> Text:
    """An OpenClaw session in the picker: marked ◆ as in the Sessions pane."""
    return Text.assemble(
        ("◆ ", "magenta"),
        (s.session_id, "bold"),
        (f"  {s.kind} · {counted(s.event_count, 'event')} · {s.session_key} · OpenClaw's", "dim"),
    )


def session_prompt(s: SessionSummary) -> Text:
    prompt = Text.assemble(
        (s.session_id, "dim strike" if s.forgotten_at else "bold"),
        (f"  {s.kind} · {counted(s.event_count, 'event')} · {s.session_key}", "dim"),
    )
    if s.forgotten_at:
        prompt.append(f"  ⊘ forgotten {s.forgotten_at[:10]}", style="red")
    return prompt
