"""The breakdown panel's keyword line says where a hit's keyword part came from."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console

from engine.facade import MemoryEngine
from engine.search.types import SearchHit, SearchResponse
from tui.widgets.breakdown import render_breakdown


def keyword_line(hit: SearchHit, response: SearchResponse) -> str:
    console = Console(file=io.StringIO(), width=160, record=True, color_system=None)
    console.print(render_breakdown(hit, response, min_score=0.35))
    return next(line for line in console.export_text().splitlines() if line.startswith("keyword"))


def test_the_keyword_line_says_which_leg_found_a_hit_and_what_its_text_covers(fts_engine: MemoryEngine) -> None:
    """Real hits of a keyword search, re-labelled as the calibrated pipeline labels hits that
    no keyword probe brought (the legs and parts are what the rule reads; no model needed)."""
    fts_engine.sync()
    response = fts_engine.search("hotel call", min_score=0.0, record=False)
    hit = response.results[0]
    assert "keyword" in hit.legs and hit.breakdown.keyword_raw is not None

    probed = keyword_line(hit, replace(response, scoring="calibrated"))
    assert f"covers {hit.breakdown.keyword * 100:.0f} % of the query · bm25" in probed

    def found_by(legs: tuple[str, ...], keyword: float) -> str:
        b = replace(hit.breakdown, keyword_raw=None, keyword=keyword)
        return keyword_line(replace(hit, legs=legs, breakdown=b), replace(response, scoring="calibrated"))

    assert "covers 40 % of the query · found by meaning, not by a keyword probe" in found_by(("vector",), 0.4)
    assert "found by its date, not by a keyword probe" in found_by(("date",), 0.25)
    assert "found by meaning" in found_by(("vector", "date"), 0.25)
    assert "no keyword match" in found_by(("vector",), 0.0)
