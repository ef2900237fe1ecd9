"""Search pane: search as you type, every score explained, and the near-misses below the
threshold — why a hit ranks where it does, and why one you expected is missing.

Typing runs preview searches that do not count as recalls; pressing Enter runs the search for
real (it is recorded for Dreaming). Enter on a result opens it in the Memory pane at its line.
"""

from __future__ import annotations

from typing import Any, ClassVar

from clawmem.engine.kinds import ScoringMode
from clawmem.engine.search.types import SearchHit, SearchResponse
from clawmem.tui.messages import OpenLocation
from clawmem.tui.panes.pane import Pane
from clawmem.tui.widgets.breakdown import BreakdownPanel
from clawmem.tui.widgets.measured_table import MeasuredTable
from clawmem.tui.widgets.table_sync import cursor_key, sync_rows
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Checkbox, DataTable, Input, Label, Select, Static

DEBOUNCE_S = 0.3
COLUMNS = ("rank", "score", "where", "vector", "keyword", "decay", "imp", "project", "snippet")
LABELS = ("#", "Score", "Path:lines", "Vector", "Keyword", "Decay", "Imp", "Proj", "Snippet")
# Fixed widths: rows are updated in place, so auto widths would depend on earlier searches.
# The snippet is cut at the table's edge (the breakdown shows it whole).
WIDTHS = {
    "rank": 3,
    "score": 5,
    "where": 24,
    "vector": 6,
    "keyword": 7,
    "decay": 5,
    "imp": 4,
    "project": 4,
    "snippet": 200,
}
NARROW = 130  # below this width the breakdown goes under the lists


class ResultsTable(MeasuredTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="search.results.down"),
        Binding("k", "cursor_up", "Up", show=False, id="search.results.up"),
        Binding("g", "scroll_top", "Top", show=False, id="search.results.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="search.results.bottom"),
    ]


def hit_cells(rank: int, hit: SearchHit) -> tuple[Text, ...]:
    b = hit.breakdown
    dim = "" if b.passed_threshold else "dim"
    snippet = " ".join(hit.snippet.split())
    flags = []
    if hit.provenance.origin_class == "untrusted":
        flags.append(("[untrusted] ", "bold red"))  # the word carries it without colour
    elif hit.provenance.origin_class == "system":
        flags.append(("[system] ", "magenta"))
    if hit.status == "superseded":
        flags.append(("superseded ", "yellow"))
    if hit.newer_version is not None:  # a changed fact: the newer version ranks right above
        flags.append((f"older ↑#{hit.newer_version.rank} ", "yellow"))
    struck = "strike" if hit.status == "superseded" or hit.newer_version is not None else ""
    return (
        Text(str(rank), style="dim"),
        Text(f"{hit.score:.3f}", style="bold" if b.passed_threshold else "yellow"),
        Text(f"{hit.path}:{hit.start_line}-{hit.end_line}", style=dim, no_wrap=True, overflow="ellipsis"),
        Text(f"{b.vector:.2f}" if b.vector_raw is not None else "—", style="cyan"),
        Text(f"{b.keyword:.2f}", style="magenta"),
        Text("—" if b.age_days is None else f"{b.decay:.2f}", style="yellow" if b.decay < 0.5 else ""),
        Text(f"{b.importance_factor:.2f}" if b.importance else "—"),
        Text(f"{b.project_factor:.2f}" if b.project_factor != 1.0 else "—"),
        Text.assemble(*flags, (snippet[:200], f"{dim} {struck}".strip()), no_wrap=True, overflow="ellipsis"),
    )


class SearchPane(Pane):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+l", "focus_query", "Query", id="search.focus-query", tooltip="Jump to the query box."),
        Binding(
            "ctrl+n",
            "focus_near",
            "Near-misses",
            id="search.focus-near",
            tooltip="Jump to the hits below the threshold.",
        ),
        Binding(
            "ctrl+t",
            "toggle_untrusted",
            "Untrusted",
            id="search.untrusted",
            tooltip="Include untrusted memory (web pages, other people) in the results, labelled [untrusted].",
        ),
        Binding(
            "escape",
            "leave_input",
            "Results",
            show=False,
            id="search.leave-input",
            tooltip="Leave the query box (then 1–9 switch panes).",
        ),
    ]
    HELP = "search"
    NOTIFY_TITLE = "search"

    def __init__(self) -> None:
        super().__init__(id="search-pane")
        self.response: SearchResponse | None = None
        self._timer: Timer | None = None
        self._generation = 0
        self._hits: dict[str, dict[str, SearchHit]] = {"search-results": {}, "search-near": {}}

    def compose(self) -> ComposeResult:
        with Horizontal(id="search-controls"):
            yield Input(placeholder="Ask the memory (中文 or English)…", id="search-query")
            yield Label("max", classes="control-label")
            yield Input("6", id="search-max", type="integer", max_length=3, classes="small-input")
            yield Label("min", classes="control-label")
            yield Input("0.35", id="search-min", type="number", max_length=5, classes="small-input")
            yield Input(placeholder="project keys", id="search-projects", classes="projects-input")
            yield Select(
                [("calibrated", "calibrated"), ("openclaw", "openclaw")],
                value="calibrated",
                allow_blank=False,
                id="search-scoring",
            )
            yield Checkbox(
                "untrusted", False, id="search-untrusted", tooltip="Include untrusted hits, labelled [untrusted]."
            )
        yield Static("", id="search-summary")
        with Horizontal(id="search-body"):
            with Vertical(id="search-lists"):
                results = ResultsTable(id="search-results", cursor_type="row", zebra_stripes=True)
                near = ResultsTable(id="search-near", cursor_type="row", zebra_stripes=True)
                for table in (results, near):
                    for key, label in zip(COLUMNS, LABELS, strict=True):
                        table.add_column(label, key=key, width=WIDTHS.get(key))
                yield results
                yield Label("Near-misses — the best hits below the threshold", id="search-near-label")
                yield near
            with VerticalScroll(id="search-breakdown-scroll"):
                yield BreakdownPanel(id="search-breakdown")

    def on_mount(self) -> None:
        self.query_one(BreakdownPanel).show(None, None, 0.35)
        s = self.engine.settings.search
        self._timings = self.engine.settings.tui.show_timings
        self.query_one("#search-max", Input).value = str(s.max_results)
        self.query_one("#search-min", Input).value = f"{s.min_score:g}"
        self.query_one("#search-scoring", Select).value = s.scoring

    # ------------------------------------------------------------------ running searches

    def _params(self) -> tuple[int, float, tuple[str, ...], ScoringMode, bool] | None:
        try:
            max_results = int(self.query_one("#search-max", Input).value or "6")
            min_score = float(self.query_one("#search-min", Input).value or "0.35")
        except ValueError:
            self.notify("max results and min score must be numbers", severity="warning")
            return None
        if not 1 <= max_results <= 200 or not 0 <= min_score <= 1:
            self.notify("max results 1–200, min score 0–1", severity="warning")
            return None
        projects = tuple(
            p.strip() for p in self.query_one("#search-projects", Input).value.replace(",", ";").split(";") if p.strip()
        )
        picked = self.query_one("#search-scoring", Select).value
        scoring: ScoringMode = "openclaw" if picked == "openclaw" else "calibrated"  # the Select offers these two
        return max_results, min_score, projects, scoring, self.query_one("#search-untrusted", Checkbox).value

    def run_query(self, *, record: bool) -> None:
        query = self.query_one("#search-query", Input).value.strip()
        params = self._params()
        if not query or params is None:
            return
        self._generation += 1
        self._search(self._generation, query, *params, record)

    def _search(
        self,
        generation: int,
        query: str,
        max_results: int,
        min_score: float,
        projects: tuple[str, ...],
        scoring: ScoringMode,
        include_untrusted: bool,
        record: bool,
    ) -> None:
        self.run_engine(
            lambda: self.engine.search(
                query,
                max_results=max_results,
                min_score=min_score,
                project_keys=projects,
                scoring=scoring,
                record=record,
                sync=False,
                wait_for_text=False,  # the first pass builds it; index_changed searches again
                include_untrusted=include_untrusted,
            ),
            lambda response: self._show(generation, response, min_score, include_untrusted),
            group="search",
            failure="search failed",
        )

    def _show(self, generation: int, response: SearchResponse, min_score: float, untrusted: bool = False) -> None:
        if generation != self._generation:
            return  # a newer search is on its way
        self.response = response
        self._min_score = min_score
        for table_id, hits in (("search-results", response.results), ("search-near", response.near_misses)):
            # Rows are keyed by chunk id and updated in place: a refresh (an edit, the embedding
            # pass) redraws only what changed, and the cursor stays on the hit it was on.
            table = self.query_one(f"#{table_id}", ResultsTable)
            by_key = {h.chunk_id: h for h in hits}
            self._hits[table_id] = by_key
            rows = {key: hit_cells(i + 1, h) for i, (key, h) in enumerate(by_key.items())}
            sync_rows(table, rows, COLUMNS, sort_column="rank", sort_key=lambda cell: int(cell.plain))
        summary = Text.assemble(
            (f"{len(response.results)} result{'s' if len(response.results) != 1 else ''}", "bold"),
            (f" · {len(response.near_misses)} near-misses", "dim"),
            (f" · {response.mode} · {response.scoring}", ""),
            (f" · {response.vector_coverage * 100:.0f} % embedded", "dim") if response.mode != "fts-only" else ("", ""),
            (f" · {response.timings_ms.get('total', 0):.0f} ms", "dim") if self._timings else ("", ""),
        )
        flagged = sum(h.provenance.origin_class == "untrusted" for h in response.results)
        left_out = sum(h.provenance.origin_class == "untrusted" for h in response.near_misses)
        if untrusted:
            summary.append(f" · untrusted included ({flagged} shown)", style="bold red")
        elif left_out:
            key = self.clawmem_app.key_for("search.untrusted", "ctrl+t")
            summary.append(f" · {left_out} untrusted left out ({key} includes them)", style="red")
        if response.threshold_rescue:
            shown = "keyword hits" if response.scoring == "openclaw" else "the closest memories"
            summary.append(f"  · nothing qualified: {shown} shown", style="yellow")
        if response.dates:
            asked = ", ".join(d.split(" (")[0] for d in response.dates)
            n = response.dated_diaries
            summary.append(f"  · dates: {asked} ({n} {'diary' if n == 1 else 'diaries'})", style="dim")
        if response.keyword_probes:
            summary.append(f"  · probes: {', '.join(response.keyword_probes)}", style="dim")
        if response.keyword_probes_skipped:
            limit = f" (in > {response.keyword_probe_limit:,} chunks)" if response.keyword_probe_limit else ""
            summary.append(f"  · too common to probe{limit}: {', '.join(response.keyword_probes_skipped)}", style="dim")
        for warning in response.warnings:
            summary.append(f"\n⚠ {warning}", style="yellow")
        self.query_one("#search-summary", Static).update(summary)
        focused = self.app.focused
        current = focused if isinstance(focused, ResultsTable) and focused.row_count else None
        if current is None:
            current = next(
                (t for t in self.query(ResultsTable) if t.row_count),
                self.query_one("#search-results", ResultsTable),
            )
        self._show_breakdown(self._hit_at(current))

    def hit_at(self, table_id: str, key: str) -> SearchHit | None:
        """The hit shown in row ``key`` (its chunk id) of ``#table_id``."""
        return self._hits.get(table_id, {}).get(key)

    def _hit_at(self, table: DataTable[Any]) -> SearchHit | None:
        """The hit under ``table``'s cursor."""
        key = cursor_key(table)
        return self.hit_at(table.id or "", key) if key is not None else None

    def _show_breakdown(self, hit: SearchHit | None) -> None:
        self.query_one(BreakdownPanel).show(hit, self.response, getattr(self, "_min_score", 0.35))

    def index_changed(self) -> None:
        if self.query_one("#search-query", Input).value.strip():
            self.run_query(record=False)

    def lines_embedded(self) -> None:
        """The line pass committed a batch: if a result shown still waits for its best line
        (its lines were asked for first, engine/index/line_requests.py), search again."""
        response = self.response
        if response is not None and any(hit.breakdown.line_pending for hit in response.results):
            self.index_changed()

    # ------------------------------------------------------------------ events

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        if self._timer is not None:
            self._timer.stop()
        if event.input.id == "search-query" and not event.value.strip():
            return
        self._timer = self.set_timer(DEBOUNCE_S, lambda: self.run_query(record=False))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if self._timer is not None:
            self._timer.stop()
        self.run_query(record=True)
        if event.input.id == "search-query":
            self.query_one("#search-results", ResultsTable).focus()

    @on(Select.Changed, "#search-scoring")
    def _scoring_changed(self) -> None:
        self.run_query(record=False)

    @on(Checkbox.Changed, "#search-untrusted")
    def _untrusted_changed(self) -> None:
        self.run_query(record=False)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if not event.data_table.has_focus or event.row_key is None:
            return  # repopulating a table must not steal the panel from the focused one
        self._show_breakdown(self.hit_at(event.data_table.id or "", str(event.row_key.value)))

    def on_descendant_focus(self, event: object) -> None:
        widget = getattr(event, "widget", None)
        if isinstance(widget, ResultsTable) and widget.row_count:
            self._show_breakdown(self._hit_at(widget))

    def on_resize(self) -> None:
        self.set_class(self.size.width < NARROW, "narrow")

    def action_leave_input(self) -> None:
        self.query_one("#search-results", ResultsTable).focus()

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        hit = self.hit_at(event.data_table.id or "", str(event.row_key.value))
        if hit is not None:
            self.post_message(OpenLocation(hit.path, hit.start_line))

    def action_focus_query(self) -> None:
        self.query_one("#search-query", Input).focus()

    def action_focus_near(self) -> None:
        self.query_one("#search-near", ResultsTable).focus()

    def action_toggle_untrusted(self) -> None:
        box = self.query_one("#search-untrusted", Checkbox)
        box.value = not box.value  # Checkbox.Changed runs the search again

    def search_for(self, query: str) -> None:
        """Fill the query box and search (used by the command palette)."""
        self.query_one("#search-query", Input).value = query
        self.run_query(record=False)
