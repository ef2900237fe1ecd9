"""Spawn → first ``memory_search`` answer of a freshly started ``clawmem mcp`` (stdio, real model).

What an MCP host does at the start of a session: start the server and call it at once. The SDK's
stdio client (already imported: its own start-up is the host's, not the server's) spawns
``clawmem mcp --read-only`` on the bilingual fixture workspace, initializes, and calls
``memory_search``; the clock runs from just before the spawn to the answer. Two states of the
home, ``--runs`` times each (median and all runs reported):

- **indexed**: the home bench/mcp_result_size.py built (every chunk embedded), as on a
  machine where the server ran before;
- **fresh**: an empty home (no index yet) on a copy of the workspace, as on first use.

The answer's ``note`` (keyword-only while the model loads, coverage) is kept with each run, and the
client then searches again every 50 ms until the answer is no longer keyword-only: ``first_hybrid_s``.

Usage: python bench/mcp_first_answer.py [--runs 7] [--label after]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.mcp_result_size import CLAWMEM, ENV_KEYS, indexed_home  # noqa: E402, I001  (first: sets CLAWMEM_NOW …)

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

QUERY = "为什么没订湖景房"


async def first_answer(home: Path, ws: Path) -> dict[str, Any]:
    env = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    params = StdioServerParameters(
        command=CLAWMEM, args=["--home", str(home), "--workspace", str(ws), "mcp", "--read-only"], env=env
    )
    t0 = time.perf_counter()
    async with Client(params, read_timeout_seconds=120) as client:
        connected = time.perf_counter() - t0
        r = await client.call_tool("memory_search", {"query": QUERY})
        answered = time.perf_counter() - t0
        data = r.structured_content or {}
        hybrid = None  # then search again until the answer is no longer keyword-only
        while hybrid is None and time.perf_counter() - t0 < 60:
            again = await client.call_tool("memory_search", {"query": QUERY})
            if "still loading" not in str((again.structured_content or {}).get("note")):
                hybrid = time.perf_counter() - t0
            else:
                await anyio.sleep(0.05)
    return {
        "connect_s": round(connected, 3),
        "first_answer_s": round(answered, 3),
        "first_hybrid_s": None if hybrid is None else round(hybrid, 3),
        "hits": len(data.get("results", [])),
        "top": (data.get("results") or [{}])[0].get("citation"),
        "note": data.get("note"),
        "error": r.is_error,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--label", default="current")
    args = parser.parse_args()
    home, ws = indexed_home()
    out: dict[str, Any] = {"label": args.label, "runs": args.runs, "cpus": os.cpu_count()}
    for state in ("indexed", "fresh"):
        runs = []
        for _ in range(args.runs):
            if state == "indexed":
                runs.append(anyio.run(first_answer, home, ws))
                continue
            with tempfile.TemporaryDirectory() as tmp:
                fresh_ws = Path(tmp) / "workspace"
                shutil.copytree(ws, fresh_ws)
                (Path(tmp) / "home").mkdir()
                runs.append(anyio.run(first_answer, Path(tmp) / "home", fresh_ws))
        out[state] = {
            "median_first_answer_s": round(statistics.median(r["first_answer_s"] for r in runs), 3),
            "median_connect_s": round(statistics.median(r["connect_s"] for r in runs), 3),
            "median_first_hybrid_s": round(statistics.median(r["first_hybrid_s"] or 60 for r in runs), 3),
            "runs": runs,
        }
        print(
            f"{state:<8} first answer median {out[state]['median_first_answer_s']:.2f} s "
            f"(connect {out[state]['median_connect_s']:.2f} s, first hybrid "
            f"{out[state]['median_first_hybrid_s']:.2f} s); all: "
            + ", ".join(f"{r['first_answer_s']:.2f}" for r in runs)
        )
        print(f"         first run: {runs[0]['hits']} hits, top {runs[0]['top']}, note {runs[0]['note']!r}")
    path = ROOT / "bench" / "results" / f"mcp_first_answer_{args.label}.json"
    path.write_text(json.dumps(out, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
