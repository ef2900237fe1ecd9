"""A complete index: clawmem beside OpenClaw 2026.9.6's cold index, same workspace, one run (issue 41).

Both sides index the same workspace (LoCoMo conversations as dated diaries plus the bilingual
fixture, ``bench/index_throughput.py``'s corpus) from nothing, alternating A B A B:

- **OpenClaw**: a fresh HOME (no index, no embedding cache), ``memory.search.provider:
  "openai-compatible"`` served on loopback by ``bench/oc_embed_server.py`` — the same GGUF, the
  same windowing, prefixes and thread count as clawmem (its provider, fixed at ``--threads``).
  Timed: the forced ``sync`` of its memory-core manager (its chunk vectors), and separately the
  spawn of the Node driver before it.
- **clawmem**: a fresh home, ``sync(force=True)``: text, chunk vectors and line vectors — the
  complete index — and, within the same run, the moment every chunk has its vector (fully
  hybrid-searchable: the work OpenClaw's index does; the line pass starts then). The model is loaded before timing on both sides. ``--auto`` lets clawmem size its
  indexing threads by the load (engine/index/thread_budget.py); otherwise both use ``--threads``.

Ratio = clawmem seconds ÷ OpenClaw seconds (target ≤ 1.0). OpenClaw is installed from the npm
registry (``--install``, into ~/oc-anchor); nothing of it is kept here. LoCoMo is CC BY-NC 4.0:
only derived files under bench/.cache are written.

``--workspace DIR`` indexes a workspace of your own instead (both sides only read it): a real
OpenClaw workspace is the case the issue measured (244 files, 1,476 chunks). Keep it outside
the repository, or under bench/.cache (ignored), unless its licence lets it be committed.

Usage: python bench/index_vs_openclaw.py [--conversations 1 | --workspace DIR] [--repeats 2] [--threads 1] [--auto]
[--install]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.index_throughput import CACHE, clawmem_run, workspace_to_index  # noqa: E402  (sets the thread env)
from bench.oc_embed_server import EmbedServer  # noqa: E402
from bench.openclaw_parity import ANCHOR, OC_VERSION, OpenClaw, install, installed_version  # noqa: E402


def openclaw_run(ws: Path, server: EmbedServer, model: str, rep: int) -> dict[str, object]:
    base = CACHE / f"openclaw-{rep}"
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    texts_before = sum(server.counts.values())
    t0 = time.perf_counter()
    oc = OpenClaw(base, "hybrid", server.port, model, source=ws)
    ready = time.perf_counter()
    oc.call(op="sync", force=True)
    done = time.perf_counter()
    status = oc.call(op="status")["status"]
    oc.close()
    return {
        "spawn_s": round(ready - t0, 2),
        "sync_s": round(done - ready, 2),
        "texts_embedded": sum(server.counts.values()) - texts_before,
        "files": status.get("files"),
        "chunks": status.get("chunks"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1)
    parser.add_argument("--workspace", type=Path, help="index this workspace instead of LoCoMo + the fixture")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--auto", action="store_true", help="clawmem's index threads by the load")
    parser.add_argument("--install", action="store_true", help="install node 24 + openclaw if missing")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "index_vs_openclaw.json")
    args = parser.parse_args()
    if installed_version() != OC_VERSION:
        if not args.install:
            print(f"OpenClaw {OC_VERSION} is not installed under {ANCHOR}; run with --install", file=sys.stderr)
            return 2
        install()

    from clawmem.engine.config import load_settings
    from clawmem.engine.embed.default_model import ensure_default_model
    from clawmem.engine.embed.llama_provider import LlamaEmbeddingProvider

    ws = workspace_to_index(args.workspace, args.conversations)
    if ws is None:
        return 2
    model_path = ensure_default_model(Path(os.environ["CLAWMEM_MODELS_DIR"]))
    provider = LlamaEmbeddingProvider(model_path, n_threads=args.threads)
    provider.embed_query("warm up")
    server = EmbedServer(provider).start()
    settings = load_settings(home=CACHE / "probe", workspace=ws)
    print(
        f"{args.repeats} repeats, OpenClaw {OC_VERSION} on {args.threads} thread(s), clawmem index threads "
        f"{os.environ['CLAWMEM_INDEX_THREADS']}, search threads {settings.embedding.threads}",
        flush=True,
    )
    oc_runs: list[dict[str, object]] = []
    claw: list[float] = []
    hybrid: list[float] = []
    claw_chunks = claw_texts = 0
    try:
        for rep in range(args.repeats):
            for side in ("openclaw", "clawmem") if rep % 2 == 0 else ("clawmem", "openclaw"):
                if side == "openclaw":
                    run = openclaw_run(ws, server, provider.model, rep)
                    oc_runs.append(run)
                    print(f"  OpenClaw run {rep + 1}: {json.dumps(run)}", flush=True)
                else:
                    marks: dict[str, float] = {}
                    seconds, engine, claw_chunks, claw_texts = clawmem_run(ws, rep, marks)
                    engine.close()
                    claw.append(seconds)
                    hybrid.append(marks.get("hybrid_s", seconds))
                    print(
                        f"  clawmem run {rep + 1}: {seconds:.1f} s complete, {hybrid[-1]:.1f} s to every chunk "
                        f"vector ({claw_chunks} chunks, {claw_texts} texts)",
                        flush=True,
                    )
    finally:
        server.stop()
    oc_sync = statistics.median(float(str(r["sync_s"])) for r in oc_runs)
    oc_total = statistics.median(float(str(r["spawn_s"])) + float(str(r["sync_s"])) for r in oc_runs)
    med = statistics.median(claw)
    result = {
        "workspace": (
            str(args.workspace)
            if args.workspace is not None
            else f"LoCoMo conversations 1-{args.conversations} + the bilingual fixture"
        ),
        "threads": args.threads,
        "clawmem_index_threads": os.environ["CLAWMEM_INDEX_THREADS"],
        "cpus": os.cpu_count(),
        "openclaw_runs": oc_runs,
        "clawmem_seconds": [round(x, 2) for x in claw],
        "clawmem_chunks": claw_chunks,
        "clawmem_model_texts": claw_texts,
        "openclaw_sync_median_s": round(oc_sync, 2),
        "openclaw_spawn_and_sync_median_s": round(oc_total, 2),
        "clawmem_median_s": round(med, 2),
        "clawmem_hybrid_s": [round(x, 2) for x in hybrid],
        "clawmem_hybrid_median_s": round(statistics.median(hybrid), 2),
        "ratio_clawmem_over_openclaw_sync": round(med / oc_sync, 3),
        "ratio_clawmem_hybrid_over_openclaw_sync": round(statistics.median(hybrid) / oc_sync, 3),
    }
    print(json.dumps(result, indent=2), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
