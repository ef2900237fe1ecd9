"""The product's whole search on a shared PostgreSQL index that ``bench/pg_scale.py`` already
published (issue 39): p50/p95 per mode from an engine without the files, nothing else, so two
versions of the search can be run against one index in turns (A B A B) on a quiet machine.

The same 20 queries, the same warm-up and the same modes as ``bench/search_latency.py``. Each run
is a new process: the counts a long-lived process keeps per index revision start empty.

Usage: python bench/pg_search_latency.py [--schema scale_100000] [--passes 1] [--label A]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench/search_latency.py, before numpy loads

from bench import pg_scale  # noqa: E402
from bench import search_latency as sl  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", default="scale_100000")
    parser.add_argument("--passes", type=int, default=1)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    url, server = pg_scale.server_url()
    try:
        measured = sl.measure(
            pg_scale.CACHE / f"laptop-latency-{args.schema}",
            sl.queries(20),
            args.passes,
            False,
            workspace=pg_scale.CACHE / "no-files",
            overrides={"store": {"url": url, "schema": args.schema}},
        )
    finally:
        if server is not None:
            server.cleanup()
    wanted = {m: measured[m] for m in ("hybrid calibrated", "keyword-only")}
    print(json.dumps({"label": args.label, "schema": args.schema, "chunks": measured["chunks"], **wanted}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
