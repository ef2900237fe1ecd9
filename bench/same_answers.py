"""Same answers before and after a restructuring: every search response compared field by field.

Two code trees (e.g. a worktree of the old commit and a `git archive` of the new one) are each
imported on their own — a symlink tree ``<tree>/.typecheck/clawmem/<pkg> -> ../../<pkg>`` is put
first on ``sys.path`` and the editable install's finder is removed, and every ``clawmem`` module
loaded is checked to live under that tree. Each side builds its own index, in its own temporary
home, of the same workspaces with the same model, then answers the same searches:

- ``fixture``: tests/fixtures/workspace, its 40 labelled queries, the parity bench's 10
  path-shaped probes and 4 more (a path, a mixed path/keyword, a dated and a no-match query);
  decay on (defaults) and a second engine on the same index with decay off;
- ``recency``: tests/fixtures/workspace-recency and its 8 queries;
- ``demo``: the demo workspace (``clawmem.tui.demo.write_demo``, today 2026-11-05, written by
  each side's own code; the files are compared too) and queries on its content;
- ``locomo``: LoCoMo's first conversation as dated diaries (as bench/locomo.py builds it) and
  its category 1-4 questions (``--locomo-questions``, 0 = all), "now" the day after its last
  session.

Every workspace file's mtime is set to an hour before "now" on both sides (a file's mtime is the
``provenance.observed_at`` of entries without an ``observed`` marker, so files written by each
run — the demo, LoCoMo — would otherwise differ by the wall-clock moment they were written).

Each query is asked with scoring calibrated/openclaw × legs hybrid/keyword/vector × min score
default/0; the legs that read vectors twice — sqlite-vec (the in-memory matrix held off), then
the in-memory matrix (checked to be in use). ``record=False, sync=False``; the clock is
CLAWMEM_NOW (the suite's 2026-11-05T09:00:00+00:00; LoCoMo's own), TZ UTC, one thread.
``timings_ms`` is left out of the comparison; floats compare exactly.

Usage (the venv's python; the trees need their .typecheck symlink trees):
  python bench/same_answers.py --before /work/wt-before-40 --after /work/after-40 \
      [--data /work/after-40] [--workspaces fixture,recency,demo,locomo] [--out-dir DIR] [--jobs 2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NOW = "2026-11-05T09:00:00+00:00"
LOCOMO = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "locomo" / "locomo10.json"
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
EXTRA_QUERIES = (
    "memory/2026-11-04.md",  # a path
    "billing.md PostgreSQL",  # mixed path / keyword
    "what did I do on November 4, 2026",  # dated
    "xylophone quasar marmalade",  # no match
)
DEMO_QUERIES = (
    "价格太高",
    "杭州周末预算",
    "湖景房",
    "返程车票",
    "G7512",
    "花生过敏",
    "坐飞机还是高铁",
    "酒店入住时间",
    "why did we choose PostgreSQL",
    "staging deploy failed",
    "TLS certificate renewal",
    "who owns the load balancer cut-over",
    "on-call rotation",
    "billing.md",
    "memory/projects/billing.md",
    "refunds queue",
    "hotel-call",
    "what happened last Tuesday",
    "free cancellation hotels",
    "window seats",
    "Kubernetes ingress",
    "schema migration plan deadline",
    "DREAMS.md",
    "xylophone quasar marmalade",
)
SCORINGS = ("calibrated", "openclaw")
LEGS = ("hybrid", "keyword", "vector")
MIN_SCORES = (None, 0.0)


# ---------------------------------------------------------------------------------- one side


def isolate(tree: Path) -> None:
    """Import ``clawmem`` from ``tree`` only: its symlink tree first, the editable finder gone."""
    sys.path.insert(0, str(tree / ".typecheck"))
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in str(getattr(f, "__module__", ""))]
    sys.path_hooks[:] = [h for h in sys.path_hooks if "editable" not in repr(h)]
    sys.path[:] = [p for p in sys.path if "__editable__" not in p]
    sys.path_importer_cache.clear()


def check_modules(tree: Path) -> list[str]:
    real = os.path.realpath(tree)
    loaded = []
    for name, mod in list(sys.modules.items()):
        if name == "clawmem" or name.startswith("clawmem."):
            f = getattr(mod, "__file__", None)
            if f is None:  # the namespace package itself
                paths = [os.path.realpath(p) for p in getattr(mod, "__path__", [])]
                assert all(p.startswith(real) for p in paths), (name, paths)
                continue
            rf = os.path.realpath(f)
            assert rf.startswith(real + os.sep), f"{name} loaded from {rf}, not {real}"
            loaded.append(name)
    return sorted(loaded)


def digest(ws: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(ws.rglob("*")):
        if p.is_file():
            h.update(f"{p.relative_to(ws)}\0{p.stat().st_mtime_ns}\0".encode() + p.read_bytes() + b"\0")
    return h.hexdigest()


def locomo_workspace(ws: Path, limit: int) -> tuple[str, list[str]]:
    """LoCoMo's first conversation as bench/locomo.py writes it; its "now" and questions."""
    from datetime import datetime, timedelta

    conv = json.loads(LOCOMO.read_text(encoding="utf-8"))[0]
    c = conv["conversation"]
    (ws / "memory").mkdir(parents=True)
    sessions = sorted((int(m.group(1)), k) for k in c if (m := re.fullmatch(r"session_(\d+)", k)))
    last = None
    used: dict[str, int] = {}
    for number, key in sessions:
        when = datetime.strptime(c[f"{key}_date_time"].strip(), "%I:%M %p on %d %B, %Y")
        last = when if last is None or when > last else last
        day = when.date().isoformat()
        used[day] = used.get(day, 0) + 1
        rel = f"memory/{day}.md" if used[day] == 1 else f"memory/{day}-session-{number}.md"
        lines = [f"# Session {number} — {c[f'{key}_date_time']}", ""]
        for turn in c[key]:
            text = " ".join(str(turn.get("text", "")).split())
            if turn.get("blip_caption"):
                text += f" [shared a photo: {turn['blip_caption']}]"
            lines.append(f"- [{turn['dia_id']}] {turn['speaker']}: {text}")
        (ws / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert last is not None
    now = (last + timedelta(days=1)).replace(hour=9, minute=0).isoformat() + "+00:00"
    qs = [str(q["question"]) for q in conv["qa"] if q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
    return now, qs[:limit] if limit else qs


def dump(tree: Path, data: Path, workspace: str, out: Path, locomo_questions: int) -> int:
    tmp = Path(tempfile.mkdtemp(prefix=f"same-answers-{workspace}-"))
    ws = tmp / "workspace"
    now = NOW
    if workspace == "fixture":
        shutil.copytree(data / "tests" / "fixtures" / "workspace", ws)
        labelled = json.loads((data / "tests" / "fixtures" / "queries.json").read_text(encoding="utf-8"))
        assert labelled["now"] == NOW
        queries = [q["query"] for q in labelled["queries"]] + list(PATH_QUERIES) + list(EXTRA_QUERIES)
    elif workspace == "recency":
        shutil.copytree(data / "tests" / "fixtures" / "workspace-recency", ws)
        rec = json.loads((data / "tests" / "fixtures" / "recency-queries.json").read_text(encoding="utf-8"))
        assert rec["now"] == NOW
        queries = [q["query"] for q in rec["queries"]]
    elif workspace == "demo":
        queries = list(DEMO_QUERIES)
    elif workspace == "locomo":
        now, queries = locomo_workspace(ws, locomo_questions)
    else:
        raise SystemExit(f"unknown workspace {workspace}")
    os.environ["CLAWMEM_NOW"] = now
    os.environ["CLAWMEM_TZ"] = "UTC"
    os.environ["CLAWMEM_THREADS"] = "1"
    os.environ["CLAWMEM_MODELS_DIR"] = str(Path(os.environ.get("SAME_ANSWERS_MODELS", "")).resolve())
    for var in ("CLAWMEM_HOME", "CLAWMEM_WORKSPACE", "CLAWMEM_MODEL", "CLAWMEM_AGENT"):
        os.environ.pop(var, None)

    isolate(tree)
    import clawmem  # noqa: F401
    from clawmem.engine.config import load_settings
    from clawmem.engine.facade import MemoryEngine

    if workspace == "demo":
        from datetime import date

        from clawmem.tui.demo import write_demo

        write_demo(ws, today=date(2026, 11, 5))

    # The same inputs on both sides, mtimes included (a file's mtime is its entries' observed_at
    # when no marker says otherwise): every file dated an hour before "now".
    from datetime import datetime

    stamp = datetime.fromisoformat(now).timestamp() - 3600
    for p in ws.rglob("*"):
        if p.is_file():
            os.utime(p, (stamp, stamp))
    home = tmp / "home"
    home.mkdir()
    engines = {"decay on": MemoryEngine(load_settings(home=home, workspace=ws, read_config_file=False))}
    t0 = time.perf_counter()
    report = engines["decay on"].sync()
    index_s = time.perf_counter() - t0
    if workspace == "fixture":
        engines["decay off"] = MemoryEngine(
            load_settings(
                home=home, workspace=ws, read_config_file=False, overrides={"search": {"decay_enabled": False}}
            )
        )
    base = engines["decay on"]
    embedded, total = base.vector_coverage()
    meta: dict[str, Any] = {
        "tree": str(tree),
        "workspace": workspace,
        "now": now,
        "workspace_sha256": digest(ws),
        "chunks": total,
        "embedded": embedded,
        "index_s": round(index_s, 1),
        "sync_report": repr(report),
        "vec_available": base.store.vec_available,
        "model": str(base.embedder_identity(base.provider_choice()).model),
    }
    import dataclasses

    count = 0
    matrix_used = {"n": 0}
    with out.open("w", encoding="utf-8") as fh:

        def ask(engine: Any, label: str, query: str, path: str, **opts: Any) -> None:
            nonlocal count
            resp = engine.search(query, record=False, sync=False, **opts)
            d = dataclasses.asdict(resp)
            d.pop("timings_ms", None)
            key = [workspace, label, path, query, {k: v for k, v in opts.items()}]
            fh.write(json.dumps({"key": key, "response": d}, ensure_ascii=False) + "\n")
            count += 1

        for label, engine in engines.items():
            searcher = engine.searcher
            original = searcher._vector_matrix  # the class's method, bound

            def held_off(model: str) -> None:
                return None

            def watched(model: str, _orig: Any = original) -> Any:
                m = _orig(model)
                matrix_used["n"] += m is not None
                return m

            for path in ("sqlite-vec", "matrix"):
                if path == "sqlite-vec":
                    searcher._vector_matrix = held_off
                else:
                    searcher._vector_matrix = watched
                    for _ in range(2):  # the matrix serves from a process's 2nd search on
                        engine.search("warm up", record=False, sync=False, legs="vector")
                    matrix_used["n"] = 0
                for query in queries:
                    for scoring in SCORINGS:
                        for legs in LEGS:
                            if path == "matrix" and legs == "keyword":
                                continue  # reads no vectors: asked once
                            if label != "decay on" and legs == "vector":
                                continue
                            for min_score in MIN_SCORES:
                                ask(engine, label, query, path, scoring=scoring, legs=legs, min_score=min_score)
                if path == "matrix":
                    meta[f"matrix_used[{label}]"] = matrix_used["n"]
                    assert matrix_used["n"] > 0, "the in-memory matrix was never used"
            del searcher._vector_matrix
        for engine in engines.values():
            engine.close()
    meta["responses"] = count
    meta["queries"] = len(queries)
    meta["modules"] = len(check_modules(tree))
    out.with_suffix(".meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{tree.name} {workspace}: {count} responses, {len(queries)} queries, index {index_s:.0f} s", flush=True)
    return 0


# ---------------------------------------------------------------------------------- comparing


class Diff:
    def __init__(self) -> None:
        self.fields = 0
        self.floats = 0
        self.max_float = 0.0
        self.items: list[str] = []

    def walk(self, a: Any, b: Any, where: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                if k not in a or k not in b:
                    self.fields += 1
                    self.items.append(f"{where}.{k}: only {'after' if k in b else 'before'}")
                else:
                    self.walk(a[k], b[k], f"{where}.{k}")
            return
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                self.fields += 1
                self.items.append(f"{where}: length {len(a)} → {len(b)}")
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                self.walk(x, y, f"{where}[{i}]")
            return
        self.fields += 1
        if isinstance(a, float) and isinstance(b, float):
            self.floats += 1
            if math.isnan(a) and math.isnan(b):
                return
            if a != b:
                self.max_float = max(self.max_float, abs(a - b))
                self.items.append(f"{where}: {a!r} → {b!r}")
            return
        if type(a) is not type(b) or a != b:
            self.items.append(f"{where}: {a!r} → {b!r}")


def compare(before: Path, after: Path, diff: Diff) -> int:
    a_lines = before.read_text(encoding="utf-8").splitlines()
    b_lines = after.read_text(encoding="utf-8").splitlines()
    if len(a_lines) != len(b_lines):
        diff.items.append(f"{before.name}: {len(a_lines)} responses before, {len(b_lines)} after")
    for la, lb in zip(a_lines, b_lines, strict=False):
        ra, rb = json.loads(la), json.loads(lb)
        if ra["key"] != rb["key"]:
            diff.items.append(f"request order differs: {ra['key']} vs {rb['key']}")
            continue
        diff.walk(ra["response"], rb["response"], json.dumps(ra["key"], ensure_ascii=False))
    return min(len(a_lines), len(b_lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path)
    parser.add_argument("--after", type=Path)
    parser.add_argument("--data", type=Path, default=None, help="the tree whose tests/fixtures both read (--after)")
    parser.add_argument("--models", type=Path, default=Path(__file__).resolve().parent.parent / ".cache" / "models")
    parser.add_argument("--workspaces", default="fixture,recency,demo,locomo")
    parser.add_argument("--locomo-questions", type=int, default=0)
    parser.add_argument("--out-dir", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--compare-only", action="store_true", help="compare dumps already in --out-dir")
    parser.add_argument("--dump", metavar="TREE", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--workspace", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        return dump(args.dump.resolve(), args.data.resolve(), args.workspace, args.out, args.locomo_questions)

    assert args.before and args.after, "--before and --after are required"
    data = (args.data or args.after).resolve()
    out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="same-answers-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    workspaces = args.workspaces.split(",")
    if not args.compare_only:
        jobs = [
            (side, tree.resolve(), ws)
            for ws in workspaces
            for side, tree in (("before", args.before), ("after", args.after))
        ]
        running: list[subprocess.Popen[bytes]] = []
        env = {**os.environ, "SAME_ANSWERS_MODELS": str(args.models)}
        for side, tree, ws in jobs:
            while len(running) >= args.jobs:
                for p in running:
                    if p.poll() is not None:
                        assert p.returncode == 0, f"{p.args} failed"
                        running.remove(p)
                        break
                else:
                    time.sleep(0.5)
            cmd = [
                sys.executable,
                __file__,
                "--dump",
                str(tree),
                "--data",
                str(data),
                "--workspace",
                ws,
                "--out",
                str(out_dir / f"{ws}.{side}.jsonl"),
                "--locomo-questions",
                str(args.locomo_questions),
            ]
            running.append(subprocess.Popen(cmd, env=env))
        for p in running:
            assert p.wait() == 0, f"{p.args} failed"

    diff = Diff()
    responses = 0
    queries = 0
    for ws in workspaces:
        ma = json.loads((out_dir / f"{ws}.before.meta.json").read_text(encoding="utf-8"))
        mb = json.loads((out_dir / f"{ws}.after.meta.json").read_text(encoding="utf-8"))
        for k in ("workspace_sha256", "chunks", "embedded", "now", "model", "queries", "responses"):
            if ma[k] != mb[k]:
                diff.items.append(f"{ws} meta {k}: {ma[k]!r} → {mb[k]!r}")
        n = compare(out_dir / f"{ws}.before.jsonl", out_dir / f"{ws}.after.jsonl", diff)
        responses += n
        queries += ma["queries"]
        print(
            f"{ws}: {ma['queries']} queries, {n} responses, {ma['chunks']} chunks ({ma['embedded']} embedded), "
            f"modules before/after {ma['modules']}/{mb['modules']}"
        )
    print(
        f"\n{len(workspaces)} workspaces, {queries} queries, {responses} responses, {diff.fields} fields "
        f"compared ({diff.floats} floats), differences: {len(diff.items)}, max float difference {diff.max_float!r}"
    )
    for item in diff.items[:200]:
        print("  " + item)
    print(f"dumps in {out_dir}")
    return 1 if diff.items else 0


if __name__ == "__main__":
    sys.exit(main())
