"""Search latency at 1k, 10k and 100k chunks: p50/p95 of ``engine.search`` and where the time goes.

Every search is timed end to end (``engine.search(q, record=False, sync=False)``: index checks,
the query embedding, both legs, merge, MMR, threshold), for three modes: hybrid calibrated (the
default), hybrid openclaw scoring and keyword-only; ``timings_ms`` gives the split (keyword,
embed, vector, total).

Corpora. Embedding 100k real chunks takes hours on 2 cores, so the large indexes are grown from
a few thousand REAL embeddings:

1. A base workspace is indexed once with the bundled model (cached in bench/.cache): LoCoMo
   conversations 1–3 as dated diaries (default chunking, ~1,300-character chunks), the
   bilingual fixture, and the turns of conversations 4–10 as MEMORY.md bullets (one short
   chunk per turn).
2. Chunk i of a corpus of size N copies base chunk j (half of them from the long diary chunks,
   half from the short ones): its vector is the base vector plus Gaussian noise (σ = 0.015 per
   dimension, cosine to the original ≈ 0.95) re-normalised; its text is the base text with its
   lines shuffled, ~15 % of its words replaced by words of another real chunk, every number
   changed, and, one time in five, a Chinese line of the fixture appended. Each content line of
   a multi-line chunk gets a line vector (engine/index/line_evidence.py): the chunk's vector plus
   Gaussian noise (σ = 0.03, cosine ≈ 0.85 to it), so the search reads and compares as many line
   vectors as a real index of that size holds (their values only decide which line is shown).
3. Chunks go 4 to a file (dated diaries, dated notes with a slug, topic notes, MEMORY.md
   entries) and are written straight into the index tables with the product's own store
   functions (``index_rows.insert_chunks``/``upsert_source``), then the sqlite-vec table is
   filled in one statement and the identity written, so the engine sees a normal, complete index.

Queries: the 40 zh/en fixture queries and 20 LoCoMo questions (60), each asked ``--passes`` times
per mode, modes interleaved per query. llama.cpp uses ``--threads`` (default 1: another busy
process on a 2-core machine makes 2 threads spin-wait; OpenBLAS, used by MMR, likewise gets 1
thread unless OPENBLAS_NUM_THREADS is set). LoCoMo is CC BY-NC 4.0: only derived
files under bench/.cache are written.

Usage: python bench/search_latency.py [--sizes 1000,10000,100000] [--passes 2] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import math
import os
import pstats
import random
import re
import shutil
import statistics
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CACHE = ROOT / "bench" / ".cache" / "search_latency"
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))
os.environ["CLAWMEM_NOW"] = "2026-11-05T09:00:00+00:00"
os.environ["CLAWMEM_TZ"] = "UTC"
# The same reason as for llama.cpp: on a busy 2-core machine OpenBLAS's second thread spin-waits
# (MMR's similarity matrix is one small matrix product); numpy must not have been imported yet.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
if "--threads" in sys.argv:
    os.environ["CLAWMEM_THREADS"] = sys.argv[sys.argv.index("--threads") + 1]
else:
    os.environ.setdefault("CLAWMEM_THREADS", "1")

import numpy as np  # noqa: E402
from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402
from clawmem.engine.index.chunking import chunk_id  # noqa: E402
from clawmem.engine.index.line_evidence import evidence_lines  # noqa: E402
from clawmem.engine.store import bench_rows, line_vector_rows  # noqa: E402
from clawmem.engine.store import index_rows as rows  # noqa: E402
from clawmem.engine.store.schema import ensure_vec_table  # noqa: E402

from bench.locomo import DATA, build_workspace  # noqa: E402

MODES = {
    "hybrid calibrated": {"scoring": "calibrated", "legs": "hybrid"},
    "hybrid openclaw": {"scoring": "openclaw", "legs": "hybrid"},
    "keyword-only": {"scoring": "calibrated", "legs": "keyword"},
}
NOISE_SIGMA = 0.015
LINE_NOISE_SIGMA = 0.03
CORPUS_VERSION = 3  # 2: line vectors, 3: keyed by provider key
LONG_CONVERSATIONS = 3
TURN_LIMIT = 3000
CHUNKS_PER_FILE = 4
_NUMBER = re.compile(r"\d")
_WORD = re.compile(r"\S+")


# ----------------------------------------------------------------------------- base embeddings


def base_workspace() -> Path:
    ws = CACHE / "base" / "workspace"
    if ws.exists():
        shutil.rmtree(ws)
    shutil.copytree(ROOT / "tests" / "fixtures" / "workspace", ws)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    for conv in data[:LONG_CONVERSATIONS]:
        built = build_workspace(conv, CACHE / "locomo")
        shutil.copytree(built.workspace / "memory", ws / "memory" / "locomo" / conv["sample_id"])
    bullets = []
    for conv in data[LONG_CONVERSATIONS:]:
        c = conv["conversation"]
        for key in sorted(k for k in c if re.fullmatch(r"session_\d+", k)):
            for turn in c[key]:
                text = " ".join(str(turn.get("text", "")).split())
                if text:
                    bullets.append(f"- [{turn['dia_id']}] {turn['speaker']}: {text}")
    memory = (ws / "MEMORY.md").read_text(encoding="utf-8").rstrip("\n").split("\n")
    memory += ["", "## Conversations", *bullets[:TURN_LIMIT]]
    (ws / "MEMORY.md").write_text("\n".join(memory) + "\n", encoding="utf-8")
    return ws


def base_embeddings() -> tuple[list[str], np.ndarray, str, MemoryEngine]:
    """(texts, unit vectors, model) of the real base chunks; indexed once, then read from cache."""
    home = CACHE / "base" / "home"
    ws = CACHE / "base" / "workspace"
    if not ws.exists() or not (home / "agents").exists():
        ws = base_workspace()
    engine = MemoryEngine(load_settings(home=home, workspace=ws))
    t0 = time.perf_counter()
    report = engine.sync()
    if report.embedded:
        print(f"base: embedded {report.embedded} chunks in {time.perf_counter() - t0:.0f} s", flush=True)
    provider = engine.provider_choice().provider
    assert provider is not None
    texts, blobs = zip(*bench_rows.embedded_chunks(engine.store.conn(), provider.model), strict=True)
    vectors = np.stack([rows.blob_to_vec(b) for b in blobs]).astype(np.float32)
    return list(texts), vectors, provider.model, engine


# ----------------------------------------------------------------------------- synthetic corpora


def vary_text(text: str, donor: str, zh_lines: list[str], rng: random.Random) -> str:
    lines = [ln for ln in text.split("\n") if ln.strip()]
    rng.shuffle(lines)
    donor_words = _WORD.findall(donor) or ["note"]
    out = []
    for line in lines:
        words = line.split(" ")
        for i in range(len(words)):
            if rng.random() < 0.15:
                words[i] = rng.choice(donor_words)
        out.append(_NUMBER.sub(lambda _m: str(rng.randint(0, 9)), " ".join(words)))
    if rng.random() < 0.2:
        out.append(rng.choice(zh_lines))
    return "\n".join(out)


def synthetic_path(file_no: int) -> str:
    day = date(2026, 11, 4) - timedelta(days=file_no % 3650)
    kind = (file_no // 3650) % 4 if file_no >= 3650 else 0
    if kind == 0:
        return f"memory/{day.isoformat()}.md" if file_no < 3650 else f"memory/{day.isoformat()}-{file_no}.md"
    if kind == 1:
        return f"memory/notes/topic-{file_no}.md"
    if kind == 2:
        return f"memory/projects/p{file_no % 97}/note-{file_no}.md"
    return f"memory/{day.isoformat()}-session-{file_no}.md"


def build_corpus(size: int, texts: list[str], vectors: np.ndarray, model: str, engine: MemoryEngine, seed: int) -> Path:
    """An index of ``size`` chunks under bench/.cache (reused when already built)."""
    home = CACHE / f"size-{size}" / "home"
    ws = CACHE / f"size-{size}" / "workspace"
    done = CACHE / f"size-{size}" / "built.json"
    identity = engine.expected_identity()
    if done.exists():
        built = json.loads(done.read_text())
        if built["identity"] == identity.to_json() and built.get("version") == CORPUS_VERSION:
            return home
    if home.exists():
        shutil.rmtree(home)
    ws.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    long_idx = [i for i, t in enumerate(texts) if len(t) > 400]
    short_idx = [i for i, t in enumerate(texts) if len(t) <= 400]
    zh_lines = [ln for t in texts for ln in t.split("\n") if re.search("[\u4e00-\u9fff]", ln) and len(ln) > 8]
    target = MemoryEngine(load_settings(home=home, workspace=ws))
    conn = target.store.conn()
    t0 = time.perf_counter()
    now = target.clock.timestamp()
    batch: list[rows.NewChunk] = []
    blobs: dict[str, bytes] = {}
    line_blobs: dict[str, bytes] = {}
    line = 1
    for i in range(size):
        j = rng.choice(long_idx) if (i % 2 == 0 and long_idx) else rng.choice(short_idx)
        text = vary_text(texts[j], texts[rng.randrange(len(texts))], zh_lines, rng)
        vec = vectors[j] + nrng.normal(0.0, NOISE_SIGMA, vectors.shape[1]).astype(np.float32)
        vec /= np.linalg.norm(vec)
        path = synthetic_path(i // CHUNKS_PER_FILE)
        if i % CHUNKS_PER_FILE == 0:
            line = 1
        n_lines = text.count("\n") + 1
        h = hashlib.sha256(text.encode("utf-8")).hexdigest()
        batch.append(
            rows.NewChunk(
                id=chunk_id("memory", path, line, line + n_lines - 1, h),
                path=path,
                source="memory",
                start_line=line,
                end_line=line + n_lines - 1,
                hash=h,
                text=text,
                origin_class="agent",
                session_kind="unknown",
                observed_at=int(now * 1000),
                supersedes_key=None,
                importance=rng.choice((None, None, None, 5, 7, 9)),
                triggers=None,
                project_key=None,
            )
        )
        blobs[h] = rows.vec_to_blob(vec)
        n_evidence = len(evidence_lines(text))
        if n_evidence:
            lv = vec + nrng.normal(0.0, LINE_NOISE_SIGMA, (n_evidence, vectors.shape[1])).astype(np.float32)
            line_blobs[h] = line_vector_rows.pack(list(lv / np.linalg.norm(lv, axis=1, keepdims=True)))
        else:
            line_blobs[h] = b""
        line += n_lines + 1
        if len(batch) >= 2000 or i == size - 1:
            with conn:
                rows.insert_chunks(conn, batch, now=now, embeddings=blobs, model=model, vec=False)
                for h, blob in line_blobs.items():
                    line_vector_rows.store(conn, h, identity.providerKey, blob)
                for p in sorted({c.path for c in batch}):
                    rows.upsert_source(conn, p, "memory", hashlib.sha256(p.encode()).hexdigest(), now, 1)
            batch, blobs, line_blobs = [], {}, {}
    with conn:
        ensure_vec_table(conn, identity.vectorDims)
        bench_rows.fill_vec_table(conn)
        rows.set_meta(conn, "identity", identity.to_json())
    conn.execute("ANALYZE")
    target.close()
    seconds = time.perf_counter() - t0
    done.write_text(
        json.dumps({"identity": identity.to_json(), "version": CORPUS_VERSION, "seconds": round(seconds, 1)})
    )
    print(f"built {size} chunks in {seconds:.0f} s", flush=True)
    return home


# ----------------------------------------------------------------------------- measuring


def queries(count_locomo: int) -> list[str]:
    fixture = json.loads((ROOT / "tests" / "fixtures" / "queries.json").read_text(encoding="utf-8"))
    out = [q["query"] for q in fixture["queries"]]
    data = json.loads(DATA.read_text(encoding="utf-8"))
    qa = [q["question"] for conv in data[:LONG_CONVERSATIONS] for q in conv["qa"] if q.get("category") in (1, 2, 3, 4)]
    return out + qa[:: max(1, len(qa) // count_locomo)][:count_locomo]


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))]


def measure(
    home: Path,
    qs: list[str],
    passes: int,
    profile: bool,
    *,
    workspace: Path | None = None,
    overrides: dict[str, dict[str, object]] | None = None,
) -> dict[str, object]:
    """The product's search p50/p95 per mode over ``home``'s index (``overrides``, e.g. a
    store.url, and ``workspace``: another engine on another store, bench/pg_scale.py)."""
    ws = workspace or home.parent / "workspace"
    engine = MemoryEngine(load_settings(home=home, workspace=ws, overrides=overrides))
    engine.provider_choice()
    for q in qs[:3]:  # warm caches (background sample, sqlite pages, the model)
        for opts in MODES.values():
            engine.search(q, record=False, sync=False, **opts)
    wall: dict[str, list[float]] = {m: [] for m in MODES}
    split: dict[str, dict[str, list[float]]] = {m: {} for m in MODES}
    profiler = cProfile.Profile() if profile else None
    for _ in range(passes):
        for q in qs:
            for name, opts in MODES.items():
                if profiler:
                    profiler.enable()
                t0 = time.perf_counter()
                resp = engine.search(q, record=False, sync=False, **opts)
                wall[name].append((time.perf_counter() - t0) * 1000)
                if profiler:
                    profiler.disable()
                for k, v in resp.timings_ms.items():
                    if k != "keywordProbes":
                        split[name].setdefault(k, []).append(v)
    chunks = engine.vector_coverage()[1]
    engine.close()
    out: dict[str, object] = {"chunks": chunks, "searches_per_mode": len(qs) * passes}
    for name in MODES:
        out[name] = {
            "p50_ms": round(statistics.median(wall[name]), 1),
            "p95_ms": round(pct(wall[name], 95), 1),
            "max_ms": round(max(wall[name]), 1),
            "split_median_ms": {k: round(statistics.median(v), 1) for k, v in split[name].items()},
            "split_p95_ms": {k: round(pct(v, 95), 1) for k, v in split[name].items()},
        }
    if profiler:
        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).sort_stats("cumulative").print_stats(30)
        out["profile_top"] = buf.getvalue()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--locomo-queries", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile the searches (adds overhead)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "search_latency.json")
    args = parser.parse_args()
    texts, vectors, model, base = base_embeddings()
    print(f"base: {len(texts)} real chunks with vectors ({model})", flush=True)
    qs = queries(args.locomo_queries)
    result: dict[str, object] = {
        "threads": args.threads,
        "base_real_chunks": len(texts),
        "queries": len(qs),
        "noise_sigma": NOISE_SIGMA,
    }
    for size in (int(s) for s in args.sizes.split(",")):
        home = build_corpus(size, texts, vectors, model, base, seed=size)
        r = measure(home, qs, args.passes, args.profile)
        result[str(size)] = r
        print(f"\n{size} chunks:", flush=True)
        for name in MODES:
            m = r[name]
            assert isinstance(m, dict)
            print(f"  {name:<18} p50 {m['p50_ms']:7.1f} ms  p95 {m['p95_ms']:7.1f} ms  split {m['split_median_ms']}")
        if args.profile:
            print(r["profile_top"])
    base.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
