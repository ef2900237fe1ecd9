"""The index at scale on both backends: SQLite (the product's search) beside PostgreSQL with
pgvector (its two legs), on the same chunks, with write throughput and memory (issue 39).

Corpus: ``bench/search_latency.py``'s — N chunks grown from a few thousand real embeddings
(texts varied, vectors = real vector + noise) — built into a real clawmem SQLite index, then read
published into PostgreSQL as the product publishes it (engine/store/postgres/mirror.py: one
transaction, full text, vectors by COPY and one HNSW build, line vectors). So both stores hold the
very same texts and vectors.

Measured per size:
- SQLite: the product's ``engine.search`` p50/p95 (hybrid calibrated, keyword-only) with its
  own split (keyword leg, vector leg), from ``search_latency.measure``;
- PostgreSQL: the keyword leg (``ts_rank_cd`` over the ``simple`` tsvector, any of the query's
  keywords, top 50) and the vector leg (HNSW cosine, top 50, the store's ``ef_search``) p50/p95 with the
  same query vectors; HNSW recall@10 against the exact top 10 (numpy over every vector);
- the product's whole search on PostgreSQL (``store.url``, from an engine without the files),
  p50/p95 per mode, as for SQLite;
- the publish: seconds and chunks/s; the database's size on disk, and the server's RSS.

The server is pgserver's PostgreSQL 16 + pgvector
0.6.2 in bench/.cache (or ``CLAWMEM_BENCH_PG_URL``), with its default settings except
``maintenance_work_mem``.

Usage: python bench/pg_scale.py [--sizes 100000] [--passes 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench/search_latency.py, before numpy loads

import numpy as np  # noqa: E402
from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402
from clawmem.engine.search.tokens import extract_keywords  # noqa: E402
from clawmem.engine.store import bench_rows  # noqa: E402
from clawmem.engine.store import index_rows as rows  # noqa: E402
from clawmem.engine.store.postgres import index_rows as pg  # noqa: E402
from clawmem.engine.store.postgres import mirror  # noqa: E402
from clawmem.engine.store.postgres.connect import connect  # noqa: E402
from clawmem.engine.store.postgres.schema import ensure_schema  # noqa: E402

from bench import search_latency as sl  # noqa: E402

CACHE = ROOT / "bench" / ".cache" / "pg_scale"


def server_url() -> tuple[str, object | None]:
    url = os.environ.get("CLAWMEM_BENCH_PG_URL")
    if url:
        return url, None
    os.environ.setdefault("XDG_RUNTIME_DIR", str(CACHE))
    import pgserver

    CACHE.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(CACHE / "pgdata", cleanup_mode="stop")
    return server.get_uri(), server


def server_rss_mb(conn: Any) -> float:
    """Resident memory of every process of the server (this machine's /proc)."""
    (data_dir,) = conn.execute("SHOW data_directory").fetchone()
    conn.rollback()
    total = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if "postgres" not in cmd:
                continue
            if data_dir not in cmd and "postgres:" not in cmd:
                continue
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return round(total / 1024, 1)


def load_into_postgres(conn: Any, home: Path, schema: str) -> dict[str, object]:
    """Publish ``home``'s SQLite index into ``schema`` the way the product does (engine/store/postgres/
    mirror.py: the first publish, one transaction, vectors by COPY and one HNSW build, line vectors)."""
    engine = MemoryEngine(load_settings(home=home, workspace=home.parent / "workspace"))
    lite = engine.store.conn()
    ident = engine.embedder_identity()
    assert ident is not None
    ids: list[str] = []
    blobs: list[np.ndarray] = []
    for cid, *_rest, blob in bench_rows.chunk_rows(lite):
        if blob is not None:
            ids.append(cid)
            blobs.append(rows.blob_to_vec(blob))
    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    conn.commit()
    ensure_schema(conn, schema)
    # The HNSW build keeps its graph in maintenance memory and slows down badly once it outgrows
    # it: 1 GB held 100k chunks of 384 dims with room to spare; 4 GB for 1M.
    memory_gb = max(1, min(8, -(-len(ids) // 250_000)))
    conn.execute(f"SET maintenance_work_mem = '{memory_gb}GB'")
    conn.commit()
    t0 = time.perf_counter()
    stats = mirror.publish_changes(
        lite, conn, provider_key=ident.provider_key, dims=ident.dims, identity=rows.get_meta(lite, "identity")
    )
    seconds = time.perf_counter() - t0
    engine.close()
    conn.execute("ANALYZE")
    conn.commit()
    (size,) = conn.execute(
        "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relkind = 'r'",
        (schema,),
    ).fetchone()
    (chunks,) = conn.execute("SELECT count(*) FROM memory_index_chunks").fetchone()
    conn.rollback()
    return {
        "publish_s": round(seconds, 1),
        "chunks_per_s": round(int(chunks) / seconds),
        "line_vector_texts": stats.lines,
        "db_mb": round(int(size) / 2**20, 1),
        "ids": ids,
        "matrix": np.stack(blobs).astype(np.float32),
    }


def pct(values: list[float], p: float) -> float:
    return round(sl.pct(values, p), 2)


def postgres_legs(
    conn: Any, qs: list[str], qvecs: list[np.ndarray], loaded: dict[str, object], passes: int
) -> dict[str, object]:
    ids: list[str] = loaded["ids"]  # type: ignore[assignment]
    matrix: np.ndarray = loaded["matrix"]  # type: ignore[assignment]
    kw_ms: list[float] = []
    vec_ms: list[float] = []
    recall: list[float] = []
    for q, v in zip(qs[:3], qvecs[:3], strict=True):  # warm the buffers
        pg.keyword_hits(conn, extract_keywords(q), 50, match_all=False)
        pg.vector_hits(conn, v, 50)
    for _ in range(passes):
        for q, v in zip(qs, qvecs, strict=True):
            t0 = time.perf_counter()
            pg.keyword_hits(conn, extract_keywords(q), 50, match_all=False)
            kw_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            hits = pg.vector_hits(conn, v, 50)
            vec_ms.append((time.perf_counter() - t0) * 1000)
            exact = {ids[i] for i in np.argsort(-(matrix @ v))[:10]}
            recall.append(len(exact & {c for c, _ in hits[:10]}) / 10)
    return {
        "keyword_leg_p50_ms": pct(kw_ms, 50),
        "keyword_leg_p95_ms": pct(kw_ms, 95),
        "vector_leg_p50_ms": pct(vec_ms, 50),
        "vector_leg_p95_ms": pct(vec_ms, 95),
        "hnsw_recall_at_10": round(statistics.mean(recall), 3),
        "server_rss_mb": server_rss_mb(conn),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--passes", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "pg_scale.json")
    args = parser.parse_args()
    texts, vectors, model, base = sl.base_embeddings()
    provider = base.provider_choice().provider
    assert provider is not None
    qs = sl.queries(20)
    qvecs = [provider.embed_query(q) for q in qs]
    url, server = server_url()
    conn = connect(url)
    results: dict[str, object] = {"queries": len(qs), "cpus": os.cpu_count()}
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            home = sl.build_corpus(size, texts, vectors, model, base, seed=size)
            sqlite_db = next(home.rglob("clawmem-agent.sqlite"))
            lite = sl.measure(home, qs, args.passes, False)
            schema = f"scale_{size}"
            loaded = load_into_postgres(conn, home, schema)
            legs = postgres_legs(conn, qs, qvecs, loaded, args.passes)
            # The product's search on the shared index, from an engine without the files.
            on_pg = sl.measure(
                CACHE / f"laptop-{size}",
                qs,
                args.passes,
                False,
                workspace=CACHE / "no-files",
                overrides={"store": {"url": url, "schema": schema}},
            )
            results[str(size)] = {
                "sqlite": {
                    "db_mb": round(sqlite_db.stat().st_size / 2**20, 1),
                    **{m: lite[m] for m in ("hybrid calibrated", "keyword-only")},
                },
                "postgres": {
                    "publish_s": loaded["publish_s"],
                    "chunks_per_s": loaded["chunks_per_s"],
                    "db_mb": loaded["db_mb"],
                    "line_vector_texts": loaded["line_vector_texts"],
                    **legs,
                    **{m: on_pg[m] for m in ("hybrid calibrated", "keyword-only")},
                },
            }
            print(json.dumps({str(size): results[str(size)]}, indent=2), flush=True)
    finally:
        conn.close()
        base.close()
        if server is not None:
            server.cleanup()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
