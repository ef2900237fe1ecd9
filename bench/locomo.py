"""LoCoMo evidence retrieval: recall@5, recall@10 and MRR, hybrid (both scorings) vs keyword-only.

Each LoCoMo conversation becomes a workspace: every session a dated diary file
``memory/YYYY-MM-DD.md`` with one turn per line (``- [D3:7] Caroline: …``), so an evidence
``dia_id`` maps to exactly one line. The workspace is indexed with the product's defaults (the
bundled multilingual model, default chunking), then every question of categories 1–4 is asked
in each mode. A result "covers" an evidence turn when its line range contains the turn's line.

- recall@k: covered evidence turns in the top k ÷ evidence turns (averaged over questions)
- MRR: 1 / rank of the first result covering any evidence turn (0 if none in the top 10)

The data is CC BY-NC 4.0 (non-commercial): it is read from ../shared/bench/locomo and only
derived workspaces under bench/.cache are written; nothing is copied into the package.

Usage: python bench/locomo.py [--conversations N] [--out bench/results/locomo.json] [--fresh]
       python bench/locomo.py --merged   # all conversations in one workspace, each other's distractors
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "bench" / "locomo" / "locomo10.json"
CACHE = ROOT / "bench" / ".cache" / "locomo"
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))
os.environ.setdefault("CLAWMEM_TZ", "UTC")

from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402

from bench import version_rule  # noqa: E402

MODES = {
    "hybrid (calibrated, default)": {"scoring": "calibrated", "legs": "hybrid"},
    "hybrid (openclaw scoring)": {"scoring": "openclaw", "legs": "hybrid"},
    "keyword-only": {"scoring": "calibrated", "legs": "keyword"},
}
# LoCoMo sessions span up to a year and its questions are time-agnostic, while the product's
# 30-day half-life scales a year-old diary's recency by ~2^-12. The headline is the product's
# defaults (decay on, "now" = the day after the last session, min score 0.35); beside it decay off,
# and each with the threshold off (min score 0: ranking quality alone).
DECAY = {"decay on": True, "decay off": False}
THRESHOLDS = {"defaults": None, "min 0": 0.0}  # None: the product's min score (0.35)


@dataclass
class Conversation:
    sample_id: str
    workspace: Path
    line_of: dict[str, tuple[str, int]]  # dia_id -> (path, line)
    now: str
    questions: list[dict]


def parse_when(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def build_workspace(conv: dict, base: Path, *, ws: Path | None = None, folder: str = "memory") -> Conversation:
    """One conversation as dated diaries under ``folder`` of ``ws`` (default: its own workspace)."""
    sample = conv["sample_id"]
    if ws is None:
        ws = base / sample / "workspace"
        if ws.exists():
            shutil.rmtree(ws)
    (ws / folder).mkdir(parents=True)
    c = conv["conversation"]
    sessions = sorted((int(m.group(1)), k) for k in c if (m := re.fullmatch(r"session_(\d+)", k)))
    line_of: dict[str, tuple[str, int]] = {}
    last = None
    used: dict[str, int] = defaultdict(int)
    for number, key in sessions:
        when = parse_when(c[f"{key}_date_time"])
        last = when if last is None or when > last else last
        day = when.date().isoformat()
        used[day] += 1
        rel = f"{folder}/{day}.md" if used[day] == 1 else f"{folder}/{day}-session-{number}.md"
        lines = [f"# Session {number} — {c[f'{key}_date_time']}", ""]
        for turn in c[key]:
            text = " ".join(str(turn.get("text", "")).split())
            if turn.get("blip_caption"):
                text += f" [shared a photo: {turn['blip_caption']}]"
            lines.append(f"- [{turn['dia_id']}] {turn['speaker']}: {text}")
            line_of[turn["dia_id"]] = (rel, len(lines))
        (ws / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert last is not None
    questions = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
    now = (last + timedelta(days=1)).replace(hour=9, minute=0).isoformat() + "+00:00"
    return Conversation(sample, ws, line_of, now, questions)


def evidence_lines(conv: Conversation, evidence: list[str]) -> list[tuple[str, int]]:
    out = []
    for ev in evidence:
        for part in re.split(r"[;,]\s*", str(ev)):
            part = part.strip()
            if part in conv.line_of:
                out.append(conv.line_of[part])
    return list(dict.fromkeys(out))


def score_question(results: list, wanted: list[tuple[str, int]]) -> tuple[float, float, float]:
    def covered(k: int) -> set[tuple[str, int]]:
        got = set()
        for r in results[:k]:
            for path, line in wanted:
                if r.path == path and r.start_line <= line <= r.end_line:
                    got.add((path, line))
        return got

    r5 = len(covered(5)) / len(wanted)
    r10 = len(covered(10)) / len(wanted)
    mrr = 0.0
    for rank, r in enumerate(results[:10], start=1):
        if any(r.path == p and r.start_line <= line <= r.end_line for p, line in wanted):
            mrr = 1.0 / rank
            break
    return r5, r10, mrr


def run(
    conversations: int, out: Path, modes: dict[str, dict[str, str]], search: dict[str, object], fresh: bool = False
) -> dict:
    data = json.loads(DATA.read_text(encoding="utf-8"))[:conversations]
    totals: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    by_cat: dict[str, dict[int, list[tuple[float, float, float]]]] = defaultdict(lambda: defaultdict(list))
    latencies: dict[str, list[float]] = defaultdict(list)
    index_info = []
    for conv_raw in data:
        conv = build_workspace(conv_raw, CACHE)
        home = CACHE / conv.sample_id / "home"
        if fresh and home.exists():
            shutil.rmtree(home)  # its index and embedding cache: vectors made by another build
        os.environ["CLAWMEM_NOW"] = conv.now
        engines = {
            label: MemoryEngine(
                load_settings(
                    home=home, workspace=conv.workspace, overrides={"search": {**search, "decay_enabled": on}}
                )
            )
            for label, on in DECAY.items()
        }
        engine = engines["decay on"]
        t0 = time.perf_counter()
        report = engine.sync()
        index_info.append(
            {
                "conversation": conv.sample_id,
                "files": report.files,
                "chunks": report.chunks,
                "embedded": report.embedded,
                "cache_hits": report.cache_hits,
                "seconds": round(time.perf_counter() - t0, 1),
            }
        )
        print(
            f"{conv.sample_id}: {report.chunks} chunks ({report.embedded} embedded now, "
            f"{report.cache_hits} cached), {len(conv.questions)} questions",
            file=sys.stderr,
        )
        for q in conv.questions:
            wanted = evidence_lines(conv, q["evidence"])
            if not wanted:
                continue
            for decay_label, eng in engines.items():
                for mode_name, opts in modes.items():
                    for min_label, min_score in THRESHOLDS.items():
                        name = f"{mode_name}, {decay_label}, {min_label}"
                        t1 = time.perf_counter()
                        resp = eng.search(
                            str(q["question"]), max_results=10, min_score=min_score, record=False, sync=False, **opts
                        )
                        latencies[name].append((time.perf_counter() - t1) * 1000)
                        m = score_question(list(resp.results), wanted)
                        totals[name].append(m)
                        by_cat[name][int(q["category"])].append(m)
        for eng in engines.values():
            eng.close()

    def summary(values: list[tuple[float, float, float]]) -> dict[str, float]:
        return {
            "recall@5": round(statistics.fmean(v[0] for v in values), 4),
            "recall@10": round(statistics.fmean(v[1] for v in values), 4),
            "mrr": round(statistics.fmean(v[2] for v in values), 4),
            "questions": len(values),
        }

    result = {
        "dataset": "LoCoMo (locomo10.json), categories 1-4",
        "conversations": len(data),
        "search_overrides": search,
        "index": index_info,
        "modes": {name: summary(v) for name, v in totals.items()},
        "by_category": {
            name: {str(cat): summary(v) for cat, v in sorted(cats.items())} for name, cats in by_cat.items()
        },
        "latency_ms_p50": {n: round(statistics.median(v), 1) for n, v in latencies.items()},
        "latency_ms_p95": {n: round(sorted(v)[int(len(v) * 0.95) - 1], 1) for n, v in latencies.items()},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def run_merged(conversations: int, out: Path) -> dict:
    """Every conversation in ONE workspace (``memory/<sample_id>/…``), each question asked against
    all of them: ~800 chunks, and every other conversation is a distractor. Decay off (the paths
    are not exact ``memory/YYYY-MM-DD.md``, so they are evergreen anyway). Vectors come from the
    per-conversation runs' embedding caches when they exist (same texts, same model)."""
    from clawmem.engine.store import bench_rows

    data = json.loads(DATA.read_text(encoding="utf-8"))[:conversations]
    root = CACHE / "merged"
    ws = root / "workspace"
    if ws.exists():
        shutil.rmtree(ws)
    ws.mkdir(parents=True)
    convs = [build_workspace(c, CACHE, ws=ws, folder=f"memory/{c['sample_id']}") for c in data]
    os.environ["CLAWMEM_NOW"] = max(c.now for c in convs)
    settings = load_settings(home=root / "home", workspace=ws, overrides={"search": {"decay_enabled": False}})
    engine = MemoryEngine(settings)
    for c in data:
        other = CACHE / c["sample_id"] / "home" / "agents" / "main" / "agent" / "clawmem-agent.sqlite"
        if other.exists():
            bench_rows.copy_embedding_cache(engine.store.conn(), str(other))
    t0 = time.perf_counter()
    report = engine.sync()
    print(
        f"merged: {report.chunks} chunks ({report.embedded} embedded now, {report.cache_hits} cached) "
        f"in {time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    totals: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for conv in convs:
        for q in conv.questions:
            wanted = evidence_lines(conv, q["evidence"])
            if not wanted:
                continue
            for name, opts in MODES.items():
                resp = engine.search(
                    str(q["question"]), max_results=10, min_score=0.0, record=False, sync=False, **opts
                )
                totals[name].append(score_question(list(resp.results), wanted))
    engine.close()
    result = {
        "dataset": "LoCoMo (locomo10.json), categories 1-4, all conversations in one workspace, decay off",
        "conversations": len(data),
        "chunks": report.chunks,
        "modes": {
            name: {
                "recall@5": round(statistics.fmean(v[0] for v in vals), 4),
                "recall@10": round(statistics.fmean(v[1] for v in vals), 4),
                "mrr": round(statistics.fmean(v[2] for v in vals), 4),
                "questions": len(vals),
            }
            for name, vals in totals.items()
        },
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--fresh", action="store_true", help="embed everything again (the homes' caches hold the last run's vectors)"
    )
    parser.add_argument("--merged", action="store_true", help="all conversations in one workspace (distractors)")
    parser.add_argument("--calibrated-only", action="store_true", help="only the default scoring (a sweep)")
    parser.add_argument("--max-decay", type=float, default=None, help="search.max_decay (default: the product's)")
    version_rule.add_arguments(parser)
    args = parser.parse_args()
    search: dict[str, object] = {} if args.max_decay is None else {"max_decay": args.max_decay}
    print(version_rule.apply(args, search))
    if args.merged:
        out = args.out or ROOT / "bench" / "results" / "locomo-merged.json"
        merged = run_merged(args.conversations, out)
        for name, m in merged["modes"].items():
            print(f"{name:<30} recall@5 {m['recall@5']:.3f}  recall@10 {m['recall@10']:.3f}  MRR {m['mrr']:.3f}")
        return 0
    modes = {k: v for k, v in MODES.items() if not args.calibrated_only or k.startswith("hybrid (calibrated")}
    result = run(
        args.conversations, args.out or ROOT / "bench" / "results" / "locomo.json", modes, search, fresh=args.fresh
    )
    print(f"\n{'mode':<52} {'recall@5':>9} {'recall@10':>10} {'MRR':>7} {'p50 ms':>8}")
    for name, m in result["modes"].items():
        print(
            f"{name:<52} {m['recall@5']:>9.4f} {m['recall@10']:>10.3f} {m['mrr']:>7.3f} "
            f"{result['latency_ms_p50'][name]:>8.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
