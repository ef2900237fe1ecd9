"""Several short texts per decode: the line pass's texts embedded one per decode and packed up to
a token budget, side by side (issue 41).

The texts are what the line pass embeds for LoCoMo conversation 1 (its turns, one line each, as
the dated diaries hold them). For each budget in ``--budgets`` (0 = one text per decode, the
product's default until this measures otherwise) and each thread count in ``--threads``, the
same texts go through the product's provider (``embed_passages``), budgets alternating within
each repeat (A B C … then … C B A), the model loaded before timing. Also reported: the lowest
cosine between a text's packed and unpacked vector (packing must not change what is found).

LoCoMo is CC BY-NC 4.0: read from ../shared/bench/locomo, only derived files under bench/.cache.

Usage: python bench/pack_decode.py [--threads 1,2] [--budgets 0,64,128,256,512] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))

import numpy as np  # noqa: E402
from clawmem.engine.embed import llama_provider  # noqa: E402
from clawmem.engine.embed.default_model import ensure_default_model  # noqa: E402
from clawmem.engine.index.line_evidence import evidence_lines  # noqa: E402

from bench.locomo import DATA, build_workspace  # noqa: E402

CACHE = ROOT / "bench" / ".cache" / "pack_decode"


def line_texts() -> list[str]:
    """The distinct content lines of conversation 1's diaries (as the line pass picks them)."""
    conv = json.loads(DATA.read_text(encoding="utf-8"))[0]
    built = build_workspace(conv, CACHE)
    out: list[str] = []
    for path in sorted((built.workspace / "memory").glob("*.md")):
        lines = path.read_text(encoding="utf-8").split("\n")
        for start in range(0, len(lines), 60):  # evidence_lines takes at most 64 lines of a text
            out.extend(line for _, line in evidence_lines("\n".join(lines[start : start + 60])))
    return list(dict.fromkeys(out))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--budgets", default="0,64,128,256,512")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "pack_decode.json")
    args = parser.parse_args()
    texts = line_texts()
    budgets = [int(b) for b in args.budgets.split(",")]
    model = ensure_default_model(Path(os.environ["CLAWMEM_MODELS_DIR"]))
    result: dict[str, object] = {"texts": len(texts), "cpus": os.cpu_count(), "by_threads": {}}
    for threads in (int(t) for t in args.threads.split(",")):
        provider = llama_provider.LlamaEmbeddingProvider(model, n_threads=threads)
        provider.embed_passages(["warm up"])
        tokens = sum(provider.count_tokens(t) for t in texts)
        seconds: dict[int, list[float]] = {b: [] for b in budgets}
        vectors: dict[int, np.ndarray] = {}
        for rep in range(args.repeats):
            for budget in budgets if rep % 2 == 0 else list(reversed(budgets)):
                llama_provider.PACK_TOKENS = budget
                t0 = time.perf_counter()
                out = provider.embed_passages(texts, threads=threads)
                seconds[budget].append(time.perf_counter() - t0)
                vectors[budget] = np.stack(out)
                print(f"threads {threads} budget {budget:>3}: {seconds[budget][-1]:.2f} s", flush=True)
        base = vectors[budgets[0]]
        rows = {}
        for b in budgets:
            med = statistics.median(seconds[b])
            rows[str(b)] = {
                "seconds": [round(x, 2) for x in seconds[b]],
                "median_s": round(med, 2),
                "ms_per_text": round(1000 * med / len(texts), 1),
                "tokens_per_s": round(tokens / med),
                "vs_first": round(med / statistics.median(seconds[budgets[0]]), 3),
                "min_cosine_vs_first": round(float(np.min(np.sum(vectors[b] * base, axis=1))), 6),
            }
        result["by_threads"][str(threads)] = {"tokens": tokens, "budgets": rows}  # type: ignore[index]
    llama_provider.PACK_TOKENS = 0
    print(json.dumps(result, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
