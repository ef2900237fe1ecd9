"""What a person looking at results waits for while the line pass runs: asked-for lines first (issue 41).

The workspace is ``bench/index_throughput.py``'s corpus (LoCoMo conversations as dated diaries plus
the bilingual fixture). Each run indexes it from nothing (``sync(force=True)``); the moment the line
pass starts (every chunk has its vector: hybrid search is ready) a person, on a thread of their
own as the app's search worker is, asks ``--questions`` LoCoMo questions of the first
conversation (spread over its list; 6 results, the defaults), one after the other: a search,
then waiting until its results have their line vectors, then ``--read`` seconds reading, then the
next. A result whose lines have no vectors yet has no best line, and its score will move.
Measured per question: the seconds from its search until every such result of it has its line
vectors (its breakdown is final; 0 when none was missing), and per run the whole index's time.
Questions not reached before the pass ends are not counted.

Three arms, in turns (A B C, C B A, …) in one process: **asked** (the product: a search asks for
its results' lines, engine/index/line_requests.py, and the pass takes them into its next batch),
**pass order** (the asks go nowhere: the results wait until the pass reaches them in its own
order, curated files then diaries newest first), and **pass order, 16-text batches** (also
without the cap of a batch at BATCH_CHARS of lines, as before this change: what the cap costs).

LoCoMo is CC BY-NC 4.0: only derived files under bench/.cache are written.

Usage: python bench/lines_asked.py [--conversations 4] [--questions 10] [--repeats 2] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.index_throughput import CACHE, build_corpus  # noqa: E402  (sets the clock and threads env)
from bench.locomo import DATA  # noqa: E402

PRODUCT_BATCH_CHARS: dict[str, int] = {}  # the product's cap, read before an arm changes it
ARMS = ("asked", "pass order", "pass order, 16-text batches")


def questions(count: int) -> list[str]:
    """``count`` category 1-4 questions of the first conversation, evenly spread over its list."""
    conv = json.loads(DATA.read_text(encoding="utf-8"))[0]
    qs = [str(q["question"]) for q in conv["qa"] if int(q["category"]) in (1, 2, 3, 4)]
    step = max(1, len(qs) // count)
    return qs[::step][:count]


def one_run(ws: Path, arm: str, asked_questions: list[str], run: int, read_s: float) -> dict[str, object]:
    from clawmem.engine.config import load_settings
    from clawmem.engine.facade import MemoryEngine
    from clawmem.engine.index import line_evidence

    home = CACHE / f"lines-asked-home-{run}"
    if home.exists():
        shutil.rmtree(home)
    engine = MemoryEngine(load_settings(home=home, workspace=ws))
    assert engine.provider_choice().provider is not None
    if arm.startswith("pass order"):  # the asks go nowhere: results wait for the pass's own order
        engine.index.line_requests.ask = lambda hashes: None  # type: ignore[method-assign]
    # before this change a line batch was 16 chunk texts however long their lines (~3 s of the
    # model on LoCoMo); the cap makes it about one second: this arm prices the cap
    capped = PRODUCT_BATCH_CHARS.setdefault("chars", line_evidence.BATCH_CHARS)
    line_evidence.BATCH_CHARS = 10**9 if arm.endswith("16-text batches") else capped
    started = threading.Event()
    finished = threading.Event()
    waited: list[float] = []
    marks: dict[str, float] = {}
    t0 = time.perf_counter()

    def line_progress(done: int, _total: int, _left: float | None) -> None:
        if not started.is_set():  # the line pass starts: hybrid search is ready
            marks["hybrid_s"] = time.perf_counter() - t0
            started.set()

    def person() -> None:
        """Asks each question on its own thread (as the app's search worker does), watches its
        results until their lines are in, reads the answer for ``read_s``, asks the next."""
        started.wait()
        conn = engine.store.conn()  # this thread's own connection
        for question in asked_questions:
            response = engine.search(question, record=False, sync=False)
            asked_at = time.perf_counter()
            ids = [h.chunk_id for h in response.results if h.breakdown.line_pending]
            hashes: set[str] = set()
            if ids:
                sql = f"SELECT hash FROM memory_index_chunks WHERE id IN ({','.join('?' * len(ids))})"
                hashes = {h for (h,) in conn.execute(sql, tuple(ids))}
            while hashes and not finished.is_set():
                marks_ = ",".join("?" * len(hashes))
                sql = f"SELECT hash FROM memory_index_line_vectors WHERE hash IN ({marks_})"
                if {h for (h,) in conn.execute(sql, tuple(hashes))} == hashes:
                    break
                time.sleep(0.05)
            waited.append(time.perf_counter() - asked_at if hashes else 0.0)
            if finished.is_set():
                break
            time.sleep(read_s)

    asker = threading.Thread(target=person, name="person")
    asker.start()
    report = engine.sync(force=True, line_progress=line_progress)
    seconds = time.perf_counter() - t0
    finished.set()
    started.set()
    asker.join()
    engine.close()
    assert report.cache_hits == 0, report
    return {
        "arm": arm,
        "complete_s": round(seconds, 2),
        "hybrid_s": round(marks["hybrid_s"], 2),
        "line_pass_s": round(seconds - marks["hybrid_s"], 2),
        "waited_s": [round(w, 2) for w in waited],
        "asked": len(waited),
        "chunks": report.chunks,
        "lines": report.embedded_lines,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)  # read by bench/index_throughput.py
    parser.add_argument("--read", type=float, default=2.0, help="seconds a person reads an answer")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "lines_asked.json")
    args = parser.parse_args()
    ws = build_corpus(args.conversations)
    asked_questions = questions(args.questions)
    runs: list[dict[str, object]] = []
    for rep in range(args.repeats):
        for arm in ARMS if rep % 2 == 0 else tuple(reversed(ARMS)):
            run = one_run(ws, arm, asked_questions, len(runs), args.read)
            runs.append(run)
            print(json.dumps(run), flush=True)
    summary: dict[str, dict[str, float]] = {}
    for arm in ARMS:
        mine = [r for r in runs if r["arm"] == arm]
        waits = [float(w) for r in mine for w in r["waited_s"]]  # type: ignore[attr-defined]
        summary[arm] = {
            "waited_median_s": round(statistics.median(waits), 2),
            "waited_max_s": round(max(waits), 2),
            "complete_median_s": round(statistics.median(float(str(r["complete_s"])) for r in mine), 2),
            "line_pass_median_s": round(statistics.median(float(str(r["line_pass_s"])) for r in mine), 2),
        }
    a, b, c = summary["asked"], summary["pass order"], summary["pass order, 16-text batches"]
    result = {
        "workspace": f"LoCoMo conversations 1-{args.conversations} + the bilingual fixture",
        "questions": asked_questions,
        "threads": args.threads,
        "runs": runs,
        "summary": summary,
        "waited_ratio_asked_over_pass_order": round(a["waited_median_s"] / b["waited_median_s"], 3)
        if b["waited_median_s"]
        else None,
        "complete_ratio_asked_over_pass_order": round(a["complete_median_s"] / b["complete_median_s"], 3),
        "complete_ratio_capped_over_16_text_batches": round(b["complete_median_s"] / c["complete_median_s"], 3),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for arm, s in summary.items():
        print(
            f"{arm:<28} waited median {s['waited_median_s']:.2f} s, max {s['waited_max_s']:.2f} s; "
            f"complete {s['complete_median_s']:.1f} s (line pass {s['line_pass_median_s']:.1f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
