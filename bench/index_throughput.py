"""Indexing speed: full-index chunks/s against the bare model, and a no-change re-sync of 1,000 files.

1. **Full index vs the model.** A workspace is generated from LoCoMo conversations (one dated
   diary per session, see ``bench/locomo.py``) plus the bilingual fixture. Each clawmem run is
   ``engine.sync(force=True)`` on a fresh home (so the embedding cache is EMPTY): discovery,
   chunking, FTS rows, the shadow publish, every model call and every vector write, the line
   vectors included. Each raw run embeds the very texts that clawmem sent to the model (read back
   from the index: the distinct chunk texts, then the content lines of each multi-line one) one by one with ``llama_cpp.Llama.embed``, with the provider's passage prefix, the
   same GGUF, the same context and the same thread count. The two sides alternate (ABBA…) in one
   process, ``--repeats`` times each; medians are reported. Ratio = raw seconds ÷ clawmem seconds
   (1.0 = the pipeline adds nothing over the model; target ≥ 0.9).
2. **No-change re-sync.** 1,000 small diary and note files, indexed once keyword-only; then
   ``engine.sync()`` with nothing changed, ``--resync-runs`` times (target median < 1 s). The same
   is timed on the embedded throughput workspace (so the embedding pass's "anything pending?"
   check is included).

Models load before any timing. llama.cpp runs with ``--threads`` (default 1: on this 2-core
machine another busy process makes 2 threads spin-wait). LoCoMo is CC BY-NC 4.0: it is read from
../shared/bench/locomo and only derived files under bench/.cache are written.

Also, with ``--paired N``: N model calls timed provider vs raw, alternating text by text (load
drift cancels out); with ``--profile``: a cProfile of one full index (what share is the model).

Usage: python bench/index_throughput.py [--conversations 3] [--repeats 3] [--threads 1] [--paired 20] [--profile]
       python bench/index_throughput.py --files 0 --skip-throughput --paired 20 --profile --merge
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CACHE = ROOT / "bench" / ".cache" / "index_throughput"
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))
os.environ["CLAWMEM_NOW"] = "2026-11-05T09:00:00+00:00"
os.environ["CLAWMEM_TZ"] = "UTC"


def _threads_from_argv() -> str:
    for i, arg in enumerate(sys.argv):
        if arg == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "1"


os.environ["CLAWMEM_THREADS"] = _threads_from_argv()
# The index pass runs on the same fixed count, unless --auto lets it size itself by the load.
os.environ["CLAWMEM_INDEX_THREADS"] = "auto" if "--auto" in sys.argv else _threads_from_argv()

from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.embed.llama_provider import N_CTX, PREFIX_SCHEMES  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402
from clawmem.engine.index.line_evidence import evidence_lines  # noqa: E402
from clawmem.engine.store import bench_rows  # noqa: E402

from bench.locomo import DATA, build_workspace  # noqa: E402


def build_corpus(conversations: int) -> Path:
    """LoCoMo diaries of the first N conversations + the fixture, in one workspace."""
    ws = CACHE / "workspace"
    if ws.exists():
        shutil.rmtree(ws)
    shutil.copytree(ROOT / "tests" / "fixtures" / "workspace", ws)
    data = json.loads(DATA.read_text(encoding="utf-8"))[:conversations]
    for conv in data:
        built = build_workspace(conv, CACHE / "locomo")
        dest = ws / "memory" / "locomo" / conv["sample_id"]
        shutil.copytree(built.workspace / "memory", dest)
    return ws


def workspace_to_index(workspace: Path | None, conversations: int) -> Path | None:
    """The ``--workspace`` a bench was given (None, said on stderr, when it is not one: no
    MEMORY.md and no memory/), or else LoCoMo's first ``conversations`` + the fixture."""
    if workspace is None:
        return build_corpus(conversations)
    if not (workspace / "memory").is_dir() and not (workspace / "MEMORY.md").is_file():
        print(f"{workspace} is not a workspace (no MEMORY.md, no memory/)", file=sys.stderr)
        return None
    return workspace.resolve()


def clawmem_run(ws: Path, run: int, marks: dict[str, float] | None = None) -> tuple[float, MemoryEngine, int, int]:
    """(seconds, engine, chunks, model calls) of one full index on a fresh home; ``marks`` gets
    ``hybrid_s``, the seconds until every chunk had its vector (the line pass starts then)."""
    home = CACHE / f"home-{run}"
    if home.exists():
        shutil.rmtree(home)
    engine = MemoryEngine(load_settings(home=home, workspace=ws))
    choice = engine.provider_choice()  # loaded once per process (shared registry): not timed
    assert choice.provider is not None, choice.error
    t0 = time.perf_counter()

    def lines_started(done: int, _total: int, _left: float | None) -> None:
        if marks is not None and done == 0 and "hybrid_s" not in marks:
            marks["hybrid_s"] = time.perf_counter() - t0

    report = engine.sync(force=True, line_progress=lines_started)
    seconds = time.perf_counter() - t0
    assert report.pending_embeddings == 0 and report.cache_hits == 0, report
    return seconds, engine, report.chunks, report.embedded + report.embedded_lines


def model_texts(engine: MemoryEngine) -> list[str]:
    """What an index sends to the model: each distinct chunk text, then each distinct content
    line of them (a line repeated in several chunks is embedded once)."""
    chunks = bench_rows.distinct_chunk_texts(engine.store.conn())
    return chunks + list(dict.fromkeys(line for text in chunks for _, line in evidence_lines(text)))


def raw_run(llm: object, texts: list[str], prefix: str) -> float:
    import numpy as np

    t0 = time.perf_counter()
    for text in texts:
        vec = np.asarray(llm.embed(prefix + text.strip()), dtype=np.float64)  # type: ignore[attr-defined]
        vec /= np.linalg.norm(vec)
    return time.perf_counter() - t0


def raw_batched_run(llm: object, texts: list[str], prefix: str) -> float:
    """The physical limit: the same texts through ``Llama.embed`` in full batches (several
    sequences per decode, up to the context), shortest first; a text over one window is cut."""
    import numpy as np

    ordered = sorted((prefix + t.strip() for t in texts), key=len)
    t0 = time.perf_counter()
    for vec in llm.embed(ordered):  # type: ignore[attr-defined]
        v = np.asarray(vec, dtype=np.float64)
        v /= np.linalg.norm(v)
    return time.perf_counter() - t0


def throughput(conversations: int, repeats: int, threads: int) -> dict[str, object]:
    from clawmem.engine.embed.default_model import ensure_default_model
    from llama_cpp import Llama

    ws = build_corpus(conversations)
    model_path = ensure_default_model(Path(os.environ["CLAWMEM_MODELS_DIR"]))
    llm = Llama(
        model_path=str(model_path),
        embedding=True,
        n_ctx=N_CTX,
        n_batch=N_CTX,
        n_ubatch=N_CTX,
        n_threads=threads,
        n_threads_batch=threads,
        flash_attn=True,  # as the provider loads it (engine/embed/llama_provider.py)
        verbose=False,
    )
    prefix = PREFIX_SCHEMES["e5"][1]
    claw: list[float] = []
    raw: list[float] = []
    batched: list[float] = []
    texts: list[str] = []
    chunks = calls = 0
    last: MemoryEngine | None = None
    for rep in range(repeats):
        order = ("clawmem", "raw", "batched") if rep % 2 == 0 else ("batched", "raw", "clawmem")
        for side in order:
            if side == "clawmem":
                seconds, engine, chunks, calls = clawmem_run(ws, rep)
                if not texts:
                    texts = model_texts(engine)
                    assert len(texts) == calls, (len(texts), calls)
                if last is not None:
                    last.close()
                last = engine
                claw.append(seconds)
                print(f"  clawmem run {rep + 1}: {seconds:7.1f} s ({chunks} chunks, {calls} model calls)", flush=True)
            else:
                if not texts:  # the first raw run needs the texts: index once untimed
                    _, engine, chunks, calls = clawmem_run(ws, 99)
                    texts = model_texts(engine)
                    engine.close()
                if side == "raw":
                    seconds = raw_run(llm, texts, prefix)
                    raw.append(seconds)
                else:
                    seconds = raw_batched_run(llm, texts, prefix)
                    batched.append(seconds)
                print(f"  {side} llama run {rep + 1}: {seconds:7.1f} s ({len(texts)} texts)", flush=True)
    assert last is not None
    long_texts = sum(1 for t in texts if len(llm.tokenize((prefix + t.strip()).encode())) > N_CTX - 2)
    resync = time_resync(last, 7)
    last.close()
    med_c, med_r, med_b = statistics.median(claw), statistics.median(raw), statistics.median(batched)
    tokens = sum(len(llm.tokenize((prefix + t.strip()).encode())) for t in texts)
    return {
        "workspace": f"LoCoMo conversations 1-{conversations} + the bilingual fixture",
        "chunks": chunks,
        "model_texts": len(texts),
        "texts_over_one_window": long_texts,
        "threads": threads,
        "clawmem_seconds": [round(x, 2) for x in claw],
        "raw_seconds": [round(x, 2) for x in raw],
        "clawmem_median_s": round(med_c, 2),
        "raw_median_s": round(med_r, 2),
        "raw_batched_seconds": [round(x, 2) for x in batched],
        "raw_batched_median_s": round(med_b, 2),
        "model_tokens": tokens,
        "raw_batched_tokens_per_s": round(tokens / med_b, 1),
        "clawmem_tokens_per_s": round(tokens / med_c, 1),
        "index_threads": os.environ["CLAWMEM_INDEX_THREADS"],
        "clawmem_chunks_per_s": round(chunks / med_c, 2),
        "clawmem_texts_per_s": round(len(texts) / med_c, 2),
        "raw_texts_per_s": round(len(texts) / med_r, 2),
        "ratio_raw_over_clawmem_time": round(med_r / med_c, 3),
        "no_change_resync_embedded_ms": resync,
    }


def profile_index(conversations: int) -> dict[str, object]:
    """Where one clawmem full index spends its time (cProfile; not a timed run)."""
    import cProfile
    import io
    import pstats

    ws = build_corpus(conversations)
    home = CACHE / "home-profile"
    if home.exists():
        shutil.rmtree(home)
    engine = MemoryEngine(load_settings(home=home, workspace=ws))
    engine.provider_choice()
    profiler = cProfile.Profile()
    t0 = time.perf_counter()
    profiler.enable()
    report = engine.sync(force=True)
    profiler.disable()
    wall = time.perf_counter() - t0
    engine.close()
    stats = pstats.Stats(profiler)
    # Everything the model does for one text (tokenize, llama_decode, pooling) happens inside the
    # provider's _embed; ctypes calls are not profiled separately, so take _embed's cumulative time.
    model = sum(
        ct
        for (file, _line, name), (_cc, _nc, _tt, ct, _callers) in stats.stats.items()  # type: ignore[attr-defined]
        if file.endswith("llama_provider.py") and name == "_embed"
    )
    buf = io.StringIO()
    pstats.Stats(profiler, stream=buf).sort_stats("tottime").print_stats(15)
    return {
        "chunks": report.chunks,
        "wall_s": round(wall, 1),
        "in_llama_cpp_s": round(model, 1),
        "share_outside_model": round(1 - model / wall, 4),
        "top_tottime": buf.getvalue(),
    }


def paired_texts(threads: int, count: int) -> dict[str, object]:
    """The model call alone, provider vs raw ``Llama.embed``, alternating text by text.

    Immune to slow drifts in machine load (each text is embedded by both within a second).
    """
    from clawmem.engine.embed.default_model import ensure_default_model
    from clawmem.engine.embed.llama_provider import LlamaEmbeddingProvider
    from llama_cpp import Llama

    path = ensure_default_model(Path(os.environ["CLAWMEM_MODELS_DIR"]))
    provider = LlamaEmbeddingProvider(path, n_threads=threads)
    llm = Llama(
        model_path=str(path),
        embedding=True,
        n_ctx=N_CTX,
        n_batch=N_CTX,
        n_ubatch=N_CTX,
        n_threads=threads,
        n_threads_batch=threads,
        flash_attn=True,  # as the provider loads it (engine/embed/llama_provider.py)
        verbose=False,
    )
    prefix = PREFIX_SCHEMES["e5"][1]
    ws = CACHE / "workspace"
    texts = [p.read_text(encoding="utf-8") for p in sorted((ws / "memory" / "locomo").rglob("*.md"))]
    texts = [t[:1300] for t in texts if len(t) >= 1300][:count]
    prov = raw = 0.0
    for i, text in enumerate(texts):
        for side in ("provider", "raw") if i % 2 == 0 else ("raw", "provider"):
            t0 = time.perf_counter()
            if side == "provider":
                provider.embed_passages([text])
                prov += time.perf_counter() - t0
            else:
                llm.embed(prefix + text.strip())
                raw += time.perf_counter() - t0
    return {
        "texts": len(texts),
        "provider_s": round(prov, 2),
        "raw_s": round(raw, 2),
        "ratio_raw_over_provider": round(raw / prov, 3),
    }


def time_resync(engine: MemoryEngine, runs: int) -> dict[str, object]:
    engine.sync()  # settle (first call after a rebuild may open connections)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        report = engine.sync()
        times.append((time.perf_counter() - t0) * 1000)
        assert report.changed_files == 0 and not report.rebuilt, report
    return {
        "files": report.files,
        "chunks": report.chunks,
        "runs_ms": [round(t, 1) for t in times],
        "median_ms": round(statistics.median(times), 1),
        "max_ms": round(max(times), 1),
    }


WORDS = (
    "deploy review budget hotel train ticket dinner meeting invoice migration postgres cluster "
    "certificate rotation standup Priya Caroline Melanie painting camping adoption support group "
    "西湖 酒店 预算 高铁 车票 会议 发票 部署 证书 值班"
).split()


def build_thousand(ws: Path, files: int, seed: int = 7) -> None:
    """``files`` small notes: 70 % dated diaries (memory/YYYY-MM-DD.md), the rest topic notes."""
    if ws.exists():
        shutil.rmtree(ws)
    (ws / "memory" / "notes").mkdir(parents=True)
    rng = random.Random(seed)
    (ws / "MEMORY.md").write_text("# Long-Term Memory\n\n- The team deploys on Tuesdays.\n", encoding="utf-8")
    diaries = int(files * 0.7)
    day = date(2026, 11, 4)
    for i in range(files - 1):
        lines = [
            f"- {' '.join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))}." for _ in range(rng.randint(2, 8))
        ]
        if i < diaries:
            rel = f"memory/{(day - timedelta(days=i)).isoformat()}.md"
            head = f"# {(day - timedelta(days=i)).isoformat()}"
        else:
            rel = f"memory/notes/topic-{i:04d}.md"
            head = f"# Topic {i}"
        (ws / rel).write_text("\n".join([head, "", *lines]) + "\n", encoding="utf-8")


def resync_thousand(files: int, runs: int) -> dict[str, object]:
    ws = CACHE / "thousand" / "workspace"
    home = CACHE / "thousand" / "home"
    build_thousand(ws, files)
    if home.exists():
        shutil.rmtree(home)
    engine = MemoryEngine(load_settings(home=home, workspace=ws, overrides={"embedding": {"provider": "none"}}))
    t0 = time.perf_counter()
    first = engine.sync()
    initial = time.perf_counter() - t0
    out = time_resync(engine, runs)
    engine.close()
    out["initial_index_s"] = round(initial, 2)
    out["initial_files"] = first.files
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--auto", action="store_true", help="clawmem's index threads by the load (raw sides: --threads)"
    )
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--resync-runs", type=int, default=7)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--profile", action="store_true", help="also cProfile one clawmem full index")
    parser.add_argument("--paired", type=int, default=0, help="also time N model calls, provider vs raw, text by text")
    parser.add_argument("--merge", action="store_true", help="add the results to an existing --out file")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "index_throughput.json")
    args = parser.parse_args()
    result: dict[str, object] = {"threads": args.threads, "cpus": os.cpu_count()}
    if args.files:
        print(f"no-change re-sync, {args.files} files (keyword-only index)", flush=True)
        result["no_change_resync_keyword_only"] = resync_thousand(args.files, args.resync_runs)
        print(json.dumps(result["no_change_resync_keyword_only"]), flush=True)
    if not args.skip_throughput:
        print(f"full index vs raw llama.cpp, {args.repeats} interleaved repeats, {args.threads} thread(s)", flush=True)
        result["full_index"] = throughput(args.conversations, args.repeats, args.threads)
        print(json.dumps(result["full_index"], indent=2), flush=True)
    if args.paired:
        result["paired_model_calls"] = paired_texts(args.threads, args.paired)
        print(json.dumps(result["paired_model_calls"]), flush=True)
    if args.profile:
        result["profile"] = profile_index(1)  # one conversation + the fixture: enough to see the split
        print(json.dumps({k: v for k, v in result["profile"].items() if k != "top_tottime"}), flush=True)
        print(result["profile"]["top_tottime"], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.merge and args.out.exists():
        result = {**json.loads(args.out.read_text(encoding="utf-8")), **result}
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
