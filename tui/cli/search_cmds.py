"""``search`` and ``get``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from engine.search.types import SearchHit, SearchResponse
from tui.cli import common


def _max_results(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= 200:
        raise argparse.ArgumentTypeError("must be between 1 and 200")
    return value


def _score(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError("must be between 0 and 1")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parent = common.global_parent()
    p = sub.add_parser("search", parents=[parent], help="search the memory and explain every score")
    p.add_argument("query", nargs="+", help="what to look for (Chinese or English)")
    p.add_argument("--max-results", type=_max_results, metavar="N", help="results to return (default 6)")
    p.add_argument("--min-score", type=_score, metavar="X", help="threshold after decay and importance (default 0.35)")
    p.add_argument("--project", action="append", default=[], metavar="KEY", help="an active project key (repeatable)")
    p.add_argument("--scoring", choices=("calibrated", "openclaw"), help="vector scoring (default calibrated)")
    p.add_argument("--mode", choices=("hybrid", "keyword", "vector"), default="hybrid", help="which legs to run")
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
    p.add_argument("--from", dest="from_line", type=_positive, default=1, metavar="N", help="first line (1-based)")
    p.add_argument("--lines", type=_positive, default=120, metavar="N", help="how many lines (default 120)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_get)


def hit_json(hit: SearchHit) -> dict[str, Any]:
    b = hit.breakdown
    return {
        "path": hit.path,
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "score": hit.score,
        "snippet": hit.snippet,
        "source": hit.source,
        "breakdown": {
            "vector_raw": b.vector_raw,
            "vector": b.vector,
            "keyword_raw": b.keyword_raw,
            "keyword": b.keyword,
            "path_tier": b.path_tier,
            "content": b.content,
            "age_days": b.age_days,
            "decay": b.decay,
            "importance": b.importance,
            "importance_factor": b.importance_factor,
            "project_factor": b.project_factor,
            "pre_threshold": b.pre_threshold,
            "mmr_rank": b.mmr_rank,
            "passed_threshold": b.passed_threshold,
        },
        "provenance": {
            "origin_class": hit.provenance.origin_class,
            "session_kind": hit.provenance.session_kind,
            "observed_at": hit.provenance.observed_at,
        },
        "status": hit.status,
        "triggers": list(hit.triggers),
        "project_keys": list(hit.project_keys),
        "legs": list(hit.legs),
        "note": hit.note,
    }


def response_json(r: SearchResponse) -> dict[str, Any]:
    out: dict[str, Any] = {
        "results": [hit_json(h) for h in r.results],
        "near_misses": [hit_json(h) for h in r.near_misses],
        "mode": r.mode,
        "scoring": r.scoring,
        "provider": r.provider,
        "model": r.model,
        "fallback": r.fallback,
        "vector_coverage": r.vector_coverage,
        "calibration": r.calibration,
        "keyword_probes": list(r.keyword_probes),
        "threshold_rescue": r.threshold_rescue,
        "warnings": list(r.warnings),
        "timings_ms": r.timings_ms,
    }
    if r.stale:
        out["stale"] = True
        out["action"] = r.action
    return out


def _f(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def explain_lines(hit: SearchHit) -> list[str]:
    b = hit.breakdown
    age = "evergreen" if b.age_days is None else f"{b.age_days:.1f} d"
    tier = {3: "full path", 2: "file name", 1: "file stem"}.get(b.path_tier, "none")
    rows = [
        (
            "vector",
            f"{_f(b.vector)}  (cosine {_f(b.vector_raw)}"
            + (f", {b.vector_z:+.1f} deviations vs this workspace's background)" if b.vector_z is not None else ")"),
        ),
        ("keyword", f"{_f(b.keyword)}  (bm25 {_f(b.keyword_raw, 2)})"),
        ("content", f"{_f(b.content)}  = 0.7·vector + 0.3·keyword" + ("  → (1+c)/2 exact path" if b.path_tier else "")),
        ("decay", f"× {_f(b.decay)}  (age {age})"),
        ("importance", f"× {_f(b.importance_factor, 2)}  (importance {b.importance or '—'})"),
        ("project", f"× {_f(b.project_factor, 2)}"),
        (
            "score",
            f"= {_f(b.pre_threshold)}  → shown {_f(hit.score)}"
            + ("" if b.path_tier == 0 else f"  (path tier: {tier})"),
        ),
        (
            "rank",
            f"MMR #{b.mmr_rank or '—'} · {'passed' if b.passed_threshold else 'below'} threshold"
            + (f" · {hit.note}" if hit.note else ""),
        ),
        (
            "origin",
            f"{hit.provenance.origin_class} · found by {', '.join(hit.legs) or '—'}"
            + (" · SUPERSEDED" if hit.status == "superseded" else ""),
        ),
    ]
    return [f"    {label:<11}{value}" for label, value in rows]


def print_hit(hit: SearchHit, explain: bool) -> None:
    flag = " [superseded]" if hit.status == "superseded" else ""
    origin = f" [{hit.provenance.origin_class}]" if hit.provenance.origin_class in ("untrusted", "system") else ""
    print(f"{hit.score:.3f} {hit.path}:{hit.start_line}-{hit.end_line}{flag}{origin}")
    print(hit.snippet.strip())
    if explain:
        print("\n".join(explain_lines(hit)))
    print()


def cmd_search(args: argparse.Namespace) -> int:
    engine = common.engine_from(args)
    engine.require_workspace()
    response = engine.search(
        " ".join(args.query),
        max_results=args.max_results,
        min_score=args.min_score,
        project_keys=tuple(args.project),
        scoring=args.scoring,
        legs=args.mode,
        record=not args.no_record,
        include_untrusted=args.untrusted,
    )
    if args.json:
        common.print_json(response_json(response))
        return 0
    for warning in response.warnings:
        common.warn(warning)
    if not response.results:
        print("No matches.")
    for hit in response.results:
        print_hit(hit, args.explain)
    if args.explain or args.near_misses:
        if response.near_misses:
            threshold = engine.settings.search.min_score if args.min_score is None else args.min_score
            print(f"— near-misses (below {threshold}) —")
            for hit in response.near_misses:
                print_hit(hit, args.explain)
        if args.explain:
            summary = f"mode {response.mode} · scoring {response.scoring} · {response.model}"
            if response.calibration:
                summary += f"\nvector = {response.calibration}"
            if response.keyword_probes:
                summary += f"\nkeyword probes: {', '.join(response.keyword_probes)}"
            print(summary, file=sys.stdout)
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    engine = common.engine_from(args)
    engine.require_workspace()
    result = engine.get(args.path, from_line=args.from_line, lines=args.lines)
    if result.missing:
        common.fail(f"{result.path}: no such memory file")
        return 1
    if args.json:
        common.print_json(
            {
                "path": result.path,
                "from": result.from_line,
                "lines": result.lines,
                "text": result.text,
                "next_from": result.next_from,
            }
        )
        return 0
    sys.stdout.write(result.text + ("\n" if result.text else ""))
    if result.next_from:
        print(f"… continue with --from {result.next_from}", file=sys.stderr)
    return 0
