"""The keyword part's note says where a hit's keyword part came from, the same in the app's
breakdown panel and in `clawmem search --explain`."""

from __future__ import annotations

import io
from dataclasses import replace

from clawmem.engine.facade import MemoryEngine
from clawmem.engine.search.types import SearchHit, SearchResponse
from clawmem.tui.cli.search_cmds import explain_lines
from clawmem.tui.widgets.breakdown import render_breakdown
from rich.console import Console


def panel_keyword_row(hit: SearchHit, response: SearchResponse) -> str:
    console = Console(file=io.StringIO(), width=160, record=True, color_system=None)
    console.print(render_breakdown(hit, response, min_score=0.35))
    return next(line for line in console.export_text().splitlines() if line.startswith("keyword"))


def cli_keyword_row(hit: SearchHit, response: SearchResponse) -> str:
    return next(line for line in explain_lines(hit, response.scoring) if line.split()[0] == "keyword")


def test_the_keyword_note_says_which_leg_found_a_hit_and_what_its_text_covers(fts_engine: MemoryEngine) -> None:
    """Real hits of a keyword search, re-labelled as the calibrated pipeline labels hits that
    no keyword probe brought (the legs and parts are what the rule reads; no model needed)."""
    fts_engine.sync()
    found = fts_engine.search("hotel call", min_score=0.0, record=False)
    hit, response = found.results[0], replace(found, scoring="calibrated")
    assert "keyword" in hit.legs and hit.breakdown.keyword_raw is not None

    def says(
        note: str, legs: tuple[str, ...], keyword: float, raw: float | None = None, scoring: str = "calibrated"
    ) -> bool:
        b = replace(hit.breakdown, keyword_raw=raw, keyword=keyword)
        relabelled, asked = replace(hit, legs=legs, breakdown=b), replace(response, scoring=scoring)
        rows = (panel_keyword_row(relabelled, asked), cli_keyword_row(relabelled, asked))
        return all(row.rstrip().endswith((note, f"({note})")) for row in rows)

    assert says("covers 50 % of the query · bm25 -2.76", ("keyword",), 0.5, -2.76)
    assert says("bm25 -2.76, boosted", ("keyword",), 0.9, -2.76, scoring="openclaw")
    assert says("covers 40 % of the query · found by meaning, not by a keyword probe", ("vector",), 0.4)
    assert says("covers 25 % of the query · found by its date, not by a keyword probe", ("date",), 0.25)
    assert says("covers 25 % of the query · found by meaning, not by a keyword probe", ("vector", "date"), 0.25)
    assert says("no keyword match", ("vector",), 0.0)
