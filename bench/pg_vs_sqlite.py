"""The same questions asked of one index on SQLite and on the shared PostgreSQL (issue 39).

Each data set's workspace is indexed once on this machine (SQLite) and published to PostgreSQL
(``store.url``); then every question goes to the SQLite index and to a second engine that has no
copy of the files and reads PostgreSQL only, with the product's defaults and keyword-only. The
vectors are the same on both sides (published, not re-embedded), so what differs is the keyword
ranking (FTS5 BM25 over trigrams vs ``ts_rank_cd`` over words and CJK bigrams), the path leg, and
the vector leg's HNSW (the first search of each engine; later ones rank the in-memory matrix on
both sides, exactly).

- bilingual fixture (tests/fixtures/queries.json, 40 queries): hit@1, MRR, queries with nothing relevant;
- LoCoMo (categories 1-4, ``--conversations N``): recall@5 and MRR, as bench/locomo.py counts them;
- both: the share of questions whose top result is the same chunk, and whose top 5 are the same list.

PostgreSQL: the server ``--pg-url`` names, or one the ``pgserver`` wheel starts in a temporary folder.
Written to bench/results/pg_vs_sqlite.json.

Usage: python bench/pg_vs_sqlite.py [--conversations 2] [--pg-url postgresql://…]
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))
os.environ.setdefault("CLAWMEM_TZ", "UTC")

from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402

from bench import locomo  # noqa: E402
from bench.fixture_queries import QUERIES, relevant  # noqa: E402

MODES = {
    "defaults (calibrated hybrid)": {"scoring": "calibrated", "legs": "hybrid"},
    "keyword-only": {"legs": "keyword"},
}


@contextmanager
def postgres(url: str | None, tmp: Path) -> Iterator[str]:
    if url:
        yield url
        return
    os.environ.setdefault("XDG_RUNTIME_DIR", str(tmp))
    import pgserver

    server = pgserver.get_server(tmp / "pgdata", cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


def pair(tmp: Path, name: str, workspace: Path, url: str) -> tuple[MemoryEngine, MemoryEngine, dict[str, Any]]:
    """(SQLite engine over ``workspace``, an engine without the files reading PostgreSQL), once published."""
    home = tmp / name / "home"
    local = MemoryEngine(load_settings(home=home, workspace=workspace))
    t0 = time.perf_counter()
    report = local.sync()
    indexed = time.perf_counter() - t0
    local.close()
    store = {"store": {"url": url, "schema": name}}
    publisher = MemoryEngine(load_settings(home=home, workspace=workspace, overrides=store))
    t1 = time.perf_counter()
    published = publisher.sync()
    publish_s = time.perf_counter() - t1
    publisher.close()
    reader = MemoryEngine(load_settings(home=tmp / name / "laptop", workspace=tmp / name / "no-files", overrides=store))
    info = {
        "chunks": report.chunks,
        "index_s": round(indexed, 1),
        "publish_s": round(publish_s, 2),
        "published_vectors": published.shared.vectors if published.shared else 0,
    }
    return MemoryEngine(load_settings(home=home, workspace=workspace)), reader, info


def compare(
    engines: tuple[MemoryEngine, MemoryEngine],
    questions: list[tuple[str, Callable[[list[Any]], dict[str, float]]]],
    max_results: int,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode, opts in MODES.items():
        metrics: dict[str, list[dict[str, float]]] = {"sqlite": [], "postgresql": []}
        same_top, same_list, ms = 0, 0, {"sqlite": [], "postgresql": []}
        for query, score in questions:
            got = {}
            for backend, engine in zip(("sqlite", "postgresql"), engines, strict=True):
                t = time.perf_counter()
                r = engine.search(query, max_results=max_results, record=False, sync=False, **opts)  # type: ignore[arg-type]
                ms[backend].append((time.perf_counter() - t) * 1000)
                got[backend] = list(r.results)
                metrics[backend].append(score(got[backend]))
            ids = {b: [h.chunk_id for h in hits] for b, hits in got.items()}
            same_top += ids["sqlite"][:1] == ids["postgresql"][:1]
            same_list += ids["sqlite"][:5] == ids["postgresql"][:5]
        n = len(questions)
        out[mode] = {
            backend: {
                **{k: round(statistics.fmean(m[k] for m in values), 4) for k in values[0]},
                "search_ms_p50": round(statistics.median(ms[backend]), 1),
            }
            for backend, values in metrics.items()
        }
        out[mode]["same_top_result"] = round(same_top / n, 3)
        out[mode]["same_top5_list"] = round(same_list / n, 3)
        out[mode]["questions"] = n
    return out


def fixture_questions() -> list[tuple[str, Callable[[list[Any]], dict[str, float]]]]:
    def scorer(targets: list[str]) -> Callable[[list[Any]], dict[str, float]]:
        def score(hits: list[Any]) -> dict[str, float]:
            flags = [relevant(h, targets) for h in hits]
            first = next((i for i, f in enumerate(flags) if f), None)
            return {
                "hit@1": float(bool(flags[:1] and flags[0])),
                "mrr": 0.0 if first is None else 1.0 / (first + 1),
                "none_relevant": float(first is None),
            }

        return score

    return [(q["query"], scorer(q["relevant"])) for q in QUERIES["queries"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--pg-url", default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "pg_vs_sqlite.json")
    args = parser.parse_args()
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        with postgres(args.pg_url, tmp) as url:
            os.environ["CLAWMEM_NOW"] = QUERIES["now"]
            ws = tmp / "fixture-ws"
            shutil.copytree(ROOT / QUERIES["workspace"], ws)
            local, reader, info = pair(tmp, "fixture", ws, url)
            result["fixture"] = {"index": info, **compare((local, reader), fixture_questions(), 6)}
            local.close()
            reader.close()
            print(json.dumps({"fixture": result["fixture"]}, indent=2), flush=True)

            data = json.loads(locomo.DATA.read_text(encoding="utf-8"))[: args.conversations]
            per_conv = []
            for conv_raw in data:
                conv = locomo.build_workspace(conv_raw, tmp / "locomo")
                os.environ["CLAWMEM_NOW"] = conv.now
                local, reader, info = pair(tmp, conv.sample_id.replace("-", "_").lower(), conv.workspace, url)

                def scorer(wanted: list[tuple[str, int]]) -> Callable[[list[Any]], dict[str, float]]:
                    def score(hits: list[Any]) -> dict[str, float]:
                        r5, _r10, mrr = locomo.score_question(hits, wanted)
                        return {"recall@5": r5, "mrr": mrr}

                    return score

                questions = [
                    (str(q["question"]), scorer(w))
                    for q in conv.questions
                    if (w := locomo.evidence_lines(conv, q["evidence"]))
                ]
                per_conv.append(
                    {"conversation": conv.sample_id, "index": info, **compare((local, reader), questions, 10)}
                )
                local.close()
                reader.close()
                print(json.dumps(per_conv[-1], indent=2), flush=True)
            result["locomo"] = per_conv
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
