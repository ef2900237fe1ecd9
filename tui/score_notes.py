"""Plain words on where a hit's keyword part came from: one rule for the app's breakdown panel
and `clawmem search --explain`, so both say the same thing (no Rich here: the CLI stays light)."""

from __future__ import annotations

from clawmem.engine.search.types import SearchHit


def keyword_note(hit: SearchHit, scoring: str) -> str:
    """Why the keyword part is what it is: BM25 and coverage, or the leg that found the hit."""
    b = hit.breakdown
    covers = f"covers {b.keyword * 100:.0f} % of the query"
    if b.keyword_raw is not None:
        return (
            f"{covers} · bm25 {b.keyword_raw:.2f}" if scoring == "calibrated" else f"bm25 {b.keyword_raw:.2f}, boosted"
        )
    if "keyword" in hit.legs:
        return f"substring match · {covers}"
    if b.keyword > 0:  # calibrated: the text's coverage, though no keyword probe brought it
        found = "its date" if "date" in hit.legs and "vector" not in hit.legs else "meaning"
        with_date = " with its date" if b.date_match else ""
        return f"{covers}{with_date} · found by {found}, not by a keyword probe"
    return "path match" if b.path_tier or "path" in hit.legs else "no keyword match"
