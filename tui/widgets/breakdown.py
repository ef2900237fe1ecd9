"""The score breakdown of one hit: how content, decay, importance, project factor, MMR rank and
the threshold produced its score — with bars and the numbers behind them."""

from __future__ import annotations

from clawmem.engine.search.explain import (
    age_note,
    content_sum,
    date_note,
    keyword_note,
    path_tier_label,
    qualifies_note,
)
from clawmem.engine.search.scoring import LINE_WEIGHT
from clawmem.engine.search.types import SearchHit, SearchResponse
from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

BAR_WIDTH = 12


def bar(value: float, width: int = BAR_WIDTH, style: str = "cyan") -> Text:
    value = max(0.0, min(1.0, value))
    full = round(value * width)
    return Text.assemble(("█" * full, style), ("░" * (width - full), "dim"))


def _n(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def render_breakdown(hit: SearchHit, response: SearchResponse, min_score: float) -> RenderableType:
    b = hit.breakdown
    head = Text.assemble(
        (f"{hit.path}:{hit.start_line}-{hit.end_line}", "bold"),
        ("  ·  score ", "dim"),
        (f"{hit.score:.3f}", "bold"),
        ("  ·  ", "dim"),
        ("passed" if b.passed_threshold else "below threshold", "green" if b.passed_threshold else "yellow"),
    )
    if hit.status == "superseded":
        head.append("  ·  SUPERSEDED", style="bold yellow")
    if hit.provenance.origin_class == "untrusted":
        head.append("  ·  [untrusted]", style="bold red")
    table = Table.grid(padding=(0, 1))
    table.add_column(width=13)
    table.add_column(width=BAR_WIDTH)
    table.add_column(justify="right", width=6)
    table.add_column(ratio=1)
    cos = f"cosine {_n(b.vector_raw)}" if b.vector_raw is not None else "no vector for this chunk"
    if b.vector_z is not None:
        cos += f" · {b.vector_z:+.1f} σ vs background"
    if b.vector_note:
        cos += f" · {b.vector_note}"
    if b.line is not None:
        cos += f" · {1 - LINE_WEIGHT:g}·chunk + {LINE_WEIGHT:g}·best line"
    table.add_row("vector", bar(b.vector), _n(b.vector, 2), Text(cos, style="dim"))
    if b.line is not None:
        quote = best_line_text(hit)
        table.add_row(
            "  best line",
            bar(b.line_vector or 0.0, style="cyan"),
            _n(b.line_vector, 2),
            Text(f"line {b.line} · cosine {_n(b.line_cosine)}" + (f" · “{quote}”" if quote else ""), style="dim"),
        )
    kw_note = keyword_note(hit, response.scoring)
    table.add_row("keyword", bar(b.keyword, style="magenta"), _n(b.keyword, 2), Text(kw_note, style="dim"))
    if b.date_match is not None:
        table.add_row(
            "  date",
            bar(b.date_match, style="magenta"),
            _n(b.date_match, 2),
            Text(date_note(b.date_match, response), style="dim"),
        )
    formula = content_sum(hit, response)
    if b.path_tier:
        formula += f"  → (1+c)/2 ({path_tier_label(b.path_tier)})"
    table.add_row("content", bar(b.content, style="blue"), _n(b.content, 2), Text(formula, style="dim"))
    table.add_row("× decay", bar(b.decay, style="yellow"), _n(b.decay, 3), Text(age_note(hit, response), style="dim"))
    imp = f"importance {b.importance}" if b.importance else "no importance annotation"
    table.add_row("× importance", Text(""), _n(b.importance_factor, 2), Text(imp, style="dim"))
    proj = ", ".join(hit.project_keys) if hit.project_keys else "untagged"
    table.add_row("× project", Text(""), _n(b.project_factor, 2), Text(proj, style="dim"))
    shown = qualifies_note(hit, response, min_score)
    table.add_row(
        Text("= score", style="bold"),
        bar(b.pre_threshold, style="green"),
        _n(b.pre_threshold, 3),
        Text(shown, style="bold" if b.passed_threshold else "yellow"),
    )
    tail = Text.assemble(
        ("MMR rank ", "dim"),
        (f"#{b.mmr_rank}" if b.mmr_rank else "—", ""),
        ("  ·  found by ", "dim"),
        (", ".join(hit.legs) or "—", ""),
        ("  ·  origin ", "dim"),
        (hit.provenance.origin_class, "bold red" if hit.provenance.origin_class == "untrusted" else ""),
    )
    parts: list[RenderableType] = [head, Text(""), table, Text(""), tail]
    if hit.provenance.origin_class == "untrusted":
        parts.append(
            Text(
                "untrusted origin: written from a web page or by someone other than the owner — "
                "never promoted or auto-injected; check it before you rely on it",
                style="red",
            )
        )
    if hit.note:
        parts.append(Text(f"note: {hit.note}", style="yellow"))
    if response.calibration and b.vector_raw is not None:
        parts.append(Text(f"vector: {response.calibration}", style="dim"))
    parts.append(Text(""))
    parts.append(snippet_text(hit))
    return Group(*parts)


def best_line_text(hit: SearchHit, width: int = 30) -> str:
    """The best line's words (from the snippet), shortened to ``width`` terminal cells."""
    b = hit.breakdown
    lines = hit.snippet.split("\n")
    if b.line is None or not 0 <= b.line - hit.start_line < len(lines):
        return ""
    text = lines[b.line - hit.start_line].strip()
    if cell_len(text) <= width:
        return text
    while cell_len(text) > width - 1:
        text = text[:-1]
    return text + "…"


def snippet_text(hit: SearchHit) -> Text:
    """The snippet, its best line (line vectors) in bold."""
    b = hit.breakdown
    lines = hit.snippet.strip("\n").split("\n")
    lead = len(hit.snippet) - len(hit.snippet.lstrip("\n"))  # blank lines stripped above the text
    best = b.line - hit.start_line - lead if b.line is not None else -1
    out = Text(style="italic")
    for i, line in enumerate(lines):
        out.append(line.rstrip(), style="bold not italic" if i == best else "")
        if i < len(lines) - 1:
            out.append("\n")
    return out


class BreakdownPanel(Static):
    def show(self, hit: SearchHit | None, response: SearchResponse | None, min_score: float) -> None:
        if hit is None or response is None:
            self.update(Text("Select a result to see how its score was built.", style="dim"))
        else:
            self.update(render_breakdown(hit, response, min_score))
