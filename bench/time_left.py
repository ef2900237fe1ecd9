"""How honest the time-left estimate is: what `clawmem index` and the app's status bar said against
what was left, over one complete index from nothing (issue 41's "an honest estimate").

One fresh home, ``sync(force=True)`` with the threads by the load, and every progress callback of
the chunk pass and the line pass recorded as (seconds since start, the estimate of seconds left,
engine/index/time_left.py). When the pass is done, each estimate is set against what was really
left then. Reported: when the first estimate came, and the estimate's error (estimate ÷ actual − 1)
at each tenth of the pass's time and over every estimate: median and worst of its absolute value,
and how many estimates said "less" than was left (the kind that makes a person wait longer than
promised).

Usage: python bench/time_left.py [--conversations 4 | --workspace DIR] [--threads 1] [--auto] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# index_throughput sets the thread count and the clock in the environment before clawmem loads
from bench.index_throughput import CACHE, MemoryEngine, evidence_lines, load_settings, workspace_to_index  # noqa: E402


def record(ws: Path, chars: dict[str, int]) -> tuple[list[tuple[float, str, float | None]], float, int, int]:
    """(seconds since start, phase, estimate) of every progress report; the pass's seconds;
    chunks; lines embedded. ``chars`` gets the characters of each phase."""
    home = CACHE / "time-left-home"
    if home.exists():
        shutil.rmtree(home)
    engine = MemoryEngine(load_settings(home=home, workspace=ws))
    choice = engine.provider_choice()  # the model loads before the clock starts, as on both sides of the other benches
    assert choice.provider is not None, choice.error
    marks: list[tuple[float, str, float | None]] = []
    t0 = time.perf_counter()

    def progress(phase: str) -> Callable[[int, int, float | None], None]:
        def report(_done: int, _total: int, left: float | None) -> None:
            marks.append((time.perf_counter() - t0, phase, left))

        return report

    report = engine.sync(force=True, embed_progress=progress("chunks"), line_progress=progress("lines"))
    seconds = time.perf_counter() - t0
    texts = [str(t) for (t,) in engine.store.conn().execute("SELECT DISTINCT text FROM memory_index_chunks")]
    engine.close()
    chars["chunks"] = sum(map(len, texts))
    chars["lines"] = sum(len(line) for t in texts for _, line in evidence_lines(t))  # what time_left counts
    return marks, seconds, report.chunks, report.embedded_lines


def summarize(marks: list[tuple[float, str, float | None]], seconds: float, chars: dict[str, int]) -> dict[str, object]:
    lines_from = next((t for t, phase, _ in marks if phase == "lines"), seconds)
    chunks_from = next((t for t, phase, _ in marks if phase == "chunks"), 0.0)
    paces = {
        "chunk_phase_s": round(lines_from - chunks_from, 1),
        "line_phase_s": round(seconds - lines_from, 1),
        "chunk_chars_per_s": round(chars["chunks"] / max(lines_from - chunks_from, 1e-9)),
        "line_chars_per_s": round(chars["lines"] / max(seconds - lines_from, 1e-9)),
    }
    estimates = [(t, phase, left, seconds - t) for t, phase, left in marks if left is not None and seconds - t > 1.0]
    errors = [left / actual - 1 for _, _, left, actual in estimates]
    tenths = []
    for k in range(1, 10):
        at = seconds * k / 10
        near = min(estimates, key=lambda e: abs(e[0] - at), default=None)
        if near is not None and abs(near[0] - at) < seconds / 20:
            t, phase, left, actual = near
            tenths.append(
                {
                    "at_s": round(t, 1),
                    "phase": phase,
                    "estimate_s": round(left, 1),
                    "actual_s": round(actual, 1),
                    "error": round(left / actual - 1, 3),
                }
            )
    return {
        "pass_s": round(seconds, 1),
        **paces,
        "first_estimate_at_s": round(estimates[0][0], 1) if estimates else None,
        "estimates": len(estimates),
        "abs_error_median": round(statistics.median(abs(e) for e in errors), 3) if errors else None,
        "abs_error_max": round(max(abs(e) for e in errors), 3) if errors else None,
        "abs_error_max_after_first_tenth": round(
            max((abs(left / actual - 1) for t, _, left, actual in estimates if t > seconds / 10), default=0.0), 3
        ),
        "said_less_than_left": sum(1 for e in errors if e < 0),
        "tenths": tenths,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--workspace", type=Path, help="index this workspace instead of LoCoMo + the fixture")
    parser.add_argument("--threads", default="1", help="the model's threads (read at import by index_throughput)")
    parser.add_argument("--auto", action="store_true", help="the pass's threads by the load (the product's default)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "time_left.json")
    args = parser.parse_args()
    ws = workspace_to_index(args.workspace, args.conversations)
    if ws is None:
        return 2
    chars: dict[str, int] = {}
    marks, seconds, chunks, lines = record(ws, chars)
    result = {
        "workspace": str(args.workspace)
        if args.workspace
        else f"LoCoMo conversations 1-{args.conversations} + the bilingual fixture",
        "index_threads": os.environ["CLAWMEM_INDEX_THREADS"],
        "chunks": chunks,
        "lines_embedded": lines,
        **summarize(marks, seconds, chars),
    }
    print(json.dumps(result, indent=2), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    runs = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else []
    same = ("workspace", "index_threads")
    runs = [r for r in runs if any(r.get(k) != result[k] for k in same)] + [result]
    args.out.write_text(json.dumps(runs, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
