"""A hit's score in plain words — how its content part was weighed, where its keyword part came
from, what its age did, what the threshold judged, and the one sentence of why it ranks where it
does: one source for the app's breakdown panel, ``clawmem search --explain`` and the MCP server,
so all three say the same thing, with the numbers the engine actually used."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clawmem.engine.search.dates import REPORT_DAYS
from clawmem.engine.search.scoring import LINE_WEIGHT
from clawmem.engine.search.types import SearchHit, SearchResponse
from clawmem.engine.sessions import index as session_index
from clawmem.engine.text_clip import clip_cells

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
    version = version_words(hit)
    if version is not None:
        parts.append(f"{version}, so ranked below it" if hit.newer_version is not None else version)
    legs = ", ".join(hit.legs)
    return "; ".join(parts) + (f"; found by {legs}." if legs else ".")


def brief_why(hit: SearchHit, *, threshold: float, rescue: bool) -> str:
    """The why sentence in a few words, for an agent's lean result ("vector 0.81, keyword 0.85; 40 d
    old ×0.62"): what matched and how strongly, and every factor that moved it (age, importance,
    project, the threshold, a newer version)."""
    b = hit.breakdown
    if b.path_tier:
        parts = [f"the query names its {path_tier_label(b.path_tier)}"]
    else:
        legs = [f"{name} {value:.2f}" for name, value in (("vector", b.vector), ("keyword", b.keyword)) if value > 0]
        parts = [", ".join(legs) or "no direct match"]
    if b.age_days is not None and b.decay < 0.999:
        parts.append(f"{b.age_days:.0f} d old ×{b.decay:.2f}")
    if b.importance_factor != 1.0:
        parts.append(f"importance ×{b.importance_factor:.2f}")
    if b.project_factor != 1.0:
        parts.append(f"project ×{b.project_factor:.2f}")
    if rescue:
        parts.append(f"below the {threshold:g} threshold")
    version = version_words(hit)
    if version is not None:
        parts.append(version)
    return "; ".join(parts)


def keyword_note(hit: SearchHit, scoring: str, ranking: str = "SQLite FTS5 BM25") -> str:
    """Why the keyword part is what it is: the text engine's rank and coverage, or the leg that
    found the hit. ``ranking``: the store's text engine (a shared PostgreSQL index ranks by
    ``ts_rank_cd``, handed up negated as BM25's ranks are, engine/store/postgres/search_reader.py)."""
    b = hit.breakdown
    covers = f"covers {b.keyword * 100:.0f} % of the query"
    if b.keyword_raw is not None:
        rank = f"ts_rank_cd {-b.keyword_raw:.2f}" if ranking.startswith("PostgreSQL") else f"bm25 {b.keyword_raw:.2f}"
        return f"{covers} · {rank}" if scoring == "calibrated" else f"{rank}, boosted"
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


@dataclass(frozen=True)
class BreakdownRow:
    """One line of a hit's breakdown: what it is, the number, and the words that explain it.
    The CLI prints it as a line, the app as a row with a bar; both take every word from here."""

    label: str  # vector, best line, keyword, date, content, decay, importance, project, score, MMR rank, …
    value: float | None  # None: a row of words only
    words: str
    op: str = ""  # "×" a factor applied, "=" the result
    digits: int = 2  # the precision the number is shown with (the shares as in the content sum)
    bar: bool = False  # a 0–1 share, drawn as a bar where there is room
    detail: bool = False  # a detail of the row above it (the best line of the vector, the date of the keyword)
    tone: str = ""  # "warn": below the threshold; "danger": an untrusted origin


LINE_PENDING_WORDS = "not computed yet: the line pass has not reached this chunk (its score will move)"


def breakdown_rows(hit: SearchHit, response: SearchResponse, min_score: float) -> list[BreakdownRow]:
    """Every step from the two legs to the shown score, then where the hit came from."""
    b = hit.breakdown
    rows = [BreakdownRow("vector", b.vector, _vector_words(hit), bar=True)]
    if b.line is not None:
        quote = best_line_quote(hit)
        words = f"line {b.line} · cosine {_n(b.line_cosine)}" + (f" · “{quote}”" if quote else "")
        rows.append(BreakdownRow("best line", b.line_vector, words, bar=True, detail=True))
    elif b.line_pending:
        rows.append(BreakdownRow("best line", None, LINE_PENDING_WORDS, detail=True, tone="warn"))
    rows.append(
        BreakdownRow("keyword", b.keyword, keyword_note(hit, response.scoring, response.keyword_ranking), bar=True)
    )
    if b.date_match is not None:
        rows.append(
            BreakdownRow("date", b.date_match, date_note(b.date_match, response), digits=2, bar=True, detail=True)
        )
    content = content_sum(hit, response)
    if b.path_tier:
        content += f"  → (1+c)/2 ({path_tier_label(b.path_tier)})"
    rows += [
        BreakdownRow("content", b.content, content, bar=True),
        BreakdownRow("decay", b.decay, age_note(hit, response), op="×", digits=3, bar=True),
        BreakdownRow(
            "importance",
            b.importance_factor,
            f"importance {b.importance}" if b.importance else "no importance annotation",
            op="×",
        ),
        BreakdownRow("project", b.project_factor, ", ".join(hit.project_keys) or "untagged", op="×"),
        BreakdownRow(
            "score",
            b.pre_threshold,
            qualifies_note(hit, response, min_score),
            op="=",
            digits=3,
            bar=True,
            tone="" if b.passed_threshold else "warn",
        ),
    ]
    return rows + _where_rows(hit)


def _vector_words(hit: SearchHit) -> str:
    b = hit.breakdown
    words = f"cosine {_n(b.vector_raw)}" if b.vector_raw is not None else "no vector for this chunk"
    if b.vector_z is not None:
        words += f" · {b.vector_z:+.1f} σ vs background"
    if b.vector_note:
        words += f" · {b.vector_note}"
    if b.line is not None:
        words += f" · {1 - LINE_WEIGHT:g}·chunk + {LINE_WEIGHT:g}·best line"
    return words


def version_words(hit: SearchHit) -> str | None:
    """What replaced this hit, in words ("older version of #1 (2026-10-12)"), or None."""
    v = hit.newer_version
    if v is not None:
        when = f" ({v.date})" if v.date else ""
        how = "marked superseded by" if v.marked else "older version of"
        return f"{how} #{v.rank}{when}"
    if hit.superseded_by is not None:
        return f"marked superseded by {hit.superseded_by}"
    if hit.status == "superseded":
        return "marked superseded"
    return None


def _where_rows(hit: SearchHit) -> list[BreakdownRow]:
    """Its place in the order, what replaced it, who wrote it, and the session it came from."""
    b = hit.breakdown
    version = version_words(hit)
    rows = [BreakdownRow("version", None, version, tone="warn")] if version else []
    rows += [
        BreakdownRow("MMR rank", None, f"#{b.mmr_rank}" if b.mmr_rank else "—"),
        BreakdownRow("found by", None, ", ".join(hit.legs) or "—"),
        BreakdownRow(
            "origin",
            None,
            hit.provenance.origin_class + (" · superseded" if hit.status == "superseded" else ""),
            tone="danger" if hit.provenance.origin_class == "untrusted" else "",
        ),
    ]
    sid = session_index.session_id_of(hit.path) if hit.source == "sessions" else None
    if sid is not None and hit.path.startswith(session_index.OPENCLAW_PREFIX):
        seqs = f"seq {hit.start_line - 1}-{hit.end_line - 1}"  # line N holds OpenClaw's seq N-1
        rows.append(BreakdownRow("session", None, f"OpenClaw's {sid} ({hit.provenance.session_kind}) · events {seqs}"))
    elif sid is not None:
        events = f"events {hit.start_line}-{hit.end_line}"
        rows.append(BreakdownRow("session", None, f"{sid} ({hit.provenance.session_kind}) · {events}"))
    return rows


def best_line_quote(hit: SearchHit, width: int = 30) -> str:
    """The best line's words (from the snippet), cut to ``width`` terminal cells."""
    b = hit.breakdown
    lines = hit.snippet.split("\n")
    if b.line is None or not 0 <= b.line - hit.start_line < len(lines):
        return ""
    return clip_cells(lines[b.line - hit.start_line].strip(), width)


def _n(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def hit_record(hit: SearchHit) -> dict[str, Any]:
    """A hit's one JSON form (camelCase, every breakdown field): the CLI's `--json` and the MCP
    server's explained hits (`explain: true`) take it from here."""
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
            "linePending": b.line_pending,
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
        "supersededBy": hit.superseded_by,
        "newerVersion": (
            None
            if hit.newer_version is None
            else {
                "rank": hit.newer_version.rank,
                "citation": hit.newer_version.citation,
                "date": hit.newer_version.date,
                "marked": hit.newer_version.marked,
            }
        ),
        "sessionId": session_index.session_id_of(hit.path) if hit.source == "sessions" else None,
    }
