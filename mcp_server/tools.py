"""The MCP tools: names, schemas, annotations, the CLI's argument rules, and what they return.

Names and arguments follow OpenClaw's agent tools where it has one (``memory_search``,
``memory_get``: camelCase arguments). Every tool declares an output schema and returns structured
content built from the engine's frozen dataclasses, with its JSON mirror as the one text block, so
the data reaches the model once; ``memory_search`` is lean unless ``explain`` (what an agent acts
on) and fits a ``maxChars`` budget. A bad
argument raises :class:`ToolError` with one line naming the argument (the CLI's validators are
reused, their ``--flag`` names translated), and nothing is written. Scores are never computed
here: the sentences that explain a rank only read the engine's breakdown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from clawmem.engine.context.service import STARTUP_KINDS, StartupContext, StartupFile
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.forget.service import refuse_unresolved
from clawmem.engine.intents.records import match_record
from clawmem.engine.intents.service import STATUSES, MatchReport, StandingIntent
from clawmem.engine.json_form import json_form
from clawmem.engine.search.corpus import choose_sources
from clawmem.engine.search.explain import brief_why, hit_record, nothing_qualified, why_sentence
from clawmem.engine.search.types import SearchHit, SearchResponse
from clawmem.engine.text_clip import clip
from clawmem.mcp_server.door import MemoryDoor
from clawmem.shell import values
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

MAX_APPEND_CHARS = 20_000
CORPORA = ("memory", "sessions", "all")

# The CLI validators name flags; a tool names its arguments.
FLAG_NAMES = {
    "--max-results": "maxResults",
    "--min-score": "minScore",
    "--project": "project",
    "--from": "from",
    "--lines": "lines",
    "--origin": "origin",
    "--max-fires": "maxFires",
    "--cooldown": "cooldownHours",
    "--expires": "expires",
    "--status": "status",
    "--kind": "kind",
    "--session": "session",
    "--channel": "channel",
    "--sender": "sender",
    "--keywords": "keywords",
    "--description": "description",
    "--anywhere": "anyChannel",
    "--anyone": "anySender",
}
_FLAG = re.compile("|".join(re.escape(f) for f in sorted(FLAG_NAMES, key=len, reverse=True)) + r"(?![\w-])")


def one_line(text: str) -> str:
    """An error for an agent: one line, the tool's argument names instead of the CLI's flags."""
    flat = " ".join(str(text).split())
    return _FLAG.sub(lambda m: FLAG_NAMES[m.group(0)], flat)


def refuse(message: str) -> ToolError:
    return ToolError(one_line(message))


def check(convert: Callable[[str], Any], value: Any) -> Any:
    """Run one of the CLI's flag-value validators on an argument."""
    try:
        return convert(str(value))
    except ClawmemError as exc:
        raise refuse(str(exc)) from None


# ----------------------------------------------------------------------------- result helpers

# A host may label the structured block it shows its model ("structuredContent:\n", OpenClaw 2026.9.6):
# a maxChars budget keeps room for the label, so what the model reads stays within it.
LABEL_RESERVE = len("structuredContent:\n")
SNIPPET_CHARS = 240  # a lean hit's snippet at most (explain: true shows it whole)
MAX_CHARS_FLOOR = 200


def mirror_text(structured: dict[str, Any]) -> str:
    """The structured content as ``JSON.stringify(value, null, 2)`` prints it: the text block the MCP
    specification recommends beside structured content. A host that shows its model both recognizes
    this mirror and passes it once (OpenClaw does); a host that reads only text gets all the data."""
    return json.dumps(_js_numbers(structured), ensure_ascii=False, indent=2)


def _js_numbers(value: Any) -> Any:
    """Whole floats as JavaScript prints them (1.0 → 1), so the mirror matches a host's own serialization."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_numbers(v) for v in value]
    return value


def result(structured: dict[str, Any]) -> CallToolResult:
    """Structured content, and its mirror as the one text block: the data travels to the model once."""
    return CallToolResult(
        content=[TextContent(type="text", text=mirror_text(structured))], structured_content=structured
    )


class MemoryGetArgs(ArgModelBase):
    """``memory_get``'s arguments: OpenClaw names the first line ``from``, which no Python parameter can be."""

    path: Annotated[
        str, Field(description="A workspace path from a search result: MEMORY.md, USER.md, DREAMS.md or memory/….md")
    ]
    from_: Annotated[int, Field(alias="from", description="First line to read, 1-based (default 1).")] = 1
    lines: Annotated[int, Field(description="How many lines (default 120; at most 12,000 characters).")] = 120


# ----------------------------------------------------------------------------- output schemas


class _Open(BaseModel):
    """An output shape that may carry more keys (explain: true adds the full breakdown)."""

    model_config = ConfigDict(extra="allow")


class SearchHitOut(_Open):
    citation: str = Field(description="path#Lstart-Lend: cite it, or read more with memory_get")
    score: float
    snippet: str = Field(description="The passage, cut at a budget (ends in … when cut)")
    originClass: str = Field(description="owner, agent, system or untrusted")
    why: str = Field(description="Why it ranks here, in a few words")
    supersededBy: str | None = Field(default=None, description="The newer entry that replaces this one")


class SearchOut(_Open):
    results: list[SearchHitOut]
    omitted: int | None = Field(default=None, description="Results left out to stay within maxChars")
    note: str | None = Field(default=None, description="How complete the search was (keyword-only, coverage)")
    thresholdRescue: bool | None = Field(default=None, description="Nothing qualified: the closest are shown")
    nearMissCount: int | None = None
    warnings: list[str] | None = None
    stale: bool | None = None
    action: str | None = None


class GetOut(_Open):
    path: str
    text: str
    nextFrom: int | None
    missing: bool


class AppendOut(_Open):
    path: str
    citation: str
    originClass: str


class IntentOut(_Open):
    intent: dict[str, Any]


class IntentsOut(_Open):
    intents: list[dict[str, Any]]


class MatchOut(_Open):
    fired: list[str]
    applied: bool


class ProposalOut(_Open):
    proposal: dict[str, Any]


class StartupOut(_Open):
    kind: str
    files: list[dict[str, Any]]


class ForgetOut(_Open):
    note: str


# ----------------------------------------------------------------------------- memory_search


def citation(hit: SearchHit) -> str:
    return f"{hit.path}#L{hit.start_line}-L{hit.end_line}"


def lean_hit(hit: SearchHit, r: SearchResponse, *, threshold: float, rescue: bool) -> dict[str, Any]:
    """What an agent acts on: where (citation), how good (score), what (snippet), whose (origin), why."""
    out: dict[str, Any] = {
        "citation": citation(hit),
        "score": round(hit.score, 3),
        "snippet": clip(hit.snippet.strip(), SNIPPET_CHARS),
        "originClass": hit.provenance.origin_class,
        "why": brief_why(hit, threshold=threshold, rescue=rescue),
    }
    if hit.superseded_by is not None or hit.newer_version is not None:
        # a changed fact: the entry that replaced this one (a marker's pointer, else the newer result)
        v = hit.newer_version
        out["supersededBy"] = hit.superseded_by or (v.citation if v is not None else None)
    return out


def explained_hit(hit: SearchHit, rank: int, r: SearchResponse, *, threshold: float, rescue: bool) -> dict[str, Any]:
    """The lean hit plus everything the engine knows of it (explain: true)."""
    b = hit.breakdown
    full = hit_record(hit)
    out = lean_hit(hit, r, threshold=threshold, rescue=rescue)
    out["snippet"] = hit.snippet
    out.update(
        {
            "path": hit.path,
            "startLine": hit.start_line,
            "endLine": hit.end_line,
            "source": hit.source,
            "provenance": full["provenance"],
            "status": hit.status,
            "breakdown": json_form(
                {
                    **full["breakdown"],
                    "vectorZ": b.vector_z,
                    "vectorNote": b.vector_note,
                    "legs": full["legs"],
                    "why": why_sentence(hit, rank, r, threshold=threshold, rescue=rescue),
                }
            ),
        }
    )
    for key in ("triggers", "projectKeys", "sessionId", "note", "newerVersion"):
        if full[key]:
            out[key] = full[key]
    return out


LOADING_NOTE = "keyword results only: the embedding model is still loading; search again for vector results"


def search_note(r: SearchResponse, loading: bool) -> str | None:
    """One short sentence when the search was less than hybrid over every chunk, else None."""
    if loading:
        return LOADING_NOTE
    if r.mode == "hybrid" and r.vector_coverage >= 1.0:
        return None
    return f"{r.mode}, {r.vector_coverage:.0%} of the memory embedded"


def search_out(
    r: SearchResponse,
    sources: tuple[str, ...],
    extra_warnings: tuple[str, ...],
    threshold: float,
    explain: bool,
    max_chars: int | None,
    loading: bool = False,
) -> dict[str, Any]:
    """memory_search's structured content: lean hits by default, everything with ``explain``, within
    ``max_chars`` characters of its text when given."""
    rescue = r.threshold_rescue
    if explain:
        hits = [explained_hit(h, i, r, threshold=threshold, rescue=rescue) for i, h in enumerate(r.results, 1)]
    else:
        hits = [lean_hit(h, r, threshold=threshold, rescue=rescue) for h in r.results]
    rest: dict[str, Any] = {}
    note = search_note(r, loading)
    if note is not None:
        rest["note"] = note
    if rescue:
        shown = "keyword hits" if r.scoring == "openclaw" else "closest memories"
        rest["thresholdRescue"] = True
        rest["note"] = "; ".join(filter(None, [note, nothing_qualified(threshold, shown)]))
    if not hits and r.near_misses and not explain:
        rest["nearMissCount"] = len(r.near_misses)
    warnings = [*r.warnings, *extra_warnings]
    if warnings:
        rest["warnings"] = warnings
    if r.stale:
        rest["stale"] = True
        rest["action"] = r.action
    if explain:
        rest.update(
            {
                "query": r.query,
                "mode": r.mode,
                "scoring": r.scoring,
                "provider": r.provider,
                "model": r.model,
                "fallback": r.fallback,
                "vectorCoverage": round(r.vector_coverage, 4),
                "minScore": threshold,
                "corpus": list(sources),
                "nearMisses": [
                    explained_hit(h, i, r, threshold=threshold, rescue=False) for i, h in enumerate(r.near_misses, 1)
                ],
                "calibration": r.calibration,
                "keywordRanking": r.keyword_ranking,
                "dates": list(r.dates),
                "agesFromDates": r.ages_from_dates,
                "keywordProbes": list(r.keyword_probes),
                "keywordProbesSkipped": list(r.keyword_probes_skipped),
                "timingsMs": json_form(r.timings_ms),
            }
        )
    if max_chars is None:
        return assemble(hits, 0, rest)
    return fit(hits, rest, max_chars - LABEL_RESERVE)


def assemble(hits: list[dict[str, Any]], omitted: int, rest: dict[str, Any]) -> dict[str, Any]:
    return {"results": hits, **({"omitted": omitted} if omitted else {}), **rest}


def fit(hits: list[dict[str, Any]], rest: dict[str, Any], budget: int) -> dict[str, Any]:
    """The result with as many hits as fit in ``budget`` characters of its text, from the top: the
    first hit that does not fit whole comes with its snippet cut, when a useful part of it fits;
    ``omitted`` says how many were left out. Near-misses, then warnings and notes go before any hit."""

    def size(shown: list[dict[str, Any]], extra: dict[str, Any]) -> int:
        return len(mirror_text(assemble(shown, len(hits) - len(shown), extra)))

    extra = dict(rest)
    for key in ("nearMisses", "warnings", "note"):  # what to give up when not even one hit fits
        if size(hits[:1], extra) <= budget or key not in extra:
            continue
        if key == "nearMisses":
            extra["nearMissCount"] = len(extra.pop(key))
        else:
            extra.pop(key)
    lo, hi = 0, len(hits)  # the most whole hits that fit: size grows with every hit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if size(hits[:mid], extra) <= budget:
            lo = mid
        else:
            hi = mid - 1
    shown = hits[:lo]
    if lo < len(hits):
        cut = _cut_to_fit(hits[lo], lambda h: size([*shown, h], extra) <= budget)
        if cut is not None:
            shown = [*shown, cut]
    if size(shown, extra) > budget:  # only the bare list can be promised under the floor
        extra = {}
    return assemble(shown, len(hits) - len(shown), extra)


MIN_SNIPPET = 24  # a cut snippet shorter than this says nothing: leave the hit out instead


def _cut_to_fit(hit: dict[str, Any], fits: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """``hit`` with the longest snippet (cut, ending in …) that ``fits``, or None."""
    snippet = str(hit["snippet"])
    lo, hi = MIN_SNIPPET, len(snippet) - 1
    best = None
    while lo <= hi:
        mid = (lo + hi) // 2
        candidate = {**hit, "snippet": clip(snippet, mid)}
        if fits(candidate):
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    return best


# ----------------------------------------------------------------------------- other shapes


def startup_file_out(f: StartupFile, include_text: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "path": f.path,
        "kind": f.kind,
        "order": f.order,
        "loaded": f.loaded,
        "reason": f.reason,
        "charsOnDisk": f.chars_on_disk,
        "charsConsidered": f.chars_considered,
        "cap": f.cap,
        "charsInjected": f.chars_injected,
        "charsCut": f.chars_cut,
        "truncated": f.truncated,
        "truncation": f.truncation,
        "cutRanges": [{"start": c.start, "end": c.end} for c in f.cut_ranges],
        "cutLines": [
            {"line": ln.line, "status": ln.status, "text": ln.text, "keptChars": ln.kept_chars, "chars": ln.chars}
            for ln in f.lines
            if ln.status in ("cut", "partial")
        ],
        "omitted": json_form(f.omitted),
    }
    if include_text:
        out["injectedText"] = f.injected_text
    return out


def startup_out(ctx: StartupContext, include_text: bool) -> dict[str, Any]:
    out = {
        "kind": ctx.kind,
        "now": ctx.now,
        "timezone": ctx.timezone,
        "localDate": ctx.local_date,
        "daysScanned": list(ctx.days_scanned),
        "daysSelected": list(ctx.days_selected),
        "bootstrapBudget": json_form(ctx.bootstrap_budget),
        "startupBudget": json_form(ctx.startup_budget),
        "files": [startup_file_out(f, include_text) for f in ctx.files],
        "warnings": list(ctx.warnings),
        "notes": list(ctx.notes),
    }
    if include_text:
        out["startupPrelude"] = ctx.startup_prelude
    return out


def intent_out(i: StandingIntent) -> dict[str, Any]:
    out: dict[str, Any] = json_form(i)
    return out


def match_out(r: MatchReport) -> dict[str, Any]:
    data: dict[str, Any] = json_form(match_record(r))
    if not r.applied:
        data["note"] = "dry run: nothing changed"
    return data


# ----------------------------------------------------------------------------- the tools


ORIGIN_CHOICES = ("agent", "untrusted")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def tool_notes(title: str, *, read_only: bool, destructive: bool = False, idempotent: bool = False) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive if not read_only else False,
        idempotent_hint=True if read_only else idempotent,
        open_world_hint=False,
    )


class Tools:
    """The tool functions over one :class:`MemoryDoor`. ``read_only``: only tools that write nothing
    (and a search that records no recall signal); ``append_origin``: this server's trust class."""

    def __init__(self, door: MemoryDoor, *, read_only: bool = False, append_origin: str = "agent") -> None:
        self.door = door
        self.read_only = read_only
        self.append_origin = append_origin

    @property
    def engine(self) -> MemoryEngine:
        return self.door.engine

    # ------------------------------------------------------------------ memory_search

    def memory_search(
        self,
        query: Annotated[str, Field(description="What to look for, in Chinese or English (a question works best).")],
        maxResults: Annotated[
            int | None, Field(description="How many results, 1-200 (default 6). More only lengthens the list.")
        ] = None,
        minScore: Annotated[
            float | None,
            Field(
                description="Threshold, 0-1 (default 0.35), on the score before time decay: an old memory that "
                "qualifies stays in the results and age only lowers its rank."
            ),
        ] = None,
        corpus: Annotated[
            Literal["memory", "sessions", "all"] | None,
            Field(description="memory files, imported session transcripts, or all (default: what is indexed)."),
        ] = None,
        project: Annotated[
            list[str] | None,
            Field(description="Active project keys (e.g. github.com/acme/billing): matching entries ×1.15."),
        ] = None,
        explain: Annotated[
            bool,
            Field(description="Add every score component, the whole snippet and the near-misses below the threshold."),
        ] = False,
        maxChars: Annotated[
            int | None,
            Field(
                description=f"A budget for the whole result, {MAX_CHARS_FLOOR}-1,000,000 characters: hits are left "
                "out from the bottom (the last one shown may be cut) and omitted counts them."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        if not query.strip():
            raise refuse("query is empty: say what to look for")
        max_results = None if maxResults is None else check(values.whole_number("maxResults", 1, 200), maxResults)
        min_score = None if minScore is None else check(values.number("minScore", 0.0, 1.0), minScore)
        keys = tuple(check(values.project_key("project"), k) for k in (project or ()))
        budget = None if maxChars is None else check(values.whole_number("maxChars", MAX_CHARS_FLOOR, 10**6), maxChars)
        engine = self.engine
        loading = not self.door.model_ready.is_set()  # answer now with keywords; never wait for the model
        try:
            sources, warnings = choose_sources(engine.settings.index.sources, corpus)
            response = engine.search(
                query,
                max_results=max_results,
                min_score=min_score,
                project_keys=keys,
                record=not self.read_only,
                sync=False,  # the door keeps the index in sync (start-up, watcher, appends)
                sources=sources,
                legs="keyword" if loading else "hybrid",
            )
        except ClawmemError as exc:
            raise refuse(str(exc)) from None
        threshold = engine.settings.search.min_score if min_score is None else min_score
        if not self.door.ready.is_set():
            warnings = (*warnings, "the index is still being built: results may be incomplete")
        return result(search_out(response, sources, tuple(warnings), threshold, explain, budget, loading))

    # ------------------------------------------------------------------ memory_get

    def memory_get(self, path: str, from_: int = 1, lines: int = 120) -> Annotated[CallToolResult, GetOut]:
        """Called with the arguments of :class:`MemoryGetArgs` (``from`` is a Python keyword)."""
        from_line = check(values.whole_number("from", 1), from_)
        count = check(values.whole_number("lines", 1), lines)
        clean = path.strip().replace("\\", "/")
        if clean.startswith("sessions/") or clean.endswith(".jsonl"):
            raise refuse(
                f"{path}: a session transcript is not a memory file; memory_get reads MEMORY.md, USER.md and "
                'memory/… — search transcripts with memory_search corpus "sessions"'
            )
        try:
            self.engine.require_workspace()
            r = self.engine.get(path, from_line=from_line, lines=count)
        except ClawmemError as exc:
            raise refuse(str(exc)) from None
        total = getattr(r, "total_lines", None)
        data = {
            "path": r.path,
            "from": r.from_line,
            "lines": r.lines,
            "text": r.text,
            "nextFrom": r.next_from,
            "totalLines": total,
            "truncated": bool(getattr(r, "truncated", r.next_from is not None)),
            "charBudgetExceeded": bool(getattr(r, "char_budget_exceeded", False)),
            "pastEnd": bool(getattr(r, "past_end", False)),
            "missing": r.missing,
        }
        if r.missing:
            data["note"] = "no such memory file (yet)"
        elif data["pastEnd"]:
            data["note"] = f"from {r.from_line} is past the end ({r.path} has {total} lines)"
        return result(data)

    # ------------------------------------------------------------------ memory_append

    def memory_append(
        self,
        text: Annotated[str, Field(description="The lines to remember, e.g. '- The user prefers window seats.'")],
        session: Annotated[
            str | None,
            Field(
                description="An imported session id the text comes from: its transcript then decides the trust "
                "class (untrusted when its current turn holds a web result), as `clawmem session flush` does."
            ),
        ] = None,
        origin: Annotated[
            Literal["agent", "untrusted"] | None,
            Field(description="Only lowers the class: untrusted for text you cannot vouch for. It is never raised."),
        ] = None,
        webSourced: Annotated[
            bool, Field(description="True when the text comes from a web page or a tool's network result: untrusted.")
        ] = False,
    ) -> Annotated[CallToolResult, AppendOut]:
        if not text.strip():
            raise refuse("text is empty: nothing to append")
        if "\x00" in text:
            raise refuse("text contains a NUL character; nothing was written")
        if len(text) > MAX_APPEND_CHARS:
            raise refuse(f"text is {len(text):,} characters; at most {MAX_APPEND_CHARS:,} per append")
        lowered = "untrusted" if (origin == "untrusted" or webSourced) else None
        engine = self.engine
        try:
            if session is not None:
                sid = check(values.non_empty("session", "a session id"), session)
                if origin == "agent" and self.append_origin != "agent":
                    raise refuse(f"origin agent refused: this server appends as {self.append_origin}")
                asked = lowered or ("untrusted" if self.append_origin == "untrusted" else origin)
                f = engine.sessions.flush(sid, text, origin=asked)
                rel, start, end, cls = f.path, f.line_start, f.line_end, f.origin_class
                why = f.origin_reason or ("derived from the session's turns" if f.origin_derived else "lowered")
                if webSourced and f.origin_class == "untrusted" and not f.origin_derived:
                    why = "marked web-sourced by the caller"
                extra: dict[str, Any] = {"session": f.session_id, "indexedAs": f.effective_class}
            else:
                if origin == "agent" and self.append_origin != "agent":
                    raise refuse(f"origin agent refused: this server appends as {self.append_origin}")
                final = lowered or self.append_origin
                if webSourced:
                    why = "marked web-sourced by the caller"
                elif origin == "untrusted":
                    why = "lowered by the caller (origin untrusted)"
                else:
                    why = f"this server's class ({self.append_origin})"
                a = engine.sessions.append(text, origin=final, reason=why)
                rel, start, end, cls = a.path, a.line_start, a.line_end, a.origin_class
                extra = {"session": None, "indexedAs": cls}
        except ClawmemError as exc:
            raise refuse(str(exc)) from None
        self.door.synced_now(rel)
        data = {
            "path": rel,
            "startLine": start,
            "endLine": end,
            "citation": f"{rel}#L{start}-L{end}",
            "originClass": cls,
            "originReason": why,
            **extra,
        }
        if cls != "agent":
            data["note"] = "untrusted: never promoted into MEMORY.md, never auto-injected"
        return result(data)

    # ------------------------------------------------------------------ intents

    def intent_create(
        self,
        description: Annotated[str, Field(description="What to remind of when it fires (≤ 500 characters).")],
        keywords: Annotated[
            list[str] | str,
            Field(description='Trigger keywords (1-24), a list or one string separated by ";", e.g. "杭州; hangzhou".'),
        ],
        channel: Annotated[str, Field(description="The channel the request came from (it fires only there).")],
        sender: Annotated[str, Field(description="Who asked (it fires only for them).")],
        expires: Annotated[
            str | None, Field(description="Expiry, YYYY-MM-DD or YYYY-MM-DDTHH:MM (default 90 days from now).")
        ] = None,
        maxFires: Annotated[int | None, Field(description="How often it may fire, 1-10,000 (default 3).")] = None,
        cooldownHours: Annotated[
            float | None, Field(description="Quiet hours after a fire, 0-87,600 (default 24).")
        ] = None,
        anyChannel: Annotated[bool, Field(description="Fire on any channel, not only `channel`.")] = False,
        anySender: Annotated[bool, Field(description="Fire for any sender, not only `sender`.")] = False,
        session: Annotated[str | None, Field(description="The session the request came from.")] = None,
    ) -> Annotated[CallToolResult, IntentOut]:
        exp = None if expires is None else check(values.expiry_date, expires)
        fires = None if maxFires is None else check(values.max_fires, maxFires)
        hours = None if cooldownHours is None else check(values.cooldown_hours, cooldownHours)
        kw: str | Sequence[str] = keywords
        try:
            intent = self.engine.intents.create(
                description,
                kw,
                channel=channel,
                sender=sender,
                expires=exp,
                max_fires=fires,
                cooldown_hours=hours,
                any_channel=anyChannel,
                any_sender=anySender,
                source_session_id=session,
            )
        except ClawmemError as exc:
            raise refuse(str(exc)) from None
        return result({"intent": intent_out(intent)})

    def intent_list(
        self,
        status: Annotated[
            Literal["pending", "armed", "fired", "done", "cancelled", "expired"] | None,
            Field(description="Only intents in this state."),
        ] = None,
    ) -> Annotated[CallToolResult, IntentsOut]:
        if status is not None:
            check(values.one_of("status", STATUSES), status)
        try:
            intents = self.engine.intents.list(status)
        except ClawmemError as exc:
            raise refuse(str(exc)) from None
        return result({"intents": [intent_out(i) for i in intents]})

    def intent_match(
        self,
        message: Annotated[str, Field(description="An incoming message to test against the standing intents.")],
        channel: Annotated[str | None, Field(description="The channel the message arrives on.")] = None,
        sender: Annotated[str | None, Field(description="Who sends it.")] = None,
        apply: Annotated[
            bool, Field(description="Fire for real (count the fires and start cooldowns); default is a dry run.")
        ] = False,
    ) -> Annotated[CallToolResult, MatchOut]:
        if not message.strip():
            raise refuse("message is empty")
        if apply and self.read_only:
            raise refuse("apply is refused: this server is read-only")
        try:
            report = self.engine.intents.match(message, channel=channel, sender=sender, apply=apply)
        except ClawmemError as exc:
            raise refuse(str(exc)) from None
        return result(match_out(report))

    def intent_cancel(
        self,
        id: Annotated[str, Field(description="The intent's id or a unique prefix of at least 6 characters.")],
    ) -> Annotated[CallToolResult, IntentOut]:
        try:
            intent = self.engine.intents.cancel(check(values.non_empty("id", "an intent id"), id))
        except ClawmemError as exc:
            raise refuse(str(exc)) from None
        return result({"intent": intent_out(intent), "note": "cancelled; its fire history is kept"})

    # ------------------------------------------------------------------ supersede_propose

    def supersede_propose(
        self,
        older: Annotated[
            str,
            Field(
                description="The entry that is out of date: PATH:LINE of its bullet, e.g. MEMORY.md:7 or "
                "memory/2026-03-02.md:4 (a citation such as MEMORY.md#L7 works too)."
            ),
        ],
        newer: Annotated[str, Field(description="The entry that replaces it: PATH:LINE of its bullet.")],
        reason: Annotated[
            str, Field(description="Why the newer entry replaces the older one (one sentence, ≤ 1,000 characters).")
        ],
    ) -> Annotated[CallToolResult, ProposalOut]:
        older_ref = check(values.entry_ref("older"), older)
        newer_ref = check(values.entry_ref("newer"), newer)
        try:
            p = self.engine.curation.propose(older_ref, newer_ref, reason, origin_class=self.append_origin)
        except ClawmemError as exc:
            raise refuse(str(exc)) from None
        how = "already proposed and still waiting" if p.duplicate else "proposed"
        note = f"{how}. Nothing was written: the person accepts it (clawmem supersede --accept {p.short_id}) or not."
        return result({"proposal": json_form(p), "note": note})

    # ------------------------------------------------------------------ context and forget

    def context_startup(
        self,
        kind: Annotated[
            Literal["private", "group", "cron", "subagent"],
            Field(description="The kind of session that starts (MEMORY.md and USER.md load only in private ones)."),
        ] = "private",
        includeText: Annotated[bool, Field(description="Also return the exact injected text of every file.")] = False,
    ) -> Annotated[CallToolResult, StartupOut]:
        check(values.one_of("kind", STARTUP_KINDS), kind)
        try:
            ctx = self.engine.context.startup(kind)
        except ClawmemError as exc:
            raise refuse(str(exc)) from None
        return result(startup_out(ctx, includeText))

    def forget_preview(
        self,
        session: Annotated[
            list[str] | str, Field(description="Session ids or keys (see the Sessions pane or `clawmem session list`).")
        ],
    ) -> Annotated[CallToolResult, ForgetOut]:
        selectors = [session] if isinstance(session, str) else list(session)
        clean = [check(values.non_empty("session", "a session id or key"), s) for s in selectors]
        if not clean:
            raise refuse("session: give at least one session id or key")
        try:
            plan = self.engine.forget.plan(clean)
            refuse_unresolved(plan)
        except ClawmemError as exc:
            raise refuse(str(exc)) from None
        note = "dry run, nothing changed: only the person can run the forget (clawmem forget --session … or the app)"
        return result(json_form({**plan.report(), "details": plan.details(), "note": note}))


# (name, method, description, annotations) of every tool
SEARCH_DESC = (
    "Search the agent's long-term memory (MEMORY.md, USER.md, daily diaries memory/YYYY-MM-DD.md, notes; "
    "optionally imported session transcripts) with hybrid keyword + vector search, in Chinese or English. "
    "Each result: citation (path#Lstart-Lend, for memory_get and for citing), score, snippet (cut at "
    f"{SNIPPET_CHARS} characters), originClass (owner, agent, system, untrusted) and why (what matched, and what "
    "age, importance or project did to its rank); supersededBy when a newer entry replaced it. Old memories that "
    "qualify stay in the results; age only lowers their rank. When nothing qualifies, the closest are returned "
    "(thresholdRescue). Untrusted memory (web pages, other people) is left out. maxChars caps the whole result; "
    "explain: true adds every score component, whole snippets and the near-misses below the threshold. Each search "
    "counts as a recall signal for Dreaming (promotion into MEMORY.md), except on a read-only server."
)
GET_DESC = (
    "Read lines of one memory file: MEMORY.md, USER.md, DREAMS.md or memory/….md, inside the workspace only "
    "('..', absolute paths and symbolic links are refused; session transcripts are searched, not read). Default "
    "120 lines and at most 12,000 characters; a line is never cut. nextFrom says where to continue; a missing "
    "file returns missing: true and empty text."
)
APPEND_DESC = (
    "Remember something: append lines to today's diary memory/YYYY-MM-DD.md (append-only and atomic, with a "
    "provenance record of who wrote them). It never edits MEMORY.md or USER.md — Dreaming promotes from the "
    "diaries, after the person's review. The trust class is this server's (agent), never raised by the caller: "
    "pass origin 'untrusted' or webSourced true for text from web pages or other people (it is then never "
    "promoted or auto-injected). With session, the imported transcript decides the class, as a pre-compaction "
    "flush does. The text is searchable at once."
)
INTENT_CREATE_DESC = (
    "Arm a standing intent: a reminder that fires when a later message on that channel from that sender mentions "
    "one of the keywords (Chinese keywords match inside sentences). Fires at most maxFires times, rests "
    "cooldownHours after each fire, expires after 90 days unless expires says otherwise."
)
INTENT_LIST_DESC = (
    "List the standing intents with their state (armed, fired, done, cancelled, expired), fires and expiry."
)
INTENT_MATCH_DESC = (
    "Which standing intents an incoming message would fire, why each other one would not (state, scope, "
    "missing keywords, cooldown, budget), and the exact block that would be injected. A dry run unless apply is true."
)
INTENT_MATCH_RO_DESC = (
    "Which standing intents an incoming message would fire, why each other one would not (state, scope, "
    "missing keywords, cooldown, budget), and the exact block that would be injected. Always a dry run here."
)
INTENT_CANCEL_DESC = (
    "Cancel an armed or fired standing intent by id (or a unique prefix); its row and fire history are kept."
)
CONTEXT_DESC = (
    "What a new session would load (a bare /new): the bootstrap files (USER.md, MEMORY.md …) under their caps and "
    "the shared budget, then today's and yesterday's startup notes — with exactly which lines would be cut "
    "(cutRanges, cutLines) and the superseded entries left out."
)
FORGET_DESC = (
    "Preview (dry run only) what forgetting sessions would delete: MEMORY.md entries, diary and note lines, index "
    "chunks, vectors, recall signals, preimages, proposals — and what survives and why. Nothing is changed. The "
    "forget itself is destructive and stays with the person (the app's Forget pane or `clawmem forget`); this tool "
    "cannot run it."
)

SUPERSEDE_PROPOSE_DESC = (
    "Propose that an entry of the memory files is out of date and superseded by a newer one (a changed "
    "preference, a moved date: older and newer as PATH:LINE of their bullets, from memory_search results). "
    "Nothing is written: the proposal waits for the person, who accepts it — then the older entry is marked "
    "<!-- observed: … | status: superseded | by: PATH#LN --> and ranks below its successor — or rejects it "
    "(a rejected proposal is not taken again). Both entries are checked now: a line that is not a bullet, the "
    "same entry twice or a newer entry that is itself superseded is refused."
)


def tool_specs(tools: Tools) -> list[tuple[str, Callable[..., CallToolResult], str, ToolAnnotations]]:
    """The tools this server lists (only those that write nothing when read-only)."""
    ro = tools.read_only
    specs: list[tuple[str, Callable[..., CallToolResult], str, ToolAnnotations]] = [
        ("memory_search", tools.memory_search, SEARCH_DESC, tool_notes("Search memory", read_only=True)),
        ("memory_get", tools.memory_get, GET_DESC, tool_notes("Read a memory file", read_only=True)),
        ("intent_list", tools.intent_list, INTENT_LIST_DESC, tool_notes("List standing intents", read_only=True)),
        (
            "context_startup",
            tools.context_startup,
            CONTEXT_DESC,
            tool_notes("What a new session loads", read_only=True),
        ),
        ("forget_preview", tools.forget_preview, FORGET_DESC, tool_notes("Preview a forget", read_only=True)),
    ]
    if ro:
        specs.append(
            (
                "intent_match",
                _without_apply(tools),
                INTENT_MATCH_RO_DESC,
                tool_notes("Simulate standing intents", read_only=True),
            )
        )
        return specs
    specs += [
        (
            "intent_match",
            tools.intent_match,
            INTENT_MATCH_DESC,
            tool_notes("Match standing intents", read_only=False, destructive=False),
        ),
        (
            "memory_append",
            tools.memory_append,
            APPEND_DESC,
            tool_notes("Append to today's diary", read_only=False, destructive=False),
        ),
        (
            "intent_create",
            tools.intent_create,
            INTENT_CREATE_DESC,
            tool_notes("Arm a standing intent", read_only=False, destructive=False),
        ),
        (
            "intent_cancel",
            tools.intent_cancel,
            INTENT_CANCEL_DESC,
            tool_notes("Cancel a standing intent", read_only=False, destructive=True, idempotent=True),
        ),
        (
            "supersede_propose",
            tools.supersede_propose,
            SUPERSEDE_PROPOSE_DESC,
            tool_notes("Propose a superseded entry", read_only=False, destructive=False, idempotent=True),
        ),
    ]
    return specs


def _without_apply(tools: Tools) -> Callable[..., CallToolResult]:
    def intent_match(
        message: Annotated[str, Field(description="An incoming message to test against the standing intents.")],
        channel: Annotated[str | None, Field(description="The channel the message arrives on.")] = None,
        sender: Annotated[str | None, Field(description="Who sends it.")] = None,
    ) -> Annotated[CallToolResult, MatchOut]:
        return tools.intent_match(message, channel, sender, False)

    return intent_match


TOOL_NAMES = (
    "memory_search",
    "memory_get",
    "memory_append",
    "intent_create",
    "intent_list",
    "intent_match",
    "intent_cancel",
    "context_startup",
    "forget_preview",
    "supersede_propose",
)
WRITE_TOOLS = ("memory_append", "intent_create", "intent_cancel", "supersede_propose")
__all__ = ["CORPORA", "ORIGIN_CHOICES", "READ_ONLY", "TOOL_NAMES", "WRITE_TOOLS", "Tools", "one_line", "tool_specs"]
