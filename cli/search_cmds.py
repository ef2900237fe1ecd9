"""``search`` and ``get``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from clawmem.cli import output
from clawmem.engine.memory_get import MAX_CHARS
from clawmem.engine.search.corpus import SOURCES, choose_sources
from clawmem.engine.search.explain import breakdown_rows, hit_record, nothing_qualified, version_words
from clawmem.engine.search.types import SearchHit, SearchResponse
from clawmem.engine.sessions import index as session_index
from clawmem.engine.text_clip import clip_flat
from clawmem.shell import flags, messages, values

SCORINGS = ("calibrated", "openclaw")

MODES = ("hybrid", "keyword", "vector")


def dated_text(diaries: int) -> str:
    """How many daily diaries are of the dates a query names, in words."""
    return "no diary of those days" if not diaries else f"{diaries} {'diary' if diaries == 1 else 'diaries'} of them"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parent = flags.global_parent()
    p = sub.add_parser("search", parents=[parent], help="search the memory and explain every score")
    p.add_argument("query", nargs="+", help="what to look for (Chinese or English)")
    p.add_argument(
        "--max-results",
        type=values.whole_number("--max-results", 1, 200),
        metavar="N",
        help="results to return, 1-200 (default 6)",
    )
    p.add_argument(
        "--min-score",
        type=values.number("--min-score", 0.0, 1.0),
        metavar="X",
        help="threshold, 0-1 (default 0.35): on the score before decay (--scoring openclaw: after it)",
    )
    flags.add_project_option(p)
    p.add_argument(
        "--scoring",
        type=values.one_of("--scoring", SCORINGS),
        metavar=values.choices_metavar(SCORINGS),
        help="vector scoring (default calibrated)",
    )
    p.add_argument(
        "--mode",
        type=values.one_of("--mode", MODES),
        default="hybrid",
        metavar=values.choices_metavar(MODES),
        help="which legs to run",
    )
    p.add_argument(
        "--source",
        type=values.one_of("--source", tuple(SOURCES)),
        metavar=values.choices_metavar(tuple(SOURCES)),
        help="what to search (OpenClaw's corpus): memory files, session transcripts (needs "
        '"sessions" in [index] sources) or all (default: the indexed sources)',
    )
    p.add_argument("--no-record", action="store_true", help="do not count this search as a recall for Dreaming")
    p.add_argument(
        "--untrusted",
        action="store_true",
        help="include untrusted memory (web pages, other people), labelled [untrusted]",
    )
    p.add_argument("--near-misses", action="store_true", help="also list the best hits below the threshold")
    p.add_argument("--json", action="store_true", help="print the full response as JSON")
    p.add_argument("--explain", action="store_true", help="print each hit's score breakdown")
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("get", parents=[parent], help="read part of a memory file (memory_get)")
    p.add_argument("path", help="a workspace path: MEMORY.md, USER.md or memory/…")
    p.add_argument(
        "--from",
        dest="from_line",
        type=values.whole_number("--from", 1),
        default=1,
        metavar="N",
        help="first line (1-based)",
    )
    p.add_argument(
        "--lines", type=values.whole_number("--lines", 1), default=120, metavar="N", help="how many lines (default 120)"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_get)


def response_json(
    r: SearchResponse, sources: tuple[str, ...] = ("memory",), extra_warnings: tuple[str, ...] = ()
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "results": [hit_record(h) for h in r.results],
        "nearMisses": [hit_record(h) for h in r.near_misses],
        "mode": r.mode,
        "scoring": r.scoring,
        "provider": r.provider,
        "model": r.model,
        "fallback": r.fallback,
        "vectorCoverage": r.vector_coverage,
        "calibration": r.calibration,
        "keywordRanking": r.keyword_ranking,
        "keywordProbes": list(r.keyword_probes),
        "keywordProbesSkipped": list(r.keyword_probes_skipped),
        "keywordProbeLimit": r.keyword_probe_limit,
        "dates": list(r.dates),
        "datedDiaries": r.dated_diaries,
        "agesFromDates": r.ages_from_dates,
        "halfLifeDays": r.half_life_days,
        "maxDecay": r.max_decay,
        "thresholdRescue": r.threshold_rescue,
        "sources": list(sources),
        "warnings": [*r.warnings, *extra_warnings],
        "timingsMs": r.timings_ms,
    }
    if r.stale:
        out["stale"] = True
        out["action"] = r.action
    return out


def explain_lines(hit: SearchHit, response: SearchResponse, min_score: float) -> list[str]:
    """The hit's breakdown rows (engine/search/explain.py), one line each: label, number, words."""
    lines = []
    for row in breakdown_rows(hit, response, min_score):
        label = ("  " if row.detail else "") + row.label
        if row.value is None:
            lines.append(f"    {label:<12}{row.words}")
        else:
            number = f"{row.op} " * bool(row.op) + f"{row.value:.{row.digits}f}"
            lines.append(f"    {label:<12}{number:<8} {row.words}")
    return lines


def print_hit(hit: SearchHit, explain: bool, response: SearchResponse, min_score: float) -> None:
    version = version_words(hit)
    flag = f" [{version}]" if version else ""
    origin = f" [{hit.provenance.origin_class}]" if hit.provenance.origin_class in ("untrusted", "system") else ""
    source = ""
    if hit.source == "sessions":
        theirs = hit.path.startswith(session_index.OPENCLAW_PREFIX)
        source = " [OpenClaw session transcript]" if theirs else " [session transcript]"
    print(f"{hit.score:.3f} {hit.path}:{hit.start_line}-{hit.end_line}{source}{flag}{origin}")
    print(hit.snippet.strip())
    if explain:
        print("\n".join(explain_lines(hit, response, min_score)))
    print()


def cmd_search(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    engine.require_memory_to_read()
    sources, source_warnings = choose_sources(engine.settings.index.sources, args.source)
    response = engine.search(
        " ".join(args.query),
        max_results=args.max_results,
        min_score=args.min_score,
        project_keys=tuple(args.project),
        scoring=args.scoring,
        legs=args.mode,
        record=not args.no_record,
        include_untrusted=args.untrusted,
        sources=sources,
    )
    if args.json:
        output.print_json(response_json(response, sources, source_warnings))
        return 0
    for warning in (*response.warnings, *source_warnings):
        messages.warn(warning)
    threshold = engine.settings.search.min_score if args.min_score is None else args.min_score
    if not response.results:
        print("No matches.")
        if response.near_misses and not (args.explain or args.near_misses):
            # Say what came closest, so an expected memory is never just "missing".
            best = response.near_misses[:3]
            print(f"Closest below the {threshold} threshold (--near-misses --explain shows why):")
            for hit in best:
                print(f"  {hit.score:.3f} {hit.path}:{hit.start_line}-{hit.end_line}  {clip_flat(hit.snippet, 72)}")
    elif response.threshold_rescue:
        shown = "keyword hits" if response.scoring == "openclaw" else "closest memories"
        print(f"({nothing_qualified(threshold, shown)})")
    for hit in response.results:
        print_hit(hit, args.explain, response, threshold)
    if args.explain or args.near_misses:
        if response.near_misses:
            print(f"— near-misses (below {threshold}) —")
            for hit in response.near_misses:
                print_hit(hit, args.explain, response, threshold)
        if args.explain:
            summary = f"mode {response.mode} · scoring {response.scoring} · {response.model}"
            summary += f" · sources {', '.join(sources)}"
            if response.calibration:
                summary += f"\nvector = {response.calibration}"
            if response.dates:
                summary += f"\ndates: {', '.join(response.dates)} · {dated_text(response.dated_diaries)}"
                if response.ages_from_dates:
                    summary += " · diary ages (decay) count from these dates"
            if response.keyword_probes:
                summary += f"\nkeyword probes: {', '.join(response.keyword_probes)}"
            if response.keyword_probes_skipped:
                summary += f"\nnot probed (in more than {response.keyword_probe_limit:,} chunks): " + ", ".join(
                    response.keyword_probes_skipped
                )
            print(summary, file=sys.stdout)
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    engine.require_workspace()
    result = engine.get(args.path, from_line=args.from_line, lines=args.lines)
    if result.missing:
        messages.fail(f"{result.path}: no such memory file")
        return 1
    total = getattr(result, "total_lines", None)
    past_end = bool(getattr(result, "past_end", False))
    over_budget = bool(getattr(result, "char_budget_exceeded", False))
    if args.json:
        output.print_json(
            {
                "path": result.path,
                "from": result.from_line,
                "lines": result.lines,
                "text": result.text,
                "nextFrom": result.next_from,
                "totalLines": total,
                "truncated": bool(getattr(result, "truncated", result.next_from is not None)),
                "charBudgetExceeded": over_budget,
                "pastEnd": past_end,
            }
        )
        return 0
    if past_end:
        print(f"… --from {result.from_line} is past the end ({result.path} has {total} lines)", file=sys.stderr)
        return 0
    sys.stdout.write(result.text + ("\n" if result.text else ""))
    if over_budget:
        print(
            f"… line {result.from_line} is {len(result.text):,} characters, over the {MAX_CHARS:,}-character "
            "budget: shown whole",
            file=sys.stderr,
        )
    if result.next_from:
        print(f"… continue with --from {result.next_from}", file=sys.stderr)
    return 0
