"""The Dreams pane's renderers: proposals and their operations, rewrite history and refused
reverts, why a candidate is (not) promoted, and DREAMS.md for reading — engine dataclasses in,
Rich renderables out."""

from __future__ import annotations

import difflib
import re
from dataclasses import fields

from clawmem.engine.dreaming.models import CandidateExplanation, HistoryItem, Operation, Proposal, RevertResult
from clawmem.engine.openclaw.dreaming import OpenClawCandidate, OpenClawDreaming
from clawmem.engine.text_clip import clip_flat
from clawmem.tui.widgets.breakdown import bar
from clawmem.tui.widgets.diff_view import unified_diff
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

PROPOSAL_STYLE = {
    "pending": "bold yellow",
    "applied": "green",
    "rejected": "red",
    "stale": "magenta",
    "reverted": "cyan",
    "superseded-by-newer": "dim",
}
ACTION_MARK = {"added": ("+ added", "green"), "merged": ("= merged", "cyan"), "superseded": ("> superseded", "yellow")}
CANDIDATE_MARK = {
    "promotable": ("✓", "bold green"),
    "beyond-limit": ("…", "yellow"),
    "below-gates": ("✗", "yellow"),
    "excluded": ("⊘", "red"),
    "promoted": ("★", "cyan"),
    "rejected": ("✗", "magenta"),
}
_COMMENT = re.compile(r"^\s*<!--.*?-->\s*$", re.MULTILINE)


def when(iso: str | None) -> str:
    """``2026-11-05T09:00:00.000Z`` → ``2026-11-05 09:00``."""
    return "—" if not iso else iso[:16].replace("T", " ")


def _changes(added: int, merged: int, superseded: int) -> Text:
    return Text.assemble(
        (f"+{added}", "green"), (" ", ""), (f"={merged}", "cyan"), (" ", ""), (f">{superseded}", "yellow")
    )


def proposal_cells(p: Proposal) -> tuple[Text, ...]:
    note = p.reason or (f"append-only: {p.fallback_reason}" if p.mode == "append" and p.fallback_reason else "")
    return (
        Text(p.short_id, style="bold" if p.status == "pending" else ""),
        Text(p.status, style=PROPOSAL_STYLE.get(p.status, "")),
        Text(p.mode),
        Text(when(p.created_at), style="dim"),
        _changes(p.added, p.merged, p.superseded),
        Text(clip_flat(note, 200) or "—", style="dim" if not note else "", no_wrap=True, overflow="ellipsis"),
    )


def operation_cells(op: Operation) -> tuple[Text, ...]:
    label, style = ACTION_MARK.get(op.action, (op.action, ""))
    return (
        Text(label, style=style),
        Text(f"{op.score:.3f}", style="bold"),
        Text(str(op.signal_count)),
        Text(str(op.unique_queries)),
        Text(op.source, no_wrap=True, overflow="ellipsis"),
        Text(clip_flat(op.snippet, 300), no_wrap=True, overflow="ellipsis"),
    )


def render_proposal(p: Proposal, op: Operation | None) -> RenderableType:
    """The selected proposal: its state, the unified diff, then the selected operation in full."""
    head = Text.assemble(
        (f"proposal {p.short_id}", "bold"),
        ("  ·  ", "dim"),
        (p.status, PROPOSAL_STYLE.get(p.status, "")),
        ("  ·  ", "dim"),
        (p.mode, ""),
        ("  ·  created ", "dim"),
        (when(p.created_at), ""),
        ("  ·  ", "dim"),
        _changes(p.added, p.merged, p.superseded),
    )
    parts: list[RenderableType] = [head]
    if p.status == "stale":
        parts.append(Text(f"stale: {p.reason or 'MEMORY.md changed since the proposal was made'}", style="magenta"))
        parts.append(Text("r runs a new cycle on the current MEMORY.md · x discards this one", style="dim"))
    elif p.reason:
        parts.append(Text(f"{'rejected' if p.status == 'rejected' else 'note'}: {p.reason}", style="yellow"))
    if p.mode == "append" and p.fallback_reason:
        parts.append(Text(f"append-only fallback: {p.fallback_reason}", style="yellow"))
    if p.status == "pending":
        parts.append(Text("a approves (MEMORY.md is re-checked first) · x rejects with a reason", style="dim"))
    legend = (
        "(a = now, b = after approval)"
        if p.status == "pending"
        else "(a = MEMORY.md when proposed, b = what the proposal wrote or would have written)"
    )
    parts += [
        Text(""),
        Text(f"MEMORY.md — lines marked - go, lines marked + come {legend}", style="bold"),
        unified_diff(p.before_text, p.after_text, before_name="a/MEMORY.md", after_name="b/MEMORY.md"),
    ]
    if op is not None:
        label, style = ACTION_MARK.get(op.action, (op.action, ""))
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(ratio=1, overflow="fold")
        grid.add_row("candidate", Text(op.candidate_key))
        grid.add_row("action", Text(label, style=style))
        c = op.components
        grid.add_row(
            "score",
            Text.assemble(
                (f"{op.score:.3f}", "bold"),
                (
                    f" = freq {c.frequency:.2f} · rel {c.relevance:.2f} · div {c.diversity:.2f} · rec {c.recency:.2f}"
                    f" · cons {c.consolidation:.2f} · concept {c.conceptual:.2f} (+ boosts)",
                    "dim",
                ),
            ),
        )
        grid.add_row(
            "signals",
            Text(
                f"{op.signal_count} ({op.recall_count} recalls) · {op.unique_queries} unique "
                f"queries · avg {op.avg_score:.2f}"
            ),
        )
        grid.add_row("source", Text(op.source, style="bold"))
        grid.add_row("writes", Text(op.result_entry, style="green"))
        for prior in op.prior_entries:
            grid.add_row("replaces", Text(prior, style="red"))
        parts += [Text("Selected operation", style="bold"), grid]
    return Group(*parts)


def history_cells(h: HistoryItem) -> tuple[Text, ...]:
    current = Text("✓ current", style="green") if h.is_current else Text("✗ edited", style="yellow")
    if h.status == "reverted":
        current = Text("— reverted", style="dim")
    return (
        Text(h.proposal_id[:8], style="bold"),
        Text(h.status, style=PROPOSAL_STYLE.get(h.status, "")),
        Text(h.mode),
        Text(when(h.applied_at)),
        Text(when(h.reverted_at), style="dim"),
        _changes(h.added, h.merged, h.superseded),
        Text("✓ kept", style="green") if h.preimage_available else Text("✗ pruned", style="red"),
        current,
    )


def render_history(h: HistoryItem, p: Proposal | None) -> RenderableType:
    head = Text.assemble(
        (f"rewrite {h.proposal_id[:8]}", "bold"),
        ("  ·  ", "dim"),
        ("applied ", PROPOSAL_STYLE["applied"]),
        (when(h.applied_at), ""),
        ("  ·  ", "dim"),
        _changes(h.added, h.merged, h.superseded),
        ("  ·  preimage ", "dim"),
        ("kept", "green") if h.preimage_available else ("pruned", "red"),
    )
    if h.reverted_at:
        head.append(f"  ·  reverted {when(h.reverted_at)}", style="cyan")
    lines: list[RenderableType] = [head]
    if h.status == "applied":
        if not h.preimage_available:
            lines.append(
                Text("The preimage was pruned (only the last 8 are kept): it can no longer be reverted.", style="red")
            )
        elif h.is_current:
            lines.append(
                Text("MEMORY.md still holds this rewrite: R restores the preimage byte for byte.", style="dim")
            )
        else:
            lines.append(
                Text(
                    "MEMORY.md changed since this rewrite: a revert would be refused and show the three "
                    "texts to merge by hand.",
                    style="yellow",
                )
            )
    if p is not None:
        lines += [
            Text(""),
            Text("What the rewrite changed (a = preimage, b = rewrite)", style="bold"),
            unified_diff(p.before_text, p.after_text, before_name="a/MEMORY.md", after_name="b/MEMORY.md"),
        ]
    return Group(*lines)


def render_refusal(r: RevertResult, folded: bool) -> RenderableType:
    """A refused revert: why, and how to read the three texts that follow."""
    how = "unchanged lines folded; v shows the full texts" if folded else "full texts; v folds the unchanged lines"
    return Group(
        Text.assemble(("✗ Revert refused: ", "bold red"), (r.message, "red")),
        Text(f"Preimage, rewrite and current MEMORY.md ({how}); the diffs follow.", style="dim"),
    )


def render_refusal_diffs(r: RevertResult) -> RenderableType:
    current = r.current_text if r.current_text is not None else ""
    return Group(
        Text("Edited since the rewrite (a = rewrite, b = MEMORY.md now)", style="bold"),
        unified_diff(r.rewrite_text, current, before_name="a/rewrite", after_name="b/current"),
        Text("What the rewrite changed (a = preimage, b = rewrite)", style="bold"),
        unified_diff(r.preimage_text, r.rewrite_text, before_name="a/preimage", after_name="b/rewrite"),
    )


FOLD_CONTEXT = 1


def marked_text(title: str, legend: str, text: str, other: str, mark: str, style: str, *, fold: bool) -> Text:
    """``text`` under a header, each line that ``other`` lacks marked with ``mark`` (not only colour);
    with ``fold``, runs of unmarked lines away from a marked one shrink to a count."""
    lines, theirs = text.splitlines(), other.splitlines()
    changed: set[int] = set()
    matcher = difflib.SequenceMatcher(a=theirs, b=lines, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            changed.update(range(j1, j2))
    keep = set(range(len(lines)))
    if fold:
        keep = {j for i in changed for j in range(i - FOLD_CONTEXT, i + FOLD_CONTEXT + 1)}
    out = Text()
    out.append(f" {title} ", style="bold reverse")
    out.append(f" {legend}\n", style="dim")
    folded = 0
    for i, line in enumerate(lines):
        if i not in keep:
            folded += 1
            continue
        if folded:
            out.append(f"  ⋯ {folded} unchanged line{'s' if folded != 1 else ''}\n", style="dim italic")
            folded = 0
        out.append(f"{mark if i in changed else ' '} {line}\n", style=style if i in changed else "")
    if folded:
        out.append(f"  ⋯ {folded} unchanged line{'s' if folded != 1 else ''}\n", style="dim italic")
    if not lines:
        out.append("(empty)\n", style="dim")
    return out


def candidate_cells(e: CandidateExplanation) -> tuple[Text, ...]:
    mark, style = CANDIDATE_MARK.get(e.status, ("·", ""))
    status = f"{mark} {e.status}" + (f" #{e.rank}" if e.rank and e.status in ("promotable", "beyond-limit") else "")
    return (
        Text(f"{e.score:.3f}", style="bold" if e.status == "promotable" else ""),
        Text(status, style=style),
        Text(str(e.signal_count)),
        Text(str(e.unique_queries)),
        Text(e.source, no_wrap=True, overflow="ellipsis"),
        Text(
            clip_flat(e.snippet, 300),
            style="dim" if e.status in ("excluded", "promoted") else "",
            no_wrap=True,
            overflow="ellipsis",
        ),
    )


def _gates_table(e: CandidateExplanation) -> Table:
    """Every gate with what the entry has and what it needs — the failing ones first, as they decide."""
    gates = Table.grid(padding=(0, 1), expand=True)
    gates.add_column(width=1, no_wrap=True)
    gates.add_column(no_wrap=True)
    gates.add_column(max_width=16, no_wrap=True, overflow="ellipsis")
    gates.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    for g in sorted(e.gates, key=lambda g: g.passed):  # failing gates first, then the engine's order
        gates.add_row(
            Text("✓", style="green") if g.passed else Text("✗", style="bold red"),
            Text(g.name, style="" if g.passed else "bold"),
            Text(g.actual, style="" if g.passed else "bold red"),
            Text(f"needs {g.needed}", style="dim" if g.passed else ""),
        )
    return gates


def _signal_facts(e: CandidateExplanation) -> Text:
    """The counts the gates read (signals and where they came from, unique queries), the recall days, age,
    origin and session — an untrusted origin in red."""
    return Text.assemble(
        ("signals ", "dim"),
        (f"{e.signal_count}", "bold"),
        (f" = recalls {e.recall_count} + daily {e.daily_count} + grounded {e.grounded_count}", "dim"),
        ("  ·  unique queries ", "dim"),
        (f"{e.unique_queries}", "bold"),
        ("\nrecalled ", "dim"),
        (", ".join(e.recall_days) or "never", ""),
        ("  ·  age ", "dim"),
        (f"{e.age_days:.1f} d", ""),
        ("  ·  origin ", "dim"),
        (e.origin_class, "bold red" if e.origin_class == "untrusted" else ""),
        ("  ·  session ", "dim"),
        (e.session_kind, ""),
    )


def _score_table(e: CandidateExplanation, min_score: float) -> Table:
    """How the score adds up: each component (value, weight, what it adds, its share), the light and
    REM boosts, and the total against ``min_score``."""
    comps = Table.grid(padding=(0, 1))
    comps.add_column(no_wrap=True)
    comps.add_column(width=10, no_wrap=True)
    comps.add_column(justify="right", width=5)
    comps.add_column(justify="right", width=6, style="dim")
    comps.add_column(justify="right", width=5)
    comps.add_column(justify="right", width=6)
    comps.add_row(
        Text("component", style="dim"),
        Text(""),
        Text("value", style="dim"),
        Text("weight"),
        Text("adds", style="dim"),
        Text("share", style="dim"),
    )
    total = e.score or 1.0
    for name in (f.name for f in fields(e.weights)):  # the engine's weights, in its order
        value, weight, weighted = (getattr(c, name) for c in (e.components, e.weights, e.weighted))
        comps.add_row(
            name,
            bar(value, 10),
            f"{value:.2f}",
            f"× {weight:.2f}",
            f"{weighted:.3f}",
            f"{weighted / total * 100:.0f} %",
        )
    for label, hits, boost in (("light boost", e.light_hits, e.light_boost), ("REM boost", e.rem_hits, e.rem_boost)):
        comps.add_row(label, Text(f"{hits} hits", style="dim"), "", "", f"{boost:.3f}", f"{boost / total * 100:.0f} %")
    passed = e.score >= min_score
    comps.add_row(
        Text("= score", style="bold"),
        bar(e.score, 10, style="green" if passed else "yellow"),
        "",
        "",
        Text(f"{e.score:.3f}", style="bold"),
        Text(f"{'≥' if passed else '<'} {min_score:g}", style="green" if passed else "red"),
    )
    return comps


def _would_write(e: CandidateExplanation) -> list[RenderableType]:
    """What promotion would write and from which lines, or why it would write nothing; empty when the
    engine did not compute it for this candidate."""
    if e.promoted_text is not None:
        matched = ", ".join(f"L{line} ×{n}" for line, n in e.line_matches)
        return [
            Text(""),
            Text.assemble(("would write ", "dim"), (e.promoted_text, "green"), no_wrap=True, overflow="ellipsis"),
            Text.assemble(
                ("from ", "dim"),
                (e.promoted_source or "", "bold"),
                (f" · {e.focus_detail}" if e.focus_detail else "", "dim"),
                (f" · matched {matched} (line × queries)" if matched else "", "dim"),
            ),
        ]
    if e.focus_detail:
        return [Text(""), Text(f"would write nothing now: {e.focus_detail}", style="yellow")]
    return []


def render_explain(e: CandidateExplanation, min_score: float) -> RenderableType:
    """Why a candidate is (not) promoted: the verdict, every gate, then every component and boost."""
    mark, style = CANDIDATE_MARK.get(e.status, ("·", ""))
    head = Text.assemble(
        (f"{mark} {e.status}", style),
        ("  ·  score ", "dim"),
        (f"{e.score:.3f}", "bold"),
        ("  ·  ", "dim"),
        (e.source, "bold"),
    )
    verdict = Text.assemble(("Why: " if e.status != "promotable" else "Verdict: ", "bold"), (e.reason, style))
    return Group(
        head,
        Text(clip_flat(e.snippet, 400), style="italic", no_wrap=True, overflow="ellipsis"),
        verdict,
        Text(""),
        Text("Gates", style="bold"),
        _gates_table(e),
        Text(""),
        _signal_facts(e),
        *_would_write(e),
        Text(""),
        Text("Score", style="bold"),
        _score_table(e, min_score),
        Text(""),
        Text(f"key {e.key}", style="dim"),
    )


def diary_markdown(text: str) -> str:
    """DREAMS.md for reading: OpenClaw's marker comments are machinery, not prose."""
    return _COMMENT.sub("", text)


def revert_texts(refused: RevertResult, *, fold: bool) -> list[tuple[str, Text]]:
    """A refused revert's preimage, rewrite and current MEMORY.md, each marked against the one before."""
    current = refused.current_text if refused.current_text is not None else "(MEMORY.md is missing)"
    return [
        (name, marked_text(title, legend, text, other, mark, style, fold=fold))
        for name, title, legend, text, other, mark, style in (
            (
                "preimage",
                "PREIMAGE",
                "- = the rewrite removed it",
                refused.preimage_text,
                refused.rewrite_text,
                "-",
                "red",
            ),
            (
                "rewrite",
                "REWRITE",
                "+ = the rewrite added it",
                refused.rewrite_text,
                refused.preimage_text,
                "+",
                "green",
            ),
            ("current", "CURRENT", "+ = edited since", current, refused.rewrite_text, "+", "yellow"),
        )
    ]


# ------------------------------------------------------------------ OpenClaw's recall entries (◆)


OPENCLAW_MARK = "◆"  # as the Sessions pane marks OpenClaw's sessions


def openclaw_heading(d: OpenClawDreaming | None, problem: str | None) -> Text:
    """The view's title line: what it is, OpenClaw's defaults, and tonight's verdict."""
    head = Text.assemble((f"{OPENCLAW_MARK} What your agent would promote tonight", "bold"))
    if d is None:
        return head.append_text(Text.assemble(("  ·  ", "dim"), (problem or "not read yet", "red")))
    verdict = (
        (f"{len(d.would_promote)} would be promoted", "bold green")
        if d.would_promote
        else ("nothing would be promoted: no entry passes every gate", "yellow")
    )
    return head.append_text(
        Text.assemble(
            ("  ·  ", "dim"),
            verdict,
            (
                f"  ·  OpenClaw's defaults: score ≥ {d.min_score:g}, ≥ {d.min_recall_count} recalls, "
                f"≥ {d.min_unique_queries} unique queries  ·  read in place, never written",
                "dim",
            ),
            no_wrap=True,
            overflow="ellipsis",
        )
    )


def openclaw_candidate_cells(c: OpenClawCandidate) -> tuple[Text, ...]:
    e = c.explanation
    mark, style = CANDIDATE_MARK.get(e.status, ("·", ""))
    held = f"{mark} {', '.join(c.held_back_by)}" if c.held_back_by else f"{mark} {e.status}"
    return (
        Text(OPENCLAW_MARK, style="bold"),
        Text(f"{e.score:.3f}", style="bold" if e.status == "promotable" else ""),
        Text(str(e.recall_count)),
        Text(str(e.unique_queries)),
        Text(e.source, no_wrap=True, overflow="ellipsis"),
        Text(held, style="bold red" if c.held_back_by else style),
        Text(clip_flat(e.snippet, 300), no_wrap=True, overflow="ellipsis"),
    )


def render_openclaw_candidate(c: OpenClawCandidate, min_score: float) -> RenderableType:
    """One of OpenClaw's entries: who promotes it, its recall history, then clawmem's explanation."""
    history = Table.grid(padding=(0, 1), expand=True)
    history.add_column(no_wrap=True, style="dim")
    history.add_column(justify="right", no_wrap=True)
    history.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    for ev in c.history:
        history.add_row(when(ev.at), f"{ev.score:.3f}", ev.query)
    recorded = len(c.history)
    recalls = c.explanation.recall_count
    note = f"{recorded} recorded search{'es' if recorded != 1 else ''} of {recalls} recall{'s' if recalls != 1 else ''}"
    return Group(
        Text.assemble((f"{OPENCLAW_MARK} OpenClaw's recall entry", "bold"), ("  ·  read in place", "dim")),
        Text.assemble(("OpenClaw promotes: ", "dim"), (c.promote_command, "bold")),
        Text.assemble(("Recall history", "bold"), (f"  {note}", "dim")),
        history if c.history else Text("no recall events recorded", style="dim"),
        Text(""),
        render_explain(c.explanation, min_score),
    )
