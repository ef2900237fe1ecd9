"""The app while it builds a complete index: how long its event loop ever stalls (issue 41).

The real app, headless (Textual's ``run_test``, 160×45), opens a workspace with no index (LoCoMo
conversations as dated diaries plus the bilingual fixture, ``bench/index_throughput.py``'s corpus)
and indexes it in the background as a person would see it: text, chunk vectors, line vectors.
Meanwhile a 10 ms timer on the app's thread records the gaps between its ticks (the time the app
could not have answered a key), and every 2 s the bench types into the Search pane and waits for
the results (a search waits for the model's lock for at most one decode of the pass).

Reported per run, for each indexing thread setting given (``--index-threads 1,2,auto``): the pass's
wall time, the longest stall, the 99th percentile of the gaps, the longest pause of Python's cyclic
garbage collector on the app's thread, and the median and slowest type-to-results time.
``--gc-freeze on,off`` runs each setting also with the app's start-up freeze of its long-lived
objects turned off (``gc.freeze`` made a no-op for that run), alternating, to show what it buys.
Written to bench/results/app_while_indexing.json.

Each stall over 80 ms is also explained: how much of it was cyclic collection, and where the app's
thread and every other thread were when a watchdog thread saw it late (their innermost frames of
clawmem or Textual), so a stall that is not the collector says what it is. And how the app's
thread spent the stall, from Linux's per-thread scheduler counters (``/proc/self/task/TID/schedstat``:
time on a core, time runnable but waiting for one): ``on_core_ms`` is the app's own work,
``waiting_for_core_ms`` is the machine having no free core for it, and the rest
(``off_core_ms``) is the thread asleep: waiting for Python's GIL, or idle. From the moment the
watchdog saw the stall to its end, every thread's time on a core is listed too
(``cores_ms_by_thread``), so the thread that held the app up is named.

``--idle-collection on,walk,off`` runs each setting with the app's full collections at idle
moments that freeze what they leave and sweep now and then (tui/collector.py, the product), with
the rule before it (``walk``: idle-time collections that walk every object not frozen at the
first fill, due on CPython's quarter's growth; commit d296d96) and with CPython's own, in turns.
A stall with one of the app's idle-time collections in it is told apart (``idle_collection``):
nobody was using the app then. ``longest_stall_in_use_ms`` and ``stalls_over_100ms_in_use`` are
the others. At the end of a run the garbage is counted: outside the freeze (``garbage_at_end``)
and, after an unfreeze, inside it (``frozen_garbage_at_end``: dead cycles that only a sweep, or
the app's exit, frees).

``--model-calls normal,background,before`` runs each setting with a search's query decoded in a
context of its own (engine/embed/llama_provider.py: the product), with that and the pass's decodes
on a thread of the lowest priority (``NicedLane``: measured, not kept), and with the query in the
pass's context, behind its lock (the code before), in turns.
``app_waited_for_a_core_s`` is the app's thread runnable with no free core, over the whole run.

``--blas-threads 1,all`` runs each setting with numpy's BLAS on one thread (engine/blas_threads.py,
the product) and on every core (as before), in turns.

``--sweep-quiet 5,0.5`` runs each setting with the app's sweeps waiting for that many seconds
without use (tui/collector.py ``SWEEP_QUIET_S``: the product's 5; 0.5 is the rule before it, a
sweep at any idle moment), in turns.

``--after M`` goes on searching M minutes after the pass has ended, to see the app in the
steady state that follows (``pass_s`` is still the pass's own time).

``--workspace DIR`` opens a workspace of your own instead (read only; the searches are the same
four phrases, whatever they find there). ``--minutes M`` ends each run M minutes in, the pass
unfinished: a sample of a long pass.

Usage: python bench/app_while_indexing.py [--conversations 1 | --workspace DIR] [--index-threads 1,auto]
[--gc-freeze on,off] [--idle-collection on,walk,off] [--model-calls normal,background,before] [--blas-threads 1,all]
[--sweep-quiet 5,0.5] [--minutes M] [--after M] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import statistics
import sys
import threading
import time
import traceback
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402
from clawmem.tui import collector as collector_module  # noqa: E402
from clawmem.tui.app import ClawmemApp  # noqa: E402
from clawmem.tui.collector import FULL_AFTER, GROWTH, IdleCollector  # noqa: E402
from clawmem.tui.panes.search import SearchPane  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from bench.index_throughput import CACHE, workspace_to_index  # noqa: E402  (fixed clock, models dir)

# index_throughput fixes the pass's threads through the environment; here each run's config.toml does
os.environ.pop("CLAWMEM_INDEX_THREADS", None)


class NicedLane:
    """One thread at nice 19 that runs the calls handed to it (``--model-calls background``).

    Linux keeps a nice value per thread, and the threads a thread starts inherit it: llama.cpp's
    OpenMP workers are started by the thread that first decodes with them, so the pass's decodes
    here run at the lowest priority on every core they use. An unprivileged thread cannot lower
    its nice value again, hence a thread of its own. Only the decode (the C call, without the
    GIL) runs here. Measured on a real workspace (bench/RESULTS.md §3): the app waited for a core
    less, but stalled past 100 ms no less often, and the pass took 6 % longer; not kept.
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="clawmem-low-priority", initializer=self._lower
        )

    @staticmethod
    def _lower() -> None:
        if sys.platform.startswith("linux"):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # this thread only

    def run(self, call: Any) -> Any:
        return self._pool.submit(call).result()


NICED = NicedLane()

STALL_S = 0.08  # a gap this long is explained in the results (the target is 100 ms)
WATCH_S = 0.005  # how often the watchdog thread looks at the app's thread


def where(frame: object) -> list[str]:
    """The innermost frames of clawmem or Textual in ``frame``'s stack, as "file:line function"."""
    frames = traceback.extract_stack(frame)  # type: ignore[arg-type]
    ours = [
        f for f in frames if f.filename.startswith(str(ROOT)) or "/textual/" in f.filename or "/rich/" in f.filename
    ]
    return [f"{'/'.join(Path(f.filename).parts[-2:])}:{f.lineno} {f.name}" for f in ours[-6:]]


def schedstat(tid: int) -> tuple[float, float]:
    """(seconds on a core, seconds runnable but waiting for one) of thread ``tid``, or zeros where
    the kernel does not keep them."""
    try:
        on, waiting, _ = Path(f"/proc/self/task/{tid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return 0.0, 0.0
    return int(on) / 1e9, int(waiting) / 1e9


def thread_times() -> dict[str, float]:
    """Seconds on a core so far of every thread of this process, by name (the kernel's name for a
    thread Python did not start, e.g. one of llama.cpp's)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    times: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        tid = int(task.name)
        try:
            name = names.get(tid) or (task / "comm").read_text().strip()
        except OSError:
            continue
        key = name if name not in times else f"{name} ({tid})"
        times[key] = schedstat(tid)[0]
    return times


class WalkEverything(IdleCollector):
    """The idle-time rule before survivors were frozen (tui/collector.py at d296d96), for the side
    by side: a full collection walks every object not frozen at the first fill, and is due once
    generation 2 grew by a quarter over what the last one left (CPython's rule)."""

    def __init__(self, quiet: Any) -> None:
        super().__init__(quiet)
        self._left = 0
        self._checked = (-1, False)

    def due(self) -> bool:
        young = gc.get_count()[2]
        if young < FULL_AFTER:
            return False
        if young != self._checked[0]:  # counting generation 2 costs ~1 ms: once per young collection
            grown = len(gc.get_objects(generation=2)) - self._left >= max(self._left, 1) * GROWTH
            self._checked = (young, grown)
        return self._checked[1]

    def sweep_due(self) -> bool:
        return False

    def _collect(self, sweep: bool) -> None:
        gc.collect()
        self._left = len(gc.get_objects(generation=2))
        self._checked = (-1, False)
        self._due_since = None
        self.collections += 1


QUERIES = ["sourdough bread", "the printer is broken", "team lunch on Friday", "sailing boat"]


async def one_run(
    ws: Path,
    threads: str,
    freeze: bool = True,
    until: float | None = None,
    idle_collection: str = "on",
    after: float = 0.0,
    model_calls: str = "normal",
    blas: str = "1",
    sweep_quiet: float = collector_module.SWEEP_QUIET_S,
) -> dict[str, object]:
    home = CACHE / f"app-home-{threads}"
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        "[embedding]\nindex_threads = "
        + (f'"{threads}"' if threads == "auto" else threads)
        + "\n[tui]\nwatch = false\n",
        encoding="utf-8",
    )
    engine = MemoryEngine(load_settings(home=home, workspace=ws))
    engine.load_model()  # as the app's worker does first; not part of the pass
    app = ClawmemApp(engine, watch=False)
    product_sweep_quiet = collector_module.SWEEP_QUIET_S
    collector_module.SWEEP_QUIET_S = sweep_quiet  # this run's wait before a sweep (put back at its end)
    if blas != "1":  # numpy's BLAS on every core for this run, as before engine/blas_threads.py
        threadpool_limits(limits=os.cpu_count(), user_api="blas")
    loaded = engine.provider_choice().provider._model()  # type: ignore[union-attr]
    own_queries = loaded.queries
    if model_calls == "background":  # the pass's decodes on a thread of the lowest priority
        product_decode = loaded.passages.decode
        loaded.passages.decode = lambda: NICED.run(product_decode)
    if model_calls == "before":  # a search's query decoded in the pass's context, behind its lock
        loaded.queries = loaded.passages
    if idle_collection == "walk":
        app.collector = WalkEverything(app.quiet_for)
    gaps: list[float] = []
    starts: list[float] = []
    last = [time.perf_counter()]
    app_tid = threading.main_thread().native_id or 0
    cores: list[tuple[float, float]] = []  # the app thread's schedstat at each gap's end
    last_core = [schedstat(app_tid)]

    def tick() -> None:
        now = time.perf_counter()
        if not timing[0]:  # the bench's own census at the end: not the app's stall
            last[0] = now
            return
        gaps.append(now - last[0])
        starts.append(last[0])
        cores.append(last_core[0])
        last_core[0] = schedstat(app_tid)
        cores[-1] = (last_core[0][0] - cores[-1][0], last_core[0][1] - cores[-1][1])
        last[0] = now

    collections: list[float] = []  # seconds of each cyclic collection on the app's thread, timed
    spans: list[tuple[float, float, int, bool, bool]] = []  # (start, end, generation, at an idle moment, a sweep)
    began = [0.0]
    timing = [False]  # from the timer's start: start-up's collections are not the pass's
    at_idle = [False]  # the collection now running is the app's own, at a moment nobody used it
    sweeping = [False]  # … and a sweep of the frozen objects too

    def collected(phase: str, _info: dict[str, int]) -> None:
        if timing[0] and threading.current_thread() is threading.main_thread():
            if phase == "start":
                began[0] = time.perf_counter()
            else:
                end = time.perf_counter()
                collections.append(end - began[0])
                spans.append((began[0], end, _info.get("generation", -1), at_idle[0], sweeping[0]))

    app_collect = app.collector._collect  # tui/collector.py: tagged, to tell its idle collections apart

    def tagged_collect(sweep: bool) -> None:
        at_idle[0] = app.nobody_using()
        sweeping[0] = sweep
        try:
            app_collect(sweep)
        finally:
            at_idle[0] = sweeping[0] = False

    app.collector._collect = tagged_collect  # type: ignore[method-assign]
    if idle_collection == "off":
        app.collector.start = lambda: None  # type: ignore[method-assign]  # this run: CPython's own full collections

    seen: dict[float, list[str]] = {}  # a late tick's start -> where the app's thread was then
    others: dict[float, list[list[str]]] = {}  # … and every other thread running Python code
    busy: dict[float, dict[str, float]] = {}  # a late tick's start -> each thread's core ms, seen to its end
    main_id = threading.main_thread().ident
    watching = threading.Event()

    def watchdog() -> None:
        stalled: tuple[float, dict[str, float]] | None = None  # the stall being watched, its threads' times
        while not watching.wait(WATCH_S):
            since = last[0]
            if stalled is not None and stalled[0] != since:
                times = thread_times()
                used = {k: round((v - stalled[1].get(k, v)) * 1000, 1) for k, v in times.items()}
                busy[stalled[0]] = dict(sorted(((k, v) for k, v in used.items() if v >= 1), key=lambda kv: -kv[1]))
                stalled = None
            if timing[0] and since not in seen and time.perf_counter() - since > STALL_S:
                stalled = (since, thread_times())
                frames = sys._current_frames()
                frame = frames.get(main_id)  # type: ignore[arg-type]
                if frame is not None:
                    seen[since] = where(frame)
                    mine = threading.get_ident()
                    others[since] = [w for i, f in frames.items() if i not in (main_id, mine) and (w := where(f))]

    searches: list[float] = []
    real_freeze = gc.freeze
    if not freeze:
        gc.freeze = lambda: None  # this run: the app's start-up freeze does nothing
    gc.callbacks.append(collected)
    dog = threading.Thread(target=watchdog, daemon=True)
    dog.start()
    async with app.run_test(size=(160, 45)) as pilot:
        last[0] = time.perf_counter()  # gaps count from the timer's start, not from the app's launch
        timing[0] = True
        app.set_interval(0.01, tick)
        start = began_run = time.perf_counter()
        await pilot.pause(0.5)
        k = 0
        slowest: dict[str, object] = {}  # the slowest search's own timings (engine/search/service.py)
        ended: float | None = None  # when the pass ended
        while until is None or time.perf_counter() - start < until:
            if ended is None and not app.indexing:
                ended = time.perf_counter()
            if ended is not None and time.perf_counter() - ended >= after:
                break
            pane = app.query_one(SearchPane)
            before = pane.response
            asked = time.perf_counter()
            pane.search_for(QUERIES[k % len(QUERIES)])  # the box filled, the search run
            while pane.response is before:
                await pilot.pause(0.005)
            searches.append(time.perf_counter() - asked)
            if pane.response is not None and searches[-1] >= max(searches):
                slowest = {"query": pane.response.query, **pane.response.timings_ms}
            k += 1
            await pilot.pause(2.0)
        wall = (ended or time.perf_counter()) - start
        timing[0] = False  # the census below walks every object on the app's thread: not the app's stall
        kinds = Counter(type(o).__qualname__ for o in gc.get_objects(generation=2))
        tracked = {
            "frozen": gc.get_freeze_count(),
            "by_generation": [len(gc.get_objects(generation=g)) for g in range(3)],
            "generation_2_by_type": dict(kinds.most_common(15)),
        }
        garbage = gc.collect()  # dead cycles outside the freeze
        gc.unfreeze()  # (the app does so at unmount anyway)
        frozen_garbage = gc.collect()  # … and inside it: what only a sweep frees
    watching.set()
    dog.join()
    gc.callbacks.remove(collected)
    gc.freeze = real_freeze
    collector_module.SWEEP_QUIET_S = product_sweep_quiet
    stalls: list[dict[str, Any]] = []
    for gap, t0, (on_core, waiting) in sorted(zip(gaps, starts, cores), reverse=True):
        if gap - 0.01 < STALL_S:
            break
        t1 = t0 + gap
        inside = [(a, b, g, idle, sweep) for a, b, g, idle, sweep in spans if b > t0 and a < t1]
        in_gc = sum(min(b, t1) - max(a, t0) for a, b, *_ in inside)
        gens = sorted({g for _, _, g, *_ in inside})
        stalls.append(
            {
                "ms": round((gap - 0.01) * 1000, 1),
                "collection_ms": round(in_gc * 1000, 1),
                "generations": gens,
                "idle_collection": any(idle for *_, idle, _ in inside),
                "sweep": any(sweep for *_, sweep in inside),
                "on_core_ms": round(on_core * 1000, 1),
                "waiting_for_core_ms": round(waiting * 1000, 1),
                "off_core_ms": round(max(gap - on_core - waiting, 0.0) * 1000, 1),
                "cores_ms_by_thread": busy.get(t0, {}),
                "at_s": round(t0 - began_run, 1),
                "where": seen.get(t0, []),
                "other_threads": others.get(t0, []),
            }
        )
    embedded, total = engine.index.vector_coverage()
    engine.close()
    loaded.queries = own_queries  # the loaded model is the process's: the next run starts as the product
    loaded.passages.__dict__.pop("decode", None)
    threadpool_limits(limits=1, user_api="blas")  # the product's
    gaps.sort()
    in_use = [s["ms"] for s in stalls if not s["idle_collection"]]
    idle_full = [(b - a) * 1000 for a, b, g, idle, sweep in spans if idle and g == 2 and not sweep]
    sweeps = [(b - a) * 1000 for a, b, g, _, sweep in spans if g == 2 and sweep]
    swept_at = [a - began_run for a, _, g, _, sweep in spans if g == 2 and sweep]
    return {
        "index_threads": threads,
        "gc_freeze": freeze,
        "idle_collection": idle_collection,
        "model_calls": model_calls,
        "blas_threads": blas,
        "sweep_quiet_s": sweep_quiet,
        "pass_s": round(wall, 1),
        "searching_after_the_pass_s": after,
        "chunks_embedded": f"{embedded}/{total}",
        "ticks": len(gaps),
        "longest_stall_ms": round((gaps[-1] - 0.01) * 1000, 1) if gaps else None,
        "p99_gap_ms": round(gaps[int(len(gaps) * 0.99)] * 1000, 1) if gaps else None,
        # the app's thread runnable with no free core, over the whole run (the kernel's count)
        "app_waited_for_a_core_s": round(sum(waiting for _, waiting in cores), 2),
        "longest_gc_ms": round(max(collections) * 1000, 1) if collections else None,
        "longest_stall_in_use_ms": max(in_use, default=None),  # stalls without an idle-time collection in them
        "stalls_over_100ms": sum(s["ms"] > 100 for s in stalls),
        "stalls_over_100ms_in_use": sum(ms > 100 for ms in in_use),
        "idle_collections": len(idle_full),
        "idle_collection_median_ms": round(statistics.median(idle_full), 1) if idle_full else None,
        "idle_collection_longest_ms": round(max(idle_full), 1) if idle_full else None,
        "sweeps_ms": [round(ms, 1) for ms in sweeps],
        "sweeps_at_s": [round(at, 1) for at in swept_at],
        "forced_collections": app.collector.forced,
        "garbage_at_end": garbage,
        "frozen_garbage_at_end": frozen_garbage,
        "tracked_objects_at_end": tracked,
        "stalls_over_80ms": stalls,
        "searches": len(searches),
        "search_median_ms": round(statistics.median(searches) * 1000) if searches else None,
        "search_max_ms": round(max(searches) * 1000) if searches else None,
        "slowest_search_timings_ms": slowest,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1)
    parser.add_argument("--workspace", type=Path, help="open this workspace instead of LoCoMo + the fixture")
    parser.add_argument("--index-threads", default="1,auto")
    parser.add_argument("--gc-freeze", default="on", help="on, off or on,off (alternating)")
    parser.add_argument(
        "--idle-collection", default="on", help="on, off or on,off: the app's full collections at idle moments"
    )
    parser.add_argument(
        "--model-calls",
        default="normal",
        help="normal, background and before, in turns: a search's query in a context of its own (the "
        "product); also the pass's decodes at the lowest priority; the query in the pass's context "
        "(the code before)",
    )
    parser.add_argument(
        "--blas-threads", default="1", help="1, all or 1,all in turns: numpy's BLAS threads (the product: 1)"
    )
    parser.add_argument(
        "--sweep-quiet",
        default=str(collector_module.SWEEP_QUIET_S),
        help="seconds without use before a sweep, in turns (the product: 5; before: 0.5)",
    )
    parser.add_argument("--minutes", type=float, help="stop each run this long after its start (a sample of the pass)")
    parser.add_argument(
        "--after", type=float, default=0.0, help="go on searching this many minutes after the pass ends"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "app_while_indexing.json")
    args = parser.parse_args()
    ws = workspace_to_index(args.workspace, args.conversations)
    if ws is None:
        return 2
    runs = []
    freezes = [part.strip() == "on" for part in args.gc_freeze.split(",")]
    idles = [part.strip() for part in args.idle_collection.split(",")]
    if not set(idles) <= {"on", "walk", "off"}:
        print(f"--idle-collection takes on, walk and off, not {args.idle_collection!r}", file=sys.stderr)
        return 2
    calls = [part.strip() for part in args.model_calls.split(",")]
    if not set(calls) <= {"normal", "background", "before"}:
        print(f"--model-calls takes normal, background and before, not {args.model_calls!r}", file=sys.stderr)
        return 2
    blases = [part.strip() for part in args.blas_threads.split(",")]
    if not set(blases) <= {"1", "all"}:
        print(f"--blas-threads takes 1 and all, not {args.blas_threads!r}", file=sys.stderr)
        return 2
    try:
        quiets = [float(part) for part in args.sweep_quiet.split(",")]
    except ValueError:
        print(f"--sweep-quiet takes seconds, not {args.sweep_quiet!r}", file=sys.stderr)
        return 2
    until = None if args.minutes is None else args.minutes * 60
    for threads in args.index_threads.split(","):
        for freeze in freezes:
            for idle in idles:
                for call in calls:
                    for blas in blases:
                        for quiet in quiets:
                            run = asyncio.run(
                                one_run(ws, threads, freeze, until, idle, args.after * 60, call, blas, quiet)
                            )
                            print(json.dumps({k: v for k, v in run.items() if k != "stalls_over_80ms"}), flush=True)
                            runs.append(run)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    where = {"workspace": str(args.workspace)} if args.workspace is not None else {"conversations": args.conversations}
    args.out.write_text(json.dumps({**where, "runs": runs}, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
