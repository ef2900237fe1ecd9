"""The score notes — where a hit's keyword part came from, what its age did, what the threshold
judged — say the same in the app's breakdown panel and in `clawmem search --explain`."""

from __future__ import annotations

import io
from dataclasses import replace

from clawmem.cli.search_cmds import explain_lines
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.search.types import SearchHit, SearchResponse
from clawmem.tui.widgets.breakdown import render_breakdown
from rich.console import Console


def panel_row(hit: SearchHit, response: SearchResponse, label: str = "keyword") -> str:
    console = Console(file=io.StringIO(), width=200, record=True, color_system=None)
    console.print(render_breakdown(hit, response, min_score=0.35))
    return next(line for line in console.export_text().splitlines() if line.startswith(label))


def cli_row(hit: SearchHit, response: SearchResponse, label: str = "keyword") -> str:
    return next(line for line in explain_lines(hit, response, 0.35) if line.split()[0] == label.split()[-1])


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
        rows = (panel_row(relabelled, asked), cli_row(relabelled, asked))
        return all(row.rstrip().endswith(note) for row in rows)

    assert says("covers 50 % of the query · bm25 -2.76", ("keyword",), 0.5, -2.76)
    assert says("bm25 -2.76, boosted", ("keyword",), 0.9, -2.76, scoring="openclaw")
    assert says("covers 40 % of the query · found by meaning, not by a keyword probe", ("vector",), 0.4)
    assert says("covers 25 % of the query · found by its date, not by a keyword probe", ("date",), 0.25)
    assert says("covers 25 % of the query · found by meaning, not by a keyword probe", ("vector", "date"), 0.25)
    assert says("no keyword match", ("vector",), 0.0)


def test_age_and_eligibility_notes_say_both_scores(fts_engine: MemoryEngine) -> None:
    """A 77-day-old diary: the decay row shows the spec's recency and the bound, the threshold
    row what qualified and what the order ranked by — in the panel and the CLI alike."""
    fts_engine.sync()
    found = fts_engine.search("staging deploy failed", min_score=0.0, record=False)
    hit = next(h for h in found.results if h.path == "memory/2026-08-20.md")
    b = hit.breakdown
    assert found.max_decay == 0.3 and found.half_life_days == 30 and b.age_days == 77.375
    age = f"77.4 days old, half-life 30 · recency {b.recency:.3f} → 1 − 0.3·(1 − {b.recency:.3f})"
    assert age in panel_row(hit, found, "× decay") and age in cli_row(hit, found, "decay")
    judged = f"qualifies at {b.qualifying:.3f} ≥ min score 0.35 · ranked at {b.pre_threshold:.3f} by age"
    assert b.qualifying >= 0.35 and b.pre_threshold < b.qualifying  # it qualifies; its rank is lower
    assert panel_row(hit, found, "= score").rstrip().endswith(judged) and cli_row(hit, found, "score").endswith(judged)
    # OpenClaw's rule: the plain multiplier and the threshold after it, said as such
    oc = replace(found, max_decay=None, scoring="openclaw")
    assert "recency" not in cli_row(hit, oc, "decay")
    verdict = "≥" if b.pre_threshold >= 0.35 else "<"
    assert cli_row(hit, oc, "score").endswith(f"{verdict} min score 0.35")
    assert panel_row(hit, oc, "= score").rstrip().endswith(f"{verdict} min score 0.35")
