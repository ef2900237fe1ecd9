"""A hit's score in plain words — how its content part was weighed, where its keyword part came
from, what its age did, what the threshold judged, and the one sentence of why it ranks where it
does: one source for the app's breakdown panel, ``clawmem search --explain`` and the MCP server,
so all three say the same thing, with the numbers the engine actually used."""

from __future__ import annotations

from typing import Any

from clawmem.engine.search.dates import REPORT_DAYS
from clawmem.engine.search.types import SearchHit, SearchResponse
from clawmem.engine.sessions import index as session_index

PATH_TIERS = {3: "full path", 2: "file name", 1: "file stem"}  # what of a path the query named


def path_tier_label(tier: int) -> str:
    return PATH_TIERS.get(tier, "none")


def content_formula(response: SearchResponse) -> str:
    """How the content score was built, with the weights that were used ("0.7·vector + 0.3·keyword")."""
    vector, keyword = response.content_weights
    return f"{vector:g}·vector + {keyword:g}·keyword"


def content_sum(hit: SearchHit, response: SearchResponse) -> str:
    """The content formula with this hit's numbers ("= 0.7·0.81 + 0.3·0.50")."""
    vector, keyword = response.content_weights
    b = hit.breakdown
    return f"= {vector:g}·{b.vector:.2f} + {keyword:g}·{b.keyword:.2f}"


def date_note(match: float, response: SearchResponse) -> str:
    """Why a hit's date concept counts as it does: the dates asked, and where this chunk stands."""
    asked = ", ".join(d.split(" (")[0] for d in response.dates)
    if match >= 1.0:
        return f"of {asked}, asked for"
    if match > 0:
        return f"written {round((1 - match) * (REPORT_DAYS + 1))} d after {asked}"
    return f"not of {asked}"


def nothing_qualified(threshold: float, shown: str) -> str:
    """What a rescued result list is: nothing reached the threshold, ``shown`` ("the 3 closest
    memories") are the best below it."""
    return f"nothing qualified at the {threshold:g} threshold; showing the {shown} below it instead"


def why_sentence(hit: SearchHit, rank: int, r: SearchResponse, *, threshold: float, rescue: bool) -> str:
    """Why the hit ranks where it does, as one sentence read off its breakdown."""
    b = hit.breakdown
    if b.path_tier:
        return f"#{rank}: the query names the {path_tier_label(b.path_tier)}, and exact path matches come first."
    vector, keyword = r.content_weights
    parts = [
        f"#{rank} with {hit.score:.3f}: content {b.content:.3f} "
        f"({vector:g}·vector {b.vector:.3f} + {keyword:g}·keyword {b.keyword:.3f})"
    ]
    if r.max_decay is not None:  # the default scoring: eligibility before decay
        parts.append(f"qualifies at {b.qualifying:.3f}")
    if b.age_days is None:
        parts.append("no decay (evergreen)")
    elif b.decay < 0.999:
        held = " — decay holds it back" if b.decay < 0.5 else ""
        ranked = f"ranked at {b.pre_threshold:.3f} by age: " if r.max_decay is not None else ""
        parts.append(f"{ranked}× decay {b.decay:.3f} ({b.age_days:.0f} days old){held}")
    if b.importance_factor != 1.0:
        verb = "lifts" if b.importance_factor > 1 else "lowers"
        parts.append(f"importance {b.importance} {verb} it × {b.importance_factor:.2f}")
    if b.project_factor != 1.0:
        verb = "boosts" if b.project_factor > 1 else "lowers"
        parts.append(f"the project factor {verb} it × {b.project_factor:.2f}")
    if b.line is not None:
        parts.append(f"best line {b.line}")
    if rescue:
        why = "keywords matched" if "keyword" in hit.legs or r.scoring == "openclaw" else "it is the closest in meaning"
        parts.append(f"below the {threshold:g} threshold, returned because nothing qualified and {why}")
    elif hit.note:
        parts.append(hit.note)
    legs = ", ".join(hit.legs)
    return "; ".join(parts) + (f"; found by {legs}." if legs else ".")


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


def hit_record(hit: SearchHit) -> dict[str, Any]:
    """A hit's one JSON form (camelCase, every breakdown field): the CLI's `--json` and the MCP
    server's `fullBreakdown` take it from here."""
    b = hit.breakdown
    return {
        "path": hit.path,
        "startLine": hit.start_line,
        "endLine": hit.end_line,
        "score": hit.score,
        "snippet": hit.snippet,
        "source": hit.source,
        "breakdown": {
            "vectorRaw": b.vector_raw,
            "vector": b.vector,
            "keywordRaw": b.keyword_raw,
            "keyword": b.keyword,
            "pathTier": b.path_tier,
            "content": b.content,
            "ageDays": b.age_days,
            "recency": b.recency,
            "decay": b.decay,
            "importance": b.importance,
            "importanceFactor": b.importance_factor,
            "projectFactor": b.project_factor,
            "preThreshold": b.pre_threshold,
            "qualifying": b.qualifying,
            "mmrRank": b.mmr_rank,
            "passedThreshold": b.passed_threshold,
            "line": b.line,
            "lineCosine": b.line_cosine,
            "lineVector": b.line_vector,
            "dateMatch": b.date_match,
        },
        "provenance": {
            "originClass": hit.provenance.origin_class,
            "sessionKind": hit.provenance.session_kind,
            "observedAt": hit.provenance.observed_at,
        },
        "status": hit.status,
        "triggers": list(hit.triggers),
        "projectKeys": list(hit.project_keys),
        "legs": list(hit.legs),
        "note": hit.note,
        "sessionId": session_index.session_id_of(hit.path) if hit.source == "sessions" else None,
    }
