"""Retrieval quality on the bilingual fixture's 40 labelled queries, per scoring mode.

Reports, at the product's default settings (6 results, min score 0.35): hit@1, hit@3, MRR
(first relevant result) and how many queries return nothing relevant; plus the same ranking
metrics with the threshold off (min score 0). A result is relevant when its line range
contains one of the query's labelled ``path:line`` targets (tests/fixtures/queries.json).

Usage: python bench/fixture_queries.py [--verbose]
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
os.environ["CLAWMEM_NOW"] = QUERIES["now"]
os.environ["CLAWMEM_TZ"] = "UTC"

from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402

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


def build_engine(tmp: Path) -> MemoryEngine:
    ws = tmp / "workspace"
    shutil.copytree(ROOT / QUERIES["workspace"], ws)
    engine = MemoryEngine(load_settings(home=tmp / "home", workspace=ws))
    engine.sync()
    return engine


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        engine = build_engine(Path(tmp))
        print(f"{'mode':<14} {'threshold':<10} {'hit@1':>6} {'hit@3':>6} {'MRR':>6} {'none':>5}")
        for name, opts in MODES.items():
            for label, min_score in (("default", None), ("off", 0.0)):
                if args.verbose:
                    print(f"[{name}, threshold {label}]")
                m = evaluate(engine, opts, min_score=min_score, verbose=args.verbose)
                print(
                    f"{name:<14} {label:<10} {m['hit@1']:>6.3f} {m['hit@3']:>6.3f} {m['mrr']:>6.3f} {m['no_relevant']:>5}"
                )
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
