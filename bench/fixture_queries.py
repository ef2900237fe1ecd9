"""Retrieval quality on the bilingual fixture's 40 labelled queries and its 8 recency cases.

The headline is the product's defaults: decay on, 6 results, min score 0.35. Beside it: decay
off, and the threshold off (min score 0, ranking only). Metrics: hit@1, hit@3, MRR (first
relevant result) and how many queries return nothing relevant in the top 6. A result is
relevant when its line range contains one of the query's labelled ``path:line`` targets
(tests/fixtures/queries.json).

Recency cases (tests/fixtures/recency-queries.json, their own workspace): a newer diary
supersedes an older one on the same subject; a case passes when the newer line is returned and
ranked above the older one (or the older one is not returned).

Usage: python bench/fixture_queries.py [--verbose] [--max-decay X] [--out bench/results/fixture.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))
QUERIES = json.loads((ROOT / "tests" / "fixtures" / "queries.json").read_text(encoding="utf-8"))
RECENCY = json.loads((ROOT / "tests" / "fixtures" / "recency-queries.json").read_text(encoding="utf-8"))
os.environ["CLAWMEM_NOW"] = QUERIES["now"]
os.environ["CLAWMEM_TZ"] = "UTC"
assert RECENCY["now"] == QUERIES["now"]

from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402

from bench import version_rule  # noqa: E402

MODES = {
    "calibrated": {"scoring": "calibrated", "legs": "hybrid"},
    "openclaw": {"scoring": "openclaw", "legs": "hybrid"},
    "keyword-only": {"scoring": "calibrated", "legs": "keyword"},
}


def relevant(hit: object, targets: list[str]) -> bool:
    for t in targets:
        path, line = t.rsplit(":", 1)
        if hit.path == path and hit.start_line <= int(line) <= hit.end_line:  # type: ignore[attr-defined]
            return True
    return False


def evaluate(
    engine: MemoryEngine, opts: dict[str, str], *, min_score: float | None, verbose: bool = False
) -> dict[str, float]:
    hit1 = hit3 = empty = 0
    rr: list[float] = []
    for q in QUERIES["queries"]:
        resp = engine.search(q["query"], min_score=min_score, record=False, sync=False, **opts)
        flags = [relevant(h, q["relevant"]) for h in resp.results]
        first = next((i for i, f in enumerate(flags) if f), None)
        hit1 += bool(flags[:1] and flags[0])
        hit3 += any(flags[:3])
        rr.append(0.0 if first is None else 1.0 / (first + 1))
        empty += first is None
        if verbose:
            mark = "✓" if first == 0 else ("~" if first is not None else "✗")
            tops = ", ".join(f"{h.path}:{h.start_line} {h.score:.2f}" for h in resp.results[:3])
            print(f"  {mark} {q['query'][:40]:<40} {tops}")
    n = len(QUERIES["queries"])
    return {"hit@1": hit1 / n, "hit@3": hit3 / n, "mrr": statistics.fmean(rr), "no_relevant": empty}


def recency_cases(engine: MemoryEngine, opts: dict[str, str], *, min_score: float | None, verbose: bool) -> int:
    """How many recency cases rank the newer line above the older one (and return it)."""
    passed = 0
    for q in RECENCY["queries"]:
        resp = engine.search(q["query"], min_score=min_score, record=False, sync=False, **opts)
        newer = next((i for i, h in enumerate(resp.results) if relevant(h, [q["newer"]])), None)
        older = next((i for i, h in enumerate(resp.results) if relevant(h, [q["older"]])), None)
        ok = newer is not None and (older is None or newer < older)
        passed += ok
        if verbose:
            tops = ", ".join(f"{h.path}:{h.start_line} {h.score:.2f}" for h in resp.results[:3])
            print(f"  {'✓' if ok else '✗'} {q['query'][:40]:<40} newer #{newer} older #{older}  {tops}")
    return passed


def build_engine(tmp: Path, workspace: str, overrides: dict) -> MemoryEngine:
    ws = tmp / Path(workspace).name
    shutil.copytree(ROOT / workspace, ws)
    engine = MemoryEngine(load_settings(home=tmp / "home", workspace=ws, overrides=overrides))
    engine.sync()
    return engine


# (label, decay on, min score: None = the default 0.35)
SETTINGS = (("defaults", True, None), ("decay off", False, None), ("min score 0", True, 0.0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--max-decay", type=float, default=None, help="search.max_decay (default: the product's)")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    version_rule.add_arguments(parser)
    args = parser.parse_args()
    print(version_rule.apply(args, probe := {}))
    rows = []
    print(f"{'mode':<14} {'settings':<12} {'hit@1':>6} {'hit@3':>6} {'MRR':>6} {'none':>5} {'recency':>8}")
    for label, decay, min_score in SETTINGS:
        search: dict[str, object] = {"decay_enabled": decay, **probe}
        if args.max_decay is not None:
            search["max_decay"] = args.max_decay
        with tempfile.TemporaryDirectory() as tmp:
            engine = build_engine(Path(tmp) / "main", QUERIES["workspace"], {"search": search})
            recent = build_engine(Path(tmp) / "recency", RECENCY["workspace"], {"search": search})
            for name, opts in MODES.items():
                if args.verbose:
                    print(f"[{name}, {label}]")
                m = evaluate(engine, opts, min_score=min_score, verbose=args.verbose)
                r = recency_cases(recent, opts, min_score=min_score, verbose=args.verbose)
                n = len(RECENCY["queries"])
                rows.append({"mode": name, "settings": label, **m, "recency_passed": r, "recency_cases": n})
                print(
                    f"{name:<14} {label:<12} {m['hit@1']:>6.3f} {m['hit@3']:>6.3f} {m['mrr']:>6.3f} "
                    f"{m['no_relevant']:>5} {r:>5}/{n}"
                )
            engine.close()
            recent.close()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"max_decay": args.max_decay, "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
