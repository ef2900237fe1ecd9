"""A lever tried for issue 41 and not kept: each chunk's vector pooled from its lines, one pass for both.

The complete index costs the chunk pass plus the line pass, and the line pass is what OpenClaw's
index does not do (bench/RESULTS.md §3). If a multi-line chunk were embedded as windows at its
line boundaries — each line that holds a letter or digit its own window with the passage prefix,
the chunk's vector their content-token-weighted mean, the rule the provider already uses for the
windows of a long text — its line vectors would fall out of the chunk pass and the line pass
would cost nothing. This script measures what that does to retrieval: it replaces
``LlamaEmbeddingProvider._embed`` for passages with that rule (queries and one-line texts are
unchanged) and runs ``bench/locomo.py`` or ``bench/fixture_queries.py`` with the arguments after
``--``, on homes of its own. The weights are the normalised line vectors' (a close stand-in for
the pooled means; the measured effect is far larger than the difference).

Usage: python bench/chunk_from_lines.py locomo [--min-lines N] -- --fresh --out /tmp/locomo-lines.json
       python bench/chunk_from_lines.py fixture [--min-lines N] -- --verbose --out /tmp/fixture-lines.json
"""

from __future__ import annotations

import os
import runpy
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))

from clawmem.engine.embed import llama_provider  # noqa: E402

_whole = llama_provider.LlamaEmbeddingProvider._embed
# pool only chunks of at least this many lines (--min-lines, default 2: every multi-line chunk);
# the others keep one window, as the product does
MIN_LINES = 2


def _pooled_from_lines(
    self: llama_provider.LlamaEmbeddingProvider, prefix: str, texts: Sequence[str], threads: int
) -> list[np.ndarray]:
    if prefix != self._passage_prefix:  # queries: as they are
        return _whole(self, prefix, texts, threads)
    parts: list[str] = []
    owner: list[int] = []
    for i, text in enumerate(texts):
        lines = [line.strip() for line in text.strip().split("\n") if any(ch.isalnum() for ch in line)]
        for line in lines if len(lines) >= max(2, MIN_LINES) else [text.strip()]:
            parts.append(line)
            owner.append(i)
    vectors = _whole(self, prefix, parts, threads)
    totals = [np.zeros(self.dims) for _ in texts]
    for i, part, vector in zip(owner, parts, vectors, strict=True):
        totals[i] += len(self.tokenize(prefix + part)) * vector.astype(np.float64)
    return [(t / np.linalg.norm(t)).astype(np.float32) for t in totals]


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("locomo", "fixture"):
        print(__doc__.split("Usage:")[1].strip(), file=sys.stderr)
        return 2
    global MIN_LINES
    which = sys.argv[1]
    args = sys.argv[2:]
    if len(args) >= 2 and args[0] == "--min-lines":
        MIN_LINES, args = int(args[1]), args[2:]
    rest = args[1:] if args and args[0] == "--" else args
    llama_provider.LlamaEmbeddingProvider._embed = _pooled_from_lines  # type: ignore[method-assign]
    script = ROOT / "bench" / ("locomo.py" if which == "locomo" else "fixture_queries.py")
    if which == "locomo":  # its homes: vectors of this rule must never meet the product's cache
        import bench.locomo as locomo

        locomo.CACHE = Path(tempfile.mkdtemp(prefix="locomo-lines-"))
        sys.argv = [str(script), *rest]
        return int(locomo.main())
    sys.argv = [str(script), *rest]
    runpy.run_path(str(script), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
