"""Plain words on a hit's score — where its keyword part came from, what its age did, what the
threshold judged: one rule for the app's breakdown panel, `clawmem search --explain` and the MCP
server, so all three say the same thing (no Rich here: the CLI stays light)."""

from __future__ import annotations

from clawmem.engine.search.types import SearchHit, SearchResponse


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


def age_note(hit: SearchHit, response: SearchResponse) -> str:
    """How old the hit is and how its age became the decay factor the order ranks by."""
    b = hit.breakdown
    if b.age_days is None:
        return "evergreen: never decays"
    since = "days from the dates asked" if response.ages_from_dates else "days old"
    if response.half_life_days is None:
        return f"{b.age_days:.1f} {since} · decay off"
    age = f"{b.age_days:.1f} {since}, half-life {response.half_life_days:g}"
    if response.max_decay is None:
        return age
    return f"{age} · recency {b.recency:.3f} → 1 − {response.max_decay:g}·(1 − {b.recency:.3f})"


def qualifies_note(hit: SearchHit, response: SearchResponse, min_score: float) -> str:
    """What the threshold judged: the default scoring tests the score before decay
    ("qualifies at 0.63 · ranked at 0.44 by age"), OpenClaw's the decayed score."""
    b = hit.breakdown
    if b.path_tier:
        return f"shown as {hit.score:.3f} (exact path tier first)"
    if response.max_decay is None:  # OpenClaw's rule: the decayed score is what the threshold tests
        return f"{'≥' if b.pre_threshold >= min_score else '<'} min score {min_score:g}"
    verdict = "≥" if b.qualifying >= min_score else "<"
    ranked = f" · ranked at {b.pre_threshold:.3f} by age" if b.decay < 1 else ""
    return f"qualifies at {b.qualifying:.3f} {verdict} min score {min_score:g}{ranked}"
