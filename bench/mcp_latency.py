"""MCP ``memory_search`` latency through the SDK's stdio client, beside in-process and CLI wall time.

One run, the same index and queries for all three doors:

- **in-process**: ``engine.search(q, record=False, sync=False)`` on one warm engine (what
  bench/search_latency.py measures for its "hybrid calibrated" mode);
- **MCP stdio**: ``client.call_tool("memory_search", {"query": q})`` through ``mcp.Client`` to a
  ``clawmem mcp --read-only`` subprocess (read-only: no recall signal is recorded, like
  ``record=False``; the server searches with ``sync=False`` and keeps the index in sync itself),
  timed at the client: JSON-RPC framing, pydantic validation, the tool, structured content and
  its JSON mirror included;
- **CLI**: ``clawmem search Q --no-record --json`` as a subprocess, wall time per call
  (interpreter start-up, imports, opening the engine, loading the model and the search).

In-process and MCP calls are interleaved per query. The index is bench/search_latency.py's
synthetic one (``--size`` chunks, built there if missing — that needs the base embeddings, long
on 2 cores); llama.cpp gets one thread in every door.

Usage: python bench/mcp_latency.py [--size 10000] [--passes 2] [--cli-runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import search_latency as sl  # noqa: E402, I001  (first: sets CLAWMEM_NOW, threads, OPENBLAS)

import anyio  # noqa: E402
from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

CLAWMEM = str(Path(sys.executable).with_name("clawmem"))
ENV_KEYS = ("CLAWMEM_NOW", "CLAWMEM_TZ", "CLAWMEM_THREADS", "CLAWMEM_MODELS_DIR", "OPENBLAS_NUM_THREADS")


def index_home(size: int) -> Path:
    done = sl.CACHE / f"size-{size}" / "built.json"
    if done.exists():
        return sl.CACHE / f"size-{size}" / "home"
    texts, vectors, model, base = sl.base_embeddings()
    home = sl.build_corpus(size, texts, vectors, model, base, seed=size)
    base.close()
    return home


def stats(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(values), 2),
        "p95_ms": round(sl.pct(values, 95), 2),
        "max_ms": round(max(values), 2),
        "n": len(values),
    }


async def measure(home: Path, qs: list[str], passes: int) -> tuple[list[float], list[float], float]:
    ws = home.parent / "workspace"
    engine = MemoryEngine(load_settings(home=home, workspace=ws))
    engine.load_model()
    env = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    params = StdioServerParameters(
        command=CLAWMEM, args=["--home", str(home), "--workspace", str(ws), "mcp", "--read-only", "--no-sync"], env=env
    )
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=120) as client:
        connected = time.perf_counter() - started
        for _ in range(1200):  # the server answers keyword-only while its model loads: wait for hybrid
            probe = await client.call_tool("memory_search", {"query": qs[0]})
            if "still loading" not in str((probe.structured_content or {}).get("note")):
                break
            await anyio.sleep(0.05)
        for q in qs[:3]:  # warm both: the model, the background sample, the vector matrix, sqlite pages
            for _ in range(2):
                engine.search(q, record=False, sync=False)
                await client.call_tool("memory_search", {"query": q})
        inproc: list[float] = []
        mcp: list[float] = []
        for _ in range(passes):
            for q in qs:
                t0 = time.perf_counter()
                engine.search(q, record=False, sync=False)
                inproc.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                result = await client.call_tool("memory_search", {"query": q})
                mcp.append((time.perf_counter() - t0) * 1000)
                assert not result.is_error, result.content[0].text
    engine.close()
    return inproc, mcp, connected


def cli_wall(home: Path, qs: list[str], runs: int) -> list[float]:
    """On the base index (real files, real vectors): a CLI search syncs first, which on the synthetic
    index (chunks without files) would delete it."""
    home = sl.CACHE / "base" / "home"
    ws = sl.CACHE / "base" / "workspace"
    out = []
    for q in qs[:runs]:
        t0 = time.perf_counter()
        subprocess.run(
            [CLAWMEM, "--home", str(home), "--workspace", str(ws), "search", q, "--no-record", "--json"],
            check=True,
            stdout=subprocess.DEVNULL,
            env=os.environ,
        )
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--locomo-queries", type=int, default=20)
    parser.add_argument("--cli-runs", type=int, default=10)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "mcp_latency.json")
    args = parser.parse_args()
    home = index_home(args.size)
    qs = sl.queries(args.locomo_queries)
    inproc, mcp, connected = anyio.run(measure, home, qs, args.passes)
    chunks = MemoryEngine(load_settings(home=home, workspace=home.parent / "workspace")).vector_coverage()[1]
    cli = cli_wall(home, qs, args.cli_runs)
    base = sl.CACHE / "base"
    cli_chunks = MemoryEngine(load_settings(home=base / "home", workspace=base / "workspace")).vector_coverage()[1]
    overhead = [m - i for m, i in zip(mcp, inproc, strict=True)]
    result = {
        "chunks": chunks,
        "queries": len(qs),
        "passes": args.passes,
        "threads": os.environ.get("CLAWMEM_THREADS"),
        "in_process": stats(inproc),
        "mcp_stdio": stats(mcp),
        "mcp_overhead_per_query": stats(overhead),
        "cli_wall": stats(cli),
        "cli_index_chunks": cli_chunks,
        "mcp_connect_s": round(connected, 2),
        "cli_over_mcp_p50": round(statistics.median(cli) / statistics.median(mcp), 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"{chunks:,} chunks, {len(qs)} queries × {args.passes} passes (CLI: {len(cli)} calls on {cli_chunks:,} chunks)"
    )
    print(f"{'door':<22}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}")
    for name, key in (
        ("in-process", "in_process"),
        ("MCP stdio", "mcp_stdio"),
        ("MCP − in-process", "mcp_overhead_per_query"),
        ("CLI wall", "cli_wall"),
    ):
        s = result[key]
        assert isinstance(s, dict)
        print(f"{name:<22}{s['p50_ms']:>10}{s['p95_ms']:>10}{s['max_ms']:>10}")
    print(f"MCP connect (spawn + initialize): {connected:.2f} s; CLI / MCP at p50: {result['cli_over_mcp_p50']}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
