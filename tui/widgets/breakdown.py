"""The score breakdown of one hit: how content, decay, importance, project factor, MMR rank and
the threshold produced its score — with bars and the numbers behind them."""

from __future__ import annotations

from clawmem.engine.search.explain import breakdown_rows, version_words
from clawmem.engine.search.types import SearchHit, SearchResponse
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

BAR_WIDTH = 12


def bar(value: float, width: int = BAR_WIDTH, style: str = "cyan") -> Text:
    value = max(0.0, min(1.0, value))
    full = round(value * width)
    return Text.assemble(("█" * full, style), ("░" * (width - full), "dim"))


ROW_STYLES = {
    "vector": "cyan",
    "best line": "cyan",
    "keyword": "magenta",
    "date": "magenta",
    "content": "blue",
    "decay": "yellow",
    "score": "green",
}


def render_breakdown(hit: SearchHit, response: SearchResponse, min_score: float) -> RenderableType:
    """The engine's breakdown rows (engine/search/explain.py) as a table with bars, then where the
    hit came from, its notes and its snippet."""
    b = hit.breakdown
    head = Text.assemble(
        (f"{hit.path}:{hit.start_line}-{hit.end_line}", "bold"),
        ("  ·  score ", "dim"),
        (f"{hit.score:.3f}", "bold"),
        ("  ·  ", "dim"),
        ("passed" if b.passed_threshold else "below threshold", "green" if b.passed_threshold else "yellow"),
    )
    version = version_words(hit)
    if version is not None:
        head.append(f"  ·  {'SUPERSEDED' if version == 'marked superseded' else version}", style="bold yellow")
    if hit.provenance.origin_class == "untrusted":
        head.append("  ·  [untrusted]", style="bold red")
    rows = breakdown_rows(hit, response, min_score)
    table = Table.grid(padding=(0, 1))
    table.add_column(width=13)
    table.add_column(width=BAR_WIDTH)
    table.add_column(justify="right", width=6)
    table.add_column(ratio=1)
    for row in (r for r in rows if r.value is not None):
        label = ("  " if row.detail else "") + (f"{row.op} " if row.op else "") + row.label
        style = ROW_STYLES.get(row.label, "cyan")
        result = row.op == "="
        table.add_row(
            Text(label, style="bold") if result else label,
            bar(row.value or 0.0, style=style) if row.bar else Text(""),
            f"{row.value:.{row.digits}f}",
            Text(row.words, style=("yellow" if row.tone == "warn" else "bold") if result else "dim"),
        )
    tail = Text()
    for i, row in enumerate(r for r in rows if r.value is None):
        tail.append("  ·  " if i else "", style="dim")
        tail.append(f"{row.label} ", style="dim")
        tail.append(row.words, style={"danger": "bold red", "warn": "yellow"}.get(row.tone, ""))
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
